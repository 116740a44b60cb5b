"""Render a run directory as ``report.md`` and one self-contained ``report.html``.

The report is built only from what is on disk (config, environment, each ``result.json`` and its
figures), so ``neurips25 report RUN_DIR`` re-renders it at any time. Figures are embedded in the
HTML as base64 PNG so the file opens offline.

What a person reads first: a summary table with ONE row per method (headline verdict, the other kinds
counted apart, wall and CPU time, where it ran); then, per method, one row per claim (kind, the paper's
figure, the claim's one-line summary: the key number against its threshold, and the verdict). Criteria,
notes and the raw measurement dicts follow, collapsed. A multi-seed wall time is the sum of the seeds'
walls (labelled so), with the elapsed time beside it.

:func:`render_merged` builds one report from several run directories (each method's newest result), and
says for every row which run directory it came from and where it ran.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

from neurips25.repro.claims import (
    describe_claims,
    format_number,
    headline_instance,
    headline_verdict,
    verdict_with_instance,
)
from neurips25.repro.registry import HAND_VERDICTS, METHODS
from neurips25.repro.store import RunDir, atomic_write_text, where_ran

VERDICT_STYLE = {
    "reproduced": ("#1a7f37", "#dafbe1"),
    "not_reproduced": ("#cf222e", "#ffebe9"),
    "inconclusive": ("#9a6700", "#fff8c5"),
    "mixed": ("#9a6700", "#fff8c5"),
    "unstable": ("#8250df", "#fbefff"),
    "pending": ("#57606a", "#f6f8fa"),
    "none": ("#57606a", "#f6f8fa"),
    "error": ("#ffffff", "#cf222e"),
}
KIND_ORDER = {"headline": 0, "supporting": 1, "check": 2}


def format_measured(value, limit: int = 160) -> str:
    """A short one-line rendering of a claim's raw measurement (the fallback when it has no summary)."""
    if isinstance(value, dict):
        text = ", ".join(f"{k}={format_measured(v, limit)}" for k, v in value.items())
    elif isinstance(value, list):
        if len(value) > 8:
            text = "[" + ", ".join(format_measured(v, limit) for v in value[:8]) + f", ... ({len(value)})]"
        else:
            text = "[" + ", ".join(format_measured(v, limit) for v in value) + "]"
    elif value is None:
        text = "-"
    else:
        text = format_number(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def claim_line(claim: dict, limit: int = 160) -> str:
    """The claim's human one-liner; results without one fall back to a short rendering of ``measured``."""
    return claim.get("summary") or format_measured(claim.get("measured"), limit)


def key_text(claim: dict) -> str:
    """The key figure the criterion reads and its threshold (``"advantage (>= 5)"``); '-' for hand-judged claims."""
    if not claim.get("key"):
        return "-"
    return f"{claim['key']} ({claim.get('threshold') or claim.get('criterion', '')})"


def _control_mark(r: dict) -> str:
    if r.get("passes") is None:
        return "not measured"
    verb = "passes" if r["passes"] else ("undecided: does not pass" if r.get("outcome") == "undecided" else "fails")
    return f"{verb}, as it must" if r.get("as_expected") else f"{verb}: UNEXPECTED (must {r.get('expected')})"


def controls_text(claim: dict) -> str:
    """Each control's key figure and whether it failed / passed the criterion as it must, side by side."""
    rows = claim.get("control_results") or []
    if not rows:
        return "-" if claim.get("decided_by") == "machinery" else "(hand-judged)"
    return "; ".join(f"{r['role']} {r['name']}: {format_number(r.get('key_value'))} ({_control_mark(r)}"
                     f"{'; ' + r['provenance'] if r.get('provenance') else ''})" for r in rows)


def method_figure(claim: dict) -> str:
    if claim.get("decided_by") != "machinery":
        return "-"
    passes = (claim.get("measured") or {}).get("method_passes") if isinstance(claim.get("measured"), dict) else None
    mark = "" if passes is None else (" (passes)" if passes else " (fails)")
    if "key_spread" in claim:
        k = claim["key_spread"]
        return f"{format_number(k['mean'])} ± {format_number(k['sd'])} [{format_number(k['min'])}, " \
               f"{format_number(k['max'])}]"
    return f"{format_number(claim.get('key_value'))}{mark}"


def verdict_text(claim: dict, slug: str | None = None) -> str:
    """The verdict, the machinery's reason, and a mark on hand-judged claims of methods not yet migrated."""
    v = verdict_with_instance(claim["verdict"], claim.get("instance", ""))
    changed = claim.get("ledger", "")
    changed = f" [{changed}]" if "changed" in changed or "not in the ledger" in changed else ""
    if claim.get("decided_by") == "machinery":
        return (f"{v}: {claim['reason']}" if claim.get("reason") else v) + changed
    issue = HAND_VERDICTS.get(slug or "")
    return f"{v} (set by hand, older form{f'; migrates in #{issue}' if issue else ''})"


def seed_cell(claim: dict, seed) -> str:
    cell = (claim.get("per_seed", {}) or {}).get(str(seed)) or {}
    if not cell:
        return "-"
    head = cell.get("verdict", "-").replace("_", " ")
    if cell.get("key_value") is not None:
        head = f"{claim.get('key', 'key')} {format_number(cell['key_value'])}: {head}"
    return f"{head}. {cell['summary']}" if cell.get("summary") else head


def _time(x) -> str:
    return "-" if x is None else f"{float(x):.0f}"


def wall_text(res: dict) -> str:
    """A result's wall time; for several seeds labelled as their sum, with the elapsed time beside it."""
    seeds = res.get("seeds") or []
    if len(seeds) <= 1:
        return _time(res.get("wall_s"))
    elapsed = f", {_time(res['elapsed_s'])} elapsed" if res.get("elapsed_s") is not None else ""
    return f"{_time(res.get('wall_s'))} (sum of {len(seeds)} seeds{elapsed})"


def _short_where(prov: dict | None) -> str:
    if not prov:
        return "unknown"
    code = prov.get("code") or {}
    commit = (code.get("commit") or "")[:8] or f"v{code.get('neurips25', '?')}"
    node = (prov.get("ray_node") or {}).get("id")
    host = f"{prov.get('host', '?')}/{node[:8]}" if node else prov.get("host", "?")
    return f"{host} ({prov.get('executor', '?')}, {commit})"


def ran_on(res: dict) -> str:
    """Where a method's unit(s) ran: ``host (executor, commit)``, one entry per distinct place."""
    prov = res.get("provenance") or {}
    per_seed = prov.get("per_seed")
    if per_seed is None:
        return _short_where(prov or None)
    places: dict[str, list[str]] = {}
    for seed, p in per_seed.items():
        places.setdefault(_short_where(p or None), []).append(seed)
    if len(places) == 1:
        return next(iter(places))
    return "; ".join(f"seed {','.join(s)}: {w}" for w, s in places.items())


def where_lines(res: dict) -> list[str]:
    """One line per unit on where it ran (host, CPU, BLAS kernel, executor, Python, code)."""
    prov = res.get("provenance") or {}
    if "per_seed" in prov:
        return [f"seed {s}: {where_ran(p)}" for s, p in prov["per_seed"].items()]
    return [where_ran(prov or None)]


def method_rows(results: dict[str, dict]) -> list[dict]:
    """One row per method: headline verdict, kinds counted apart, times."""
    rows = []
    for slug, res in results.items():
        if res.get("status") != "ok":
            rows.append({"method": slug, "headline": "error", "claims": res.get("error") or "crashed",
                         "wall_s": res.get("wall_s"), "cpu_s": res.get("cpu_s"), "wall": wall_text(res),
                         "ran_on": ran_on(res)})
            continue
        claims = res.get("claims", [])
        rows.append({"method": slug, "headline": headline_verdict(claims), "instance": headline_instance(claims),
                     "claims": describe_claims(claims),
                     "wall_s": res.get("wall_s"), "cpu_s": res.get("cpu_s"), "wall": wall_text(res),
                     "ran_on": ran_on(res)})
    return rows


def sorted_claims(res: dict) -> list[dict]:
    """A method's claims, headline first, then supporting, then checks (stable within a kind)."""
    return sorted(res.get("claims", []), key=lambda c: KIND_ORDER.get(c.get("kind", "supporting"), 1))


def spread_text(claim: dict, limit: int = 3) -> str:
    """Mean ± sd [min, max] over seeds of a claim's first few numeric figures."""
    items = list(claim.get("spread", {}).items())[:limit]
    return "; ".join(f"{k} {format_number(v['mean'])} ± {format_number(v['sd'])} "
                     f"[{format_number(v['min'])}, {format_number(v['max'])}]" for k, v in items) or "-"


def _seeds(cfg: dict) -> str:
    return ",".join(str(s) for s in cfg.get("seeds", [cfg.get("seed", "?")]))


def _md_cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _header(rd: RunDir, sources: dict[str, RunDir] | None) -> str:
    if sources is None:
        cfg = rd.config()
        return f"scale `{cfg.get('scale', '?')}`, seeds `{_seeds(cfg)}`"
    runs = sorted({str(r.path) for r in sources.values()})
    return f"merged from {len(runs)} run director{'y' if len(runs) == 1 else 'ies'}: " + ", ".join(
        f"`{r}`" for r in runs)


def _scale_seeds(res: dict) -> str:
    return f"{res.get('scale', '?')}, seeds {','.join(str(s) for s in res.get('seeds') or [res.get('seed', '?')])}"


def render_markdown(rd: RunDir, results: dict[str, dict], sources: dict[str, RunDir] | None = None) -> str:
    merged = sources is not None
    lines = [f"# neurips25 reproduction report: {rd.path.name}", "", _header(rd, sources), "",
             "| method | headline | all claims | wall (s) | CPU (s) | ran on |" + (" run (scale, seeds) |" if merged
                                                                                  else ""),
             "|---|---|---|---|---|---|" + ("---|" if merged else "")]
    for r in method_rows(results):
        extra = (f"{sources[r['method']].path} ({_scale_seeds(results[r['method']])})",) if merged else ()
        lines.append("| " + " | ".join(_md_cell(x) for x in (
            f"[{r['method']}](#{r['method']})", verdict_with_instance(r["headline"], r.get("instance", "")),
            r["claims"],
            r["wall"], _time(r["cpu_s"]), r["ran_on"], *extra)) + " |")
    for slug, res in results.items():
        title = METHODS[slug].title if slug in METHODS else slug
        lines += ["", f"## {slug}", "", f"{title}", ""]
        lines += ["Ran on: " + "; ".join(where_lines(res)) + (f" (run `{sources[slug].path}`)" if merged else ""),
                  ""]
        if res.get("status") != "ok":
            lines += [f"**error**: `{res.get('error')}` (traceback in `{slug}/log.txt`)"]
            continue
        lines += ["| claim | kind | paper | key figure (needs) | method | controls (judged by the same criterion) | "
                  "verdict | measured |", "|---|---|---|---|---|---|---|---|"]
        for c in sorted_claims(res):
            lines.append("| " + " | ".join(_md_cell(x) for x in (
                f"{c['id']}: {c['statement']}", c.get("kind", "supporting"), c.get("paper_value") or "-",
                key_text(c), method_figure(c), controls_text(c), verdict_text(c, slug), claim_line(c, 400))) + " |")
        if len(res.get("seeds", [])) > 1:
            lines += ["", "Per seed:", "", "| claim | " + " | ".join(f"seed {s}" for s in res["seeds"]) +
                      " | agreement | figures (mean ± sd [min, max]) |",
                      "|---|" + "---|" * len(res["seeds"]) + "---|---|"]
            for c in sorted_claims(res):
                cells = [seed_cell(c, s) for s in res["seeds"]]
                lines.append("| " + " | ".join(_md_cell(x) for x in (
                    c["id"], *cells, c.get("agreement", "-"), spread_text(c))) + " |")
        lines += ["", "<details><summary>criteria, notes and raw measurements</summary>", ""]
        for c in sorted_claims(res):
            lines += [f"- **{c['id']}** criterion: {c.get('criterion', '')}"]
            if c.get("instance"):
                lines.append(f"  - judged on: {c['instance']}" + (f" ({c['instance_note']})"
                                                                   if c.get("instance_note") else ""))
            if c.get("ledger"):
                lines.append(f"  - ledger: {c['ledger']}")
            if c.get("note"):
                lines.append(f"  - note: {c['note']}")
            lines.append(f"  - raw: `{format_measured(c.get('measured'), limit=4000)}`")
        lines += ["", "</details>"]
        if res.get("notes"):
            lines += ["", res["notes"]]
        base = _relpath(sources[slug].method_dir(slug), rd.path) if merged else slug
        for fig in res.get("figures", []):
            lines += ["", f"![{fig}]({base}/{fig})"]
    return "\n".join(lines) + "\n"


def _relpath(target: Path, start: Path) -> str:
    import os

    try:
        return os.path.relpath(target.resolve(), start.resolve())
    except ValueError:  # another drive (Windows)
        return str(target.resolve())


def _badge(verdict: str) -> str:
    fg, bg = VERDICT_STYLE.get(verdict, VERDICT_STYLE["pending"])
    return (f'<span class="badge" style="color:{fg};background:{bg}">'
            f"{html.escape(verdict.replace('_', ' '))}</span>")


CSS = ("body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#1f2328}"
       "table{border-collapse:collapse;width:100%;font-size:14px;margin:8px 0}td,th{border:1px solid #d0d7de;"
       "padding:4px 8px;vertical-align:top;text-align:left}th{background:#f6f8fa}.badge{padding:2px 8px;"
       "border-radius:10px;font-weight:600;white-space:nowrap}img{max-width:100%;border:1px solid #d0d7de;"
       "margin:8px 0}code,pre{background:#f6f8fa;padding:1px 4px}pre{white-space:pre-wrap;font-size:12px}"
       ".crit{color:#57606a;font-size:13px}.kind{font-size:12px;color:#57606a;text-transform:uppercase}"
       "td.num{text-align:right;white-space:nowrap}details{margin:6px 0}")


def render_html(rd: RunDir, results: dict[str, dict], sources: dict[str, RunDir] | None = None) -> str:
    cfg = rd.config()
    e = html.escape
    merged = sources is not None
    where = (f"<p>run <code>{e(str(rd.path))}</code> &middot; scale <code>{e(str(cfg.get('scale', '?')))}</code>"
             f" &middot; seeds <code>{e(_seeds(cfg))}</code></p>") if not merged else \
        f"<p>{e(_header(rd, sources))}</p>"
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>neurips25 report {e(rd.path.name)}</title><style>{CSS}</style></head><body>",
        "<h1>neurips25 reproduction report</h1>", where,
        "<h2>Summary</h2><table><tr><th>method</th><th>headline claim</th><th>all claims</th>"
        "<th>wall (s)</th><th>CPU (s)</th><th>ran on</th>" + ("<th>run (scale, seeds)</th>" if merged else "") +
        "</tr>",
    ]
    for r in method_rows(results):
        extra = (f"<td>{e(str(sources[r['method']].path))} ({e(_scale_seeds(results[r['method']]))})</td>"
                 if merged else "")
        parts.append(f"<tr><td><a href='#{e(r['method'])}'>{e(r['method'])}</a></td><td>{_badge(r['headline'])}"
                     f"{' (' + e(r['instance']) + ')' if r.get('instance') else ''}"
                     f"</td><td>{e(r['claims'])}</td><td class='num'>{e(r['wall'])}</td>"
                     f"<td class='num'>{_time(r['cpu_s'])}</td><td>{e(r['ran_on'])}</td>{extra}</tr>")
    parts.append("</table>")
    for slug, res in results.items():
        title = METHODS[slug].title if slug in METHODS else slug
        parts.append(f"<h2 id='{e(slug)}'>{e(slug)}</h2><p>{e(title)}</p>")
        parts.append("<p class='crit'>ran on: " + "<br>".join(e(x) for x in where_lines(res)) +
                     (f" (run <code>{e(str(sources[slug].path))}</code>)" if merged else "") + "</p>")
        if res.get("status") != "ok":
            parts.append(f"<p>{_badge('error')} <code>{e(str(res.get('error')))}</code> "
                         f"(traceback in <code>{e(slug)}/log.txt</code>)</p>")
            continue
        parts.append(f"<p>{e(describe_claims(res.get('claims', [])))} &middot; wall {e(wall_text(res))} s"
                     f" &middot; CPU {_time(res.get('cpu_s'))} s</p>")
        parts.append("<table><tr><th>claim</th><th>paper</th><th>key figure (needs)</th><th>method</th>"
                     "<th>controls (same criterion)</th><th>measured</th><th>verdict</th></tr>")
        for c in sorted_claims(res):
            parts.append(
                f"<tr><td><span class='kind'>{e(c.get('kind', 'supporting'))}</span> <b>{e(c['id'])}</b>: "
                f"{e(c['statement'])}</td><td>{e(c.get('paper_value') or '-')}</td><td>{e(key_text(c))}</td>"
                f"<td>{e(method_figure(c))}</td><td>{e(controls_text(c))}</td>"
                f"<td>{e(claim_line(c, 400))}</td><td>{_badge(c['verdict'])}<div class='crit'>"
                f"{e(verdict_text(c, slug))}</div></td></tr>")
        parts.append("</table>")
        if len(res.get("seeds", [])) > 1:
            parts.append("<h3>Per seed</h3><table><tr><th>claim</th>" +
                         "".join(f"<th>seed {s}</th>" for s in res["seeds"]) +
                         "<th>agreement</th><th>figures (mean ± sd [min, max])</th></tr>")
            for c in sorted_claims(res):
                cells = "".join(
                    f"<td>{_badge((c.get('per_seed', {}).get(str(s)) or {}).get('verdict', 'pending'))}"
                    f"<div class='crit'>{e(seed_cell(c, s))}</div></td>" for s in res["seeds"])
                parts.append(f"<tr><td><b>{e(c['id'])}</b></td>{cells}<td>{e(c.get('agreement', '-'))}</td>"
                             f"<td>{e(spread_text(c))}</td></tr>")
            parts.append("</table>")
        parts.append("<details><summary>criteria, notes and raw measurements</summary><ul>")
        for c in sorted_claims(res):
            note = f"<div><i>{e(c['note'])}</i></div>" if c.get("note") else ""
            raw = json.dumps(c.get("measured"), indent=1)
            raw = raw if len(raw) <= 20000 else raw[:20000] + " ..."
            parts.append(f"<li><b>{e(c['id'])}</b> <span class='crit'>criterion: {e(c.get('criterion', ''))}"
                         f"</span>{note}<pre>{e(raw)}</pre></li>")
        parts.append("</ul></details>")
        if res.get("notes"):
            parts.append(f"<p>{e(res['notes'])}</p>")
        for fig in res.get("figures", []):
            p = (sources[slug] if merged else rd).method_dir(slug) / fig
            if p.is_file():
                data = base64.b64encode(p.read_bytes()).decode("ascii")
                parts.append(f"<figure><img alt='{e(fig)}' src='data:image/png;base64,{data}'>"
                             f"<figcaption>{e(fig)}</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def render_report(run_dir: str | Path) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into ``run_dir``; return their paths."""
    rd = RunDir(run_dir)
    if not rd.path.is_dir():
        raise FileNotFoundError(f"run directory {rd.path} does not exist")
    results = rd.results()
    md, page = rd.path / "report.md", rd.path / "report.html"
    atomic_write_text(md, render_markdown(rd, results))
    atomic_write_text(page, render_html(rd, results))
    return md, page


def merge_runs(run_dirs) -> tuple[dict[str, dict], dict[str, RunDir]]:
    """Each method's newest result (by ``finished_at``) over ``run_dirs``, and the run directory it came from.

    A finished result beats an error whatever their times, so a crashed re-run never hides a good one."""
    best: dict[str, tuple[tuple, dict, RunDir]] = {}
    for d in run_dirs:
        rd = RunDir(d)
        if not rd.path.is_dir():
            raise FileNotFoundError(f"run directory {rd.path} does not exist")
        for slug, res in rd.results().items():
            rank = (res.get("status") == "ok", res.get("finished_at") or "")
            if slug not in best or rank > best[slug][0]:
                best[slug] = (rank, res, rd)
    order = [s for s in METHODS if s in best] + sorted(s for s in best if s not in METHODS)
    return {s: best[s][1] for s in order}, {s: best[s][2] for s in order}


def render_merged(run_dirs, out: str | Path) -> tuple[Path, Path]:
    """One report over several run directories (each method's newest result), written into ``out``."""
    results, sources = merge_runs(run_dirs)
    rd = RunDir(out)
    rd.path.mkdir(parents=True, exist_ok=True)
    md, page = rd.path / "report.md", rd.path / "report.html"
    atomic_write_text(md, render_markdown(rd, results, sources))
    atomic_write_text(page, render_html(rd, results, sources))
    return md, page


README_BEGIN, README_END = "<!-- METHODS-TABLE -->", "<!-- /METHODS-TABLE -->"


def readme_table(results: dict[str, dict], docs: Path | None = None, link_prefix: str = "docs/") -> str:
    """The README's table of the 19 methods, filled from one run's results (planned methods get '-').

    A method with a page ``docs/<slug>.md`` is linked as ``<link_prefix><slug>.md`` (``"docs/"`` from the README,
    ``""`` from a page inside ``docs/``)."""
    lines = ["| slug | paper (method) | plugs into | extra | headline claim | all claims | wall / CPU (s) | "
             "quick ceiling (s) |", "|---|---|---|---|---|---|---|---|"]
    for info in METHODS.values():
        if info.slug.startswith(("fake", "ray_")):
            continue
        linked = docs is not None and (docs / f"{info.slug}.md").is_file()
        name = f"[{info.slug}]({link_prefix}{info.slug}.md)" if linked else info.slug
        res = results.get(info.slug)
        if res is None:
            head, claims, times = ("planned" if not info.implemented() else "not run"), "-", "-"
        elif res.get("status") != "ok":
            head, claims, times = "error", res.get("error") or "-", f"{_time(res.get('wall_s'))} / -"
        else:
            head = verdict_with_instance(headline_verdict(res["claims"]), headline_instance(res["claims"]))
            claims = describe_claims(res["claims"])
            times = f"{_time(res.get('wall_s'))} / {_time(res.get('cpu_s'))}"
            n_seeds = len(res.get("seeds") or [])
            if n_seeds > 1:  # a multi-seed result's times are sums; the ceiling is per seed
                times += f" (sum of {n_seeds} seeds)"
        lines.append("| " + " | ".join(_md_cell(x) for x in (
            name, info.title, info.ecosystem, info.extra if info.extra != "core" else "-", head, claims, times,
            _time(info.quick_budget_s) if info.quick_budget_s else "-")) + " |")
    return "\n".join(lines)


def update_readme(readme: str | Path, run_dir: str | Path, *more_run_dirs: str | Path) -> None:
    """Replace the table between the README's METHODS-TABLE markers with one built from ``run_dir``.

    With more run directories, each method's newest result over all of them (:func:`merge_runs`)."""
    readme = Path(readme)
    text = readme.read_text(encoding="utf-8")
    if README_BEGIN not in text or README_END not in text:
        raise ValueError(f"{readme} has no {README_BEGIN} ... {README_END} markers")
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    results = merge_runs([run_dir, *more_run_dirs])[0] if more_run_dirs else RunDir(run_dir).results()
    table = readme_table(results, docs=readme.parent / "docs")
    atomic_write_text(readme, f"{head}{README_BEGIN}\n{table}\n{README_END}{tail}")


CLAIMS_BEGIN, CLAIMS_END = "<!-- CLAIMS-TABLE {slug} -->", "<!-- /CLAIMS-TABLE -->"
#: the page of the site that carries the methods table (between README_BEGIN / README_END), linked within docs/
DOCS_INDEX = "index.md"


def _escape_markdown(text: str) -> str:
    text = text.replace("\\", "\\\\")
    for ch in "|*_$`[]":
        text = text.replace(ch, "\\" + ch)
    return text.replace("<", "&lt;")


def _doc_cell(text) -> str:
    """A table cell of a docs page: one line; ``|``, ``<``, ``*``, ``_``, ``$`` and brackets escaped outside code
    spans (``$`` would start MathJax on the site, ``<`` an HTML tag, ``*`` / ``_`` emphasis, ``[...]`` a link)."""
    text = str(text).replace("\n", " ")
    if text.count("`") % 2:  # an unpaired backtick opens no code span: every backtick is a character
        return _escape_markdown(text)
    parts = text.split("`")
    # even parts are outside code spans; inside one only the table's pipe needs escaping
    return "`".join(_escape_markdown(p) if i % 2 == 0 else p.replace("|", "\\|") for i, p in enumerate(parts))


def _seeds_of(res: dict) -> list:
    return list(res.get("seeds") or ([res["seed"]] if res.get("seed") is not None else []))


def claim_seeds_text(claim: dict, seeds: list) -> str:
    """The seeds a claim was judged at and how they agree (``"0, 1: 2/2 reproduced"``)."""
    names = ", ".join(str(s) for s in seeds) or "-"
    agreement = claim.get("agreement")
    return f"{names}: {agreement}" if agreement and len(seeds) > 1 else names


def claims_table(slug: str, res: dict | None) -> str:
    """The claims table of one method's docs page, from its result (one run, or merged over several).

    One row per claim (headline first): id, kind, the instance word, what is claimed, the criterion, the method's
    key figure beside each control's (judged by the same criterion), the verdict with the machinery's reason, and
    the seeds with their agreement; then one line naming the scale, the seeds, the run's date, its CPU time per
    seed and the commit it ran at. Nothing in it is typed by hand: ``neurips25 report RUN_DIR --docs docs``
    rewrites it."""
    if res is None:
        return f"No run of `{slug}` is recorded in the run directories this table was generated from."
    seeds = _seeds_of(res)
    date = (res.get("finished_at") or "")[:10] or "date unknown"
    if res.get("status") != "ok":
        return (f"The latest run of `{slug}` ({res.get('scale', '?')} scale, {date}) crashed: "
                f"{_doc_cell(res.get('error') or 'no error recorded')}.")
    lines = ["| claim | kind | judged on | what is claimed | criterion | method vs controls | verdict | seeds |",
             "|---|---|---|---|---|---|---|---|"]
    for c in sorted_claims(res):
        method = method_figure(c)
        controls = "; ".join(f"{r['role']} {r['name']} {format_number(r.get('key_value'))} ({_control_mark(r)})"
                             for r in c.get("control_results") or [])
        versus = f"method {method}; {controls}" if controls else method
        verdict = c["verdict"].replace("_", " ")
        if c.get("reason"):
            verdict += f": {c['reason']}"
        ledger = c.get("ledger", "")
        if "changed" in ledger:
            verdict += f" [{ledger}]"
        lines.append("| " + " | ".join(_doc_cell(x) for x in (
            f"`{c['id']}`", c.get("kind", "supporting"), c.get("instance") or "-", c.get("statement", ""),
            c.get("criterion", "") or "-", versus, verdict, claim_seeds_text(c, seeds))) + " |")
    cpu = res.get("cpu_s")
    per_seed = f"{float(cpu) / max(len(seeds), 1):.0f} s CPU per seed" if cpu is not None else "CPU time unknown"
    commit = ""
    prov = res.get("provenance") or {}
    prov = next(iter(prov["per_seed"].values()), {}) if "per_seed" in prov else prov
    code = (prov or {}).get("code") or {}
    if code.get("commit"):
        commit = f", code at commit {code['commit'][:8]}"
    lines += ["", f"Scale `{res.get('scale', '?')}`, seeds {', '.join(str(s) for s in seeds) or '-'}, run finished "
                  f"{date}; {per_seed}{commit}. Generated from the run's `result.json` by "
                  f"`neurips25 report RUN_DIR --docs docs`."]
    return "\n".join(lines)


def _replace_between(text: str, begin: str, end: str, body: str) -> str | None:
    """``text`` with what lies between ``begin`` and the next ``end`` replaced by ``body``; None without both."""
    if begin not in text:
        return None
    head, rest = text.split(begin, 1)
    if end not in rest:
        raise ValueError(f"{begin} has no closing {end}")
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def update_docs(docs_dir: str | Path, run_dir: str | Path, *more_run_dirs: str | Path) -> dict[str, str]:
    """Fill the generated tables of the docs pages from run(s); return ``{page: what was written}``.

    In every ``docs_dir/<slug>.md`` of a registered method, the text between ``<!-- CLAIMS-TABLE <slug> -->`` and
    ``<!-- /CLAIMS-TABLE -->`` becomes :func:`claims_table` of that method's result (with several run directories,
    each method's newest result, :func:`merge_runs`); a page whose method has no result gets a line saying so, a
    page without the markers is left alone. ``docs_dir/index.md``'s methods table (the README's markers) is
    rewritten like the README's, its links relative to ``docs_dir``."""
    docs = Path(docs_dir)
    if not docs.is_dir():
        raise FileNotFoundError(f"docs directory {docs} does not exist")
    results = merge_runs([run_dir, *more_run_dirs])[0] if more_run_dirs else RunDir(run_dir).results()
    done: dict[str, str] = {}
    for slug in METHODS:
        page = docs / f"{slug}.md"
        if not page.is_file():
            continue
        text = page.read_text(encoding="utf-8")
        new = _replace_between(text, CLAIMS_BEGIN.format(slug=slug), CLAIMS_END, claims_table(slug, results.get(slug)))
        if new is None:
            done[page.name] = "no CLAIMS-TABLE markers: left alone"
            continue
        if new != text:
            atomic_write_text(page, new)
        done[page.name] = "claims table" if slug in results else "no run recorded"
    index = docs / DOCS_INDEX
    if index.is_file():
        text = index.read_text(encoding="utf-8")
        new = _replace_between(text, README_BEGIN, README_END, readme_table(results, docs=docs, link_prefix=""))
        if new is not None:
            if new != text:
                atomic_write_text(index, new)
            done[index.name] = "methods table"
    return done
