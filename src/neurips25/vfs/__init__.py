"""VFS: vertical federated two-stage feature screening (NeurIPS 2025).

"Vertical Federated Feature Screening", NeurIPS 2025 poster (OpenReview ``msaLqsSTyF``). In vertical
federated learning an active party holds a rare binary label ``y`` and the key pair, and ``K`` passive
parties hold ultrahigh-dimensional sparse feature blocks of the same ``n`` aligned samples. VFS screens
coarse to fine before any expensive secure modelling: stage 1 scores feature *groups* and drops the
useless ones, stage 2 scores the individual features of the surviving groups. With negative sampling
(all positives, ``r n1`` negatives) only ``n_s = n1 (1 + r)`` labels are ever encrypted.

Per screened column ``u`` the passive party returns one Paillier ciphertext

    Enc(D_u) = n_s * (sum over nonzero u_i of u_i * Enc(y_i))  +  (-n1 * sum_i u_i),

``D_u = n1 n0 (mean_1(u) - mean_0(u))``, re-randomized before it is returned; the active party
decrypts it and ranks columns by a pluggable statistic. Passive parties hold only the public half of
the key (:class:`PaillierPublicBackend`) and validate the label message; an optional padded sample
hides which rows were sampled. Threat model: semi-honest active party (``docs/vfs.md`` lists what each
party learns). Costs are counted in ciphertext units by :class:`CostMeter`.

Reconstructed (the paper's full text was not available): the statistic, the group aggregate, the
subsampling scheme and the keep rules; see ``docs/vfs.md``.

Cite: Vertical Federated Feature Screening. NeurIPS 2025. https://openreview.net/forum?id=msaLqsSTyF

The Paillier backend needs the ``fed`` extra (``phe``); the plaintext backend needs only core packages.
"""

from neurips25.vfs.crypto import (
    CostMeter,
    EncryptedVector,
    PaillierBackend,
    PaillierPublicBackend,
    PlaintextBackend,
    PlaintextPublicBackend,
)
from neurips25.vfs.data import VerticalDataset, make_vertical_sparse_classification
from neurips25.vfs.parties import ActiveParty, LabelMessage, PassiveParty, StatisticMessage
from neurips25.vfs.protocol import ScreeningResult, run_protocol
from neurips25.vfs.screening import CentralizedSIS, OneStageFederatedScreener, VerticalFederatedScreener
from neurips25.vfs.statistics import STATISTICS, class_mean_difference, group_aggregate

__all__ = [
    "STATISTICS",
    "ActiveParty",
    "CentralizedSIS",
    "CostMeter",
    "EncryptedVector",
    "LabelMessage",
    "OneStageFederatedScreener",
    "PaillierBackend",
    "PaillierPublicBackend",
    "PassiveParty",
    "PlaintextBackend",
    "PlaintextPublicBackend",
    "ScreeningResult",
    "StatisticMessage",
    "VerticalDataset",
    "VerticalFederatedScreener",
    "class_mean_difference",
    "group_aggregate",
    "make_vertical_sparse_classification",
    "run_protocol",
]
