"""Where an anomaly is and how far an auditor's view reaches: read by the judge (its context) and by
the metrics (coverage)."""

from __future__ import annotations

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
