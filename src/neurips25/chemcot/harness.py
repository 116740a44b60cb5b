"""Evaluate a chat client on ChemCoTBench items: concurrent queries, JSONL as answers arrive, resume, scores.

:func:`evaluate` sends each item's prompt as one user message, appends every raw reply (or the failure)
to a JSONL file the moment it arrives, and on a rerun with the same file re-queries only the items without
a successful reply -- an interrupted run loses nothing. A failed request (after the client's retries) is
recorded with its error and scored as an unparsable answer; it never stops the evaluation. Every reply is
parsed by both parsers of :mod:`~neurips25.chemcot.parsing` (``record["answers"]``); the report scores with
``parser`` (default ``"official"``, the official-style strict parser, so its numbers sit beside the paper's
rows) and :meth:`Report.rescore` gives the other parser's scores from the same replies. Metrics are the
official ones (:mod:`~neurips25.chemcot.metrics`), editing counted with ``smarts`` (default official).
"""

from __future__ import annotations

import dataclasses
import json
import numbers
import os
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from neurips25.chemcot.metrics import METRICS, score_subtask
from neurips25.chemcot.parsing import PARSERS, extract_answer
from neurips25.chemcot.tasks import Item

SYSTEM_PROMPT = None  # ChemCoTBench sends the query as the only (user) message


@dataclasses.dataclass
class Report:
    """Scores of one evaluation.

    ``subtasks`` maps each subtask to its metric dict (plus ``parse_rate`` and ``failed``); ``records``
    holds one dict per item: id, subtask, response (raw text or None), error, seconds, answer (parsed).
    """

    subtasks: dict
    records: list[dict]
    seconds: float
    skipped: list[str] = dataclasses.field(default_factory=list)
    parser: str = "official"
    smarts: str = "official"
    items: list = dataclasses.field(default_factory=list, repr=False)

    def rescore(self, parser: str | None = None, smarts: str | None = None) -> Report:
        """The same replies scored with another parser and / or SMARTS set."""
        return score(self.items, self.records, seconds=self.seconds, parser=parser or self.parser,
                     smarts=smarts or self.smarts)

    @property
    def parse_rate(self) -> float:
        scored = [r for r in self.records if r["subtask"] in METRICS]
        return sum(r["answer"] is not None for r in scored) / max(len(scored), 1)

    @property
    def failures(self) -> int:
        return sum(r["error"] is not None for r in self.records)

    def headline(self) -> dict:
        """Subtask -> its headline metric (MAE for counts, pass / accuracy / success / exact otherwise)."""
        return {s: m.get(METRICS[s][1]) for s, m in self.subtasks.items()}

    def table(self) -> str:
        """A plain-text per-subtask table."""
        rows = [("subtask", "n", "metric", "value", "parsed", "failed")]
        for s, m in self.subtasks.items():
            key = METRICS[s][1]
            rows.append((s, str(m["n"]), key, f"{m[key]:.3f}", f"{m['parse_rate']:.2f}", str(m["failed"])))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
        if self.skipped:
            lines.append(f"not scored here (no offline metric): {', '.join(sorted(set(self.skipped)))}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        subs = {s: {k: v for k, v in m.items() if k != "deltas"} for s, m in self.subtasks.items()}
        return {"subtasks": subs, "parse_rate": self.parse_rate, "failures": self.failures,
                "seconds": self.seconds, "n": len(self.records), "parser": self.parser, "smarts": self.smarts}


def _read_done(path: Path) -> dict[str, dict]:
    done: dict[str, dict] = {}
    if not path.is_file():
        return done
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash: that item is simply asked again
            if isinstance(rec, dict) and rec.get("error") is None and isinstance(rec.get("response"), str):
                done[str(rec["id"])] = rec
    return done


def evaluate(client, items: Sequence[Item], workers: int = 2, jsonl: str | os.PathLike | None = None,
             progress: bool | None = None, desc: str = "chemcot", parser: str = "official",
             smarts: str = "official") -> Report:
    """Query ``client`` on every item and score the answers.

    Parameters
    ----------
    client : ChatClient
        Anything with ``complete(messages) -> str`` (:class:`~neurips25.chemcot.clients.OpenAIChatClient`,
        :class:`~neurips25.chemcot.clients.CallableClient`).
    items : sequence of Item
        Item ids must be unique.
    workers : int
        Concurrent requests.
    jsonl : path, optional
        Raw replies are appended here as they arrive; items already answered in it are not asked again.
    progress : bool, optional
        Show a bar (default: when stderr is a terminal).
    parser : {"official", "lenient"}
        The parser the report scores with (both are recorded per reply).
    smarts : {"official", "neurips25"}
        The SMARTS set of the editing check.

    Returns
    -------
    Report
    """
    if not callable(getattr(client, "complete", None)):
        raise TypeError(f"`client` must have a complete(messages) method; got {type(client).__name__}")
    items = list(items)
    if not all(isinstance(it, Item) for it in items):
        raise TypeError("`items` must be a sequence of Item")
    ids = [it.id for it in items]
    if len(set(ids)) != len(ids):
        raise ValueError("`items` must have unique ids")
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise ValueError(f"`workers` must be a positive integer; got {workers!r}")
    _check_choice(parser, "parser", PARSERS)
    _check_choice(smarts, "smarts", ("official", "neurips25"))
    t0 = time.perf_counter()
    path = Path(jsonl) if jsonl is not None else None
    done = _read_done(path) if path is not None else {}
    todo = [it for it in items if it.id not in done]
    lock = threading.Lock()
    fh = open(path, "a", encoding="utf-8") if path is not None else None

    def ask(it: Item) -> dict:
        messages = ([{"role": "system", "content": SYSTEM_PROMPT}] if SYSTEM_PROMPT else []) + \
                   [{"role": "user", "content": it.prompt}]
        t = time.perf_counter()
        try:
            resp, err = client.complete(messages), None
            if not isinstance(resp, str):
                resp, err = None, f"client returned {type(resp).__name__}, not str"
        except Exception as e:  # noqa: BLE001 - one failed item must not end the evaluation
            resp, err = None, f"{type(e).__name__}: {e}"
        rec = {"id": it.id, "subtask": it.subtask, "response": resp, "error": err,
               "seconds": round(time.perf_counter() - t, 4)}
        if fh is not None:
            with lock:
                fh.write(json.dumps(rec) + "\n")
                fh.flush()
        return rec

    show = sys.stderr.isatty() and not os.environ.get("CI") if progress is None else bool(progress)
    bar = None
    if show and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc=desc, dynamic_ncols=True, leave=False)
    fresh: dict[str, dict] = {}
    try:
        with ThreadPoolExecutor(max_workers=int(workers)) as pool:
            futures = [pool.submit(ask, it) for it in todo]
            for fut in as_completed(futures):
                rec = fut.result()
                fresh[rec["id"]] = rec
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        if fh is not None:
            fh.close()
    records = []
    for it in items:
        rec = dict(done.get(it.id) or fresh[it.id])
        resp = rec.get("response")
        rec["answers"] = {p: (extract_answer(resp, *it.answer_key, parser=p) if resp else None) for p in PARSERS}
        rec["answer"] = rec["answers"][parser]
        records.append(rec)
    return score(items, records, seconds=time.perf_counter() - t0, parser=parser, smarts=smarts)


