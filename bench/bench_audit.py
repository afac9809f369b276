"""Runner benchmark: scripted-agent episodes per minute, and the runner's own cost per tool call.

Usage: .venv/bin/python bench/bench_audit.py [--build build] [--tasks 12] [--jobs 2] [--agent random]
       [--width 640 --height 480]
       .venv/bin/python bench/bench_audit.py --against OTHER_PYTHON --task ID [--task ID ...]
       [--agent sweep] [--repeat 2] [--width 160 --height 120]

Runs `wac eval`'s machinery with a scripted agent on the first N evaluation tasks of a build
(fresh run directory in a temp dir, no example, judged by the keyword judge) and reports:

- episodes per minute on `--jobs` processes (wall clock, including world load and rendering);
- the runner's overhead per tool call *excluding* the environment step (validation, frame
  archive, PNG encoding of the shown frame, logging), median and 95th percentile over all calls.

With `--against PYTHON` (another checkout's interpreter, e.g. main's `.venv/bin/python`) it instead
times single episodes, `wac audit BUNDLE` in a fresh process per episode, alternating this checkout
and the other one on each `--task` (`--repeat` rounds, so load changes on a busy machine hit both
alike), and prints each task's median seconds, the ratio, and whether the two trajectories agree
(poses, outcomes and final-frame PNGs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
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
    ap.add_argument("--against", metavar="PYTHON", help="compare single episodes with another interpreter")
    ap.add_argument("--task", action="append", help="--against: a task id (repeatable)")
    ap.add_argument("--repeat", type=int, default=2, help="--against: rounds per task")
    args = ap.parse_args(argv)
    if args.against:
        return compare(args)

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


def _episode(python: str, bundle: Path, out: Path, args) -> float:
    cmd = [python, "-m", "wac.cli", "audit", str(bundle), "--out", str(out), "--agent", args.agent]
    cmd += ["--no-example", "--width", str(args.width), "--height", str(args.height)]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=tempfile.gettempdir())
    return time.perf_counter() - t0


def _steps(out: Path) -> list[tuple]:
    """What must agree between the two: each step's pose, outcome, film poses and final frame."""
    traj = out / "trajectory"
    rows = [json.loads(line) for line in (traj / "trajectory.jsonl").read_text(encoding="utf-8").splitlines()]
    return [
        (
            r["pose"],
            r["outcome"],
            [(f["t_sim"], f.get("pose")) for f in r["film"]],
            (traj / r["frame"]).read_bytes(),
        )
        for r in rows
    ]


def compare(args) -> int:
    """Median single-episode seconds here and under `--against`, interleaved (see the module docstring)."""
    build, ok = Path(args.build), True
    print(f"agent {args.agent}, {args.width}x{args.height}, {args.repeat} round(s); seconds per episode")
    print(f"  {'task':32s} {'this':>7s} {'other':>7s} {'other/this':>10s}  same episode")
    with tempfile.TemporaryDirectory() as tmp:
        for tid in args.task or ():
            times: dict[str, list[float]] = {"this": [], "other": []}
            for r in range(args.repeat):
                for who, py in (("this", sys.executable), ("other", args.against))[
                    :: 1 if r % 2 == 0 else -1
                ]:
                    out = Path(tmp) / f"{tid}-{who}-{r}"
                    times[who].append(_episode(py, build / tid, out, args))
            same = _steps(Path(tmp) / f"{tid}-this-0") == _steps(Path(tmp) / f"{tid}-other-0")
            ok &= same
            a, b = statistics.median(times["this"]), statistics.median(times["other"])
            print(f"  {tid:32s} {a:7.1f} {b:7.1f} {b / a:10.2f}  {'yes' if same else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
