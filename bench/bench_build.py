"""Build throughput: cold build and no-op rebuild of a generated corpus of tasks.

    .venv/bin/python bench/bench_build.py [--tasks 1000] [--jobs 2]
    .venv/bin/python bench/bench_build.py --objects 20000
    .venv/bin/python bench/bench_build.py --corpus tasks_src [--compare /tmp/old/compiler] [--rounds 3]


Generates 5 scenes (one per scene type) of about 30 standard-library objects each and
N task files cycling through operators of every category, then times `wac build` cold,
a no-op rebuild, and a rebuild after touching one task.  Prints a Markdown table.

With `--objects N`, builds instead one task on one scene of N objects (crates on a jittered
grid, some stacked on others) and reports the build's time and peak memory: the clean-scene
check's broad phase keeps this near-linear.

With `--corpus SRC…`, times cold builds of real sources (the shipped corpus) instead: wac's own
time (after the imports), the CPU of the build and its workers, and the wall time of the command.
`--compare DIR` also builds with the `compiler/` package found in DIR (for example
`git worktree add /tmp/old HEAD~1`, then `--compare /tmp/old/compiler`), alternating the two
`--rounds` times so both see the same machine load, and says whether the two builds' bundles are
byte-identical (the build cache aside, which records the compiler's own hash).
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


def make_big_scene(root: Path, n_objects: int) -> None:
    """One scene of `n_objects` crates (every fifth stacked on the one before), one task."""
    (root / "scenes").mkdir(parents=True)
    (root / "tasks").mkdir()
    side = int((n_objects * 0.8) ** 0.5) + 1
    half = side * 1.5 / 2 + 3
    objs = []
    k = 0
    while k < n_objects:
        i = len(objs) - sum(1 for o in objs if " on " in o)
        x, y = -half + 3 + (i % side) * 1.5 + (i * 0.37 % 0.3), -half + 3 + (i // side) * 1.5
        objs.append(f"    c_{k}: box size (0.6, 0.6, 0.6) at ({x:.2f}, {y:.2f}) material wood")
        k += 1
        if k % 5 == 4 and k < n_objects:
            objs.append(f"    c_{k}: box size (0.5, 0.5, 0.4) on c_{k - 1} material wood")
            k += 1
    (root / "scenes" / "big.wa").write_text(
        f"""scene big {{
    description "A generated warehouse floor of {n_objects} crates for the build benchmark."
    type industrial
    era modern
    ground concrete size ({2 * half + 4:.0f}, {2 * half + 4:.0f})
    bounds from ({-half:.1f}, {-half:.1f}) to ({half:.1f}, {half:.1f})
    start at ({-half + 1:.1f}, {-half + 1:.1f}) yaw 45 deg
{chr(10).join(objs)}
}}
"""
    )
    (root / "tasks" / "t.wa").write_text(
        'import "../scenes/big.wa"\ntask big_one on big {\n    anomaly float c_0 by 0.4 m\n}\n'
    )


def run_measured(cmd: list[str], cwd: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak resident MiB) of one command (CPU time is what a loaded
    machine does not inflate)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = run(cmd, cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return seconds, cpu, max(after.ru_maxrss, before.ru_maxrss) / 1024


def run(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"benchmark build failed:\n{proc.stderr[-3000:]}")
    return time.perf_counter() - t0


def build_with(out: str, sources: list[str], jobs: int, compiler: str | None) -> None:
    """`wac build` in this process, with `wac.compiler` imported from `compiler` if given."""
    if compiler:
        from package_swap import use_package

        use_package("compiler", compiler)
    from wac.cli import main as wac_main

    sys.exit(wac_main(["build", *sources, "-o", out, "-j", str(jobs)]))


def corpus_round(sources: list[str], out: Path, jobs: int, compiler: str | None) -> dict:
    """One cold build in a fresh interpreter: wac's time, CPU of all its processes, wall."""
    import re
    import resource

    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, __file__, "--build-one", str(out), "--jobs", str(jobs)]
    cmd += ["--compiler", compiler] if compiler else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([*cmd, "--", *sources], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"benchmark build failed:\n{proc.stderr[-3000:]}")
    own = re.search(r"\(([\d.]+) s\)\s*$", proc.stderr.strip() or proc.stdout.strip())
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"own": float(own.group(1)) if own else float("nan"), "cpu": cpu, "wall": wall}


