"""The dual-head monitor: shapes, padding invariance, labels, save/load, LoRA, heads on cached states."""

import numpy as np
import pytest
import torch
from torch import nn

from neurips25.scm import (
    HiddenSet,
    StreamingContentMonitor,
    partial_detection_report,
    score_hidden,
    select_k,
    train_heads,
)


def test_response_head_reads_last_valid_token(monitor):
    a, b = [1, 4, 5, 6, 7], [2, 3, 9]
    ids = torch.tensor([a, b + [0, 0]])
    att = torch.tensor([[1] * 5, [1, 1, 1, 0, 0]])
    with torch.no_grad():
        batched = monitor(ids, att)
        single = monitor(torch.tensor([b]))
    assert torch.allclose(batched.response_logits[1], single.response_logits[0], atol=1e-5)
    assert torch.allclose(batched.token_logits[1, :3], single.token_logits[0], atol=1e-5)


def test_loss_and_label_checks(monitor):
    ids = torch.tensor([[1, 2, 3, 4]])
    out = monitor(ids, token_labels=torch.tensor([[-100, 0, 1, 1]]), response_labels=torch.tensor([1]))
    assert out.loss.ndim == 0 and torch.isfinite(out.loss)
    with pytest.raises(ValueError, match="`token_labels` must align with the input"):
        monitor(ids, token_labels=torch.tensor([[0, 1, 1]]))
    with pytest.raises(ValueError, match="0, 1 or -100"):
        monitor(ids, token_labels=torch.tensor([[0, 2, 1, 1]]))
    with pytest.raises(ValueError, match="empty"):
        monitor(torch.zeros(1, 0, dtype=torch.long))


def test_constructor_checks(decoder):
    with pytest.raises(ValueError, match="`alpha` must be in"):
        StreamingContentMonitor(decoder, alpha=-0.1)
    with pytest.raises(ValueError, match="`logic_reduce` must be one of"):
        StreamingContentMonitor(decoder, logic_reduce="sum")
    with pytest.raises(ValueError, match="`hidden_size` is required"):
        StreamingContentMonitor(None)


class _NoHidden(nn.Module):
    config = type("C", (), {"hidden_size": 4})()

    def forward(self, input_ids, **kw):
        return torch.zeros(input_ids.shape[0], input_ids.shape[1], 4)


def test_backbone_without_hidden_states():
    mon = StreamingContentMonitor(_NoHidden())
    with pytest.raises(ValueError, match="returned no hidden states"):
        mon(torch.tensor([[1, 2]]))


def test_save_load_roundtrip_finetuned(tmp_path, decoder):
    from neurips25.scm import tiny_decoder

    torch.manual_seed(0)
    mon = StreamingContentMonitor(decoder, freeze_backbone=False).eval()
    with torch.no_grad():
        for p in mon.parameters():
            p.add_(0.01 * torch.randn_like(p))
    mon.save_pretrained(tmp_path / "m")
    fresh = tiny_decoder(40, hidden_size=16, n_layers=2, n_heads=2, seed=0)
    back = StreamingContentMonitor.from_pretrained(tmp_path / "m", fresh)
    ids = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.no_grad():
        assert torch.allclose(mon(ids).token_logits, back(ids).token_logits, atol=1e-6)
    assert not any(p.suffix == ".pkl" or p.suffix == ".bin" for p in (tmp_path / "m").iterdir())


def test_lora_trains_adapters_only(tmp_path, decoder):
    pytest.importorskip("peft")
    mon = StreamingContentMonitor(decoder, lora_r=2)
    trainable = [n for n, p in mon.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n or n.startswith(("token_head", "response_head")) for n in trainable)
    assert any("lora_" in n for n in trainable)
    mon.save_pretrained(tmp_path / "lora")
    from neurips25.scm import tiny_decoder

    back = StreamingContentMonitor.from_pretrained(tmp_path / "lora", tiny_decoder(40, 16, 2, 2, seed=0))
    ids = torch.tensor([[3, 4, 5]])
    with torch.no_grad():
        assert torch.allclose(mon.eval()(ids).token_logits, back(ids).token_logits, atol=1e-6)


def _planted_hidden(n=200, T=12, H=8, seed=0):
    """Cached states where dim 0 lights up from a known onset on in harmful responses."""
    g = torch.Generator().manual_seed(seed)
    hidden = 0.3 * torch.randn(n, T, H, generator=g)
    labels = torch.arange(n) % 2
    onsets = np.zeros(n, dtype=int)
    tl = torch.zeros(n, T, dtype=torch.long)
    for i in range(n):
        if labels[i]:
            s = 2 + i % 6
            hidden[i, s:, 0] += 2.0
            tl[i, s:] = 1
            onsets[i] = s + 1
    mask = torch.ones(n, T, dtype=torch.bool)
    return HiddenSet(hidden, mask, tl, labels, onsets, np.full(n, T))


