"""``neurips25 list | doctor [SLUG ...] | reproduce [SLUG ...] | report RUN_DIR [RUN_DIR ...]``.

Exit codes: 0 when every requested reproduction ran (whatever its verdicts), 1 when one crashed
(the others still ran and were saved), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
import json
import os
import sys
from pathlib import Path

from neurips25 import __version__
from neurips25.repro.registry import METHODS
from neurips25.repro.scale import Scale


class UsageError(Exception):
    """Bad command-line arguments (exit code 2)."""


def _check_slugs(slugs: list[str]) -> list[str]:
    for slug in slugs:
        if slug not in METHODS:
            close = difflib.get_close_matches(slug, METHODS, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            known = ", ".join(sorted(METHODS))
            raise UsageError(f"unknown method {slug!r}.{hint} Known methods: {known}")
    return list(dict.fromkeys(slugs))


def cmd_list(args) -> int:
    from neurips25.repro.claims import describe_claims
    from neurips25.repro.doctor import diagnose
    from neurips25.repro.store import latest_results

    latest = latest_results(args.runs)
    rows = [("slug", "status", "usable", "latest result (headline first)", "wall/CPU (s)", "paper")]
    for info in METHODS.values():
        status = "implemented" if info.implemented() else "planned"
        missing = diagnose(info.slug).missing
        usable = "yes" if info.implemented() and not missing else (
            f"no: {missing[0]['install']}" if missing else "-")
        res = latest.get(info.slug)
        times = "-"
        if res is None:
            verdicts = "-"
        elif res.get("status") != "ok":
            verdicts = f"error ({res.get('scale', '?')})"
        else:
            verdicts = f"{describe_claims(res['claims'])} ({res['scale']})"
        if res is not None:
            cpu = res.get("cpu_s")
            times = f"{res.get('wall_s', 0):.0f}/" + ("-" if cpu is None else f"{cpu:.0f}")
        rows.append((info.slug, status, usable, verdicts, times, info.title))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:5], widths)) + "  " + r[5])
    print(f"\nnewest result of each method under {args.runs}/; checks = exactness / identities / unit-level "
          "properties, counted apart from the paper's empirical claims")
    return 0


def cmd_reproduce(args) -> int:
    from neurips25.repro.report import claim_line, render_report, sorted_claims
    from neurips25.repro.runner import run_methods

    slugs = _check_slugs(args.slugs) if args.slugs else [m.slug for m in METHODS.values() if m.implemented()]
    if args.seed < 0:
        raise UsageError(f"--seed must be a non-negative integer; got {args.seed}")
    seeds = _parse_seeds(args.seeds) if args.seeds else [args.seed]
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be >= 1; got {args.jobs}")
    if not args.connect_timeout > 0:
        raise UsageError(f"--connect-timeout must be a positive number of seconds; got {args.connect_timeout}")
    not_impl = [s for s in slugs if not METHODS[s].implemented()]
    if not_impl:
        raise UsageError(f"not implemented yet: {', '.join(not_impl)} (see `neurips25 list`)")
    from neurips25.repro.doctor import diagnose

    unusable = [d for d in map(diagnose, slugs) if d.missing]
    if unusable:
        msg = "; ".join(f"{d.slug} needs " + ", ".join(f"{m['piece']} ({m['install']})" for m in d.missing)
                        for d in unusable)
        raise UsageError(f"missing pieces: {msg} (`neurips25 doctor` lists every method)")
    if args.address and args.executor != "ray":
        raise UsageError("--address needs --executor ray")
    if args.release is not None:
        from neurips25.chemcot.release import ENV_KEY, release_dir

        try:
            os.environ[ENV_KEY] = str(release_dir(args.release).resolve())  # read by chemcot's run, in any worker
        except ValueError as err:
            raise UsageError(f"--release: {err}") from err
    out = Path(args.out) if args.out else Path(args.runs) / dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    seed_text = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {','.join(map(str, seeds))}"
    print(f"neurips25 reproduce: {len(slugs)} method(s) at scale {args.scale}, {seed_text}, "
          f"{args.executor} executor -> {out}", flush=True)
    executor = None
    if args.executor == "ray":
        from neurips25.repro.executors import RayExecutor

        try:
            # no --jobs: a local Ray instance gets every CPU of the machine (Ray's own default)
            executor = RayExecutor(address=args.address, num_cpus=None if args.address else args.jobs,
                                   connect_timeout_s=args.connect_timeout)
        except (ImportError, ValueError) as err:
            raise UsageError(str(err)) from err
        try:
            executor.connect()  # before any file or progress line: a wrong --address fails here
        except ConnectionError as err:
            raise UsageError(str(err)) from err
        print(f"  connected to Ray: {_ray_summary(executor)}", flush=True)
        _check_node_codes(executor)
    try:
        results = run_methods(slugs, scale=args.scale, seeds=seeds, out=out, jobs=args.jobs or 1,
                              force=args.force, executor=executor)
    except ValueError as err:
        raise UsageError(str(err)) from err
    finally:
        if executor is not None:
            executor.shutdown()
    md, page = render_report(out)
    print("\nclaims:")
    for slug, res in results.items():
        if res["status"] != "ok":
            print(f"  {slug:<20} ERROR  {res['error']}  (see {out / slug / 'log.txt'})")
            continue
        for c in sorted_claims(res):
            print(f"  {slug:<20} {c['id']:<22} {c.get('kind', '-'):<10} {c['verdict']:<15} {claim_line(c, 100)}")
    print(f"\nreport: {page}\n        {md}")
    return 1 if any(r["status"] != "ok" for r in results.values()) else 0


def _parse_seeds(text: str) -> list[int]:
    try:
        seeds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--seeds must be comma-separated non-negative integers, e.g. 0,1,2; got {text!r}") from None
    if not seeds or any(s < 0 for s in seeds):
        raise UsageError(f"--seeds must be comma-separated non-negative integers, e.g. 0,1,2; got {text!r}")
    return list(dict.fromkeys(seeds))


def _ray_summary(executor) -> str:
    nodes = executor.nodes()
    cpus = sum(n["cpus"] for n in nodes)
    return f"{len(nodes)} node(s), {cpus:g} CPU(s): " + ", ".join(
        f"{n['host']} ({n['address']}) {n['cpus']:g} CPU {n['memory_gb']:.1f} GB" for n in nodes)


def _check_node_codes(executor) -> None:
    """Refuse to start when a node of the cluster runs another neurips25 version or commit than this driver."""
    from neurips25.repro.store import code_identity, describe_code, same_code

    mine = code_identity()
    wrong, silent = [], []
    for n in executor.node_codes():
        if n["code"] is None:
            silent.append(f"{n['host']} ({n['address']})")
        elif not same_code(n["code"], mine):
            wrong.append(f"{n['host']} ({n['address']}) runs {describe_code(n['code'])}")
    if wrong:
        raise UsageError(f"the driver runs {describe_code(mine)}, but node {'; node '.join(wrong)}: install the same "
                         "neurips25 (version and commit) on every node (docs/cluster.md)")
    note = f"; no answer from {', '.join(silent)} (its units are checked when they come back)" if silent else ""
    print(f"  every node runs {describe_code(mine)}{note}", flush=True)


def cmd_doctor(args) -> int:
    from neurips25.repro.doctor import diagnose_all, render
    from neurips25.repro.store import code_identity, describe_code

    slugs = _check_slugs(args.slugs) if args.slugs else None
    found = diagnose_all(slugs)
    if args.json:
        import json

        print(json.dumps([d.to_dict() for d in found], indent=2))
    else:
        print(f"{describe_code(code_identity())}, Python {sys.version.split()[0]}\n")
        print(render(found))
    return 0 if all(d.usable or not d.implemented for d in found) else 1


def cmd_report(args) -> int:
    from neurips25.repro.report import render_merged, render_report

    dirs = list(dict.fromkeys(args.run_dirs))
    for d in dirs:
        if not Path(d).is_dir():
            raise UsageError(f"RUN_DIR {d!r} is not a directory")
    if len(dirs) > 1 and not args.out:
        raise UsageError("several RUN_DIRs are merged into one report: give --out DIR for it")
    if args.out:
        md, page = render_merged(dirs, args.out)
    else:
        md, page = render_report(dirs[0])
    print(f"report: {page}\n        {md}")
    if args.readme:
        from neurips25.repro.report import update_readme

        try:
            update_readme(args.readme, *dirs)
        except (OSError, ValueError) as err:
            raise UsageError(f"--readme: {err}") from err
        print(f"methods table updated in {args.readme}")
    if args.docs:
        from neurips25.repro.report import update_docs

        try:
            done = update_docs(args.docs, *dirs)
        except (OSError, ValueError) as err:
            raise UsageError(f"--docs: {err}") from err
        filled = {page: what for page, what in done.items() if "left alone" not in what}
        print(f"docs tables updated in {args.docs}: " + (", ".join(f"{p} ({w})" for p, w in filled.items())
                                                          or "no page has the markers"))
    return 0


def cmd_claims(args) -> int:
    """Every claim of every method from its declaration (nothing runs), checked against the criteria ledger."""
    from neurips25.repro import ledger
    from neurips25.repro.registry import declared_claims

    slugs = _check_slugs(args.slugs) if args.slugs else [s for s, m in METHODS.items()
                                                         if m.implemented() and m.module is None]
    data = ledger.load()
    code: dict[str, dict] = {}
    failed: dict[str, str] = {}
    for slug in slugs:
        try:
            for c in declared_claims(slug, args.scale):
                code[f"{slug}/{c.id}"] = ledger.fingerprint(c)
        except ImportError as err:  # an extra not installed: say so, never pass silently
            failed[slug] = f"cannot import its reproduction ({err})"
        except (TypeError, ValueError, RuntimeError) as err:  # a declaration the machinery refuses
            failed[slug] = f"its declare_claims(scale) fails: {type(err).__name__}: {err}"
    if args.register:
        changed = ledger.register(code, data, why=args.register, after_runs=args.after_runs or "", slugs=slugs)
        ledger.save(data)
        print(f"ledger: {len(changed)} entr{'y' if len(changed) == 1 else 'ies'} written"
              + "".join(f"\n  {c}" for c in changed))
        return 0
    diffs = ledger.differences(code, data)
    if args.check:
        for slug, why in failed.items():
            print(f"{slug}: {why}", file=sys.stderr)
        for cid, fields in diffs.items():
            print(f"{cid}: criterion differs from the ledger in {', '.join(fields)} "
                  "(register the change: neurips25 claims --register 'why' [--after-runs 'which runs'])",
                  file=sys.stderr)
        if diffs or failed:
            return 1
        print(f"ledger: all {len(code)} claims of {len(slugs)} methods match")
        return 0
    if args.json:
        print(json.dumps({cid: {**fp, "ledger": ledger.change_text(data, cid)} for cid, fp in code.items()},
                         indent=1))
        return 0
    for cid, fp in code.items():
        mark = " [DIFFERS FROM THE LEDGER]" if cid in diffs else ""
        print(f"{cid} ({fp['kind']}{', ' + fp['instance'] if fp['instance'] else ''}){mark}: {fp['statement']}")
        print(f"    criterion: {fp['criterion']}" + (f"  [key {fp['key']} {fp['threshold']}]" if fp["key"] else ""))
        for ctl in fp["controls"]:
            print(f"    control: {ctl}")
        if fp["no_positive_control"]:
            print(f"    no positive control: {fp['no_positive_control']}")
        for pre in fp["preconditions"]:
            print(f"    precondition: {pre}")
        print(f"    ledger: {ledger.change_text(data, cid)}")
    for slug, why in failed.items():
        print(f"{slug}: {why}")
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="neurips25", description=(
        "Reference implementations of NeurIPS 2025 methods and reproductions of their headline claims."))
    p.add_argument("--version", action="version", version=f"neurips25 {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    pl = sub.add_parser("list", help="the 19 methods, whether usable here, newest verdicts")
    pl.add_argument("--runs", default="runs", help="folder of run directories (default: runs)")
    pl.set_defaults(func=cmd_list)

    pr = sub.add_parser("reproduce", help="check the papers' claims (default: every implemented method)")
    pr.add_argument("slugs", nargs="*", metavar="SLUG", help="methods to run (default: all implemented)")
    pr.add_argument("--scale", default="quick", choices=[s.value for s in Scale],
                    help="smoke (seconds), quick (minutes, default) or paper")
    pr.add_argument("--seed", type=int, default=0, help="seed for every random number generator (default 0)")
    pr.add_argument("--out", default=None, help="run directory (default: runs/<timestamp>); re-use to resume")
    pr.add_argument("--runs", default="runs", help=argparse.SUPPRESS)
    pr.add_argument("--seeds", default=None, metavar="0,1,2",
                    help="several seeds: every claim judged per seed and combined (overrides --seed)")
    pr.add_argument("--jobs", type=int, default=None,
                    help="units run in parallel worker processes (default 1); with --executor ray and no "
                         "--address, the CPUs of the local Ray instance (default: every CPU of the machine)")
    pr.add_argument("--executor", default="local", choices=["local", "ray"],
                    help="where units (method, seed) run: local processes (default) or Ray tasks")
    pr.add_argument("--address", default=None,
                    help="Ray cluster address (e.g. auto, host:6379, ray://host:10001); default: a local instance")
    pr.add_argument("--connect-timeout", type=float, default=30.0, metavar="SECONDS",
                    help="with --address: give up when the cluster does not answer within this time (default 30)")
    pr.add_argument("--force", action="store_true", help="re-run methods already finished in --out")
    pr.add_argument("--release", default=None, metavar="DIR",
                    help="chemcot: a checkout of the ChemCoTBench release (IDEA-XL/ChemCoTBench at 080a8eb) whose "
                         "released model replies c4 re-scores; sets NEURIPS25_CHEMCOT_RELEASE")
    pr.set_defaults(func=cmd_reproduce)

    pd = sub.add_parser("doctor", help="per method: usable here or not, what is missing and the command for it")
    pd.add_argument("slugs", nargs="*", metavar="SLUG", help="methods to check (default: all)")
    pd.add_argument("--json", action="store_true", help="print the findings as JSON")
    pd.set_defaults(func=cmd_doctor)

    pc = sub.add_parser("claims", help="every claim of every method: kind, criterion, controls, instance, ledger")
    pc.add_argument("slugs", nargs="*", metavar="SLUG", help="methods (default: all)")
    pc.add_argument("--check", action="store_true",
                    help="exit 1 naming each claim whose criterion differs from the committed ledger")
    pc.add_argument("--register", metavar="WHY", default=None,
                    help="write every difference into the ledger, with this reason")
    pc.add_argument("--after-runs", metavar="RUNS", default=None,
                    help="with --register: which runs existed before the change (e.g. 'quick seeds 0, 1 at abc123')")
    pc.add_argument("--scale", default="quick", choices=[s.value for s in Scale],
                    help="the scale whose declarations are read (default quick)")
    pc.add_argument("--json", action="store_true", help="print the claims as JSON")
    pc.set_defaults(func=cmd_claims)

    for name, (_, text) in DELEGATED.items():
        sub.add_parser(name, help=text, add_help=False)
    pp = sub.add_parser("report", help="re-render report.html / report.md of a run directory, or merge several")
    pp.add_argument("run_dirs", nargs="+", metavar="RUN_DIR",
                    help="run directories; with several, each method's newest result is taken and --out is needed")
    pp.add_argument("--out", default=None, metavar="DIR",
                    help="write the (merged) report into DIR instead of the run directory")
    pp.add_argument("--readme", default=None, metavar="README.md",
                    help="also rewrite the methods table of this README from the run(s)")
    pp.add_argument("--docs", default=None, metavar="DOCS_DIR",
                    help="also rewrite the claims table of each DOCS_DIR/<slug>.md (between its <!-- CLAIMS-TABLE "
                         "<slug> --> markers) and the methods table of DOCS_DIR/index.md from the run(s)")
    pp.set_defaults(func=cmd_report)
    return p


#: subcommands owned by a method's own command module (their arguments are parsed there)
DELEGATED = {
    "serve-llm": ("neurips25.chemcot.commands", "OpenAI-compatible server for a local causal LM (chemcot)"),
    "chemcot-eval": ("neurips25.chemcot.commands", "score an OpenAI-compatible endpoint on a ChemCoTBench suite"),
    "chemcot-suite": ("neurips25.chemcot.commands", "write an offline ChemCoTBench-style suite"),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:
        import importlib

        return int(importlib.import_module(DELEGATED[argv[0]][0]).main(argv) or 0)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad arguments, 0 on --help
        return int(exc.code or 0)
    try:
        return args.func(args)
    except UsageError as err:
        print(f"neurips25: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted; finished methods are saved, re-run the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
