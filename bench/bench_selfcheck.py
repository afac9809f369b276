"""Self-check cost: throughput over a build, or before/after CPU per task on a fixed sample.

    .venv/bin/python bench/bench_selfcheck.py [BUILD_DIR] [-j N] [--limit K]
    .venv/bin/python bench/bench_selfcheck.py --sample [BUILD_DIR] [--compare OLD_CHECKOUT] [--rounds R]
        [--per-env K]

Without `--sample`: builds `tasks_src/` and `taxonomy/examples/` into a temporary directory (or uses
BUILD_DIR) and self-checks every bundle in N processes (default 2, the CI machines' cores), as
`make run` does; prints tasks per second and seconds per task per core.

With `--sample`: the fixed sample, the first task and the middle task (by id) of every environment
(each `tasks_src/` folder and `taxonomy/examples/`), is self-checked in one warm process per code,
task by task (`--per-env K`: the first K tasks of every environment instead, consecutive tasks
mostly of one scene, as a self-check worker meets them), and each task's CPU seconds (`time.process_time`: every thread of the process) are
recorded.  `--compare OLD_CHECKOUT` (for example `git worktree add /tmp/before <rev>`) runs the same
tasks under that checkout's wac in a second warm process, alternating the two task by task so both
see the same machine load, checks that both reach the same verdicts and the same evidence frames,
and prints the ratio.  Compare ratios from one run, never seconds across runs (noisy machines).
When the bundles themselves changed (a re-baseline: new scene content, a new bundle field the old
code cannot read), `--before-build DIR` gives the old checkout its own build of the same tasks
(build it with that checkout's wac); verdicts and evidence are still compared and differences
listed, which is then expected where the worlds differ.
Goal (issue 28): at most 1.5 s of CPU per task on the shipped corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORED = {"seconds", "reused", "bundle"}  # result fields that may differ between equal verdicts


def sample(build: Path, per_env: int = 0) -> list[Path]:
    """The fixed sample: per environment (source folder), its first and middle bundle by task id;
    with `per_env` K, its first K bundles instead (consecutive tasks, mostly of one scene: as a
    self-check worker meets them, so what a process keeps per scene shows)."""
    by_env: dict[str, list[Path]] = defaultdict(list)
    for d in sorted(p for p in build.iterdir() if (p / "selfcheck.json").is_file()):
        src = json.loads((d / "task.json").read_text())["source"]
        parts = Path(src).parts
        env = parts[1] if parts[0] == "tasks_src" and len(parts) > 2 else parts[0]
        by_env[env].append(d)
    out = []
    for _env, ds in sorted(by_env.items()):
        out += ds[:per_env] if per_env else sorted({ds[0], ds[len(ds) // 2]})
    return out


def shim(checkout: Path) -> Path:
    """A directory whose `wac` package is the checkout's (its pyproject package-dir mapping)."""
    import tomllib

    dirs = tomllib.loads((checkout / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    top = Path(tempfile.mkdtemp(prefix="wac-before-")) / "wac"
    top.mkdir()
    for f in (checkout / dirs["wac"]).iterdir():
        (top / f.name).symlink_to(f.resolve())
    for name, d in dirs.items():
        parts = name.split(".")
        if len(parts) == 2:
            link = top / parts[1]
            if link.exists() or link.is_symlink():
                link.unlink()
            link.symlink_to((checkout / d).resolve())
    return top.parent


def worker() -> int:
    """Serve self-checks: one bundle path and evidence directory per stdin line, one JSON line back."""
    from wac.validation.bundlecheck import check_bundle

    for line in sys.stdin:
        bundle, out = line.rstrip("\n").split("\t")
        t0, c0 = time.perf_counter(), time.process_time()
        r = check_bundle(bundle, out or None)
        c1, t1 = time.process_time(), time.perf_counter()
        print(json.dumps({"cpu": c1 - c0, "wall": t1 - t0, "result": r.as_dict()}, default=str), flush=True)
    return 0


class Worker:
    """A warm `worker()` process running one checkout's wac."""

    def __init__(self, pythonpath: Path | None) -> None:
        env = dict(os.environ)
        if pythonpath is not None:
            env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), env.get("PYTHONPATH", "")])
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=tempfile.gettempdir(),  # never this tree's `wac` through the current directory
        )

    def check(self, bundle: Path, out: Path) -> dict:
        self.proc.stdin.write(f"{bundle}\t{out}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker stopped while checking {bundle.name}")
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def _same_files(a: Path, b: Path) -> list[str]:
    """Evidence files that differ (or are missing on one side) between two evidence directories."""
    names = {p.relative_to(a) for p in a.rglob("*") if p.is_file()} | {
        p.relative_to(b) for p in b.rglob("*") if p.is_file()
    }
    return sorted(
        str(n)
        for n in names
        if not ((a / n).is_file() and (b / n).is_file() and (a / n).read_bytes() == (b / n).read_bytes())
    )


