"""Does a gate formed by training show under the method's own knockout, with no mask at measurement time?

Trains the native toy under the [EOI]-only training regime (``train_native(gate_through_eoi=True)``: in
training, text after the image cannot attend to the image tokens, only to [EOI]) on the quick data of one
seed, then measures it twice with ``reproduce.study``: with no mask (as the method is measured: c2's positive
control ``trained_gate`` since issue #62) and inside ``routed_through_eoi`` (the hand-set evaluation mask of the
earlier ``gated_toy``). Prints base accuracy, [EOI] / random / all-image drops from layers 0 and 1 and the [EOI]
share of text->image attention per layer.

    python scripts/narrow_gate/trained_gate_probe.py [--seed 0] [--scale quick] [--steps N]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from neurips25.narrow_gate import reproduce as R
from neurips25.narrow_gate.data import ShapesWorld
from neurips25.narrow_gate.tasks import ToyEval
from neurips25.narrow_gate.tokenizer import PatchKMeansTokenizer
from neurips25.narrow_gate.toy import NativeToyVLM
from neurips25.narrow_gate.training import TrainConfig, train_native
from neurips25.repro import Scale


def summary(r: dict) -> dict:
    sw = r["sweep"]
    rt = sw["random_target"]
    return {"baseline": round(sw["baseline"], 1),
            **{f"{t}_drop_from_{s}": round(sw["baseline"] - sw[rt if t == "random" else t][s], 1)
               for t in ("eoi", "random", "all_image") for s in (0, 1)},
            "eoi_share": [round(x, 2) for x in r["share"]["eoi"]],
            "flip_mid": r["steer_eoi"][r["mid_layer"]], "accuracy": {k: round(v, 1) for k, v in r["accuracy"].items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale", default="quick")
    ap.add_argument("--steps", type=int, default=None, help="training steps (default: the scale's gated_steps)")
    a = ap.parse_args()
    cfg = R.settings(Scale.parse(a.scale))
    patch, seed = cfg["patches"][0], a.seed
    world = ShapesWorld(R.IMAGE_SIZE)
    rng = np.random.default_rng(seed)
    data = world.sample(cfg["n_train"], rng=rng)
    ev_batch = world.sample(cfg["n_eval"], rng=rng)
    base, src = R._pairs(world, cfg["n_pairs"], seed + 1000)
    n_img = (R.IMAGE_SIZE // patch) ** 2
    tok = PatchKMeansTokenizer(patch, 64, seed=seed).fit(data.images[:cfg["kmeans_fit"]])
    torch.manual_seed(seed)
    g = NativeToyVLM.create(64, n_img, layers=cfg["layers"])
    t0 = time.process_time()
    train_native(g, data, tok, TrainConfig(steps=a.steps or cfg["gated_steps"]), seed, generation=True,
                 gate_through_eoi=True, shuffled_captions=cfg["gated_shuffled_captions"])
    out = {"train_cpu_s": round(time.process_time() - t0, 1)}
    evs = [ToyEval.build(g, b, tok) for b in (ev_batch, base, src)]
    out["no_mask"] = summary(R.study(g, *evs, seed, cfg["n_draws"], full=False))
    with R.routed_through_eoi(g, n_img):
        evs = [ToyEval.build(g, b, tok) for b in (ev_batch, base, src)]
        out["eval_mask"] = summary(R.study(g, *evs, seed, cfg["n_draws"], full=False))
    print(json.dumps(out, indent=1), flush=True)


if __name__ == "__main__":
    main()
