"""What the self-check's world-alone stage (`validation/world_alone.py`, issue 27) adds to a self-check.

    .venv/bin/python bench/bench_world_alone.py [--rounds 3] BUILD [TASK ...]

Without TASKs, one bundle per scene of BUILD (the first by id), so scenes of every size are timed.
Each round self-checks every task twice in this one process, alternating the stage on and off so both
see the same machine load, in a fresh cache of clean-scene findings for the first task of each scene
(the cost a worker pays once per scene) and a warm one for the rest.  It prints, per task, the
median seconds with and without the stage and the ratio, then the ratio of the totals.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def _bundles(build: Path, tasks: list[str]) -> list[Path]:
    if tasks:
        return [build / t for t in tasks]
    seen, out = set(), []
    for d in sorted(p for p in build.iterdir() if (p / "task.json").is_file()):
        scene = json.loads((d / "task.json").read_text())["scene"]["name"]
        if scene not in seen:
            seen.add(scene)
            out.append(d)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("build", type=Path)
    ap.add_argument("tasks", nargs="*")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    from wac.validation import bundlecheck, world_alone

    real_problems, real_alone = bundlecheck.world_problems, bundlecheck.check_alone

    def stage(on: bool) -> None:
        bundlecheck.world_problems = real_problems if on else (lambda task: [])
        bundlecheck.check_alone = real_alone if on else (lambda *a, **k: ("off", []))

    bundles = _bundles(args.build, args.tasks)
    times: dict[str, dict[bool, list[float]]] = {b.name: {True: [], False: []} for b in bundles}
    for r in range(args.rounds):
        for b in bundles:
            for on in (r % 2 == 0, r % 2 == 1):
                stage(on)
                world_alone._KNOWN.clear()  # the first task of a scene in a worker pays for its clean scene
                t0 = time.perf_counter()
                res = bundlecheck.check_bundle(b)
                times[b.name][on].append(time.perf_counter() - t0)
                if on and not res.passed:
                    print(f"{b.name}: FAIL {res.reasons}", file=sys.stderr)
    stage(True)
    tot_on = tot_off = 0.0
    print(f"{'task':40s} {'with':>8s} {'without':>8s} {'ratio':>6s}")
    for name, t in times.items():
        on, off = statistics.median(t[True]), statistics.median(t[False])
        tot_on, tot_off = tot_on + on, tot_off + off
        print(f"{name:40s} {on:8.2f} {off:8.2f} {on / off:6.3f}")
    print(f"{'all':40s} {tot_on:8.2f} {tot_off:8.2f} {tot_on / tot_off:6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
