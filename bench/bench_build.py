"""Build throughput: cold build and no-op rebuild of a generated corpus of tasks.

    .venv/bin/python bench/bench_build.py [--tasks 1000] [--jobs 2]

Generates 5 scenes (one per scene type) of about 30 standard-library objects each and
N task files cycling through operators of every category, then times `wac build` cold,
a no-op rebuild, and a rebuild after touching one task.  Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENE = """scene {name} {{
    description "A generated {stype} scene for the build benchmark."
    type {stype}
    era {era}
    ground grass size (40, 40)
    day_night period 60 s
    bounds from (-12, -12) to (12, 12)
    start at (0, -10) yaw 90 deg
{objects}
}}
"""

OPERATORS = [
    "float box_{k} by 0.4 m",
    "sink box_{k} by 0.2 m",
    "scale box_{k} by 2.5",
    "remove_collision box_{k}",
    "invisible_wall at (0, -4) size (3, 0.3, 2.5)",
    "launch crate_{k} speed 8 m/s when contact",
    "xray box_{k}",
    "scale box_{k} by 2 when beyond 6 m",
    "remove_shadow box_{k}",
    "swap_material box_{k} to metal",
    "hide box_{k} when revisit",
    "move box_{k} by (1, 0) when revisit away 2 s",
    "abrupt_day_night period 1 s",
    "invert box_{k}",
    "tilt box_{k} by 30 deg",
]


def make_corpus(root: Path, n_tasks: int) -> None:
    (root / "scenes").mkdir(parents=True)
    (root / "tasks").mkdir()
    kinds = [
        ("indoor", "modern"),
        ("urban", "modern"),
        ("historical", "medieval"),
        ("industrial", "industrial"),
        ("natural", "any"),
    ]
    for s, (stype, era) in enumerate(kinds):
        objs = []
        for k in range(24):
            x, y = -9 + (k % 6) * 3.6, -2 + (k // 6) * 3.2
            objs.append(f"    box_{k}: box size (0.8, 0.8, 1.0) at ({x:.1f}, {y:.1f}) material wood")
        for k in range(6):
            objs.append(
                f"    crate_{k}: box size (0.5, 0.5, 0.5) at ({-8 + k * 3.2:.1f}, -6) material wood mass 10 kg"
            )
        (root / "scenes" / f"s{s}.wa").write_text(
            SCENE.format(name=f"s{s}", stype=stype, era=era, objects="\n".join(objs))
        )
    for i in range(n_tasks):
        s = i % len(kinds)
        op = OPERATORS[(i // len(kinds)) % len(OPERATORS)].format(k=i % 6)
        (root / "tasks" / f"t{i:04d}.wa").write_text(
            f'import "../scenes/s{s}.wa"\ntask t{i:04d} on s{s} {{\n    anomaly {op}\n}}\n'
        )


def run(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"benchmark build failed:\n{proc.stderr[-3000:]}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    wac = str(Path(sys.executable).with_name("wac"))
    scratch = Path(__file__).resolve().parent.parent / "build"  # where real builds go, not a RAM-less /tmp
    scratch.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=scratch, prefix="bench-") as tmp:
        root = Path(tmp)
        make_corpus(root, args.tasks)
        cmd = [wac, "build", "tasks", "-o", "out", "-j", str(args.jobs)]
        cold = run(cmd, root)
        noop = run(cmd, root)
        (root / "tasks" / "t0000.wa").write_text(
            (root / "tasks" / "t0000.wa").read_text().replace("0.4 m", "0.5 m")
        )
        one = run(cmd, root)
        shutil.rmtree(root / "out")
    print("| tasks | jobs | cold build | tasks/s | no-op rebuild | one task changed |")
    print("|---|---|---|---|---|---|")
    print(
        f"| {args.tasks} | {args.jobs} | {cold:.2f} s | {args.tasks / cold:.0f} | {noop:.2f} s | {one:.2f} s |"
    )


if __name__ == "__main__":
    main()
