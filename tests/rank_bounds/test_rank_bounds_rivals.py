"""Each rival bound against an independent transcription of its published statement, on a tiny trained-free
net: the numbers are recomputed here from the raw weight matrices (numpy norms, path enumeration), never
from the package's LayerSpectrum, so a wrong published constant in the package would fail (issue 34)."""

import itertools
import math

import numpy as np
import pytest
import torch

from neurips25.rank_bounds import GeneralizationReport

DELTA = 0.05


@pytest.fixture(scope="module")
def setup():
    torch.manual_seed(3)
    net = torch.nn.Sequential(
        torch.nn.Linear(5, 6, bias=False),
        torch.nn.ReLU(),
        torch.nn.Linear(6, 6, bias=False),
        torch.nn.ReLU(),
        torch.nn.Linear(6, 3, bias=False),
    ).double()
    X = torch.randn(40, 5, dtype=torch.float64)
    y = net(X).argmax(1)
    res = GeneralizationReport(net, X, y, margin="min", delta=DELTA).compute()
    Ws = [m.weight.detach().numpy() for m in net if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        v = net(X).numpy()
    m = v[np.arange(40), y.numpy()] - np.where(np.eye(3)[y.numpy()] > 0, -np.inf, v).max(1)
    Xn = X.numpy()
    return res, Ws, Xn, float(m.min())


def test_bartlett_foster_telgarsky_lemma_a8(setup):
    # BFT 2017 Lemma A.8 as rendered by Graf et al. 2022: Rad <= 4/n + 9 ln(n)/sqrt(n) sqrt(ln 2Wbar)
    # (sum C_i^(2/3))^(3/2), C_i = (4/gamma)(||X||_F/sqrt n) prod_j s_j * ||A_i^T||_{2,1} / s_i, Wbar = max
    # matrix entries; gap = 2 Rad + 3 sqrt(ln(1/delta)/(2n))
    res, Ws, X, gamma = setup
    n = len(X)
    s = [np.linalg.norm(W, 2) for W in Ws]
    b = [np.sum(np.linalg.norm(W, axis=1)) for W in Ws]  # ||W^T||_{2,1}: l2 norms of the columns of W^T
    C = [(4 / gamma) * (np.linalg.norm(X) / math.sqrt(n)) * np.prod(s) * bi / si for bi, si in zip(b, s)]
    Wbar = max(W.size for W in Ws)
    rad = 4 / n + 9 * math.log(n) / math.sqrt(n) * math.sqrt(math.log(2 * Wbar)) * sum(c ** (2 / 3) for c in C) ** 1.5
    gap = 2 * rad + 3 * math.sqrt(math.log(1 / DELTA) / (2 * n))
    assert res["bartlett_spectral"].value == pytest.approx(gap, rel=1e-9)


def test_golowich_rakhlin_shamir_theorem_1(setup):
    # GRS 2018 Thm 1: Rad <= B (sqrt(2 ln(2) L) + 1) prod ||W_j||_F / sqrt(n) per scalar output; Maurer's
    # vector contraction with the sqrt(2)/gamma-Lipschitz ramp of the margin; sum_k ||w_k|| <= sqrt(K)||W_L||_F
    res, Ws, X, gamma = setup
    n, L, K = len(X), len(Ws), Ws[-1].shape[0]
    B = np.linalg.norm(X, axis=1).max()
    rad = B * (math.sqrt(2 * math.log(2) * L) + 1) * np.prod([np.linalg.norm(W) for W in Ws]) / math.sqrt(n)
    loss_rad = math.sqrt(2) * (math.sqrt(2) / gamma) * math.sqrt(K) * rad
    gap = 2 * loss_rad + 3 * math.sqrt(math.log(2 / DELTA) / (2 * n))
    assert res["golowich_frobenius"].value == pytest.approx(gap, rel=1e-9)


def test_neyshabur_bhojanapalli_srebro_theorem_1(setup):
    # NBS 2018 Thm 1 with its O(1) = 1: sqrt((B^2 d^2 h ln(dh) prod ||W||_2^2 sum ||W||_F^2/||W||_2^2
    # + ln(d n / delta)) / (gamma^2 n)), h the largest width
    res, Ws, X, gamma = setup
    n, d, h = len(X), len(Ws), 6
    B = np.linalg.norm(X, axis=1).max()
    s2 = [np.linalg.norm(W, 2) ** 2 for W in Ws]
    main = B**2 * d**2 * h * math.log(d * h) * np.prod(s2) * sum(np.linalg.norm(W) ** 2 / t for W, t in zip(Ws, s2))
    gap = math.sqrt((main + math.log(d * n / DELTA)) / (gamma**2 * n))
    assert res["neyshabur_pacbayes"].value == pytest.approx(gap, rel=1e-9)


def _path_norm_by_enumeration(Ws, p):
    """sum over every input -> output path of prod |w|^p, one path at a time, then the p-th root."""
    W1, W2, W3 = Ws
    total = 0.0
    for i0, i1, i2, k in itertools.product(range(5), range(6), range(6), range(3)):
        total += abs(W1[i1, i0] * W2[i2, i1] * W3[k, i2]) ** p
    return total ** (1 / p)


def test_neyshabur_tomioka_srebro_l2_path_norm_with_width_factor(setup):
    # NTS 2015 Cor. 2: Rad <= sqrt(phi^2 (2 H^{1/p*})^{2(L-1)} min(p*, 4 ln 2D) max||x||_{p*}^2 / n);
    # p = p* = 2: the width factor (2 sqrt H)^(L-1) and min(2, 4 ln 2D) = 2
    res, Ws, X, gamma = setup
    n, L, H, D, K = len(X), 3, 6, 5, 3
    phi = _path_norm_by_enumeration(Ws, 2)
    assert res["path_norm"].terms["path_norm"] == pytest.approx(phi, rel=1e-12)
    xmax = np.linalg.norm(X, axis=1).max()
    rad = math.sqrt(phi**2 * (2 * H**0.5) ** (2 * (L - 1)) * min(2, 4 * math.log(2 * D)) * xmax**2 / n)
    gap = 2 * math.sqrt(2) * (math.sqrt(2) / gamma) * math.sqrt(K) * rad + 3 * math.sqrt(math.log(2 / DELTA) / (2 * n))
    assert res["path_norm"].value == pytest.approx(gap, rel=1e-9)


def test_neyshabur_tomioka_srebro_l1_path_norm_is_width_free(setup):
    # p = 1, p* = inf: H^0 = 1, min(inf, 4 ln 2D) = 4 ln 2D, max ||x||_inf; per-output l1 norms add up
    res, Ws, X, gamma = setup
    n, L, D = len(X), 3, 5
    phi = _path_norm_by_enumeration(Ws, 1)
    assert res["path_norm_l1"].terms["path_norm"] == pytest.approx(phi, rel=1e-12)
    rad = math.sqrt(phi**2 * 2 ** (2 * (L - 1)) * 4 * math.log(2 * D) * np.abs(X).max() ** 2 / n)
    gap = 2 * math.sqrt(2) * (math.sqrt(2) / gamma) * rad + 3 * math.sqrt(math.log(2 / DELTA) / (2 * n))
    assert res["path_norm_l1"].value == pytest.approx(gap, rel=1e-9)


def test_path_norm_bound_grows_with_width_like_its_factor():
    # the factor the v1 code lacked: same path norm, 4x the width -> (2 sqrt(4))^(L-1) = 4x the gap at L = 3
    from neurips25.rank_bounds import DataStats, path_norm_bound

    data = DataStats(n=1000, B=1.0, X_frob=30.0, gamma=1.0, empirical_risk=0.0, n_classes=2)
    narrow = path_norm_bound(1.0, 3, data, width=64).terms["gap"]
    wide = path_norm_bound(1.0, 3, data, width=256).terms["gap"]
    conf = 3 * math.sqrt(math.log(2 / 0.05) / 2000)
    assert (wide - conf) / (narrow - conf) == pytest.approx(4.0, rel=1e-12)
    with pytest.raises(ValueError, match="`width`"):
        path_norm_bound(1.0, 3, data)
    with pytest.raises(ValueError, match="`p` must be 1"):
        path_norm_bound(1.0, 3, data, width=4, p=3)
