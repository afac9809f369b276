"""Between passes 6 and 7: the perturbed world holds the anomaly's one change, and no second defect.

Objects an anomaly places (`spawn`, `anachronism`), moves, turns or scales are checked in
their perturbed pose against the rest of the world, as the clean scene is (pass 5):

* E536: such an object interpenetrates another one: a second, intersection defect beside the
  intended one (a crate moved into the fence, a spawned barrel inside a cart).  Operators
  whose defect *is* the intersection (category `intersection`) are exempt, and so are objects
  the task declares the anomaly changes (`affects`).
* E537: the anomaly puts its object outside the exploration bounds, where the auditor can
  neither go nor see it up close.
"""

from __future__ import annotations

from shapely.geometry import Point, Polygon

from wac.bundle import model as B
from wac.compiler.anomalies import Lowered
from wac.compiler.assemble import Built
from wac.compiler.diagnostics import Collector
from wac.compiler.layout import world_bounds
from wac.compiler.validate import penetration

EXEMPT_CATEGORIES = frozenset({"intersection"})
# deeper than the clean scene's 2 cm: a tilted stall brushing a lantern is no second defect,
# a crate moved into a fence is
PENETRATION_M = 0.05
OUTSIDE_M = 2.0  # as E533: a target this far outside the bounds cannot be inspected


def perturbed_objects(built: Built, low: Lowered) -> list[B.SceneObject]:
    """The objects the anomaly adds or re-poses, as they stand in the perturbed world."""
    out = []
    for e in low.effects:
        if isinstance(e, B.AddObject):
            out.append(e.object)
        elif isinstance(e, B.SetPose) and e.target in built.objects:
            o = built.objects[e.target]
            pos = e.position or o.position
            rot = e.rotation_deg or o.rotation_deg
            scale = e.scale or o.scale
            lo, hi = world_bounds(o.parts, pos, rot, scale)
            out.append(
                o.model_copy(
                    update={
                        "position": pos,
                        "rotation_deg": rot,
                        "scale": scale,
                        "aabb_min": lo,
                        "aabb_max": hi,
                    }
                )
            )
    return out


def _boxes_overlap(a: B.SceneObject, b: B.SceneObject) -> bool:
    return all(
        a.aabb_min[k] < b.aabb_max[k] - PENETRATION_M and b.aabb_min[k] < a.aabb_max[k] - PENETRATION_M
        for k in range(3)
    )


def check_perturbed(built: Built, lowered: list[Lowered], span_of, diag: Collector) -> None:
    """`span_of(low)` gives the anomaly statement's span for a lowered anomaly."""
    bounds = Polygon(built.exploration.bounds)
    # whatever any anomaly changes (a replaced lamp, the object a copy is made of) is not "the rest"
    changed = {o.id for low in lowered for o in perturbed_objects(built, low)}
    changed |= {e.target for low in lowered for e in low.effects if e.target}
    for low in lowered:
        moved = perturbed_objects(built, low)
        for o in moved:
            centre = Point((o.aabb_min[0] + o.aabb_max[0]) / 2, (o.aabb_min[1] + o.aabb_max[1]) / 2)
            if not bounds.contains(centre) and bounds.exterior.distance(centre) > OUTSIDE_M:
                diag.error(
                    "E537",
                    f"`{low.spec.name}` puts `{o.id}` at ({centre.x:.1f}, {centre.y:.1f}), outside the "
                    "exploration bounds",
                    span_of(low),
                    "keep the changed object inside `bounds`, where the auditor can reach it",
                )
        if low.category in EXEMPT_CATEGORIES:
            continue
        for o in moved:
            if not o.solid:
                continue
            for other in built.scene.objects:
                if (
                    other.id in changed
                    or other.id in low.affects  # a consequence the task declares (`affects`)
                    or not other.solid
                    or other.id in (o.support, o.attached_to)
                    or o.id in (other.support, other.attached_to)
                    or not _boxes_overlap(o, other)
                ):
                    continue
                depth = penetration(o, other)
                if depth > PENETRATION_M:
                    diag.error(
                        "E536",
                        f"in the perturbed world `{o.id}` interpenetrates `{other.id}` by {depth:.2f} m: "
                        f"a second defect beside the `{low.spec.name}` anomaly",
                        span_of(low),
                        f"place or move `{o.id}` where it stands clear of `{other.id}`",
                    )
                    break
