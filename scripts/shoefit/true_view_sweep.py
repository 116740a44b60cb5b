"""The stand-in budget of c2's learned positive control: side-colour accuracy of the true-view model by steps.

The quick data (1,500 train / 128 side-pose test triplets at the given seed, batch 16, 10 Euler steps, the
quick learning-rate schedule stretched to each length), one arm per (variant, steps), metrics printed and saved
as ``<out>/<variant>@<steps>_b16_s<seed>.npz``. ``T_true_view`` is A's single-view model conditioned on the view
nearest the true pose (``neurips25.shoefit.reproduce.TRUE_VIEW``); ``A_single_view`` sees view 0.

    python scripts/shoefit/true_view_sweep.py OUT [--seed 0] [--steps 1000,3000,6000] [--variants T_true_view]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from neurips25.shoefit.reproduce import sweep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", default="1000,3000,6000")
    ap.add_argument("--variants", default="T_true_view")
    a = ap.parse_args()
    for steps in (int(s) for s in a.steps.split(",")):
        t0 = time.process_time()
        sweep([steps], tuple(a.variants.split(",")), seed=a.seed, test_seed=a.seed, save=a.out)
        print(f"[{steps} steps: {time.process_time() - t0:.0f} s CPU]", flush=True)


if __name__ == "__main__":
    main()
