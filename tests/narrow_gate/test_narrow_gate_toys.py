"""ShapesWorld, the k-means tokenizer and the two toy VLMs as HF models the toolkit runs on."""

import numpy as np
import pytest
import torch

from neurips25.narrow_gate import (
    AdapterToyVLM,
    NativeToyVLM,
    PatchKMeansTokenizer,
    ShapesWorld,
    ToyEval,
    attention_knockout,
)


def test_world_is_seeded_and_pins_attributes():
    w = ShapesWorld()
    a, b = w.sample(6, seed=3), w.sample(6, seed=3)
    assert np.array_equal(a.images, b.images) and a.images.shape == (6, 24, 24, 3)
    c = w.sample(4, seed=0, colour=2)
    assert (c.attrs["colour"] == 2).all()
    red = w.sample(20, seed=1, colour=0).images
    assert red[..., 0].max() > 0.7  # a red object is drawn
    with pytest.raises(ValueError, match="colour values"):
        w.sample(2, seed=0, colour=7)
    with pytest.raises(ValueError, match="image_size"):
        ShapesWorld(image_size=18)


@torch.no_grad()
def test_toys_run_the_toolkit():
    w = ShapesWorld()
    data = w.sample(40, seed=0)
    tok = PatchKMeansTokenizer(6, 16).fit(data.images)
    codes = tok.encode(data.images)
    assert codes.shape == (40, 16) and codes.max() < 16
    assert tok.decode(codes, 24).shape == (40, 24, 24, 3)
    native = NativeToyVLM.create(16, 16, hidden=32, layers=2, heads=2, attn_implementation="eager").eval()
    adapter = AdapterToyVLM.create(108, 16, hidden=32, layers=2, heads=2, attn_implementation="eager").eval()
    for model, ev in ((native, ToyEval.build(native, w.sample(8, seed=1), tok)),
                      (adapter, ToyEval.build(adapter, w.sample(8, seed=1), patch=6))):
        s = ev.spans
        assert s.boi == 1 and s.eoi == 18 and s.image == tuple(range(2, 18)) and s.text_after_image()[0] == 19
        acc = ev.accuracy()
        assert 0 <= acc["task"] <= 100
        ref = model(**ev.qa).logits
        with attention_knockout(model, s.text_after_image(), s.image, "all"):
            assert not torch.allclose(model(**ev.qa).logits, ref)
        assert torch.equal(model(**ev.qa).logits, ref)
    inp = ToyEval.build(adapter, w.sample(2, seed=1), patch=6).qa
    with pytest.raises(ValueError, match="placeholders"):
        adapter(input_ids=inp["input_ids"], pixel_values=inp["pixel_values"][:1])
    with pytest.raises(ValueError, match="pixel_values must have shape"):
        adapter(input_ids=inp["input_ids"], pixel_values=inp["pixel_values"][..., :5])


@torch.no_grad()
def test_adapter_image_features_differ_across_images_at_init():
    # regression: with HF's std-0.02 init on the vision side the features were ~1e-3 and equal across images
    from neurips25.narrow_gate.data import patches

    w = ShapesWorld()
    adapter = AdapterToyVLM.create(108, 16)
    b = w.sample(8, seed=2)
    inp = adapter.inputs(patches(b.images, 6), np.zeros((8, 5), dtype=np.int64))
    emb = adapter.merge(inp["input_ids"], inp["pixel_values"])[:, 2:18]
    text_scale = adapter.get_input_embeddings().weight.std()
    assert emb.std(0).mean() > 0.3 * text_scale


@torch.no_grad()
def test_adapter_pixel_standardisation_matches_manual_normalisation():
    # the image processor's per-channel (x - mean) / std; without it the adapter trained to chance
    from neurips25.narrow_gate.data import patches

    w = ShapesWorld()
    b = w.sample(16, seed=4)
    adapter = AdapterToyVLM.create(108, 16, hidden=32, layers=2, heads=2).eval()
    pix = torch.from_numpy(patches(b.images, 6))
    before = adapter.vision(pix)
    adapter.vision.fit_pixel_norm(b.images)
    mean, std = b.images.reshape(-1, 3).mean(0), b.images.reshape(-1, 3).std(0, ddof=1)
    assert np.allclose(adapter.vision.pixel_mean.numpy(), mean, atol=1e-5)
    assert np.allclose(adapter.vision.pixel_std.numpy(), std, atol=1e-5)
    manual = ((pix.reshape(16, 16, 36, 3) - torch.from_numpy(mean)) / torch.from_numpy(std)).reshape(16, 16, 108)
    ref = AdapterToyVLM.create(108, 16, hidden=32, layers=2, heads=2).eval()
    ref.load_state_dict({k: v for k, v in adapter.state_dict().items() if "pixel_" not in k}, strict=False)
    assert torch.allclose(adapter.vision(pix), ref.vision(manual.float()), atol=1e-5)
    assert not torch.allclose(adapter.vision(pix), before, atol=1e-3)
    assert {"vision.pixel_mean", "vision.pixel_std"} <= set(adapter.state_dict())  # saved with the model
    with pytest.raises(ValueError, match="patch_dim"):
        AdapterToyVLM.create(100, 16)
