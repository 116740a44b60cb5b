"""Spans from merged input_ids, Llava / Chameleon adapters, and bad layouts."""

import pytest
import torch

from neurips25.narrow_gate import ModalitySpans, chameleon_spans, llava_spans, spans_from_input_ids


def test_spans_native_layout():
    ids = torch.tensor([1, 3, 40, 41, 42, 4, 10, 11, 0])
    s = spans_from_input_ids(ids, range(40, 50), boi_id=3, eoi_id=4, ignore_ids=[0, 1])
    assert s.image == (2, 3, 4) and s.text == (6, 7) and s.eoi == 5 and s.boi == 1
    assert s.image_side == (1, 2, 3, 4, 5) and s.text_after_image() == (6, 7)
    batch = torch.stack([ids, ids])
    assert spans_from_input_ids(batch, range(40, 50), 3, 4, [0, 1]) == s


def test_adapters_read_the_configs():
    from transformers import LlavaConfig

    cfg = LlavaConfig(image_token_id=7)
    s = llava_spans(torch.tensor([1, 7, 7, 7, 9, 9]), cfg, ignore_ids=[1])
    assert s.image == (1, 2, 3) and s.text == (4, 5) and s.special == {}

    class C:
        vocabulary_map = {"<image>": 8, "<racm3:break>": 4, "<eoss>": 5}
    s = chameleon_spans(torch.tensor([1, 4, 8, 8, 5, 20]), C())
    assert (s.boi, s.eoi, s.image) == (1, 4, (2, 3))


def test_bad_layouts():
    with pytest.raises(ValueError, match="outside the sequence of length 4"):
        ModalitySpans(image=[1, 5], text=[2], length=4)
    with pytest.raises(ValueError, match="overlap"):
        ModalitySpans(image=[1, 2], text=[2])
    with pytest.raises(ValueError, match="exactly once"):
        spans_from_input_ids(torch.tensor([3, 40, 4, 4]), [40], boi_id=3, eoi_id=4)
    with pytest.raises(ValueError, match="different image layouts"):
        spans_from_input_ids(torch.tensor([[3, 40, 4], [40, 3, 4]]), [40])
    with pytest.raises(ValueError, match="no image token"):
        spans_from_input_ids(torch.tensor([1, 2, 3]), 40)
    with pytest.raises(TypeError, match="integer torch tensor"):
        spans_from_input_ids([1, 2, 3], 1)
    with pytest.raises(ValueError, match="image_token_id"):
        llava_spans(torch.tensor([1]), object())
    with pytest.raises(KeyError, match="eoi"):
        _ = ModalitySpans(image=[1], text=[2]).eoi
