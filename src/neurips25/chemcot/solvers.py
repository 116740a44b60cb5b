"""Reference solvers that answer ChemCoTBench prompts: rule-based, random-edit, identity.

A solver reads only the prompt text (through :func:`neurips25.chemcot.tasks.parse_prompt`), so it can stand
behind the HTTP server exactly like a model. All three are deterministic: any randomness is seeded by the
solver's seed and the prompt, so answers do not depend on call order or concurrency.

- :class:`RuleBasedSolver`: understanding by RDKit computation; editing by :mod:`~neurips25.chemcot.ops`;
  optimisation by beam search over add / delete / substitute operations under a Tanimoto >= ``min_similarity``
  constraint to the source, guided by the property oracle (which an LLM never sees: it is an upper
  reference, not a fair competitor); forward reactions by matching the prompt's reagents to the template.
- :class:`RandomEditSolver`: one random valid operation on the input molecule, whatever was asked.
- :class:`IdentitySolver`: returns the input molecule (count 0, "No").
"""

from __future__ import annotations

import hashlib
import json
import numbers

import numpy as np
from rdkit import Chem
from rdkit.Chem import rdMolDescriptors

from neurips25.chemcot.data import REACTIONS, forward_products
from neurips25.chemcot.metrics import murcko, tanimoto
from neurips25.chemcot.ops import (
    OFFICIAL_GROUPS,
    OperationError,
    add_group,
    count_group,
    count_mol,
    delete_group,
    edit_groups,
    substitute_group,
)
from neurips25.chemcot.oracles import get_oracle
from neurips25.chemcot.tasks import OPT_ORACLE, SUBTASKS, parse_prompt

GROUPS = edit_groups("official")


def last_user_message(messages) -> str:
    """Content of the last user message of an OpenAI-style message list."""
    if isinstance(messages, str):
        return messages
    if not isinstance(messages, (list, tuple)) or not messages:
        raise ValueError("`messages` must be a non-empty list of {role, content} dicts")
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "user":
            return str(m.get("content", ""))
    last = messages[-1]
    return str(last.get("content", "")) if isinstance(last, dict) else str(last)


def _reply(subtask: str | None, value) -> str:
    key = SUBTASKS[subtask][1] if subtask in SUBTASKS else "output"
    return json.dumps({key: value})


class _Solver:
    name = "solver"

    def __init__(self, seed: int = 0):
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"`seed` must be a non-negative integer; got {seed!r}")
        self.seed = int(seed)

    def _rng(self, prompt: str) -> np.random.Generator:
        h = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:8], "little")
        return np.random.default_rng([self.seed, h])

    def answer(self, prompt: str) -> str:
        raise NotImplementedError

    def __call__(self, messages, **params) -> str:
        """ChatClient-style call: answer the last user message."""
        return self.answer(last_user_message(messages))

    complete = __call__

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self.seed})"


def _random_edit(smiles: str, rng) -> str | None:
    for _ in range(20):
        op = rng.choice(["add", "delete"])
        g = str(rng.choice(GROUPS))
        try:
            prods = add_group(smiles, g) if op == "add" else delete_group(smiles, g)
        except OperationError:
            return None
        if prods:
            return str(prods[int(rng.integers(len(prods)))])
    return None


