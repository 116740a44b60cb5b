"""The experiment's data: mini-iGSM splits and the SFT completions of each arm (plain, BRIDGE, filler)."""

from __future__ import annotations

import dataclasses

import numpy as np

from neurips25.behavior_injection.augment import BehaviorInjector, filler_like
from neurips25.behavior_injection.tasks import MiniIGSM, Problem

ARMS = ("plain", "bridge", "filler", "explore_only", "exploit_only")


@dataclasses.dataclass
class Splits:
    """SFT problems, RL queries, an RL-readiness probe set and the ID / OOD evaluation sets."""

    sft: list[Problem]
    rl: list[Problem]
    probe: list[Problem]
    eval_id: list[Problem]
    eval_ood: list[Problem]
    task: MiniIGSM


def make_splits(seed: int, n_sft: int, n_rl: int, n_probe: int, n_eval: int, id_ops=(2, 3), ood_ops=(4, 5),
                mod: int = 11, distractors=(1, 1), shape: str = "chain") -> Splits:
    """Independent generators per split (seeded from ``seed``); OOD problems need more operations."""
    ss = np.random.SeedSequence(seed).generate_state(5)
    make = lambda ops, s: MiniIGSM(n_ops=ops, mod=mod, distractors=distractors, seed=int(s), shape=shape)
    task = make(id_ops, ss[0])
    return Splits(task.samples(n_sft), make(id_ops, ss[1]).samples(n_rl), make(id_ops, ss[2]).samples(n_probe),
                  make(id_ops, ss[3]).samples(n_eval), make(ood_ops, ss[4]).samples(n_eval), task)


def arm_completions(problems: list[Problem], arm: str, p: float = 0.5, seed: int = 0) -> list[str]:
    """SFT targets of one arm: the reference, BRIDGE (explore + exploit), a length-matched filler control,
    or one behaviour only. The filler is matched to the BRIDGE completion drawn with the same seed."""
    if arm not in ARMS:
        raise ValueError(f"`arm` must be one of {ARMS}, got {arm!r}")
    if arm == "plain":
        return [q.completion for q in problems]
    if arm == "filler":
        bridge = arm_completions(problems, "bridge", p, seed)
        rng = np.random.default_rng(seed + 1)
        return [filler_like(q, len(b.split()), rng) for q, b in zip(problems, bridge)]
    pe = 0.0 if arm == "exploit_only" else p
    px = 0.0 if arm == "explore_only" else p
    inj = BehaviorInjector(p_explore=pe, p_exploit=px, seed=seed)
    return [inj.inject(q) for q in problems]


def solved_sequence(completion: str) -> list[str]:
    """The nodes a completion solves, in order (exploration ``try`` and ``note`` segments solve nothing)."""
    out = []
    for seg in completion.split(";"):
        words = seg.replace(",", " , ").split()
        if not words or words[0] in ("try", "note", "ANS"):
            continue
        if words[0] == "since":
            words = seg.rsplit(",", 1)[-1].split()
        if len(words) > 1 and words[1] == "=":
            out.append(words[0])
    return out


def behaviour_content(problems: list[Problem], completions: list[str]) -> dict:
    """What the injected behaviours carry on these problems (#48): explorations and exploitations per
    problem, the share of problems where some needed node is locked at the start (exploration possible), where
    several needed nodes are ready at once somewhere along the reference order (exploitation can reorder), and
    where the completion actually solves the nodes in another order than the reference."""
    explore = [c.count("try ") for c in completions]
    exploit = [c.count("since ") for c in completions]
    locked0, multi, reordered = [], [], []
    for p, c in zip(problems, completions):
        needed = p.dag.needed()
        solved = {n for n in p.dag.nodes if p.dag.is_leaf(n)}
        locked0.append(bool(p.dag.locked(solved, among=needed)))
        most = 0
        for n in p.order:
            most = max(most, len(p.dag.unlocked(solved, among=needed)))
            solved.add(n)
        multi.append(most > 1)
        reordered.append(solved_sequence(c) != list(p.order))
    return {"explorations_per_problem": float(np.mean(explore)), "exploitations_per_problem": float(np.mean(exploit)),
            "share_locked_at_start": float(np.mean(locked0)), "share_several_ready": float(np.mean(multi)),
            "share_reordered": float(np.mean(reordered))}
