"""Runtime benchmark: action->frame latency at 640x480 with shadows, bundle load time, memory.

Usage: .venv/bin/python bench/bench_runtime.py [BUNDLE ...]   (default: the runtime test showcase scene)
"""

from __future__ import annotations

import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "runtime"))

ACTIONS = ["turn 20", "look 10", "move 1", "turn -45", "wait 0.5", "look -10", "move 2", "interact", "turn 90",
           "move 1 back", "turn 30", "wait 1"] * 2


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


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
    before = rss_mb()
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
    mem = rss_mb() - before
    env.close()
    env = WorldEnv(bundle, "perturbed", width=640, height=480, film_interval_s=0.5)
    film = []
    for a in ACTIONS[:8]:
        t = time.perf_counter()
        r = env.step(a)
        film.append((time.perf_counter() - t) / (len(r.film) + 1))
    env.close()
    return {"scene": label, "load_s": load_s, "env_ready_s": first_frame_s, "action_ms": 1000 * statistics.median(lat),
            "render_ms": 1000 * statistics.median(render), "per_frame_film_ms": 1000 * statistics.median(film),
            "rss_mb": mem}


def main(argv: list[str]) -> int:
    from rt_scenes import showcase

    targets = [(Path(a), Path(a).name) for a in argv] or [(showcase(), "showcase (tests/runtime)")]
    rows = [bench(b, name) for b, name in targets]
    cols = [("scene", "scene", "{}"), ("load_s", "bundle load s", "{:.3f}"), ("env_ready_s", "env+1st frame s", "{:.2f}"),
            ("action_ms", "median action->frame ms", "{:.1f}"), ("render_ms", "median frame ms", "{:.1f}"),
            ("per_frame_film_ms", "ms/frame with film", "{:.1f}"), ("rss_mb", "world RSS MB", "{:.0f}")]
    cells = [[c[1] for c in cols]] + [[fmt.format(r[k]) for k, _, fmt in cols] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    for j, row in enumerate(cells):
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))
        if j == 0:
            print("  ".join("-" * w for w in widths))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
