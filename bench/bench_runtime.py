"""Runtime benchmark: action->frame latency at 640x480 with shadows, bundle load time, memory.

    .venv/bin/python bench/bench_runtime.py [BUNDLE ...] [--compare OLD_RUNTIME_DIR]

Each bundle is measured in a fresh process: "world RSS" is what one running world adds to the
process (VTK, Mesa and pybullet loading included), "process RSS" the whole interpreter.  `--compare DIR` also measures the `runtime/` package found in DIR (for
example `git worktree add /tmp/old HEAD~1` then `--compare /tmp/old/runtime`), alternating the two
per bundle so both see the same machine load, and prints the ratios; on a noisy machine compare
ratios from one run, not seconds across runs.  Without bundles it measures the runtime tests'
showcase scene.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "runtime"))

ACTIONS = [
    "turn 20",
    "look 10",
    "move 1",
    "turn -45",
    "wait 0.5",
    "look -10",
    "move 2",
    "interact",
    "turn 90",
    "move 1 back",
    "turn 30",
    "wait 1",
] * 2

COLUMNS = [
    ("scene", "scene", "{}"),
    ("load_s", "bundle load s", "{:.3f}"),
    ("env_ready_s", "env+1st frame s", "{:.2f}"),
    ("action_ms", "median action->frame ms", "{:.1f}"),
    ("p90_ms", "p90 ms", "{:.1f}"),
    ("render_ms", "median frame ms", "{:.1f}"),
    ("per_frame_film_ms", "ms/frame with film", "{:.1f}"),
    ("rss_mb", "world RSS MB", "{:.0f}"),
    ("process_mb", "process RSS MB", "{:.0f}"),
]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def use_runtime(path: Path) -> None:
    """Import `wac.runtime` from another copy of runtime/ (an older checkout, for before/after runs)."""
    from package_swap import use_package

    use_package("runtime", path)


def bench(bundle, label: str) -> dict:
    from wac.bundle.model import CompiledTask
    from wac.runtime.env import WorldEnv
    from wac.runtime.physics import Physics
    from wac.runtime.world import World

    if isinstance(bundle, CompiledTask):
        tmp = Path(tempfile.mkdtemp()) / "bundle"
        tmp.mkdir()
        (tmp / "task.json").write_text(bundle.model_dump_json())
        bundle = tmp
    gc.collect()
    before = rss_mb()  # wac, numpy and pydantic are loaded; VTK, Mesa and pybullet are not yet
    t0 = time.perf_counter()
    task = CompiledTask.model_validate_json((Path(bundle) / "task.json").read_text())
    world = World(task, Path(bundle))
    phys = Physics(world, task.exploration.agent_radius_m, task.exploration.eye_height_m)
    load_s = time.perf_counter() - t0
    phys.close()
    t0 = time.perf_counter()
    env = WorldEnv(bundle, "perturbed", width=640, height=480, film_interval_s=None)
    first_frame_s = time.perf_counter() - t0
    lat, render = [], []
    for a in ACTIONS:
        t = time.perf_counter()
        env.step(a)
        lat.append(time.perf_counter() - t)
        t = time.perf_counter()
        env.observe()
        render.append(time.perf_counter() - t)
    process = rss_mb()
    env.close()
    env = WorldEnv(bundle, "perturbed", width=640, height=480, film_interval_s=0.5)
    film = []
    for a in ACTIONS[:8]:
        t = time.perf_counter()
        r = env.step(a)
        frames = [f.frame for f in r.film]  # film frames may be rendered on first access
        film.append((time.perf_counter() - t) / (len(frames) + 1))
    env.close()
    return {
        "scene": label,
        "load_s": load_s,
        "env_ready_s": first_frame_s,
        "action_ms": 1000 * statistics.median(lat),
        "p90_ms": 1000 * statistics.quantiles(lat, n=10)[-1],
        "render_ms": 1000 * statistics.median(render),
        "per_frame_film_ms": 1000 * statistics.median(film),
        "rss_mb": process - before,
        "process_mb": process,
    }


def table(rows: list[dict], cols=COLUMNS) -> str:
    cells = [[c[1] for c in cols]] + [[fmt.format(r[k]) for k, _, fmt in cols] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    out = []
    for j, row in enumerate(cells):
        out.append("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def run_one(bundle: str, runtime: Path | None) -> dict:
    """Bench one bundle in a fresh interpreter (optionally with another runtime/)."""
    cmd = [sys.executable, __file__, "--one", bundle] + (["--runtime", str(runtime)] if runtime else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def best(rows: list[dict]) -> dict:
    """Per figure, the lowest of several measurements of one bundle."""
    return {k: (min(r[k] for r in rows) if isinstance(v, float) else v) for k, v in rows[0].items()}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    ap.add_argument(
        "bundles", nargs="*", metavar="BUNDLE", help="bundle directories (default: the showcase scene)"
    )
    ap.add_argument(
        "--compare",
        type=Path,
        metavar="DIR",
        help="also measure the runtime/ package in DIR and print new/old ratios",
    )
    ap.add_argument("--runtime", type=Path, metavar="DIR", help="measure the runtime/ package in DIR instead")
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        metavar="N",
        help="measure each bundle N times (alternating with --compare) and keep each figure's best: "
        "background load only ever adds time",
    )
    ap.add_argument("--one", metavar="BUNDLE", help=argparse.SUPPRESS)  # child process: one bundle, JSON out
    args = ap.parse_args(argv)
    if args.one is not None:
        if args.runtime:
            use_runtime(args.runtime)
        target = args.one
        if target == "showcase":
            from rt_scenes import showcase

            target = showcase()
        print(json.dumps(bench(target, Path(args.one).name)))
        return 0
    bundles = args.bundles or ["showcase"]
    new, old = [], []
    for b in bundles:
        olds, news = [], []
        for _ in range(max(1, args.rounds)):
            if args.compare:
                olds.append(run_one(b, args.compare))
            news.append(run_one(b, args.runtime))
        new.append(best(news))
        if olds:
            old.append(best(olds))
    if args.compare:
        print(f"before ({args.compare}):")
        print(table(old))
        print("\nafter (this runtime):")
    print(table(new))
    if args.compare:
        keys = ["action_ms", "p90_ms", "render_ms", "per_frame_film_ms", "rss_mb", "process_mb"]
        ratios = [
            {"scene": n["scene"], **{k: n[k] / o[k] for k in keys}} for n, o in zip(new, old, strict=True)
        ]
        print("\nafter / before:")
        print(
            table(ratios, [("scene", "scene", "{}")] + [(k, c, "{:.2f}") for k, c, _ in COLUMNS if k in keys])
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
