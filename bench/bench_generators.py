"""Build time of large outdoor scenes written with generators, against the same scenes written
one object per line.

    .venv/bin/python bench/bench_generators.py --sizes 150 300 600 --repeat 3

For each size it writes a scene of about that many objects (rows of lamp posts and fence
panels, a grid of crates, a ring of boulders, two rooms with doors and windows, and seeded
scatters of trees, bushes and rocks) and one task, builds it `--repeat` times in this process
(the first build pays for the standard library and caches), then writes the same objects as
explicit `id: prefab at (x, y) yaw …` lines and builds that.  Reports objects, source lines
and seconds per build (cold = first build in the process, warm = median of the rest).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from wac.compiler.pipeline import compile_project

HEAD = """scene bench_green {{
    description "A large village green for the generator benchmark."
    type historical
    era industrial
    ground grass size ({g}, {g})
    bounds from (-{b}, -{b}) to ({b}, {b})
    start at (0, -{s}) yaw 90 deg
    path_1: box size (4, {p}, 0.02) at (0, 0) material cobblestone solid no
"""
TASK = """
task bench_task on bench_green {
    anomaly float lamps_3 by 0.4 m
}
"""


def generated(n: int) -> str:
    """A scene of about `n` objects written with generators (the area grows with n)."""
    half = max(30.0, (n * 22.0) ** 0.5)  # about 22 m^2 per object keeps scatters placeable
    b, g = half - 2, 2 * half + 20
    head = HEAD.format(g=g, b=b, s=b - 4, p=2 * b - 8)
    trees, bushes, rocks = int(n * 0.3), int(n * 0.25), int(n * 0.15)
    body = f"""    lamps: row lamp_post from (3, -{b - 10}) to (3, {b - 10}) every 8 m face across
    fence_n: row fence from (-{b - 3.5}, {b - 1}) to ({b - 3.5}, {b - 1}) every 3 m face across
    crates: grid crate at (10, -{b - 4}) count (4, 3) spacing (1.2 m, 1.2 m)
    stones: ring boulder around (-18, 12) radius 6 m count 10 face in
    house: room from (10, 4) to (17, 10) height 2.8 m material plaster {{
        door w at 3 m
        window s at 3.5 m
    }}
    shed: room from (17, 4) to (22, 10) height 2.8 m material brick {{
        door w at 1.5 m
    }}
    trees: scatter {trees} tree from (-{b}, -{b - 6}) to ({b}, {b - 4}) seed 3 min_gap 1 m avoid [path_1] face random
    bushes: scatter {bushes} bush from (-{b}, -{b - 6}) to ({b}, {b - 4}) seed 5 min_gap 0.5 m avoid [path_1]
    rocks: scatter {rocks} rock from (-{b}, -{b - 6}) to ({b}, {b - 4}) seed 8 min_gap 0.5 m avoid [path_1]
}}
"""
    return head + body + TASK


def explicit(source: str, scene: dict) -> str:
    """The same scene with every generated prefab instance written on its own line."""
    lines = source.splitlines(keepends=True)
    keep = [
        ln
        for ln in lines
        if not any(
            f"{k}: " in ln for k in ("lamps", "fence_n", "crates", "stones", "trees", "bushes", "rocks")
        )
    ]
    i = keep.index("}\n")
    objs = []
    for o in scene["objects"]:
        label = o["id"].rsplit("_", 1)[0]
        if label in ("lamps", "fence_n", "crates", "stones", "trees", "bushes", "rocks"):
            x, y = o["position"][:2]
            yaw = (o.get("rotation_deg") or [0.0])[0]
            objs.append(f"    {o['id']}: {o['prefab']} at ({x:g}, {y:g}) yaw {yaw:g} deg\n")
    return "".join(keep[:i] + objs + keep[i:])


def time_builds(text: str, repeat: int) -> tuple[float, float, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "tasks").mkdir()
        (root / "tasks" / "bench.wa").write_text(text)
        times = []
        result = None
        for _ in range(repeat):
            t0 = time.perf_counter()
            result = compile_project([root / "tasks"], root)
            times.append(time.perf_counter() - t0)
            assert result.ok, "\n".join(d.render() for d in result.diagnostics)
        scene = json.loads(result.tasks["bench_task"]["task.json"])["scene"]
    return times[0], statistics.median(times[1:] or times), scene


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[150, 300, 600])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("| objects | written as | source lines | cold build | warm build |")
    print("|---|---|---|---|---|")
    for n in args.sizes:
        src = generated(n)
        cold, warm, scene = time_builds(src, args.repeat)
        count = len(scene["objects"])
        print(f"| {count} | generators | {len(src.splitlines())} | {cold:.2f} s | {warm:.2f} s |")
        flat = explicit(src, scene)
        cold2, warm2, scene2 = time_builds(flat, args.repeat)
        assert len(scene2["objects"]) == count
        print(f"| {count} | one line each | {len(flat.splitlines())} | {cold2:.2f} s | {warm2:.2f} s |")


if __name__ == "__main__":
    main()
