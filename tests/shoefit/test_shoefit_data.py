"""MVShoesLite v2 (issue #51): the data properties the claims rely on, each with a control that shows the test
can fail (the v1 data, or the property switched off)."""

import numpy as np
import pytest
import torch

from neurips25.shoefit import MVShoesLite, render
from neurips25.shoefit.baselines import copy_view_baseline
from neurips25.shoefit.data import _texture_bank, random_shoe
from neurips25.shoefit.metrics import contamination_slope, masked_psnr


def _swap_sides(shoe):
    colors = shoe["colors"].copy()
    colors[[1, 3]] = colors[[3, 1]]
    return {**shoe, "colors": colors, "logos": shoe["logos"][::-1].copy()}


@pytest.mark.parametrize("symmetric", [True, False])
def test_right_view_is_the_left_view_of_the_mirrored_shoe(symmetric):
    """Symmetric shoes: view 270 == view 90 with left / right colours swapped, pixel for pixel, so nothing in a
    product view's pixels says which side it shows. The v1 shoes (control) differ."""
    rng, tex, white = np.random.default_rng(0), _texture_bank(), np.ones((16, 16, 3))
    errs = []
    for _ in range(20):
        shoe = random_shoe(rng, symmetric)
        right = render(shoe, 270.0, 15.0, 16, white, 0.0, False, tex)[0]
        left_of_swapped = render(_swap_sides(shoe), 90.0, 15.0, 16, white, 0.0, False, tex)[0]
        errs.append(np.abs(right - left_of_swapped).max())
    if symmetric:
        assert max(errs) < 1e-9
    else:
        assert min(errs) > 0.05


def _orientation_accuracy(data):
    """Say "this side view is the left one" when its left end matches view 0's colour better than its right end.

    The statistic a model with shared view ids (B) can compute from content alone; returns its accuracy over
    both side views of every item."""
    v = (data.ref_views.numpy() + 1) / 2
    m = data.ref_masks.numpy()[:, :, 0]
    hits = []
    for i in range(len(data)):
        toe = (v[i, 0] * m[i, 0]).sum((1, 2)) / m[i, 0].sum()
        for view, is_left in ((1, True), (3, False)):
            cols = np.nonzero(m[i, view].any(0))[0]
            ends = [(v[i, view][:, :, c] * m[i, view][:, c]).sum((1, 2)) / m[i, view][:, c].sum()
                    for c in (cols[:2], cols[-2:])]
            left_end_is_toe = np.linalg.norm(ends[0] - toe) < np.linalg.norm(ends[1] - toe)
            hits.append(left_end_is_toe == is_left)
    return float(np.mean(hits))


def test_a_content_statistic_cannot_tell_the_side_views_apart():
    sym = _orientation_accuracy(MVShoesLite(60, seed=3, res=16, split="test"))
    v1 = _orientation_accuracy(MVShoesLite(60, seed=3, res=16, split="test", symmetric=False))
    acc_v1 = max(v1, 1 - v1)
    assert sym == 0.5  # identical ends: the statistic says the same for both side views of a shoe
    assert acc_v1 >= 0.9  # control: the v1 views give their orientation away


def test_targets_are_misaligned_in_scale_and_translation():
    mis = MVShoesLite(80, seed=1, res=24, split="test")
    ali = MVShoesLite(80, seed=1, res=24, split="test", zoom_range=(1, 1), max_offset=0)

    def spread(d):
        m = d.mask[:, 0].numpy()
        cy = (m * np.arange(24)[:, None]).sum((1, 2)) / m.sum((1, 2))
        cx = (m * np.arange(24)[None]).sum((1, 2)) / m.sum((1, 2))
        return float(np.hypot(cy.std(), cx.std())), float(np.std(np.log(m.sum((1, 2)))))

    (c_mis, a_mis), (c_ali, a_ali) = spread(mis), spread(ali)
    assert c_mis > 1.0 and c_mis > 2 * c_ali  # centroids move by more than a pixel
    assert a_mis > 1.5 * a_ali  # areas vary with the zoom
    assert float(mis.zoom.min()) >= 0.7 and float(mis.zoom.max()) <= 1.05 and float(mis.offset.abs().max()) <= 0.2
    assert torch.equal(ali.zoom, torch.ones(80)) and float(ali.offset.abs().max()) == 0


def test_planted_leak_background_colour_predicts_the_shoe_in_training_but_not_in_the_leak_split():
    """In training, background colour predicts the shoe's colour far beyond the physical tint (the shortcut and
    reflections); in the leak split (matte shoes, saturated backgrounds) only the tint remains. A model that
    learned training's association therefore leaks on the leak split."""
    train, leak = MVShoesLite(200, seed=0, res=16), MVShoesLite(120, seed=0, res=16, split="leak")
    slope = {n: contamination_slope(d.target, torch.zeros_like(d.target), d.bg_mean, d.mask)
             for n, d in (("train", train), ("leak", leak))}
    assert slope["train"] - slope["leak"] > 0.15, slope
    # the leak split: matte, full-saturation backgrounds (one channel at 1 and one at 0), outside training's range
    bg = leak.bg_mean
    assert float(leak.reflect.abs().max()) == 0 and float(train.reflect.max()) > 0.2
    assert torch.allclose(bg.max(1).values, torch.ones(len(leak))) and torch.allclose(bg.min(1).values,
                                                                                     torch.zeros(len(leak)))
    # the planted leak is measurable: a "model" that copies training's association leaks, the truth does not
    leaky = leak.target + 2 * (slope["train"] - slope["leak"]) * leak.mask * (bg - bg.mean(0))[:, :, None, None]
    assert contamination_slope(leaky, leak.target, bg, leak.mask) > 0.1
    assert abs(contamination_slope(leak.target, leak.target, bg, leak.mask)) < 1e-6


def test_copy_nearest_view_meets_the_headline_margins_on_the_data():
    """The positive control of c2: the instance can show C - A >= 1.5 and C - B >= 0.5 dB."""
    d = MVShoesLite(64, seed=2, res=24, split="test")
    psnr = {c: float(masked_psnr(copy_view_baseline(d, c, seed=0), d.target, d.mask).mean())
            for c in ("nearest", "view0", "random_side", "other_side")}
    assert psnr["nearest"] - psnr["view0"] >= 1.5, psnr
    assert psnr["nearest"] - psnr["random_side"] >= 0.5, psnr
    assert psnr["other_side"] < psnr["random_side"] < psnr["nearest"]
    out = copy_view_baseline(d, "nearest")
    assert torch.equal(out * (1 - d.mask), d.model_image * (1 - d.mask))  # the known region is kept
    with pytest.raises(ValueError, match="choice must be one of"):
        copy_view_baseline(d, "best")
    with pytest.raises(ValueError, match="data must have 4 product views"):
        copy_view_baseline(MVShoesLite(2, seed=0, res=16, views=1, split="test"), "nearest")


def test_dataset_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match=r"env_strength must be a pair of numbers"):
        MVShoesLite(2, env_strength=(0.1,))  # was "not enough values to unpack"
    with pytest.raises(ValueError, match="zoom_range must be"):
        MVShoesLite(2, zoom_range=(1.2, 0.8))
    with pytest.raises(ValueError, match="max_offset must be a number"):
        MVShoesLite(2, max_offset=True)
    with pytest.raises(ValueError, match="split must be 'train', 'test' or 'leak'"):
        MVShoesLite(2, split="val")
    assert len(MVShoesLite(2, seed=0, res=16, max_offset=np.float32(0.1), reflect_max=np.float64(0.2))) == 2