def _check_choice(value, name, allowed):
    if value not in allowed:
        raise ValueError(f"`{name}` must be one of {', '.join(allowed)}; got {value!r}")


def score(items: Sequence[Item], records: Sequence[dict], seconds: float = 0.0, parser: str = "official",
          smarts: str = "official") -> Report:
    """Score parsed answers per subtask: ``records[i]["answers"][parser]`` (or ``records[i]["answer"]``)."""
    _check_choice(parser, "parser", PARSERS)
    _check_choice(smarts, "smarts", ("official", "neurips25"))
    if len(items) != len(records):
        raise ValueError(f"`items` and `records` must have the same length; got {len(items)} and {len(records)}")
    records = [dict(r, answer=r["answers"][parser]) if isinstance(r.get("answers"), dict) else dict(r)
               for r in records]
    by_sub: dict[str, list[int]] = defaultdict(list)
    skipped = []
    for i, it in enumerate(items):
        if it.subtask in METRICS:
            by_sub[it.subtask].append(i)
        else:
            skipped.append(it.subtask)
    subtasks = {}
    for sub, idx in by_sub.items():
        its = [items[i] for i in idx]
        preds = [records[i]["answer"] for i in idx]
        try:
            m = score_subtask(sub, preds, its, smarts)
        except LookupError as err:  # e.g. drd without a registered oracle
            skipped.append(f"{sub} ({err})")
            continue
        m["parse_rate"] = sum(p is not None for p in preds) / len(preds)
        m["failed"] = sum(records[i]["error"] is not None for i in idx)
        subtasks[sub] = m
    return Report(subtasks, list(records), seconds, skipped, parser, smarts, list(items))
