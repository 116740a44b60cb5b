"""The reproduction's training: Adam's coupled weight_decay=2*lam is the penalty lam*||theta||^2 in the loss."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from neurips25.rank_bounds.reproduce import Config, make_mlp, train_mlp  # noqa: E402


def _penalty_in_loss(X, y, width, depth, lam, cfg, seed):
    """Independent reference: the penalty built in the loss, for-loop Adam (the v1 training loop)."""
    torch.manual_seed(seed)
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    net = make_mlp(X.shape[1], width, depth, int(y.max()) + 1)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, foreach=False)
    n = len(X)
    steps = cfg.epochs * math.ceil(n / cfg.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr, total_steps=steps, pct_start=0.1)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(cfg.epochs):
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n, cfg.batch):
            b = perm[i : i + cfg.batch]
            loss = torch.nn.functional.cross_entropy(net(Xt[b]), yt[b])
            loss = loss + lam * sum((p**2).sum() for p in net.parameters())
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    return net


@pytest.mark.parametrize("lam", [1e-3, 5e-2])
def test_adam_weight_decay_equals_penalty_in_loss(lam):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 5)).astype(np.float32)
    y = rng.integers(0, 3, 64)
    cfg = Config(
        depths=(2,), widths=(8,), wds=(lam,), n_seeds=1, n_train_digits=64, n_train_teacher=64,
        epochs=3, epochs_no_wd=3, batch=16,
    )
    net, _ = train_mlp(X, y, 8, 2, lam, cfg, seed=3)
    ref = _penalty_in_loss(X, y, 8, 2, lam, cfg, seed=3)
    for a, b in zip(net.parameters(), ref.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=0, atol=1e-5)
    # and the penalty is really applied: without it the weights differ by far more than that tolerance
    cfg0 = Config(**{**cfg.__dict__, "wds": (0.0,)})
    free, _ = train_mlp(X, y, 8, 2, 0.0, cfg0, seed=3)
    gap = max(float((a - b).detach().abs().max()) for a, b in zip(free.parameters(), ref.parameters()))
    assert gap > 1e-4 * (lam / 1e-3)
