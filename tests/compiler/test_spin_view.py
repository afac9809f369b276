"""A changed animation (a fan frozen, jumping) is planned facing the turning part: edge-on, or from
behind a fan's guard, its turning does not show (service_fan_room and hall_north_fan failed their
self-checks for that)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from wac.bundle.transforms import rotation
from wac.compiler.pipeline import compile_project

ROOT = Path(__file__).resolve().parents[2]


def _spin_axis_world(obj: dict) -> tuple[float, float]:
    part = next(p for p in obj["parts"] if p.get("spin"))
    local = {"x": (1, 0, 0), "y": (0, 1, 0), "z": (0, 0, 1)}[part["spin"].get("axis", "z")]
    v = rotation(*obj.get("rotation_deg", (0, 0, 0))) @ (
        rotation(*part.get("rotation_deg", (0, 0, 0))) @ local
    )
    n = math.hypot(v[0], v[1])
    return v[0] / n, v[1] / n


def test_the_plan_faces_a_fan_from_the_side_it_blows_to(tmp_path):
    src = ROOT / "tasks_src" / "industrial_factory" / "hall_fan.wa"
    res = compile_project([src], ROOT, out=tmp_path / "b")
    assert not res.diagnostics
    bundle = tmp_path / "b" / "hall_north_fan"
    plan = json.loads((bundle / "selfcheck.json").read_text())
    task = json.loads((bundle / "task.json").read_text())
    fan = next(o for o in task["scene"]["objects"] if o["id"] == task["anomalies"][0]["targets"][0])
    ax, ay = _spin_axis_world(fan)
    (vx, vy), (tx, ty, _) = plan["view_point"], plan["target_point"]
    d = math.hypot(vx - tx, vy - ty)
    cos = ((vx - tx) * ax + (vy - ty) * ay) / d
    assert cos > math.cos(math.radians(25)), (plan["view_point"], plan["target_point"], (ax, ay))
