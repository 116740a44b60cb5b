"""Federated learning with regularized client participation and permuted client orders.

With M clients and S participants per round, *regularized participation* (Malinovsky et al. 2023;
Cho et al. 2023) makes every client take part exactly once per cycle of ceil(M / S) rounds. The
order of the clients within a cycle is a permutation, so the unified analysis of permutation-based
SGD applies with n -> rounds per cycle and the heterogeneity -> inter-client heterogeneity (Li, Lyu
& Liu, NeurIPS 2025, the federated extension; its exact form is reconstructed here). Any
:class:`~neurips25.perm_sgd.orderings.PermutationPolicy` over the clients can order a cycle:
cyclic (:class:`Incremental`), reshuffled (:class:`RandomReshuffling`) or balanced from the clients'
previous-cycle pseudo-gradients (:class:`GraB`).

:class:`UniformParticipation` is the usual baseline: S clients drawn uniformly each round,
independently across rounds (some clients wait many rounds, others come back at once).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from neurips25.perm_sgd.orderings import PermutationPolicy, RandomReshuffling, _check_seed

__all__ = ["RegularizedParticipation", "UniformParticipation", "fedavg"]


def _check_counts(n_clients: Any, clients_per_round: Any, owner: str) -> tuple[int, int]:
    for name, v in (("n_clients", n_clients), ("clients_per_round", clients_per_round)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{owner}: {name} must be an int >= 1, got {v!r}")
    if clients_per_round > n_clients:
        raise ValueError(f"{owner}: clients_per_round={clients_per_round} exceeds n_clients={n_clients}")
    return int(n_clients), int(clients_per_round)


class RegularizedParticipation:
    """Client schedule in which each client participates exactly once per cycle.

    Cycle c takes the order ``policy.next_epoch()`` over the M clients and cuts it into
    consecutive rounds of S clients (the last round of a cycle is smaller when S does not divide M).

    Parameters
    ----------
    n_clients : int
        M, the number of clients.
    clients_per_round : int
        S, participants per round (1 <= S <= M).
    policy : PermutationPolicy, optional
        Order of the clients in each cycle; ``policy.n`` must equal M and it must be a permutation.
        Default: ``RandomReshuffling(n_clients, seed)``.
    seed : int or None
        Seed of the default policy (ignored when ``policy`` is given).

    Attributes
    ----------
    rounds_per_cycle : int
        ceil(M / S).
    cycle : int
        Index of the current cycle (-1 before the first round).

    Examples
    --------
    >>> sched = RegularizedParticipation(6, 2, seed=0)
    >>> rounds = [sched.next_round() for _ in range(3)]
    >>> sorted(np.concatenate(rounds).tolist())
    [0, 1, 2, 3, 4, 5]
    """

    def __init__(self, n_clients: int, clients_per_round: int, policy: PermutationPolicy | None = None,
                 seed: int | None = None):
        self.n_clients, self.clients_per_round = _check_counts(n_clients, clients_per_round,
                                                               "RegularizedParticipation")
        if policy is None:
            policy = RandomReshuffling(self.n_clients, seed=seed)
        if not isinstance(policy, PermutationPolicy):
            raise TypeError(f"RegularizedParticipation: policy must be a PermutationPolicy, "
                            f"got {type(policy).__name__}")
        if policy.n != self.n_clients:
            raise ValueError(f"RegularizedParticipation: policy.n={policy.n} must equal "
                             f"n_clients={self.n_clients}")
        if not policy.is_permutation:
            raise ValueError(f"RegularizedParticipation: {type(policy).__name__} does not return "
                             "permutations, so clients would not participate exactly once per cycle; "
                             "use UniformParticipation")
        self.policy = policy
        self.rounds_per_cycle = -(-self.n_clients // self.clients_per_round)
        self.cycle = -1
        self._round_in_cycle = self.rounds_per_cycle  # forces a new cycle on the first call
        self._order = np.empty(0, dtype=np.int64)

    def __repr__(self) -> str:
        return (f"RegularizedParticipation(n_clients={self.n_clients}, "
                f"clients_per_round={self.clients_per_round}, "
                f"policy={self.policy!r})")

    @property
    def cycle_order(self) -> np.ndarray:
        """The order of the clients in the current cycle, shape ``(M,)``."""
        return self._order.copy()

    def next_round(self) -> np.ndarray:
        """Client ids of the next round, shape ``(S,)`` (fewer in a cycle's last round)."""
        if self._round_in_cycle >= self.rounds_per_cycle:
            self._order = self.policy.next_epoch()
            self.cycle += 1
            self._round_in_cycle = 0
        S = self.clients_per_round
        clients = self._order[self._round_in_cycle * S:(self._round_in_cycle + 1) * S]
        self._round_in_cycle += 1
        return clients.copy()

    def observe(self, client: int, update: Any) -> None:
        """Report a participant's pseudo-gradient (in the round's order) to the client policy."""
        self.policy.observe(client, update)


class UniformParticipation:
    """Baseline schedule: S of the M clients drawn uniformly without replacement each round,
    independently across rounds.

    Parameters
    ----------
    n_clients, clients_per_round : int
        M and S as in :class:`RegularizedParticipation`.
    seed : int or None
        Seed of the draws.

    Examples
    --------
    >>> UniformParticipation(10, 3, seed=0).next_round().shape
    (3,)
    """

    def __init__(self, n_clients: int, clients_per_round: int, seed: int | None = None):
        self.n_clients, self.clients_per_round = _check_counts(n_clients, clients_per_round,
                                                               "UniformParticipation")
        _check_seed(seed, "UniformParticipation")
        self._rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return f"UniformParticipation(n_clients={self.n_clients}, clients_per_round={self.clients_per_round})"

    def next_round(self) -> np.ndarray:
        return self._rng.choice(self.n_clients, size=self.clients_per_round, replace=False)

    def observe(self, client: int, update: Any) -> None:
        """Uniform sampling does not use the updates."""


def fedavg(client_grad: Callable[[int, np.ndarray, np.random.Generator], Any], x0: Any,
           participation: RegularizedParticipation | UniformParticipation, rounds: int, local_steps: int,
           lr: float, server_lr: float = 1.0, seed: int | None = None,
           callback: Callable[[int, np.ndarray, np.ndarray], Any] | None = None) -> np.ndarray:
    """FedAvg with local SGD under a participation schedule (numpy, float64).

    Round r: the scheduled clients each run ``local_steps`` SGD steps from the server model x,
    y <- y - lr * g_c(y); client c's pseudo-gradient (x - y_c) / (lr * local_steps) is reported to
    ``participation.observe`` (so a GraB client order balances it); the server applies
    x <- x - server_lr * mean_c (x - y_c).

    Parameters
    ----------
    client_grad : callable ``(client, x, rng) -> array of shape (d,)``
        A (stochastic) gradient of client ``client``'s local loss at x.
    x0 : array-like, shape (d,)
    participation : RegularizedParticipation or UniformParticipation
    rounds, local_steps : int
        Number of communication rounds and of local steps per participant.
    lr, server_lr : float
        Client and server step sizes.
    seed : int or None
        Seeds the ``rng`` passed to ``client_grad``.
    callback : callable ``(round, x, clients) -> Any``, optional
        Called after every round; returning ``False`` stops early.

    Returns
    -------
    np.ndarray, shape (d,)
        The final server model.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([0.0, 1.0, 2.0, 3.0])        # client c: f_c(x) = (x - a_c)^2 / 2
    >>> x = fedavg(lambda c, x, rng: x - a[c], np.zeros(1), RegularizedParticipation(4, 2, seed=0),
    ...            rounds=40, local_steps=2, lr=0.1)
    >>> bool(abs(x[0] - 1.5) < 0.2)
    True
    """
    if not callable(client_grad):
        raise TypeError("client_grad must be callable as client_grad(client, x, rng)")
    if not hasattr(participation, "next_round") or not hasattr(participation, "observe"):
        raise TypeError("participation must provide next_round() and observe(client, update)")
    for name, v in (("rounds", rounds), ("local_steps", local_steps)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < (0 if name == "rounds" else 1):
            raise ValueError(f"{name} must be an int >= {0 if name == 'rounds' else 1}, got {v!r}")
    for name, v in (("lr", lr), ("server_lr", server_lr)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v > 0:
            raise ValueError(f"{name} must be a float > 0, got {v!r}")
    _check_seed(seed, "fedavg")
    rng = np.random.default_rng(seed)
    x = np.array(x0, dtype=np.float64).reshape(-1)
    for r in range(rounds):
        clients = participation.next_round()
        total = np.zeros_like(x)
        for c in clients:
            y = x.copy()
            for _ in range(local_steps):
                y -= lr * np.asarray(client_grad(int(c), y, rng), dtype=np.float64)
            delta = x - y
            participation.observe(int(c), delta / (lr * local_steps))
            total += delta
        x = x - server_lr * total / len(clients)
        if callback is not None and callback(r, x, clients) is False:
            break
    return x
