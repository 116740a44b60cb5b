"""RS-Pool: robust singular pooling for graph classification.

Paper: S. Ennadir, O. Smirnov, Y. Abbahaddou, L. Cao, J. F. Lutzeyer, "Enhancing Graph
Classification Robustness with Singular Pooling", NeurIPS 2025 (arXiv 2510.22643; official code
github.com/king/rs-pool, Apache-2.0).

Flat readouts (sum, mean, max) let an adversary who flips a few edges move the graph embedding a
lot: sum pooling adds up every perturbed node, max pooling follows the single worst node. RS-Pool
reads a graph out through the dominant singular pair of its node-embedding matrix ``H`` ([n, d]),

    g(H) = (sigma_1 / alpha) v_1,

whose change under a perturbation ``Delta H`` is governed by the spectral gap ``sigma_1 - sigma_2``
(Wedin / Davis-Kahan) and whose scale ``sigma_1`` is 1-Lipschitz in ``||Delta H||_2``. It is computed by
a few power steps on ``H^T H`` started from the sum-pool direction, which fixes the sign, keeps the
gradients finite where an SVD's are not, and makes RS-Pool "a few power steps away from sum pooling".
Reconstructed here (the paper's full text was not available): the exact statements of the bounds and
the role of ``alpha`` in them; the method itself follows the official code. See docs/rspool.md.

Public API
----------
- :class:`RSPoolAggregation`: a ``torch_geometric.nn.aggr.Aggregation`` (global readout or
  ``MessagePassing(aggr=...)``); importing ``neurips25.rspool`` registers it with PyG's
  ``aggregation_resolver``, so ``aggr="rspool"`` works.
- :func:`rs_pool` (functional twin of ``global_add_pool``), :func:`rs_pool_dense` (padded batches).
- :class:`GCN` (sparse, any readout) and :class:`DenseGCN` (dense twin that attacks differentiate).
- Attacks in :mod:`neurips25.rspool.attacks`; data in :mod:`neurips25.rspool.data`.

Citation::

    @inproceedings{ennadir2025rspool,
      title     = {Enhancing Graph Classification Robustness with Singular Pooling},
      author    = {Ennadir, Sofiane and Smirnov, Oleg and Abbahaddou, Yassine and Cao, Lele
                   and Lutzeyer, Johannes F.},
      booktitle = {Advances in Neural Information Processing Systems},
      year      = {2025}
    }
"""

from __future__ import annotations

import importlib
import importlib.util

from neurips25.extras import require

require("torch", "graph")

from neurips25.rspool.functional import rs_pool, rs_pool_dense  # noqa: E402

if importlib.util.find_spec("torch_geometric") is not None:
    # registers RSPoolAggregation with PyG, so aggr="rspool" resolves once neurips25.rspool is imported
    importlib.import_module("neurips25.rspool.aggr")

__all__ = ["RSPoolAggregation", "rs_pool", "rs_pool_dense", "GCN", "DenseGCN"]

_LAZY = {"RSPoolAggregation": "neurips25.rspool.aggr", "GCN": "neurips25.rspool.models",
         "DenseGCN": "neurips25.rspool.models"}


def __getattr__(name: str):
    # PyG-dependent names import on first use, so `rs_pool` works with torch alone.
    if name in _LAZY:
        require("torch_geometric", "graph")
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'neurips25.rspool' has no attribute {name!r}")
