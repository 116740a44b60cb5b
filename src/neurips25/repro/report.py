"""Render a run directory as ``report.md`` and one self-contained ``report.html``.

The report is built only from what is on disk (config, environment, each ``result.json`` and its
figures), so ``neurips25 report RUN_DIR`` re-renders it at any time. Figures are embedded in the
HTML as base64 PNG so the file opens offline.
"""

from __future__ import annotations

import base64
import html
import math
from pathlib import Path

from neurips25.repro.registry import METHODS
from neurips25.repro.store import RunDir, atomic_write_text

VERDICT_STYLE = {
    "reproduced": ("#1a7f37", "#dafbe1"),
    "not_reproduced": ("#cf222e", "#ffebe9"),
    "inconclusive": ("#9a6700", "#fff8c5"),
    "pending": ("#57606a", "#f6f8fa"),
    "error": ("#ffffff", "#cf222e"),
}


def format_number(x: float) -> str:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if not math.isfinite(x):
        return str(x)
    if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
        return f"{x:.3g}"
    return f"{x:.4g}"


def format_measured(value, limit: int = 160) -> str:
    """A short one-line rendering of a claim's measurement."""
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


def summary_rows(results: dict[str, dict]) -> list[dict]:
    """One row per claim (or one per crashed method) for the summary table."""
    rows = []
    for slug, res in results.items():
        if res.get("status") != "ok":
            rows.append({"method": slug, "claim": "-", "paper": "-", "measured": res.get("error") or "",
                         "verdict": "error", "wall_s": res.get("wall_s")})
            continue
        for c in res.get("claims", []):
            rows.append({
                "method": slug,
                "claim": f"{c['id']}: {c['statement']}",
                "paper": c.get("paper_value") or "-",
                "criterion": c.get("criterion", ""),
                "measured": format_measured(c.get("measured")),
                "verdict": c["verdict"],
                "wall_s": res.get("wall_s"),
            })
    return rows


def _md_cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(rd: RunDir, results: dict[str, dict]) -> str:
    cfg = rd.config()
    lines = [f"# neurips25 reproduction report: {rd.path.name}", "",
             f"scale `{cfg.get('scale', '?')}`, seed `{cfg.get('seed', '?')}`", "",
             "| method | claim | paper | measured | verdict | wall (s) |", "|---|---|---|---|---|---|"]
    for r in summary_rows(results):
        wall = format_number(r["wall_s"]) if r["wall_s"] is not None else "-"
        lines.append("| " + " | ".join(_md_cell(x) for x in
                                       (r["method"], r["claim"], r["paper"], r["measured"], r["verdict"], wall)) + " |")
    for slug, res in results.items():
        title = METHODS[slug].title if slug in METHODS else slug
        lines += ["", f"## {slug}: {title}", ""]
        if res.get("status") != "ok":
            lines += [f"**error**: `{res.get('error')}` (traceback in `{slug}/log.txt`)"]
            continue
        for c in res.get("claims", []):
            lines += [f"- **{c['id']}** ({c['verdict']}): {c['statement']}",
                      f"  - criterion: {c.get('criterion', '')}",
                      f"  - measured: {format_measured(c.get('measured'), limit=2000)}"]
            if c.get("note"):
                lines.append(f"  - note: {c['note']}")
        if res.get("notes"):
            lines += ["", res["notes"]]
        for fig in res.get("figures", []):
            lines += ["", f"![{fig}]({slug}/{fig})"]
    return "\n".join(lines) + "\n"


def _badge(verdict: str) -> str:
    fg, bg = VERDICT_STYLE.get(verdict, VERDICT_STYLE["pending"])
    return (f'<span class="badge" style="color:{fg};background:{bg}">'
            f"{html.escape(verdict.replace('_', ' '))}</span>")


def render_html(rd: RunDir, results: dict[str, dict]) -> str:
    cfg = rd.config()
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>neurips25 report {e(rd.path.name)}</title>",
        "<style>body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#1f2328}"
        "table{border-collapse:collapse;width:100%;font-size:14px}td,th{border:1px solid #d0d7de;padding:4px 8px;"
        "vertical-align:top;text-align:left}th{background:#f6f8fa}.badge{padding:2px 8px;border-radius:10px;"
        "font-weight:600;white-space:nowrap}img{max-width:100%;border:1px solid #d0d7de;margin:8px 0}"
        "code{background:#f6f8fa;padding:1px 4px}.crit{color:#57606a;font-size:13px}</style></head><body>",
        "<h1>neurips25 reproduction report</h1>",
        f"<p>run <code>{e(str(rd.path))}</code> &middot; scale <code>{e(str(cfg.get('scale', '?')))}</code>"
        f" &middot; seed <code>{e(str(cfg.get('seed', '?')))}</code></p>",
        "<h2>Summary</h2><table><tr><th>method</th><th>claim</th><th>paper</th><th>measured</th>"
        "<th>verdict</th><th>wall (s)</th></tr>",
    ]
    for r in summary_rows(results):
        wall = format_number(r["wall_s"]) if r["wall_s"] is not None else "-"
        parts.append(
            f"<tr><td><a href='#{e(r['method'])}'>{e(r['method'])}</a></td><td>{e(r['claim'])}"
            f"<div class='crit'>{e(r.get('criterion', ''))}</div></td><td>{e(r['paper'])}</td>"
            f"<td>{e(r['measured'])}</td><td>{_badge(r['verdict'])}</td><td>{e(wall)}</td></tr>"
        )
    parts.append("</table>")
    for slug, res in results.items():
        title = METHODS[slug].title if slug in METHODS else slug
        parts.append(f"<h2 id='{e(slug)}'>{e(slug)}: {e(title)}</h2>")
        if res.get("status") != "ok":
            parts.append(f"<p>{_badge('error')} <code>{e(str(res.get('error')))}</code> "
                         f"(traceback in <code>{e(slug)}/log.txt</code>)</p>")
            continue
        parts.append(f"<p>wall time {format_number(res.get('wall_s', 0))} s</p><ul>")
        for c in res.get("claims", []):
            note = f"<br><i>{e(c['note'])}</i>" if c.get("note") else ""
            parts.append(
                f"<li>{_badge(c['verdict'])} <b>{e(c['id'])}</b>: {e(c['statement'])}"
                f"<div class='crit'>criterion: {e(c.get('criterion', ''))}</div>"
                f"<div>measured: <code>{e(format_measured(c.get('measured'), limit=2000))}</code></div>{note}</li>"
            )
        parts.append("</ul>")
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
