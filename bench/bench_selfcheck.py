"""Self-check throughput on the shipped corpus: tasks per second, seconds per task per core.

Usage: .venv/bin/python bench/bench_selfcheck.py [--jobs N] [--limit K] [BUILD_DIR]

Builds `tasks_src/` and `taxonomy/examples/` into a temporary directory (or uses BUILD_DIR),
then self-checks every bundle in N processes (default 2, the CI machines' cores).  Goal (issue 4):
under 2 s per task per core, so a 213-task benchmark is self-checked in a few minutes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build", nargs="?", help="an existing build directory (default: build the shipped corpus)")
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.add_argument("--limit", type=int, help="only the first K bundles")
    args = p.parse_args(argv)

    from wac.compiler.pipeline import compile_project
    from wac.validation.pool import find_bundles, run_many

    if args.build:
        out = Path(args.build)
    else:
        out = Path(tempfile.mkdtemp(prefix="wac-bench-")) / "build"
        res = compile_project(
            [ROOT / "tasks_src", ROOT / "taxonomy" / "examples"], ROOT, out=out, jobs=args.jobs
        )
        if res.diagnostics:
            print("\n".join(d.render() for d in res.diagnostics), file=sys.stderr)
            return 1
    bundles = find_bundles([str(out)])[: args.limit]
    t0 = time.perf_counter()
    results = run_many(bundles, jobs=args.jobs, progress=sys.stderr.isatty())
    wall = time.perf_counter() - t0
    per = [r.seconds for r in results]
    by_cat: dict[str, list[float]] = defaultdict(list)
    for r in results:
        by_cat[r.category].append(r.seconds)
    n = len(results)
    print(
        f"self-checked {n} task(s) in {wall:.1f} s on {args.jobs} process(es): {n / wall:.2f} tasks/s, "
        f"{wall * args.jobs / n:.2f} s per task per core (goal < 2)"
    )
    print(
        f"per task (one process): median {statistics.median(per):.2f} s, max {max(per):.2f} s "
        f"({max(results, key=lambda r: r.seconds).task_id}); {sum(r.passed for r in results)}/{n} pass"
    )
    for cat, xs in sorted(by_cat.items()):
        print(f"  {cat:24s} {len(xs):3d} task(s)  median {statistics.median(xs):5.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
