"""Runner benchmark: scripted-agent episodes per minute, and the runner's own cost per tool call.

Usage: .venv/bin/python bench/bench_audit.py [--build build] [--tasks 12] [--jobs 2] [--agent random]
       [--width 640 --height 480]

Runs `wac eval`'s machinery with a scripted agent on the first N evaluation tasks of a build
(fresh run directory in a temp dir, no example, judged by the keyword judge) and reports:

- episodes per minute on `--jobs` processes (wall clock, including world load and rendering);
- the runner's overhead per tool call *excluding* the environment step (validation, frame
  archive, PNG encoding of the shown frame, logging), median and 95th percentile over all calls.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--tasks", type=int, default=12)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--agent", default="random")
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--height", type=int, default=480)
    args = ap.parse_args(argv)

    from wac.audit.runner import RunConfig, eval_bundles, run_eval
    from wac.audit.session import SessionOptions

    build = Path(args.build)
    ids = [b.name for b in eval_bundles(build)][: args.tasks]
    config = RunConfig(
        agent=args.agent, options=SessionOptions(example=False, width=args.width, height=args.height)
    )
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        t0 = time.perf_counter()
        statuses = run_eval(build, run, config, jobs=args.jobs, only=ids)
        wall = time.perf_counter() - t0
        calls, env_ms, episodes = [], [], 0
        for tid in ids:
            log = run / "tasks" / tid / "tools.jsonl"
            if not log.is_file():
                continue
            episodes += 1
            for line in log.read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                calls.append(rec["ms"] - rec["env_ms"])
                if rec["env_ms"]:
                    env_ms.append(rec["env_ms"])
    failed = [s for s in statuses if not s["ok"]]
    calls.sort()
    p95 = calls[int(0.95 * (len(calls) - 1))] if calls else float("nan")
    print(
        f"agent {args.agent}, {episodes} episodes ({len(failed)} failed), {args.jobs} jobs, "
        f"{args.width}x{args.height}"
    )
    print(f"  wall {wall:.1f} s -> {60.0 * episodes / wall:.1f} episodes/min")
    print(
        f"  tool calls {len(calls)}; runner overhead per call (excl. environment step): "
        f"median {statistics.median(calls):.2f} ms, p95 {p95:.2f} ms"
    )
    if env_ms:
        print(f"  environment step (action -> frame) median {statistics.median(env_ms):.1f} ms")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
