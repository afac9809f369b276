"""`wac derive closer-start`: the paper's starting-distance ablation (§5) for a build.

The self-check plan of each bundle walks the shortest route over the compiler's walkable grid
from the start to the exposing view point (straightened; `plan.py`).  The closer start is the
point on that route whose remaining route distance is one third of the whole, with the start's
orientation unchanged (as in the paper).  The plan's remaining actions from there (a turn onto
the route, the rest of the route, the exposing actions) are kept for the oracle.

Written to `BUILD/closer_start.json` (task id -> pose, distances, steps); `wac eval
--closer-start` starts there when the file lists the task.  Deterministic: the same build gives
the same bytes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from wac.bundle import model as B
from wac.bundle.actions import MAX_MOVE_M
from wac.bundle.reader import Bundle, read_index, require_build
from wac.compiler.plan import _turn

FILE = "closer_start.json"
FRACTION = 1 / 3  # remaining route distance / original route distance
AT_VIEW_M = 0.4  # the route ends where the plan reaches its view point


def _route(task: B.CompiledTask, plan: B.SelfCheckPlan) -> list[tuple]:
    """The route's move segments: ((x0, y0), (x1, y1), heading, step index), up to the view point."""
    x, y = task.exploration.start.position
    yaw = task.exploration.start.yaw_deg
    segs: list[tuple] = []
    for i, s in enumerate(plan.steps):
        if math.dist((x, y), plan.view_point) <= AT_VIEW_M and segs:
            break
        if s.caption or s.action not in ("turn", "move"):
            break
        if s.action == "turn":
            yaw -= float(s.args.get("degrees", 0.0))  # positive turns right (plan._turn)
        elif s.args.get("direction", "forward") != "forward":
            break
        else:
            d = float(s.args.get("distance_m", 0.0))
            h = math.radians(yaw)
            nx, ny = x + d * math.cos(h), y + d * math.sin(h)
            segs.append(((x, y), (nx, ny), yaw, i))
            x, y = nx, ny
    return segs


def closer_start(task: B.CompiledTask, plan: B.SelfCheckPlan) -> dict:
    """The closer start of one task: pose (x, y, yaw, pitch), route distances and the remaining plan."""
    start = task.exploration.start
    segs = _route(task, plan)
    total = sum(math.dist(a, b) for a, b, _, _ in segs)
    goal = total * (1 - FRACTION)
    pos, steps, walked = start.position, list(plan.steps), 0.0
    for a, b, heading, i in segs:
        d = math.dist(a, b)
        if walked + d >= goal - 1e-9 and d > 0:
            f = (goal - walked) / d
            pos = (a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f)
            rest = d - (goal - walked)
            lead: list[B.PlanStep] = []
            t = _turn(start.yaw_deg, heading)
            if abs(t) > 0.5:
                lead.append(B.PlanStep(action="turn", args={"degrees": round(t, 2)}))
            while rest > 0.05:
                m = min(MAX_MOVE_M, rest)
                lead.append(
                    B.PlanStep(
                        action="move", args={"distance_m": round(max(0.3, m), 2), "direction": "forward"}
                    )
                )
                rest -= m
            # the plan's later turns are relative to this segment's heading, which `lead` restores
            steps = lead + list(plan.steps[i + 1 :])
            break
        walked += d
    remaining = total - goal
    return {
        "pose": {
            "x": round(pos[0], 3),
            "y": round(pos[1], 3),
            "yaw_deg": round(start.yaw_deg, 3),
            "pitch_deg": round(start.pitch_deg, 3),
        },
        "route_m": round(total, 3),
        "remaining_m": round(remaining, 3),
        "steps": [s.model_dump(mode="json") for s in steps],
    }


def derive_closer_starts(build: Path) -> dict[str, dict]:
    """Closer starts for every bundle of a build, by task id (sorted)."""
    require_build(build)
    out = {}
    for e in sorted(read_index(build), key=lambda e: e["id"]):
        bundle = Bundle.open(build / e["id"])
        out[e["id"]] = closer_start(bundle.task(), bundle.plan())
    return out


def write_closer_starts(build: Path) -> Path:
    data = derive_closer_starts(build)
    path = build / FILE
    text = json.dumps({"fraction": round(FRACTION, 6), "tasks": data}, indent=2, sort_keys=True) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def read_closer_start(bundle: Path, task_id: str) -> dict | None:
    """The derived closer start of a bundle's task, when its build has one."""
    path = bundle.parent / FILE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))["tasks"].get(task_id)
    except (OSError, ValueError, KeyError, AttributeError):
        return None
