"""The corpus table of docs/corpus.md, from a build of the shipped tasks.

    .venv/bin/wac build tasks_src/ -o build/
    .venv/bin/python bench/corpus_table.py build/

Prints, per environment, its scenes (type, extent of the exploration bounds, object count) and
its single-anomaly evaluation tasks next to the paper's count (seed 001, A.1); then the tasks
per category and the derived multi-anomaly tasks.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

# WorldAuditBench A.1: tasks per environment
PAPER = {
    "residential_house": 14,
    "sponza_atrium": 13,
    "family_house": 15,
    "utopian_city": 15,
    "subway": 17,
    "ancient_chinese_city": 23,
    "medieval_village": 22,
    "industrial_factory": 19,
    "airfield": 18,
    "rural_australia": 16,
    "mistwood_cottage": 15,
    "reef_dive": 12,
    "wilderness": 14,
}


def main(argv: list[str]) -> int:
    build = Path(argv[0] if argv else "build")
    index = json.loads((build / "index.json").read_text(encoding="utf-8"))["tasks"]
    evals = [e for e in index if not e.get("example")]
    single = [e for e in evals if e.get("anomalies", 1) == 1]
    scenes: dict[str, dict] = {}
    for e in sorted(evals, key=lambda e: e["id"]):
        if e["scene"] in scenes:
            continue
        task = json.loads((build / e["id"] / "task.json").read_text(encoding="utf-8"))
        poly = task["exploration"]["bounds"]  # a polygon
        xs, ys = [p[0] for p in poly], [p[1] for p in poly]
        scenes[e["scene"]] = {
            "env": e.get("environment") or e["scene"],
            "type": e["scene_type"],
            "size": (max(xs) - min(xs), max(ys) - min(ys)),
            "objects": len(task["scene"]["objects"]),
        }
    per_env = Counter(e.get("environment") or e["scene"] for e in single)
    by_env: dict[str, list[str]] = defaultdict(list)
    for name, s in scenes.items():
        by_env[s["env"]].append(name)
    print("| environment | scenes (type, bounds, objects) | tasks | paper |")
    print("|---|---|---|---|")
    for env in sorted(by_env):
        cells = "; ".join(
            f"`{n}` ({scenes[n]['type']}, {scenes[n]['size'][0]:.0f} × {scenes[n]['size'][1]:.0f} m, "
            f"{scenes[n]['objects']})"
            for n in sorted(by_env[env])
        )
        print(f"| {env} | {cells} | {per_env[env]} | {PAPER.get(env, '—')} |")
    print(f"| **all** | {len(scenes)} scenes | **{len(single)}** | 213 |")
    print()
    cats = Counter(e["category"] for e in single)
    print("| category | tasks |")
    print("|---|---|")
    for c, n in sorted(cats.items()):
        print(f"| {c} | {n} |")
    multi = [e for e in evals if e.get("anomalies", 1) > 1]
    print()
    print(f"Multi-anomaly tasks: {len(multi)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
