"""App. E's geometric coverage: where an anomaly is, how far an auditor's view reaches, and whether
one pose covers it.  Read by the judge (its context), the metrics (coverage of a trajectory) and the
compiler (W542: a start view that already covers the target)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from wac.bundle.model import (
    AddBlocker,
    AddHole,
    AddObject,
    CompiledTask,
    SceneType,
    SelfCheckPlan,
    SetPartPose,
    SetPose,
)

# App. E: "within an environment-specific distance limit (7-16 m)".  The paper's environments map
# onto wac's scene types: indoor houses 7 m, industrial sites 12 m, city, historical towns 14 m,
# nature 16 m.
DISTANCE_LIMIT_M: dict[str, float] = {
    SceneType.indoor: 7.0,
    SceneType.industrial: 12.0,
    SceneType.urban: 14.0,
    SceneType.historical: 14.0,
    SceneType.natural: 16.0,
}
COS_HALF_HFOV = 0.75  # horizontal: cos(angle to the view direction) >= 0.75, i.e. within 41.41 deg
HALF_HFOV_DEG = math.degrees(math.acos(COS_HALF_HFOV))
HALF_VFOV_DEG = 32.0  # vertical: target elevation within 32 deg of the camera's elevation


def coverage_limit_m(scene) -> float:
    """App. E distance limit: the environment's own when it declares one, else its scene type's."""
    if scene.environment is not None and scene.environment.coverage_m is not None:
        return scene.environment.coverage_m
    return DISTANCE_LIMIT_M.get(scene.scene_type, 12.0)


def covers(pose: dict, point, eye_height_m: float, limit_m: float) -> bool:
    """App. E's test for one frame: within the distance limit and both angular limits.  `pose`: x, y,
    z (feet, optional), yaw_deg (ccw from +x) and pitch_deg (optional, positive looks down)."""
    dx, dy = point[0] - pose["x"], point[1] - pose["y"]
    d = math.hypot(dx, dy)
    if d < 1e-6 or d > limit_m:
        return False
    yaw = math.radians(pose["yaw_deg"])
    if (dx * math.cos(yaw) + dy * math.sin(yaw)) / d < COS_HALF_HFOV:
        return False
    elevation = math.degrees(math.atan2(point[2] - (pose.get("z", 0.0) + eye_height_m), d))
    return abs(elevation + pose.get("pitch_deg", 0.0)) <= HALF_VFOV_DEG


@dataclass(frozen=True)
class Target:
    point: tuple[float, float, float] | None  # None: a scene-wide anomaly (day-night), seen in any frame
    radius_m: float  # horizontal half extent of the target
    source: str  # "object", "effect", "plan" or "global"


SCENE_WIDE = {"set_day_night"}  # effects on the whole scene (its light): in view in every frame


def _box(lo, hi) -> tuple[tuple[float, float, float], float]:
    c = tuple((a + b) / 2.0 for a, b in zip(lo, hi, strict=True))
    return c, max(abs(hi[0] - lo[0]), abs(hi[1] - lo[1])) / 2.0


def anomaly_target(task: CompiledTask, index: int, plan: SelfCheckPlan | None = None) -> Target:
    """Where anomaly `index` is: the bounding-box centre of its target objects (added ones from their
    effect), else its effect's position (holes, invisible walls), else the self-check's target point."""
    a = task.anomalies[index]
    objects = {o.id: o for o in task.scene.objects}
    for e in a.effects:
        if isinstance(e, AddObject):
            objects.setdefault(e.object.id, e.object)
    boxes = [_box(objects[t].aabb_min, objects[t].aabb_max) for t in a.targets if t in objects]
    if boxes:
        c = tuple(sum(b[0][i] for b in boxes) / len(boxes) for i in range(3))
        return Target(c, max(b[1] for b in boxes), "object")
    for e in a.effects:
        if isinstance(e, AddHole | AddBlocker):
            size = e.size
        elif isinstance(e, SetPose | SetPartPose) and e.position is not None:
            size = (1.0, 1.0, 0.0)
        else:
            continue
        z = e.position[2] + (size[2] / 2.0 if isinstance(e, AddBlocker) else 0.0)
        return Target((e.position[0], e.position[1], z), max(size[0], size[1]) / 2.0, "effect")
    if any(e.kind in SCENE_WIDE for e in a.effects) and not a.targets:
        return Target(None, 0.0, "global")
    if plan is not None and index == 0:
        return Target(tuple(plan.target_point), 0.5, "plan")
    return Target(None, 0.0, "global")
