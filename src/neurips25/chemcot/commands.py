"""Command-line entry points: ``serve-llm``, ``chemcot-eval`` and ``chemcot-suite``.

Run as ``python -m neurips25.chemcot.commands <command> ...`` (the ``neurips25`` console script can
delegate to :func:`main`):

- ``serve-llm --model PATH|smollm2 [--host 127.0.0.1] [--port 8000] [--max-batch 4]``: an OpenAI-compatible
  server for any local transformers causal LM (or a GGUF file, or the bundled SmolLM2-135M-Instruct).
- ``chemcot-eval --base-url URL --model NAME --suite FILE [--workers 4] [--out responses.jsonl]``: score
  your endpoint on a suite (the release's JSON or one written by ``chemcot-suite``); resumable; prints the
  per-subtask table.
- ``chemcot-suite --out FILE [--source moses|nci] [--n 10] [--seed 0]``: write an offline suite.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path


def _serve_llm(args) -> int:
    from neurips25.chemcot.server import TransformersResponder, load_causal_lm, serve

    model, tok = load_causal_lm(args.model)
    responder = TransformersResponder(model, tok, max_batch=args.max_batch, default_max_tokens=args.max_tokens)
    name = "SmolLM2-135M-Instruct" if args.model == "smollm2" else Path(args.model).name
    url, stop = serve(responder, host=args.host, port=args.port, model_name=name)
    print(f"serving {name} at {url} (POST /chat/completions, GET /models); Ctrl-C to stop", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    stop()
    return 0


def _eval(args) -> int:
    from neurips25.chemcot.clients import OpenAIChatClient
    from neurips25.chemcot.harness import evaluate
    from neurips25.chemcot.tasks import load_official_json

    items = load_official_json(args.suite)
    if args.limit:
        items = items[: args.limit]
    client = OpenAIChatClient(args.base_url, args.model, api_key=args.api_key, temperature=args.temperature,
                              max_tokens=args.max_tokens, timeout=args.timeout, retries=args.retries)
    out = Path(args.out) if args.out else Path(args.suite).with_suffix(f".{args.model.replace('/', '_')}.jsonl")
    report = evaluate(client, items, workers=args.workers, jsonl=out)
    print(report.table())
    print(f"parse rate {report.parse_rate:.3f}, failed requests {report.failures}, raw replies in {out}")
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_dict(), indent=1))
    return 0


def _suite(args) -> int:
    from neurips25.chemcot.data import generate_suite
    from neurips25.chemcot.tasks import save_items

    items = generate_suite(args.source, args.n, args.seed)
    save_items(items, args.out)
    print(f"wrote {len(items)} items to {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="neurips25-chemcot", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve-llm", help="OpenAI-compatible server for a local causal LM")
    s.add_argument("--model", required=True, help="'smollm2', a .gguf file or a transformers directory")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--max-batch", type=int, default=4)
    s.add_argument("--max-tokens", type=int, default=256, help="default completion budget")
    s.set_defaults(fn=_serve_llm)
    e = sub.add_parser("chemcot-eval", help="score an OpenAI-compatible endpoint on a suite")
    e.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
    e.add_argument("--model", required=True)
    e.add_argument("--suite", required=True, help="benchmark JSON (release format)")
    e.add_argument("--api-key", default=None)
    e.add_argument("--workers", type=int, default=4)
    e.add_argument("--temperature", type=float, default=0.0)
    e.add_argument("--max-tokens", type=int, default=1024)
    e.add_argument("--timeout", type=float, default=120.0)
    e.add_argument("--retries", type=int, default=2)
    e.add_argument("--limit", type=int, default=0, help="first N items only")
    e.add_argument("--out", default=None, help="JSONL of raw replies (resumes when it exists)")
    e.add_argument("--json", default=None, help="write the scores here")
    e.set_defaults(fn=_eval)
    g = sub.add_parser("chemcot-suite", help="write an offline ChemCoTBench-style suite")
    g.add_argument("--out", required=True)
    g.add_argument("--source", default="nci", choices=["moses", "nci"])
    g.add_argument("--n", type=int, default=10, help="items per subtask")
    g.add_argument("--seed", type=int, default=0)
    g.set_defaults(fn=_suite)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except (ValueError, FileNotFoundError, ImportError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
