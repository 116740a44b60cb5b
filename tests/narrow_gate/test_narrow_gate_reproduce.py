"""The narrow_gate reproduction runs end to end at smoke scale with the v3 claims of issue #50."""

import copy

import numpy as np
import pytest
import torch

from neurips25.narrow_gate import NativeToyVLM, PatchKMeansTokenizer, ShapesWorld, ToyEval, attention_knockout
from neurips25.narrow_gate.reproduce import (
    declare_claims,
    penalise_attention_off_eoi,
    random_target,
    routed_through_eoi,
)
from neurips25.narrow_gate.training import TrainConfig, train_native
from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("narrow_gate", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    by_id = {c["id"]: c for c in res["claims"]}
    assert set(by_id) == {"c1_knockout_exact", "c2_narrow_gate", "c2b_adapter_distributed", "c3_attention_share",
                          "c4_steering", "c5_residual_gap"}
    assert [c["id"] for c in res["claims"] if c["kind"] == "headline"] == ["c2_narrow_gate"]
    assert all(c["verdict"] != "pending" and c["summary"] and c["decided_by"] == "machinery" for c in res["claims"])
    assert by_id["c1_knockout_exact"]["verdict"] == "reproduced"
    m = by_id["c2_narrow_gate"]["measured"]
    assert {"eoi_drop", "random_drop", "eoi_drop_from_0", "baseline"} <= set(m["method"])
    # issue #62: c2's positive control is the toy trained under the [EOI]-only regime, measured with no mask
    assert set(m["controls"]) == {"adapter_toy", "trained_gate"}
    tables = by_id["c2_narrow_gate"]["measured"]["details"]
    assert {"trained_gate", "gated"} <= set(next(iter(tables.values())))
    # v4: c3's positive control is a toy trained (not masked) to route attention through [EOI]
    c3 = by_id["c3_attention_share"]
    assert {r["name"]: r["role"] for r in c3["control_results"]} == {"swapped": "negative", "learned_gate": "positive"}
    assert all(r["provenance"].startswith("ran ") for c in res["claims"] for r in c["control_results"])
    assert all(c["instance"] == "stand-in" for c in res["claims"] if c["kind"] != "check")
    assert res["figures"] == ["figures/narrow_gate_layers.png"]


def test_random_control_scales_with_the_image():
    assert random_target(16) == "random_image_1" and random_target(1024) == "random_image_10"
    assert random_target(256) == "random_image_3"


@torch.no_grad()
def test_gated_wiring_leaves_eoi_as_the_only_path_from_the_image_to_the_text():
    w = ShapesWorld(24)
    data = w.sample(16, seed=0)
    tok = PatchKMeansTokenizer(6, 16).fit(data.images)
    m = NativeToyVLM.create(16, 16, hidden=32, layers=2, heads=2, attn_implementation="eager").eval()
    a, b = (ToyEval.build(m, w.sample(4, seed=s), tok) for s in (1, 2))
    text = list(a.spans.text_after_image())
    ids_b = a.caption["input_ids"].clone()
    ids_b[:, 2:18] = b.caption["input_ids"][:, 2:18]  # same text, other image
    with routed_through_eoi(m, 16):
        moved = (m(**a.caption).logits - m(input_ids=ids_b).logits)[:, text].abs().max()
        with attention_knockout(m, text, [a.spans.eoi], "all"):
            blocked = (m(**a.caption).logits - m(input_ids=ids_b).logits)[:, text].abs().max()
    assert moved > 1e-4 and blocked <= 1e-6
    assert np.isfinite(float(moved))


@torch.no_grad()
def test_toy_eval_reads_each_answer_where_it_is_predicted():
    """Oracle: a model whose logits at t put all mass on token t+1 scores 100%; an off-by-one scores less."""
    w = ShapesWorld(24)
    data = w.sample(16, seed=0)
    tok = PatchKMeansTokenizer(6, 16).fit(data.images)
    m = NativeToyVLM.create(16, 16, hidden=32, layers=2, heads=2, attn_implementation="eager").eval()
    ev = ToyEval.build(m, w.sample(8, seed=1), tok)
    vocab = m.config.vocab_size

    class Oracle:
        def __init__(self, shift):
            self.shift = shift

        def __call__(self, input_ids, **kw):
            nxt = torch.roll(input_ids, -self.shift, dims=1)
            return type("O", (), {"logits": torch.nn.functional.one_hot(nxt, vocab).float()})()

    ev.model = Oracle(1)
    acc = ev.accuracy()
    assert acc["task"] == 100 and acc["task_text"] == 100
    ev.model = Oracle(2)
    assert ev.accuracy()["task"] < 100


def _tiny_native_setup():
    w = ShapesWorld(24)
    data = w.sample(32, seed=0)
    tok = PatchKMeansTokenizer(6, 16).fit(data.images)
    torch.manual_seed(0)
    m = NativeToyVLM.create(16, 16, hidden=32, layers=2, heads=2)
    return data, tok, m


def test_gated_training_wires_the_text_through_eoi_like_the_evaluation():
    """The positive control is trained under the wiring it is evaluated with (image-first rows only)."""
    data, tok, m = _tiny_native_setup()
    cfg = TrainConfig(steps=1, batch=8)
    ref, plain, gated = copy.deepcopy(m), copy.deepcopy(m), copy.deepcopy(m)
    with routed_through_eoi(ref, 16):
        wired = train_native(ref, data, tok, cfg, 3, generation=False)[0]
    ungated = train_native(plain, data, tok, cfg, 3, generation=False)[0]
    trained = train_native(gated, data, tok, cfg, 3, generation=False, gate_through_eoi=True)[0]
    assert abs(trained - wired) < 1e-5 and abs(trained - ungated) > 1e-4
    # with caption->image rows in the batch the wiring must leave them alone (a per-row query mask)
    both = train_native(copy.deepcopy(m), data, tok, cfg, 3, generation=True, gate_through_eoi=True)[0]
    assert np.isfinite(both)


def test_shuffled_captions_change_the_training_and_are_checked():
    data, tok, m = _tiny_native_setup()
    cfg = TrainConfig(steps=1, batch=16)
    a = train_native(copy.deepcopy(m), data, tok, cfg, 3, generation=False)[0]
    b = train_native(copy.deepcopy(m), data, tok, cfg, 3, generation=False, shuffled_captions=1.0)[0]
    assert abs(a - b) > 1e-4
    with pytest.raises(ValueError, match="shuffled_captions"):
        train_native(m, data, tok, cfg, 3, shuffled_captions=1.5)


def test_learned_gate_penalty_adds_to_the_loss_and_masks_nothing():
    """c3's positive control is trained by a loss term, not wired: the wrapper adds (1 - [EOI] share) x weight to a
    training loss, leaves a forward without labels untouched, and is removed cleanly."""
    world = ShapesWorld(24)
    data = world.sample(8, rng=np.random.default_rng(0))
    tok = PatchKMeansTokenizer(6, 64, seed=0).fit(data.images)
    torch.manual_seed(0)
    m = NativeToyVLM.create(64, 16, layers=2)
    m.config._attn_implementation = "eager"
    ev = ToyEval.build(m, data, tok)
    ids = ev.qa["input_ids"]
    plain = m(input_ids=ids, labels=ids).loss
    logits = m(input_ids=ids).logits
    undo = penalise_attention_off_eoi(m, 16, weight=1.0)
    penalised = m(input_ids=ids, labels=ids).loss
    assert torch.equal(m(input_ids=ids).logits, logits)
    assert 0 < float((penalised - plain).detach()) <= 1.0
    undo()
    assert torch.equal(m(input_ids=ids, labels=ids).loss, plain)
    assert {c.id: c.instance for c in declare_claims()}["c3_attention_share"] == "stand-in"


@torch.no_grad()
def _text_moves_with_image_behind_eoi_knockout(m, a, b):
    text = list(a.spans.text_after_image())
    ids_b = a.caption["input_ids"].clone()
    ids_b[:, 2:18] = b.caption["input_ids"][:, 2:18]  # same text, other image
    with attention_knockout(m, text, [a.spans.eoi], "all"):
        return float((m(**a.caption).logits - m(input_ids=ids_b).logits)[:, text].abs().max())


def test_trained_gate_has_no_mask_at_measurement_time():
    """Issue #62: the [EOI]-only regime is a training mask; after training, the toy's text can read the image tokens
    directly again (so the positive control's gate is whatever training formed, not a mask the measurement adds)."""
    w = ShapesWorld(24)
    data = w.sample(32, seed=0)
    tok = PatchKMeansTokenizer(6, 16).fit(data.images)
    torch.manual_seed(0)
    m = NativeToyVLM.create(64, 16, hidden=32, layers=2, heads=2, attn_implementation="eager")
    train_native(m, data, tok, TrainConfig(steps=3, batch=8), 0, generation=True, gate_through_eoi=True)
    m.eval()
    a, b = (ToyEval.build(m, w.sample(4, seed=s), tok) for s in (1, 2))
    assert _text_moves_with_image_behind_eoi_knockout(m, a, b) > 1e-4  # a direct image->text path exists
    with routed_through_eoi(m, 16):  # the old hand-set evaluation mask closes it (the test can fail)
        assert _text_moves_with_image_behind_eoi_knockout(m, a, b) <= 1e-6