def _files(d: Path) -> list[Path]:
    return sorted(p.relative_to(d) for p in d.rglob("*") if p.is_file() and p.name != ".wac-cache.json")


def same_bundles(a: Path, b: Path) -> bool:
    """Whether two builds hold the same files with the same bytes (the build cache aside)."""
    return _files(a) == _files(b) and all((a / f).read_bytes() == (b / f).read_bytes() for f in _files(a))


def bench_corpus(sources: list[str], jobs: int, compare: str | None, rounds: int, scratch: Path) -> None:
    import statistics

    with tempfile.TemporaryDirectory(dir=scratch, prefix="bench-") as tmp:
        new_out, old_out = Path(tmp) / "new", Path(tmp) / "old"
        rows: dict[str, list[dict]] = {"after": [], "before": []}
        for _ in range(rounds):
            if compare:
                rows["before"].append(corpus_round(sources, old_out, jobs, compare))
            rows["after"].append(corpus_round(sources, new_out, jobs, None))
        identical = same_bundles(old_out, new_out) if compare else None
    print(
        f"cold `wac build {' '.join(sources)} -j {jobs}`, {rounds} round(s)"
        + (", alternating" if compare else "")
    )
    print("| code | wac's time | CPU (all processes) | wall |")
    print("|---|---|---|---|")
    for label, rs in rows.items():
        if rs:
            cells = [
                ", ".join(f"{r[k]:.2f}" for r in rs)
                + f" (median {statistics.median(r[k] for r in rs):.2f}) s"
                for k in ("own", "cpu", "wall")
            ]
            print(f"| {label if compare else 'this tree'} | " + " | ".join(cells) + " |")
    if compare:
        ratio = statistics.median(r["wall"] for r in rows["after"]) / statistics.median(
            r["wall"] for r in rows["before"]
        )
        print(
            f"median wall after/before: {ratio:.2f}x; bundles byte-identical: {'yes' if identical else 'NO'}"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--objects", type=int, help="build one scene of this many objects instead")
    ap.add_argument("--corpus", nargs="+", metavar="SRC", help="time cold builds of these sources instead")
    ap.add_argument("--compare", metavar="DIR", help="--corpus: also build with the compiler/ package in DIR")
    ap.add_argument("--rounds", type=int, default=3, help="--corpus: cold builds per code (default 3)")
    ap.add_argument("--build-one", metavar="OUT", help=argparse.SUPPRESS)
    ap.add_argument("--compiler", help=argparse.SUPPRESS)
    ap.add_argument("sources", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.build_one:
        build_with(args.build_one, args.sources, args.jobs, args.compiler)
        return
    wac = str(Path(sys.executable).with_name("wac"))
    scratch = Path(__file__).resolve().parent.parent / "build"  # where real builds go, not a RAM-less /tmp
    scratch.mkdir(exist_ok=True)
    if args.corpus:
        compare = str(Path(args.compare).resolve()) if args.compare else None
        bench_corpus([str(Path(c).resolve()) for c in args.corpus], args.jobs, compare, args.rounds, scratch)
        return
    if args.objects:
        with tempfile.TemporaryDirectory(dir=scratch, prefix="bench-") as tmp:
            root = Path(tmp)
            make_big_scene(root, args.objects)
            seconds, cpu, mib = run_measured([wac, "build", "tasks", "-o", "out", "-j", "1"], root)
        print(f"load average (1 min) after the build: {os.getloadavg()[0]:.1f}")
        print("| objects in one scene | build (wall) | build (CPU) | peak memory |")
        print("|---|---|---|---|")
        print(f"| {args.objects} | {seconds:.1f} s | {cpu:.1f} s | {mib:.0f} MiB |")
        return
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
