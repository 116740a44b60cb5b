"""eva_init / eva_state_dict on a tiny random BERT wrapped by PEFT (no weights are read)."""

import copy
import warnings

import peft
import pytest
import torch
import transformers
from peft.tuners.lora.eva import get_eva_state_dict

from neurips25.eva import captured_variance, eva_init, eva_state_dict, load_eva_state_dict, lora_layers
from neurips25.eva.activations import InputRecorder

TARGETS = ["query", "key", "value", "output.dense", "intermediate.dense"]


@pytest.fixture(scope="module")
def base():
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=64)
    return transformers.BertModel(cfg).eval()


def _batches(n=30, seed=1, pad=True, lengths=(6, 16)):
    g = torch.Generator().manual_seed(seed)
    out = []
    for i in range(n):
        t = lengths[1] - (i % 3) * 2  # varying padded lengths across batches
        ids = torch.randint(1, 100, (8, t), generator=g)
        am = torch.ones_like(ids)
        if pad:
            for j, length in enumerate(torch.randint(lengths[0], t + 1, (8,), generator=g).tolist()):
                am[j, length:] = 0
                ids[j, length:] = 0
        out.append({"input_ids": ids, "attention_mask": am})
    return out


def _lora(base, r=4, init=True, **kw):
    return peft.get_peft_model(copy.deepcopy(base), peft.LoraConfig(r=r, lora_alpha=r, target_modules=TARGETS,
                                                                    init_lora_weights=init, **kw))


def _angle(a, b):
    qa, _ = torch.linalg.qr(a.double().T)
    qb, _ = torch.linalg.qr(b.double().T)
    return float(torch.arccos(torch.linalg.svdvals(qa.T @ qb).clamp(max=1).min()))


