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

from neurips25.perm_sgd.distributed import CDGraB
from neurips25.perm_sgd.orderings import PermutationPolicy, RandomReshuffling, _check_seed, _host, _is_torch

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

    Two ways to order a cycle (``balance``):

    - ``"sequential"`` (default): the order ``policy.next_epoch()`` over the M clients is cut into
      consecutive rounds of S clients (the last round is smaller when S does not divide M), and the
      policy sees the clients' updates one by one, as if each were a sequential SGD step;
    - ``"round"`` (coordinated, CD-GraB style; Cooper et al. 2023): FedAvg averages the S clients of
      a round at the same model, so the permuted unit is the round. The clients are split into S
      fixed lanes (client c in lane c mod S); lane w supplies the w-th client of every round, in the
      order of its own :class:`~neurips25.perm_sgd.distributed.CDGraB` walk, and the S lanes share
      one balancing sum, so the signs balance the rounds' joint prefix sums. Needs S | M.

    Updates may arrive in any order within a round (:meth:`observe`); a straggler is skipped with
    :meth:`drop`. When every client of the round is observed or dropped, the round is passed to
    the balancing policy in the round's order, a dropped client standing in with the mean of the
    round's received updates (no information, so it does not move the balance; zeros when none
    arrived). Starting the next round first treats the missing clients as dropped.

    Parameters
    ----------
    n_clients : int
        M, the number of clients.
    clients_per_round : int
        S, participants per round (1 <= S <= M).
    policy : PermutationPolicy, optional
        ``balance="sequential"`` only: the order of the clients in each cycle; ``policy.n`` must
        equal M and it must be a permutation. Default: ``RandomReshuffling(n_clients, seed)``.
    seed : int or None
        Seed of the default policy or of the lanes' first cycle.
    balance : {"sequential", "round"}, default "sequential"

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
    >>> coord = RegularizedParticipation(6, 2, seed=0, balance="round")
    >>> r = coord.next_round(); coord.observe(int(r[1]), np.ones(3)); coord.drop(int(r[0]))
    """

    def __init__(self, n_clients: int, clients_per_round: int, policy: PermutationPolicy | None = None,
                 seed: int | None = None, balance: str = "sequential"):
        self.n_clients, self.clients_per_round = _check_counts(n_clients, clients_per_round,
                                                               "RegularizedParticipation")
        if balance not in ("sequential", "round"):
            raise ValueError(f"RegularizedParticipation: balance must be 'sequential' or 'round', got {balance!r}")
        self.balance = balance
        M, S = self.n_clients, self.clients_per_round
        self.lanes = None
        if balance == "round":
            if policy is not None:
                raise ValueError("RegularizedParticipation: balance='round' builds its own CDGraB lanes; "
                                 "pass policy=None (or balance='sequential' to use a policy)")
            if M % S:
                raise ValueError(f"RegularizedParticipation: balance='round' needs clients_per_round={S} to "
                                 f"divide n_clients={M}")
            _check_seed(seed, "RegularizedParticipation")
            self.lanes = [CDGraB(M // S, S, w, seed=seed) for w in range(S)]
            self.policy = None
        else:
            if policy is None:
                policy = RandomReshuffling(M, seed=seed)
            if not isinstance(policy, PermutationPolicy):
                raise TypeError(f"RegularizedParticipation: policy must be a PermutationPolicy, "
                                f"got {type(policy).__name__}")
            if policy.n != M:
                raise ValueError(f"RegularizedParticipation: policy.n={policy.n} must equal n_clients={M}")
            if not policy.is_permutation:
                raise ValueError(f"RegularizedParticipation: {type(policy).__name__} does not return "
                                 "permutations, so clients would not participate exactly once per cycle; "
                                 "use UniformParticipation")
            self.policy = policy
        self.rounds_per_cycle = -(-M // S)
        self.cycle = -1
        self._round_in_cycle = self.rounds_per_cycle  # forces a new cycle on the first call
        self._order = np.empty(0, dtype=np.int64)
        self._round = np.empty(0, dtype=np.int64)
        self._pending: dict[int, Any] = {}
        self._dropped: set[int] = set()
        self._round_done = True

    def __repr__(self) -> str:
        return (f"RegularizedParticipation(n_clients={self.n_clients}, "
                f"clients_per_round={self.clients_per_round}, balance={self.balance!r}, "
                f"policy={self.policy!r})")

    @property
    def cycle_order(self) -> np.ndarray:
        """The order of the clients in the current cycle (its rounds concatenated), shape ``(M,)``."""
        return self._order.copy()

    def _lane_client(self, w: int, unit: int) -> int:
        return int(w + self.clients_per_round * unit)

    def next_round(self) -> np.ndarray:
        """Client ids of the next round, shape ``(S,)`` (fewer in a cycle's last round)."""
        if len(self._round) and not self._round_done:
            for c in self._round.tolist():  # clients never reported count as stragglers
                if c not in self._pending:
                    self._dropped.add(c)
            self._flush()
        if self._round_in_cycle >= self.rounds_per_cycle:
            if self.lanes is None:
                self._order = self.policy.next_epoch()
            else:
                orders = [lane.next_epoch() for lane in self.lanes]  # (S lanes) x (M / S rounds)
                self._order = np.array([self._lane_client(w, int(orders[w][r]))
                                        for r in range(self.rounds_per_cycle)
                                        for w in range(self.clients_per_round)], dtype=np.int64)
            self.cycle += 1
            self._round_in_cycle = 0
        S = self.clients_per_round
        self._round = self._order[self._round_in_cycle * S:(self._round_in_cycle + 1) * S].copy()
        self._round_in_cycle += 1
        self._round_done = False
        return self._round.copy()

    def _check_member(self, client: Any, where: str) -> int:
        if isinstance(client, bool) or not isinstance(client, numbers.Integral):
            raise TypeError(f"RegularizedParticipation.{where}: client must be an int, got {type(client).__name__}")
        c = int(client)
        if c not in self._round.tolist():
            raise ValueError(f"RegularizedParticipation.{where}: client {c} is not in the current round "
                             f"{self._round.tolist()}")
        if c in self._pending or c in self._dropped or self._round_done:
            raise ValueError(f"RegularizedParticipation.{where}: client {c} was already reported this round")
        return c

    def observe(self, client: int, update: Any) -> None:
        """Report a participant's pseudo-gradient (any order within the round)."""
        c = self._check_member(client, "observe")
        u = np.asarray(_host(update) if _is_torch(update) else update, dtype=np.float64)  # bfloat16 too
        if not np.isfinite(u).all():
            raise ValueError(f"RegularizedParticipation.observe: update of client {c} contains NaN or inf")
        self._pending[c] = u.reshape(-1)
        self._maybe_flush()

    def drop(self, client: int) -> None:
        """Skip a straggler of the current round: its update will not come."""
        self._dropped.add(self._check_member(client, "drop"))
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if len(self._pending) + len(self._dropped) == len(self._round):
            self._flush()

    def _flush(self) -> None:
        got = list(self._pending.values())
        if got:
            fill = np.mean(got, axis=0)
        else:
            d = (self.policy._dim if self.lanes is None else self.lanes[0]._dim)
            fill = None if d is None else np.zeros(d)
        rows = [self._pending.get(c, fill) for c in self._round.tolist()]
        self._pending, self._dropped = {}, set()
        self._round_done = True
        if any(r is None for r in rows):
            # no update ever seen (every client of the very first rounds dropped): nothing to balance;
            # the balancing policies then fall back to a random order for the next cycle
            return
        if self.lanes is None:
            for c, r in zip(self._round.tolist(), rows):
                self.policy.observe(c, r)
        else:
            G = np.stack(rows)[:, None, :]  # (S lanes, 1, d)
            S = self.clients_per_round
            for w, lane in enumerate(self.lanes):
                lane.observe_all([int(self._round[w]) // S], G)


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

    def drop(self, client: int) -> None:
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
    x = np.array(_host(x0) if _is_torch(x0) else x0, dtype=np.float64).reshape(-1)
    for r in range(rounds):
        clients = participation.next_round()
        total = np.zeros_like(x)
        for c in clients:
            y = x.copy()
            for _ in range(local_steps):
                g = client_grad(int(c), y, rng)
                y -= lr * np.asarray(_host(g) if _is_torch(g) else g, dtype=np.float64)
            delta = x - y
            participation.observe(int(c), delta / (lr * local_steps))
            total += delta
        x = x - server_lr * total / len(clients)
        if callback is not None and callback(r, x, clients) is False:
            break
    return x