def test_heads_learn_planted_onset():
    data = _planted_hidden()
    mon = StreamingContentMonitor(None, hidden_size=8, alpha=0.5, gamma=1.0, dropout=0.0)
    train_heads(mon, data.subset(range(100)), steps=150, lr=1e-2)
    val, test = data.subset(range(100, 150)), data.subset(range(150, 200))
    tv, _, _ = score_hidden(mon, val)
    pol, _ = select_k(tv, val.labels.numpy(), ks=range(1, 5))
    tt, rt, _ = score_hidden(mon, test)
    rep = partial_detection_report(tt, test.labels.numpy(), pol, test.onsets)
    assert rep["macro_f1"] >= 0.95
    stops = np.array([pol.first_stop(p) for p in tt])
    harmful = test.labels.numpy() == 1
    assert np.all(stops[harmful] >= test.onsets[harmful])  # never before the planted onset
    assert rep["false_alarm_rate"] == 0.0


def test_truncate_layers_leaves_shared_config_alone(decoder):
    """Regression (quick run 1): truncating one SmolLM2 copy changed the loader's shared config."""
    from neurips25.scm import truncate_layers

    shared = decoder.config
    truncate_layers(decoder, 1)
    assert shared.num_hidden_layers == 2
    assert decoder.config.num_hidden_layers == 1 and len(decoder.layers) == 1
    with pytest.raises(ValueError, match="`n_layers` must be an integer in"):
        truncate_layers(decoder, 5)


def test_train_end_to_end_lowers_the_loss_through_lora(decoder):
    """`train_end_to_end` on a LoRA monitor: the loss falls on planted data, and the adapters move."""
    pytest.importorskip("peft")
    from neurips25.scm import planted_pattern, train_end_to_end

    torch.manual_seed(0)
    mon = StreamingContentMonitor(decoder, alpha=0.5, gamma=1.0, lora_r=4, dropout=0.0)
    before = {n: p.detach().clone() for n, p in mon.named_parameters() if "lora_B" in n}
    losses = train_end_to_end(mon, planted_pattern(96, seed=0), steps=40, batch_size=16, lr=1e-2)
    assert np.mean(losses[-8:]) < 0.9 * np.mean(losses[:8])
    assert any((p - before[n]).abs().max() > 0 for n, p in mon.named_parameters() if "lora_B" in n)


def test_response_loss_alone_reaches_the_adapters(decoder):
    """alpha = 0, gamma = 0 (only CE on the response label): every LoRA B matrix gets a non-zero gradient, i.e.
    response supervision flows into the shared backbone (with a frozen backbone it would reach only the
    response head)."""
    pytest.importorskip("peft")
    from neurips25.scm import planted_pattern
    from neurips25.scm.train import collate

    torch.manual_seed(0)
    mon = StreamingContentMonitor(decoder, alpha=0.0, gamma=0.0, lora_r=4, dropout=0.0)
    for n, p in mon.named_parameters():  # LoRA B starts at zero, so A gets no gradient at step 0: perturb B
        if "lora_B" in n:
            p.data.normal_(0, 0.1)
    ids, att, lab, resp, y = collate(planted_pattern(8, seed=1))
    out = mon(ids, att, token_labels=lab, response_labels=y, response_mask=resp)
    out.loss.backward()
    lora = {n: p.grad for n, p in mon.named_parameters() if "lora_" in n}
    assert lora and all(g is not None and g.abs().sum() > 0 for g in lora.values())
    assert mon.token_head.weight.grad is None or mon.token_head.weight.grad.abs().sum() == 0


def test_with_backbone_moves_heads_onto_a_backbone(decoder):
    heads = StreamingContentMonitor(None, hidden_size=16, alpha=0.3)
    mon = heads.with_backbone(decoder)
    assert mon.config["alpha"] == 0.3 and torch.equal(mon.token_head.weight, heads.token_head.weight)
    ids = torch.tensor([[3, 4, 5, 6]])
    with torch.no_grad():
        h = mon.encode(ids)
        torch.testing.assert_close(mon(ids).token_logits, heads.eval()(hidden_states=h).token_logits)
    with pytest.raises(ValueError, match="hidden size 16; this monitor's heads expect 32"):
        StreamingContentMonitor(None, hidden_size=32).with_backbone(decoder)


def test_review_silent_inputs_now_raise(tmp_path, decoder):
    """Review turn 3: gamma=nan was accepted, and a hidden-16 monitor loaded onto a hidden-32 backbone failed only
    at the first forward. Both failed before the fix."""
    from neurips25.scm import tiny_decoder

    with pytest.raises(ValueError, match="`gamma` must be >= 0"):
        StreamingContentMonitor(None, hidden_size=4, gamma=float("nan"))
    StreamingContentMonitor(decoder).save_pretrained(tmp_path / "m")
    with pytest.raises(ValueError, match="hidden size 32; the saved monitor's heads expect 16"):
        StreamingContentMonitor.from_pretrained(tmp_path / "m", tiny_decoder(40, 32, 2, 2, seed=0))
    assert StreamingContentMonitor(None, hidden_size=4, gamma=np.float32(0.5)).config["gamma"] == 0.5
