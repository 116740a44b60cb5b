"""The preference-guidance term of PGD-MOO's reverse step (Eq. 6), with the reference-utility reuse.

g(x_t, r, t) = grad_x log P(x_t > r | t) = sigma(s(r, t) - s(x_t, t)) grad_x s(x_t, t)      (Bradley-Terry)

The official sampler replaces the reference r by the current iterate after every step, so at step t the
reference is x_{t+1}, the previous iterate. An exact step therefore needs, besides the noise predictor,
two utility passes: a forward at r and a forward + input-gradient backward at x_t. The utility at r has,
however, already been computed one step earlier, as s(x_{t+1}, t+1). With ``reuse_reference=True``
(the default) that value is reused as s(r): one utility pass fewer per step; the only change is that the
reference is scored at its own step t+1 instead of t. The difference is small because the weight
sigma(s(r) - s(x)) stays near 0.5 along the whole chain (measured in the review of this package on
ZDT1: 0.489-0.500; :attr:`PreferenceGuidance.weights` records it): with a moving reference the
guidance is, in effect, plain ascent on the utility, w beta_t 0.5 grad_x s(x_t, t).
"""

from __future__ import annotations

import torch

from neurips25.pref_diffusion.nets import PreferenceNet

__all__ = ["PreferenceGuidance"]


class PreferenceGuidance:
    """Callable ``g = guidance(x, ref, t)`` for :meth:`DDPM.p_sample_guided`, one per reverse chain.

    Parameters
    ----------
    model : PreferenceNet
        The fitted preference model s_phi(x_t, t). Its weights are not modified: only input gradients
        are taken.
    reuse_reference : bool, default=True
        Reuse the utility of the previous iterate (computed at the previous step) as s(r) when ``ref``
        is that iterate; False recomputes s(r, t) at every step (the official code).

    Attributes
    ----------
    weights : list of tuple (int, float, float)
        Per call: (step t, mean, standard deviation) of the Bradley-Terry weight sigma(s(r) - s(x)).
    utility_passes : int
        Utility evaluations so far (forwards at the reference plus forward-backward passes at x).

    Examples
    --------
    >>> net = PreferenceNet(2, hidden=8)
    >>> g = PreferenceGuidance(net)
    >>> x0, x1, t = torch.zeros(3, 2), torch.ones(3, 2), torch.full((3,), 5)
    >>> g(x1, x0, t).shape, g.utility_passes        # first call: reference scored, then x
    (torch.Size([3, 2]), 2)
    >>> _ = g(torch.ones(3, 2) * 2, x1, t); g.utility_passes   # ref is the last x: its utility is reused
    3
    """

    def __init__(self, model: PreferenceNet, reuse_reference: bool = True):
        if not isinstance(model, PreferenceNet):
            raise TypeError(f"`model` must be a PreferenceNet, got {type(model).__name__}")
        self.model = model
        self.reuse_reference = bool(reuse_reference)
        self.weights: list[tuple[int, float, float]] = []
        self.utility_passes = 0
        self._last_x: torch.Tensor | None = None
        self._last_s: torch.Tensor | None = None

    def __call__(self, x: torch.Tensor, ref: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        if self.reuse_reference and ref is self._last_x and self._last_s is not None:
            s_r = self._last_s  # s(x_{t+1}, t+1): the previous iterate at its own step
        else:
            with torch.no_grad():
                s_r = self.model.utility(ref, t)
            self.utility_passes += 1
        xg = x.detach().requires_grad_(True)
        s_x = self.model.utility(xg, t)
        self.utility_passes += 1
        # log sigmoid(s(x) - s(r)), r held fixed
        logp = torch.nn.functional.logsigmoid(s_x - s_r).sum()
        (g,) = torch.autograd.grad(logp, xg)
        with torch.no_grad():
            wgt = torch.sigmoid(s_r - s_x)
            self.weights.append((int(t[0]), float(wgt.mean()), float(wgt.std()) if len(wgt) > 1 else 0.0))
        self._last_x, self._last_s = x, s_x.detach()
        return g
