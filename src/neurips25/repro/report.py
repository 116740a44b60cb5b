"""Render a run directory as ``report.md`` and one self-contained ``report.html``.

The report is built only from what is on disk (config, environment, each ``result.json`` and its
figures), so ``neurips25 report RUN_DIR`` re-renders it at any time. Figures are embedded in the
HTML as base64 PNG so the file opens offline.

What a person reads first: a summary table with ONE row per method (headline verdict, the other kinds
counted apart, wall and CPU time); then, per method, one row per claim (kind, the paper's figure, the
claim's one-line summary: the key number against its threshold, and the verdict). Criteria, notes and
the raw measurement dicts follow, collapsed.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

from neurips25.repro.claims import describe_claims, format_number, headline_verdict
from neurips25.repro.registry import HAND_VERDICTS, METHODS
from neurips25.repro.store import RunDir, atomic_write_text

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
    verb = "passes" if r["passes"] else "fails"
    return f"{verb}, as it must" if r.get("as_expected") else f"{verb}: UNEXPECTED (must {r.get('expected')})"


def controls_text(claim: dict) -> str:
    """Each control's key figure and whether it failed / passed the criterion as it must, side by side."""
    rows = claim.get("control_results") or []
    if not rows:
        return "-" if claim.get("decided_by") == "machinery" else "(hand-judged)"
    return "; ".join(f"{r['role']} {r['name']}: {format_number(r.get('key_value'))} ({_control_mark(r)})"
                     for r in rows)


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
    v = claim["verdict"].replace("_", " ")
    if claim.get("decided_by") == "machinery":
        return f"{v}: {claim['reason']}" if claim.get("reason") else v
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


def method_rows(results: dict[str, dict]) -> list[dict]:
    """One row per method: headline verdict, kinds counted apart, times."""
    rows = []
    for slug, res in results.items():
        if res.get("status") != "ok":
            rows.append({"method": slug, "headline": "error", "claims": res.get("error") or "crashed",
                         "wall_s": res.get("wall_s"), "cpu_s": res.get("cpu_s")})
            continue
        claims = res.get("claims", [])
        rows.append({"method": slug, "headline": headline_verdict(claims), "claims": describe_claims(claims),
                     "wall_s": res.get("wall_s"), "cpu_s": res.get("cpu_s")})
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


def render_markdown(rd: RunDir, results: dict[str, dict]) -> str:
    cfg = rd.config()
    lines = [f"# neurips25 reproduction report: {rd.path.name}", "",
             f"scale `{cfg.get('scale', '?')}`, seeds `{_seeds(cfg)}`", "",
             "| method | headline | all claims | wall (s) | CPU (s) |", "|---|---|---|---|---|"]
    for r in method_rows(results):
        lines.append("| " + " | ".join(_md_cell(x) for x in (
            f"[{r['method']}](#{r['method']})", r["headline"].replace("_", " "), r["claims"],
            _time(r["wall_s"]), _time(r["cpu_s"]))) + " |")
    for slug, res in results.items():
        title = METHODS[slug].title if slug in METHODS else slug
        lines += ["", f"## {slug}", "", f"{title}", ""]
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
            if c.get("note"):
                lines.append(f"  - note: {c['note']}")
            lines.append(f"  - raw: `{format_measured(c.get('measured'), limit=4000)}`")
        lines += ["", "</details>"]
        if res.get("notes"):
            lines += ["", res["notes"]]
        for fig in res.get("figures", []):
            lines += ["", f"![{fig}]({slug}/{fig})"]
    return "\n".join(lines) + "\n"


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


def render_html(rd: RunDir, results: dict[str, dict]) -> str:
    cfg = rd.config()
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>neurips25 report {e(rd.path.name)}</title><style>{CSS}</style></head><body>",
        "<h1>neurips25 reproduction report</h1>",
        f"<p>run <code>{e(str(rd.path))}</code> &middot; scale <code>{e(str(cfg.get('scale', '?')))}</code>"
        f" &middot; seeds <code>{e(_seeds(cfg))}</code></p>",
        "<h2>Summary</h2><table><tr><th>method</th><th>headline claim</th><th>all claims</th>"
        "<th>wall (s)</th><th>CPU (s)</th></tr>",
    ]
    for r in method_rows(results):
        parts.append(f"<tr><td><a href='#{e(r['method'])}'>{e(r['method'])}</a></td><td>{_badge(r['headline'])}"
                     f"</td><td>{e(r['claims'])}</td><td class='num'>{_time(r['wall_s'])}</td>"
                     f"<td class='num'>{_time(r['cpu_s'])}</td></tr>")
    parts.append("</table>")
    for slug, res in results.items():
        title = METHODS[slug].title if slug in METHODS else slug
        parts.append(f"<h2 id='{e(slug)}'>{e(slug)}</h2><p>{e(title)}</p>")
        if res.get("status") != "ok":
            parts.append(f"<p>{_badge('error')} <code>{e(str(res.get('error')))}</code> "
                         f"(traceback in <code>{e(slug)}/log.txt</code>)</p>")
            continue
        parts.append(f"<p>{e(describe_claims(res.get('claims', [])))} &middot; wall {_time(res.get('wall_s'))} s"
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
            p = rd.method_dir(slug) / fig
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


README_BEGIN, README_END = "<!-- METHODS-TABLE -->", "<!-- /METHODS-TABLE -->"


def readme_table(results: dict[str, dict], docs: Path | None = None) -> str:
    """The README's table of the 19 methods, filled from one run's results (planned methods get '-')."""
    lines = ["| slug | paper (method) | plugs into | extra | headline claim | all claims | wall / CPU (s) | "
             "quick ceiling (s) |", "|---|---|---|---|---|---|---|---|"]
    for info in METHODS.values():
        if info.slug.startswith(("fake", "ray_")):
            continue
        name = f"[{info.slug}](docs/{info.slug}.md)" if docs is not None and (docs / f"{info.slug}.md").is_file() \
            else info.slug
        res = results.get(info.slug)
        if res is None:
            head, claims, times = ("planned" if not info.implemented() else "not run"), "-", "-"
        elif res.get("status") != "ok":
            head, claims, times = "error", res.get("error") or "-", f"{_time(res.get('wall_s'))} / -"
        else:
            head = headline_verdict(res["claims"]).replace("_", " ")
            claims = describe_claims(res["claims"])
            times = f"{_time(res.get('wall_s'))} / {_time(res.get('cpu_s'))}"
        lines.append("| " + " | ".join(_md_cell(x) for x in (
            name, info.title, info.ecosystem, info.extra if info.extra != "core" else "-", head, claims, times,
            _time(info.quick_budget_s) if info.quick_budget_s else "-")) + " |")
    return "\n".join(lines)


def update_readme(readme: str | Path, run_dir: str | Path) -> None:
    """Replace the table between the README's METHODS-TABLE markers with one built from ``run_dir``."""
    readme = Path(readme)
    text = readme.read_text(encoding="utf-8")
    if README_BEGIN not in text or README_END not in text:
        raise ValueError(f"{readme} has no {README_BEGIN} ... {README_END} markers")
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    table = readme_table(RunDir(run_dir).results(), docs=readme.parent / "docs")
    atomic_write_text(readme, f"{head}{README_BEGIN}\n{table}\n{README_END}{tail}")