def compare(
    build: Path, before: Path | None, rounds: int, before_build: Path | None = None, per_env: int = 0
) -> int:
    bundles = sample(build, per_env)
    envs = len({json.loads((b / "task.json").read_text())["source"].split("/")[1] for b in bundles})
    print(f"sample: {len(bundles)} task(s) from {envs} environment folder(s) of {build}", flush=True)
    codes = {"after": Worker(None)}
    if before is not None:
        codes["before"] = Worker(shim(before))
    out = Path(tempfile.mkdtemp(prefix="wac-bench-evidence-"))
    cpu: dict[str, list[float]] = defaultdict(list)
    differ: list[str] = []
    try:
        for name, w in codes.items():  # imports, and the first scene's caches, outside the figures
            w.check(
                before_build / bundles[0].name if name == "before" and before_build else bundles[0],
                out / "warm",
            )
        for rnd in range(rounds):
            for b in bundles:
                got = {}
                for name, w in codes.items() if rnd % 2 == 0 else reversed(codes.items()):
                    own = before_build / b.name if name == "before" and before_build else b
                    got[name] = w.check(own, out / name / b.name)
                    cpu[name].append(got[name]["cpu"])
                if "before" in got and rnd == 0:
                    ra, rb = ({k: v for k, v in got[n]["result"].items() if k not in IGNORED} for n in codes)
                    if ra != rb:
                        differ.append(
                            f"{b.name}: verdict fields {sorted(k for k in ra if ra[k] != rb.get(k))}"
                        )
                    files = _same_files(out / "after" / b.name, out / "before" / b.name)
                    if files:
                        differ.append(f"{b.name}: evidence {', '.join(files[:4])}")
                line = "  ".join(f"{n} {got[n]['cpu']:5.2f} s" for n in codes)
                print(
                    f"  {b.name:40s} {line}  {'pass' if got['after']['result']['passed'] else 'FAIL'}",
                    flush=True,
                )
    finally:
        for w in codes.values():
            w.close()
    n = len(bundles) * rounds
    for name in codes:
        xs = cpu[name]
        print(
            f"{name}: {sum(xs) / n:.2f} CPU s per task (median {statistics.median(xs):.2f}, max {max(xs):.2f})"
        )
    if "before" in codes:
        print(f"ratio before/after: {sum(cpu['before']) / sum(cpu['after']):.2f}x")
        print("verdicts and evidence frames: " + ("identical" if not differ else "DIFFER"))
        for d in differ:
            print(f"  {d}")
    return 1 if differ else 0


def throughput(build: Path, jobs: int, limit: int | None) -> int:
    from wac.validation.pool import find_bundles, run_many

    bundles = find_bundles([str(build)])[:limit]
    t0 = time.perf_counter()
    results = run_many(bundles, jobs=jobs, progress=sys.stderr.isatty())
    wall = time.perf_counter() - t0
    per = [r.seconds for r in results]
    by_cat: dict[str, list[float]] = defaultdict(list)
    for r in results:
        by_cat[r.category].append(r.seconds)
    n = len(results)
    print(
        f"self-checked {n} task(s) in {wall:.1f} s on {jobs} process(es): {n / wall:.2f} tasks/s, "
        f"{wall * jobs / n:.2f} s per task per core"
    )
    print(
        f"per task (one process): median {statistics.median(per):.2f} s, max {max(per):.2f} s "
        f"({max(results, key=lambda r: r.seconds).task_id}); {sum(r.passed for r in results)}/{n} pass"
    )
    for cat, xs in sorted(by_cat.items()):
        print(f"  {cat:24s} {len(xs):3d} task(s)  median {statistics.median(xs):5.2f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build", nargs="?", help="an existing build directory (default: build the shipped corpus)")
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.add_argument("--limit", type=int, help="only the first K bundles")
    p.add_argument("--sample", action="store_true", help="CPU per task on the fixed sample, one warm process")
    p.add_argument(
        "--compare", metavar="OLD_CHECKOUT", help="also run an older checkout's wac (with --sample)"
    )
    p.add_argument(
        "--before-build",
        metavar="DIR",
        help="the old checkout's own build of the same tasks (with --compare)",
    )
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument(
        "--per-env",
        type=int,
        default=0,
        metavar="K",
        help="with --sample: the first K tasks of each environment (default: its first and middle task)",
    )
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker()

    from wac.compiler.pipeline import compile_project

    if args.build:
        out = Path(args.build).resolve()  # the workers run in another directory
    else:
        out = Path(tempfile.mkdtemp(prefix="wac-bench-")) / "build"
        res = compile_project(
            [ROOT / "tasks_src", ROOT / "taxonomy" / "examples"], ROOT, out=out, jobs=args.jobs
        )
        if res.diagnostics:
            print("\n".join(d.render() for d in res.diagnostics), file=sys.stderr)
            return 1
    if args.sample:
        before_build = Path(args.before_build).resolve() if args.before_build else None
        return compare(
            out,
            Path(args.compare).resolve() if args.compare else None,
            args.rounds,
            before_build,
            args.per_env,
        )
    return throughput(out, args.jobs, args.limit)


if __name__ == "__main__":
    sys.exit(main())