@pytest.mark.parametrize("rho,whiten", [(1.0, False), (2.0, True)])
def test_agrees_with_peft(base, rho, whiten):
    # same batches and svd_lowrank seed: identical ranks and (nearly) the same subspaces as PEFT's EVA
    data = _batches()
    pm = _lora(base, init="eva", eva_config=peft.EvaConfig(rho=rho, tau=0.9, whiten=whiten))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = get_eva_state_dict(pm, data, show_progress_bar=False)
    ours, stats = eva_state_dict(pm, data, rho=rho, tau=0.9, whiten=whiten, progress=False)
    assert {k: v.shape for k, v in ref.items()} == {k: v.shape for k, v in ours.items()}
    # on this random model the spectrum is flat, so both randomised SVDs (PEFT's sketch is drawn in float32,
    # ours in float64) rotate within near-degenerate directions: compare the variance the subspaces capture
    layers = lora_layers(pm)
    with torch.no_grad(), pm.disable_adapter(), InputRecorder(layers) as rec:
        seen = {n: [] for n in layers}
        for b in data[:10]:
            rec.mask = b["attention_mask"].bool()
            pm(**b)
            for n in layers:
                seen[n].append(rec.inputs[n])
    for k in ref:
        if ref[k].shape[0]:
            x = torch.cat(seen[k])
            assert captured_variance(ours[k], x) == pytest.approx(captured_variance(ref[k], x), rel=0.02)
    angles = sorted(_angle(ref[k], ours[k]) for k in ref if ref[k].shape[0])
    assert angles[len(angles) // 2] < 0.2
    if whiten:  # rows scaled once by 1/sqrt(sigma_j), the same for every layer of a shared-input group
        for k in ours:
            r = ours[k].shape[0]
            rows = ours[k] * stats.singular_values[k][:r].sqrt()[:, None]
            assert torch.allclose(rows @ rows.T, torch.eye(r), atol=1e-4)


def test_budget_groups_and_alpha(base):
    # rho=2: sum of ranks == r * layers; q/k/v share one decomposition; alpha_i / r_i == alpha / r
    pm = _lora(base)
    n_layers = len(lora_layers(pm))
    state, stats = eva_state_dict(pm, _batches(), rho=2.0, tau=0.9, max_batches=40, progress=False)
    assert sum(v.shape[0] for v in state.values()) == 4 * n_layers == stats.budget
    assert len(stats.groups) == 4  # key and value of both blocks map to their block's query
    ranks = load_eva_state_dict(pm, state)
    assert ranks == {n.removeprefix("base_model.model."): v.shape[0] for n, v in state.items()}
    for m in lora_layers(pm).values():
        assert m.scaling["default"] == pytest.approx(1.0)
        assert torch.count_nonzero(m.lora_B["default"].weight) == 0
        rows = m.lora_A["default"].weight
        assert torch.allclose(rows @ rows.T, torch.eye(rows.shape[0]), atol=1e-4)  # orthonormal, unwhitened


def test_padding_and_label_mask_honoured(base):
    # changing the ids of padded positions (or of label -100 positions) must not change the result
    pm = _lora(base)
    data = _batches(8)
    noisy = [dict(b, input_ids=torch.where(b["attention_mask"].bool(), b["input_ids"], 7)) for b in data]
    a, _ = eva_state_dict(pm, data, rho=1.0, tau=0.5, max_batches=6, progress=False)
    b, _ = eva_state_dict(pm, noisy, rho=1.0, tau=0.5, max_batches=6, progress=False)
    name = next(n for n in a if n.endswith("layer.0.attention.self.query"))  # first layer: inputs per token
    assert torch.allclose(a[name], b[name], atol=1e-5)
    # per-token labels: masking every token but the first two of each row changes the statistics
    lab = [dict(b, labels=torch.where(torch.arange(b["input_ids"].shape[1]) < 2, 1, -100).expand_as(
        b["input_ids"])) for b in data]
    c, _ = eva_state_dict(pm, lab, rho=1.0, tau=0.5, max_batches=6, progress=False)
    d, _ = eva_state_dict(pm, lab, rho=1.0, tau=0.5, max_batches=6, use_label_mask=False, progress=False)
    assert not torch.allclose(c[name], a[name], atol=1e-3)
    assert torch.allclose(d[name], a[name], atol=1e-5)


def test_convergence_stop_and_max_batches(base):
    # a loose tau stops after a couple of batches; a strict one with a cap stops at the cap and warns
    pm = _lora(base)
    _, loose = eva_state_dict(pm, _batches(), rho=1.0, tau=0.2, max_batches=40, progress=False)
    _, strict = eva_state_dict(pm, _batches(), rho=1.0, tau=0.95, max_batches=40, progress=False)
    assert all(loose.converged.values()) and loose.n_batches < strict.n_batches
    assert loose.converged_per_batch[-1] == len(loose.ranks) - len(loose.groups)
    with pytest.warns(UserWarning, match="max_batches=3"):
        _, capped = eva_state_dict(pm, _batches(), tau=1.0, max_batches=3, progress=False)
    assert capped.n_batches == 3 and not all(capped.converged.values())


def test_rank_zero_removed_and_reload(base, tmp_path):
    # a rank-0 layer loses its adapter; save + PeftModel.from_pretrained rebuild the new ranks and outputs
    pm = _lora(base)
    state, _ = eva_state_dict(pm, _batches(), rho=2.0, tau=0.9, max_batches=40, progress=False)
    names = [n for n in state if n.endswith("query") or n.endswith("key")]
    dropped, grown = names[-1], names[0]
    state[grown] = torch.cat([state[grown], state[dropped]])[: state[grown].shape[0] + 2]
    state[dropped] = state[dropped][:0]
    ranks = load_eva_state_dict(pm, state)
    short = dropped.removeprefix("base_model.model.")
    assert ranks[short] == 0 and dropped not in lora_layers(pm)
    assert not hasattr(pm.get_submodule(dropped), "lora_A")
    cfg = pm.peft_config["default"]
    assert cfg.rank_pattern[grown.removeprefix("base_model.model.")] == state[grown].shape[0]
    for m in lora_layers(pm).values():
        torch.nn.init.normal_(m.lora_B["default"].weight, std=0.1)  # non-zero B: outputs must match on reload
    x = _batches(1)[0]
    pm.eval()  # get_peft_model leaves the wrapper in train mode (dropout on); the reloaded one is in eval
    with torch.no_grad():
        expected = pm(**x).last_hidden_state
    pm.save_pretrained(tmp_path)
    reloaded = peft.PeftModel.from_pretrained(copy.deepcopy(base), tmp_path)
    assert {n: m.r["default"] for n, m in lora_layers(reloaded).items()} == {
        n: m.r["default"] for n, m in lora_layers(pm).items()}
    with torch.no_grad():
        assert torch.allclose(reloaded(**x).last_hidden_state, expected, atol=1e-5)


def test_eva_init_returns_ranks(base):
    pm = _lora(base)
    ranks = eva_init(pm, _batches(), rho=2.0, tau=0.9, max_batches=40, progress=False)
    assert sum(ranks.values()) == 4 * len(ranks)


def test_bad_inputs(base):
    pm = _lora(base)
    data = _batches(3)
    with pytest.raises(ValueError, match="has no LoRA Linear layers"):
        eva_init(copy.deepcopy(base), data)
    with pytest.raises(ValueError, match="matches none of the LoRA layers"):
        eva_init(pm, data, target_modules=["nonexistent"])
    with pytest.raises(ValueError, match="`dataloader` is empty"):
        eva_init(pm, [])
    with pytest.raises(ValueError, match="`rank` must be a positive int"):
        eva_init(pm, data, rank=0)
    with pytest.raises(ValueError, match="`rho` must be a number >= 1"):
        eva_init(pm, data, rho=0.5)
    for tau in (0.0, 1.5):
        with pytest.raises(ValueError, match=r"`tau` must be in \(0, 1\]"):
            eva_init(pm, data, tau=tau)
    with pytest.raises(TypeError, match="must be a PEFT model"):
        load_eva_state_dict(copy.deepcopy(base), {})


def test_non_finite_state_and_activations_rejected(base):
    pm = _lora(base)
    state, _ = eva_state_dict(pm, _batches(), rho=1.0, tau=0.5, progress=False)
    name = next(iter(state))
    with pytest.raises(ValueError, match="non-finite"):
        load_eva_state_dict(pm, {**state, name: torch.full_like(state[name], float("nan"))})
    broken = copy.deepcopy(base)
    with torch.no_grad():
        broken.embeddings.word_embeddings.weight.fill_(float("nan"))
    with pytest.raises(ValueError, match="NaN or inf"):
        eva_state_dict(_lora(broken), _batches(), rho=1.0, progress=False)


def test_too_few_rows_error_counts_rows(base):
    # "dense" also matches BERT's pooler, which sees one row per sequence (8 per batch) < round(rho * r) = 32:
    # the error says so in rows, instead of blaming the token mask
    pm = peft.get_peft_model(copy.deepcopy(base), peft.LoraConfig(r=16, target_modules=["dense"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"pooler\.dense: at most 8 rows, needs 32"):
            eva_state_dict(pm, _batches(4), rho=2.0, max_batches=4, progress=False)