class RuleBasedSolver(_Solver):
    """Deterministic, oracle-guided rule-based answers (see the module docstring).

    Parameters
    ----------
    beam : int
        Beam width of the optimisation search.
    depth : int
        Number of operations chained at most.
    min_similarity : float
        Tanimoto (Morgan r=2, 2048) to the source every candidate must keep.
    max_sites : int
        Attachment atoms tried per group and step (the first ones in atom order).
    substitute : bool
        Include :func:`~neurips25.chemcot.ops.substitute_group` moves in the beam (default; ``False`` gives
        the add / delete-only search of the first version, kept to show what the move adds).
    oracles : dict, optional
        Oracles per optimisation subtask (default: :func:`get_oracle` of the subtask's property).
    """

    name = "rule-based"

    def __init__(self, beam: int = 2, depth: int = 2, min_similarity: float = 0.4, max_sites: int = 4,
                 oracles: dict | None = None, seed: int = 0, substitute: bool = True):
        super().__init__(seed)
        for nm, v in (("beam", beam), ("depth", depth), ("max_sites", max_sites)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"`{nm}` must be a positive integer; got {v!r}")
        if not isinstance(min_similarity, numbers.Real) or not 0 <= min_similarity <= 1:
            raise ValueError(f"`min_similarity` must be in [0, 1]; got {min_similarity!r}")
        self.beam, self.depth, self.max_sites = int(beam), int(depth), int(max_sites)
        self.min_similarity = float(min_similarity)
        self.oracles = dict(oracles or {})
        if not isinstance(substitute, bool):
            raise ValueError(f"`substitute` must be True or False; got {substitute!r}")
        self.substitute = substitute

    def _oracle(self, sub):
        if sub not in self.oracles:
            self.oracles[sub] = get_oracle(OPT_ORACLE[sub])
        return self.oracles[sub]

    def optimize(self, source: str, subtask: str) -> str:
        """Best molecule found by beam search (the source itself when nothing improves it)."""
        f = self._oracle(subtask)
        sign = 1.0 if getattr(f, "maximize", True) else -1.0
        src = Chem.MolToSmiles(Chem.MolFromSmiles(source))
        best_score, best = sign * f(src), src
        frontier, seen = [src], {src}
        for _ in range(self.depth):
            cands = []
            for m in frontier:
                mol = Chem.MolFromSmiles(m)
                present = [g for g in GROUPS if count_mol(mol, g) > 0]
                moves = []
                for g in GROUPS:
                    moves += add_group(m, g, self.max_sites)
                for g in present:
                    moves += delete_group(m, g)
                    if self.substitute:
                        for new in GROUPS:
                            if new != g:
                                moves += substitute_group(m, g, new)[: self.max_sites]
                for c in moves:
                    if c in seen:
                        continue
                    seen.add(c)
                    if tanimoto(c, src) < self.min_similarity:
                        continue
                    v = f(c)
                    if v is not None:
                        cands.append((sign * v, c))
            if not cands:
                break
            cands.sort(key=lambda t: (-t[0], t[1]))
            frontier = [c for _, c in cands[: self.beam]]
            if cands[0][0] > best_score:
                best_score, best = cands[0]
        return best

    def answer(self, prompt: str) -> str:
        q = parse_prompt(prompt)
        sub, smi = q.get("subtask"), q.get("smiles")
        try:
            if sub == "fg_count":
                g = q.get("group", "")
                return _reply(sub, count_group(smi, g) if g in OFFICIAL_GROUPS else 0)
            if sub == "ring_count":
                return _reply(sub, rdMolDescriptors.CalcNumRings(Chem.MolFromSmiles(smi)))
            if sub == "Murcko_scaffold":
                return _reply(sub, murcko(smi))
            if sub == "ring_system_scaffold":
                ring = Chem.MolFromSmiles(q.get("ring", ""))
                hit = ring is not None and Chem.MolFromSmiles(smi).HasSubstructMatch(ring)
                return _reply(sub, "Yes" if hit else "No")
            if sub == "equivalence":
                a, b = Chem.MolFromSmiles(smi), Chem.MolFromSmiles(q.get("smiles_b", ""))
                same = a is not None and b is not None and Chem.MolToSmiles(a) == Chem.MolToSmiles(b)
                return _reply(sub, "Yes" if same else "No")
            if sub == "add":
                prods = add_group(smi, q["group"])
            elif sub == "delete":
                prods = delete_group(smi, q["group"])
            elif sub == "sub":
                prods = substitute_group(smi, q["group"], q["new_group"])
            elif sub in OPT_ORACLE:
                return _reply(sub, self.optimize(smi, sub))
            elif sub == "fs":
                reactants = q.get("reactants", "").split(".")
                reagents = q.get("reagents", "")
                ranked = sorted(REACTIONS, key=lambda r: r[3] != reagents)
                for _, smarts, _partner, _ in ranked:
                    mine = [r for r in reactants if r]
                    prods = forward_products(mine, smarts) or forward_products(mine[:1], smarts)
                    if prods:
                        return _reply(sub, prods[0])
                return _reply(sub, reactants[0] if reactants else "")
            else:
                return json.dumps({"output": ""})
            return _reply(sub, prods[0] if prods else smi)
        except (OperationError, KeyError, AttributeError, LookupError):
            return _reply(sub, smi or "")


class RandomEditSolver(_Solver):
    """One random valid add / delete of a random group on the input molecule (seeded per prompt)."""

    name = "random-edit"

    def answer(self, prompt: str) -> str:
        q = parse_prompt(prompt)
        sub, smi = q.get("subtask"), q.get("smiles")
        rng = self._rng(prompt)
        if sub in ("fg_count", "ring_count"):
            return _reply(sub, int(rng.integers(0, 4)))
        if sub in ("ring_system_scaffold", "equivalence"):
            return _reply(sub, str(rng.choice(["Yes", "No"])))
        if sub == "fs":
            smi = q.get("reactants", "").split(".")[0]
        if not smi or Chem.MolFromSmiles(smi) is None:
            return _reply(sub, "")
        if sub == "Murcko_scaffold":
            edited = _random_edit(smi, rng)
            return _reply(sub, murcko(edited or smi))
        return _reply(sub, _random_edit(smi, rng) or smi)


class IdentitySolver(_Solver):
    """Returns the input molecule unchanged (and 0 / "No" for the non-molecule answers)."""

    name = "identity"

    def answer(self, prompt: str) -> str:
        q = parse_prompt(prompt)
        sub = q.get("subtask")
        if sub in ("fg_count", "ring_count"):
            return _reply(sub, 0)
        if sub in ("ring_system_scaffold", "equivalence"):
            return _reply(sub, "No")
        if sub == "fs":
            return _reply(sub, q.get("reactants", "").split(".")[0])
        return _reply(sub, q.get("smiles", ""))
