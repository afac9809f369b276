"""What stands in the line of sight: the drawn, opaque parts of the clean world, for the planner's
view tests (`plan.py`) and for the messages that name what is in the way.

The planner used to ask the walkable grid: every solid footprint between a kerb's and the agent's
height hid everything behind it, at any height, and nothing else did.  So a barrel on a roof, a
cup on a table seen over a chair and a crate behind a window were "not in view", while a bush the
agent walks through hid nothing.  Here each part of a visible object is a prism (the convex hull
of its posed corners between its lowest and highest corner; a door that starts open has its panel
swung) and hides what a sight line behind it meets between its bottom and top; a part whose
material is seen through (glass, `SEE_THROUGH_OPACITY`) hides nothing from the auditor.  Solidity
does not matter: the agent walks through foliage that hides what is behind it, and is stopped by a
glass pane that hides nothing.  The glass prisms are kept, flagged: the planner prefers a view with
no glass in the way (the self-check's segmentation draws glass opaque, so a target seen only
through glass shows none of its own pixels there), and messages name the pane in the way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.geometry import MultiPoint, Polygon

from wac.bundle import model as B
from wac.bundle.transforms import box_corners, object_to_world, part_to_object, rotation

SEE_THROUGH_OPACITY = 0.7  # a material less opaque than this is seen through (glass 0.3, green glass 0.6)
TARGET_MARGIN_M = 0.1  # the last stretch of a sight line, this close to the target's box, is the target's
SEEN_SHARE = 0.6  # a target is in view when its centre and this share of its sample points are (3 of 5)


def posed_corners(obj: B.SceneObject, part: B.Part) -> np.ndarray:
    """The world corners of a part's bounding box as the clean world starts: a hinged part (a door's
    panel) of an object that starts open swung by its full swing, as the runtime poses it."""
    pts = box_corners(part.size)
    if part.hinge is not None and obj.open:
        px, py = part.hinge.pivot
        pivot = np.array([px, py, 0.0])
        pts = (pts - pivot) @ rotation(part.hinge.swing_deg).T + pivot
    return object_to_world(
        part_to_object(pts, part.position, part.rotation_deg), obj.position, obj.rotation_deg, obj.scale
    )


def hull(points: np.ndarray) -> Polygon:
    """The convex hull of points in plan (a degenerate one a thin polygon)."""
    h = MultiPoint(np.asarray(points)[:, :2]).convex_hull
    return h if isinstance(h, Polygon) else h.buffer(0.02)


@dataclass(frozen=True)
class Sight:
    """The prisms that hide what is behind them: footprint, bottom, top and owning object."""

    polys: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    lo: np.ndarray = field(default_factory=lambda: np.empty(0))
    hi: np.ndarray = field(default_factory=lambda: np.empty(0))
    owner: tuple[str, ...] = ()
    part: tuple[str, ...] = ()  # the part's id within its owner
    names: tuple[str, ...] = ()  # the owner's human name, for messages
    glass: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))  # seen through
    tree: shapely.STRtree | None = None

    def blockers(
        self, a, za: float, b, zb: float, skip=frozenset(), near=None, glass: bool = False
    ) -> list[int]:
        """The prisms the sight line from (a, za) to (b, zb) passes through, nearest to `a` first; the
        objects (ids) and parts ((id, part) pairs) in `skip`, the stretch of the line within `near` (a box x0, y0, x1, y1, grown by
        `TARGET_MARGIN_M`) and, unless `glass`, the prisms seen through are left out."""
        if self.tree is None:
            return []
        line = shapely.LineString([a, b])
        if near is not None:
            m = TARGET_MARGIN_M
            line = line.difference(shapely.box(near[0] - m, near[1] - m, near[2] + m, near[3] + m))
            if line.is_empty:
                return []
        d = float(np.hypot(b[0] - a[0], b[1] - a[1])) or 1e-9
        hits = []
        for k in self.tree.query(line, predicate="intersects"):
            if (
                self.owner[k] in skip
                or (self.owner[k], self.part[k]) in skip
                or (self.glass[k] and not glass)
            ):
                continue
            xy = shapely.get_coordinates(shapely.intersection(self.polys[k], line))
            if not len(xy):
                continue
            t = np.hypot(xy[:, 0] - a[0], xy[:, 1] - a[1]) / d
            z = za + (zb - za) * t
            # the line is straight over the prism's footprint: it crosses the prism when its heights
            # there overlap the prism's bottom-to-top
            if z.min() <= self.hi[k] and z.max() >= self.lo[k]:
                hits.append((float(t.min()), int(k)))
        return [k for _, k in sorted(hits)]

    def clear(self, a, za: float, b, zb: float, skip=frozenset(), near=None, glass: bool = False) -> bool:
        """Nothing opaque (with `glass`, nothing drawn at all) on the sight line."""
        return not self.blockers(a, za, b, zb, skip, near, glass)


def target_points(box3) -> np.ndarray:
    """Points that stand for a target in the view tests: its centre, and four points around its
    upper part (a quarter of its width in from each side, at three quarters of its height)."""
    (x0, y0, z0), (x1, y1, z1) = box3
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    qx, qy = (x1 - x0) / 4, (y1 - y0) / 4
    zu = z0 + 0.75 * (z1 - z0)
    return np.array(
        [
            (cx, cy, (z0 + z1) / 2),
            (cx - qx, cy, zu),
            (cx + qx, cy, zu),
            (cx, cy - qy, zu),
            (cx, cy + qy, zu),
        ]
    )


def build(objects, materials: dict[str, B.Material]) -> Sight:
    """The prisms of every drawn part, those seen through flagged."""
    polys, lo, hi, owner, part, names, glass = [], [], [], [], [], [], []
    for o in objects:
        if not o.visible:
            continue
        for p in o.parts:
            mat = materials.get(p.material)
            glass.append(mat is not None and mat.opacity < SEE_THROUGH_OPACITY)
            pts = posed_corners(o, p)
            polys.append(hull(pts))
            lo.append(float(pts[:, 2].min()))
            hi.append(float(pts[:, 2].max()))
            owner.append(o.id)
            part.append(p.id)
            names.append(o.name)
    if not polys:
        return Sight()
    arr = np.array(polys, dtype=object)
    return Sight(
        arr,
        np.array(lo),
        np.array(hi),
        tuple(owner),
        tuple(part),
        tuple(names),
        np.array(glass, dtype=bool),
        shapely.STRtree(arr),
    )


def combine(a: Sight, b: Sight) -> Sight:
    """The prisms of both (a scene's and its task's own objects)."""
    if b.tree is None:
        return a
    if a.tree is None:
        return b
    polys = np.concatenate([a.polys, b.polys])
    return Sight(
        polys,
        np.concatenate([a.lo, b.lo]),
        np.concatenate([a.hi, b.hi]),
        a.owner + b.owner,
        a.part + b.part,
        a.names + b.names,
        np.concatenate([a.glass, b.glass]),
        shapely.STRtree(polys),
    )
