"""Issue #59 probes: low-precision surrogates and DiTs, surrogates of the wrong shape, estimators before fit."""

import numpy as np
import pytest
import torch
from sklearn.exceptions import NotFittedError

from neurips25.inverse3d import (
    FFDLattice,
    GPBOVoxelPCA,
    LatentDiT,
    TopologyPreservingRefiner,
    VoxelDragCNN,
    sphere_sdf,
    train_dit,
    voxelize,
)
from neurips25.inverse3d.surrogate import LatentDragHead, fit_regressor


def _setup(n=8, h=0.125):
    occ = voxelize(sphere_sdf((0.5, 0.5, 0.5), 0.3), (n, n, n), h)
    lo = np.full(3, 0.5 * h)
    return occ, FFDLattice(lo, lo + (n - 1) * h, (3, 3, 3))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_refiner_with_a_low_precision_surrogate(dtype):
    # failed with "Input type (float) and bias type (c10::BFloat16) should be the same"
    occ, lat = _setup()
    torch.manual_seed(0)
    cnn = VoxelDragCNN(width=4).eval()
    ref32 = TopologyPreservingRefiner(cnn, lat, occ.shape, np.ones(occ.shape), steps=2).refine(occ)
    r = TopologyPreservingRefiner(cnn.to(dtype), lat, occ.shape, np.ones(occ.shape), steps=2).refine(occ)
    assert np.isfinite(r.predicted).all() and abs(r.predicted[0] - ref32.predicted[0]) < 0.05


@pytest.mark.parametrize("bad", [lambda o: o.sum(), lambda o: o.sum((1, 2, 3))[:, None]])
def test_refiner_refuses_a_surrogate_not_returning_one_drag_per_design(bad):
    # a scalar-returning surrogate failed with "IndexError: invalid index of a 0-dim tensor"
    occ, lat = _setup()
    ref = TopologyPreservingRefiner(bad, lat, occ.shape, np.ones(occ.shape), steps=2)
    with pytest.raises(ValueError, match=r"`surrogate` must return one drag per design, shape \(B,\) = \(1,\); "
                                         r"got shape \((|1, 1)\)"):
        ref.refine(occ)


def test_train_dit_bfloat16_and_refuses_float16():
    # a bfloat16 DiT failed with "mat1 and mat2 must have the same dtype"; float16 AdamW turns the weights NaN
    lat = torch.randn(16, 3, 2, 2, 2)
    dit = LatentDiT((3, 2, 2, 2), dim=8, depth=1, heads=2, patch=1).to(torch.bfloat16)
    hist = train_dit(dit, lat, 3, batch=8, generator=torch.Generator().manual_seed(0))
    assert np.isfinite(hist).all() and all(torch.isfinite(p.float()).all() for p in dit.parameters())
    with pytest.raises(ValueError, match=r"`dit` has float16 parameters.*float32 or bfloat16"):
        train_dit(dit.half(), lat, 3, batch=8)


def test_fit_regressor_bfloat16_and_refuses_float16():
    # float16 returned a NaN loss and NaN weights silently; a bfloat16 head on float32 rows crashed
    x, y = torch.randn(16, 24), torch.randn(16)
    head = LatentDragHead(24).to(torch.bfloat16)
    assert np.isfinite(fit_regressor(head, x, y, 3, batch=8, generator=torch.Generator().manual_seed(0)))
    assert all(torch.isfinite(p.float()).all() for p in head.parameters())
    with pytest.raises(ValueError, match=r"`model` has float16 parameters.*float32 or bfloat16"):
        fit_regressor(LatentDragHead(24).half(), x, y, 3, batch=8)


def test_gpbo_propose_before_fit_is_not_fitted_error():
    # was AttributeError: 'GPBOVoxelPCA' object has no attribute 'codes_'
    with pytest.raises(NotFittedError, match="GPBOVoxelPCA.*fit"):
        GPBOVoxelPCA().propose(2)
    occ = np.random.default_rng(0).random((6, 4, 4, 4))
    g = GPBOVoxelPCA(n_components=3, n_candidates=50).fit(occ, np.arange(6.0))
    with pytest.raises(ValueError, match="`n_out` must be an integer >= 1"):
        g.propose(0)
    assert g.propose(2)[0].shape == (2, 4, 4, 4)
