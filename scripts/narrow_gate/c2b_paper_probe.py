"""Why c2b (the adapter toy's all-image knockout) flips at paper scale: the knockout by start layer, per seed.

Trains the adapter (LLaVA-like) toy exactly as ``reproduce.train_pair`` does at the given scale (the same data
draw, tokenizer-free patches, text LM pretraining then the adapter stage), and measures task accuracy with all
image tokens, and with [EOI], knocked out from each start layer L to the last, plus the per-attribute accuracy
with all image tokens knocked out from layer 1. The drop from layer 0 is the whole image path; the drop from
layer 1 leaves layer 0's reading of the image in place (c2b's criterion starts at layer 1, as c2's does).

    python scripts/narrow_gate/c2b_paper_probe.py [--scale paper] [--seeds 0,1,2]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from neurips25.narrow_gate import reproduce as R
from neurips25.narrow_gate.analysis import knockout_sweep, target_keys
from neurips25.narrow_gate.data import ShapesWorld
from neurips25.narrow_gate.knockout import attention_knockout
from neurips25.narrow_gate.tasks import ToyEval
from neurips25.narrow_gate.toy import AdapterToyVLM
from neurips25.narrow_gate.training import TrainConfig, pretrain_text_lm, train_adapter
from neurips25.repro import Scale


def probe(cfg: dict, seed: int) -> dict:
    patch = cfg["patches"][0]
    world = ShapesWorld(R.IMAGE_SIZE)
    rng = np.random.default_rng(seed)
    data = world.sample(cfg["n_train"], rng=rng)
    ev_batch = world.sample(cfg["n_eval"], rng=rng)
    n_img = (R.IMAGE_SIZE // patch) ** 2
    torch.manual_seed(seed)
    a = AdapterToyVLM.create(patch * patch * 3, n_img, layers=cfg["layers"])
    t0 = time.process_time()
    pretrain_text_lm(a, data, TrainConfig(steps=cfg["lm_steps"]), seed)
    train_adapter(a, data, patch, TrainConfig(steps=cfg["adapter_steps"]), seed, lm="tuned")
    cpu = time.process_time() - t0
    ev = ToyEval.build(a, ev_batch, patch=patch)
    R._use_eager(a)
    L = len(a.get_decoder().layers)
    sw = knockout_sweep(a, lambda: ev.accuracy()["task_text"], ev.spans, targets=("eoi", "all_image"),
                        start_layers=list(range(L)), mode="mask_pre_softmax")
    base = sw["baseline"]
    q = list(ev.spans.text_after_image())
    with attention_knockout(a, q, target_keys(ev.spans, "all_image", None), range(1, L), mode="mask_pre_softmax"):
        ko1 = ev.accuracy()
    full = ev.accuracy()
    attrs = [k for k in full if k.startswith(("vqa_", "caption_")) and k not in ("caption_text",)]
    return {"seed": seed, "train_cpu_s": round(cpu, 1), "baseline": round(base, 1),
            "all_image_drop_by_start": [round(base - sw["all_image"][s], 1) for s in range(L)],
            "eoi_drop_by_start": [round(base - sw["eoi"][s], 1) for s in range(L)],
            "share_of_image_path_left_at_layer_0": round((sw["all_image"][1] - sw["all_image"][0])
                                                         / max(base - sw["all_image"][0], 1e-9), 3),
            "per_attribute": {k: [round(full[k], 1), round(ko1[k], 1)] for k in attrs}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="paper")
    ap.add_argument("--seeds", default="0,1,2")
    a = ap.parse_args()
    cfg = R.settings(Scale.parse(a.scale))
    for s in (int(x) for x in a.seeds.split(",")):
        print(json.dumps(probe(cfg, s)), flush=True)


if __name__ == "__main__":
    main()
