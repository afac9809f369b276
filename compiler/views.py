"""What a viewpoint sees: the planner's view tests over the drawn world (`Grid.sight`, the ground's
heights), how far a target seen from afar may be, and the points that stand for a target.

`plan.py` asks these of each candidate viewpoint; `view_why.py` asks them again to say why none
passed.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import shapely

from wac.bundle import model as B
from wac.compiler.anomalies import Lowered
from wac.compiler.plan_kinds import PlanKind
from wac.compiler.sight import SEEN_SHARE, posed_corners, target_points
from wac.compiler.validate import Grid
from wac.taxonomy.registry import OBSERVABLES, registry

EYE_M = 1.6
# a face of a changed part is seen when it faces the eye (cosine over this) with nothing in the way,
# and the faces seen cover this many pixels of the 640x480 frame together: twice the pixel rule's
# 150 px of visible change (validation/visual.py, CHANGE_PX), since a face's edge pixels do not count
FACING_COS = 0.2
PART_VIEW_PX = 300.0
FACE_OFFSET_M = 0.03  # the points that stand for a face lie this far off it
FACE_GRID = 3  # ... on a grid of this many by this many over it


def _terrain_clear(grid: Grid, a, eye: float, b, bz: float) -> bool:
    """Over uneven ground: no surface (a hill, a deck's top) above the sight line from the eye at `a`
    to the height `bz` at `b`."""
    if grid.height is None:
        return True
    n = max(2, int(math.dist(a, b) / (grid.cell / 2)))
    for k in range(1, n):
        x = a[0] + (b[0] - a[0]) * k / n
        y = a[1] + (b[1] - a[1]) * k / n
        if grid.height_at(x, y) > eye + (bz - eye) * k / n:
            return False
    return True


@dataclass(frozen=True)
class Aim:
    """What a view must see of the target: its sample points, or (a change to some of its parts) the
    outer faces of those parts, each with its outward normal and area; and what does not hide it."""

    points: np.ndarray  # (n, 3)
    skip: frozenset  # object ids and (object id, part id) pairs that hide nothing
    normals: np.ndarray | None = None  # (n, 3): the points are faces
    areas: np.ndarray | None = None  # (n,) m²
    parts: tuple[str, ...] = ()  # the changed parts, for messages
    # a moved target's points at the place it moves to: its change shows at either end (it vanishes
    # from one place, appears at the other)
    moved: np.ndarray | None = None


def _seen(grid: Grid, a, aim: Aim, box, through_glass: bool = True, share: float = SEEN_SHARE) -> bool:
    """Whether the eye at `a` sees the target: with nothing drawn and opaque in the way (`Grid.sight`: a
    wall, a roof's edge, a chair; not what `aim.skip` names; a glass pane only unless `through_glass`)
    and no ground rising above the line, its centre and `share` of its sample points, or faces of its
    changed parts that cover `PART_VIEW_PX` of the frame together."""
    eye = EYE_M + grid.height_at(*a)
    near = box if aim.normals is None else None  # a changed part's faces may hide behind its own object

    def clear(p) -> bool:
        return grid.sight.clear(
            a, eye, p[:2], p[2], aim.skip, near, glass=not through_glass
        ) and _terrain_clear(grid, a, eye, p[:2], p[2])

    if aim.normals is None:  # its centre (the first point) and most of the others, at either end

        def most(points) -> bool:
            if not clear(points[0]):
                return False
            return 1 + sum(clear(p) for p in points[1:]) >= share * len(points) - 1e-9

        return most(aim.points) or (aim.moved is not None and most(aim.moved))
    px = 0.0
    for p, n, area in zip(aim.points, aim.normals, aim.areas, strict=True):
        v = np.array([a[0], a[1], eye]) - p
        d = float(np.linalg.norm(v)) or 1e-9
        cos = float(v @ n) / d
        if cos > FACING_COS and clear(p):
            px += area * cos * (FOCAL_PX / d) ** 2
    return px >= PART_VIEW_PX


def unburied(aim: Aim, grid: Grid) -> Aim:
    """The face points of a changed part that lie in no other prism (a slat's top under the crate on
    it lies in the crate): only those can be seen from anywhere."""
    sight = grid.sight
    if aim.normals is None or sight.tree is None or not len(aim.points):
        return aim
    pi, ki = sight.tree.query(shapely.points(aim.points[:, :2]), predicate="within")
    buried = np.zeros(len(aim.points), dtype=bool)
    for i, k in zip(pi.tolist(), ki.tolist(), strict=True):
        owner = sight.owner[k]
        if owner in aim.skip or (owner, sight.part[k]) in aim.skip:
            continue
        if sight.lo[k] <= aim.points[i, 2] <= sight.hi[k]:
            buried[i] = True
    keep = ~buried
    return dataclasses.replace(aim, points=aim.points[keep], normals=aim.normals[keep], areas=aim.areas[keep])


def faces_turned_to(aim: Aim, xs: np.ndarray, ys: np.ndarray, eyes) -> np.ndarray:
    """For eyes at (xs, ys, eyes): whether a face of the changed parts turns to it (the test `_seen`
    makes first), all at once: the planner keeps only these candidates."""
    eye = np.stack([xs, ys, np.broadcast_to(eyes, xs.shape)], axis=1)  # (n, 3)
    v = eye[:, None, :] - aim.points[None, :, :]  # (n, m, 3)
    d = np.linalg.norm(v, axis=2) + 1e-9
    cos = np.einsum("nmk,mk->nm", v, aim.normals) / d
    return (cos > FACING_COS).any(axis=1)


def _hidden(grid: Grid, a, b, target_box, tz: float, skip) -> bool:
    """Something drawn and opaque stands between a and b across the sight lines from the eye at a to
    the target's middle (height `tz`), to both of its sides and 0.5 m beyond them: the target is
    hidden there, not just grazed by a wall's end (what an occluded view needs)."""
    d = math.dist(a, b) or 1.0
    half = max(target_box[2] - target_box[0], target_box[3] - target_box[1]) / 2
    across = ((b[1] - a[1]) / d, -(b[0] - a[0]) / d)
    ends = [(b[0] + across[0] * f, b[1] + across[1] * f) for f in (0.0, half, -half, half + 0.5, -half - 0.5)]
    eye = EYE_M + grid.height_at(*a)
    return all(
        not grid.sight.clear(a, eye, e, tz, skip, target_box) or not _terrain_clear(grid, a, eye, e, tz)
        for e in ends
    )


# The plan kinds whose evidence is seen from some way off (`PlanKind.from_afar`), and how far the target may be: its
# cross-section (its narrower width by its height) covers `NEAR_VIEW_PX` of the 640x480 frame at the
# farthest viewpoint of the kind's distances (a small bottle is viewed from nearer than 4 m), and a
# view from afar (where none within the kind's distances sees it: a barrel on a roof) still
# `FAR_VIEW_PX`, at most `FAR_VIEW_MAX_M` from its edge.  `FOCAL_PX`: 640 px across the 90 deg field
# of view.  NEAR_VIEW_PX is the pixel rule's 150 px of visible change (validation/visual.py,
# CHANGE_PX) with room for outlines and a partial change.
NEAR_VIEW_PX = 400.0
FAR_VIEW_PX = 1000.0
FAR_VIEW_MAX_M = 12.0
FOCAL_PX = 320.0


def view_reach_m(focus: B.SceneObject, px: float) -> float:
    """How far from its edge the target still covers `px` pixels of the frame."""
    sx, sy, sz = (focus.aabb_max[k] - focus.aabb_min[k] for k in range(3))
    across = math.sqrt(min(sx, sy) * sz / px) * FOCAL_PX  # the distance of its centre
    return across - max(sx, sy) / 2


def view_band(
    kind: PlanKind, focus: B.SceneObject | None, lo: float, hi: float
) -> tuple[float, float, float, float]:
    """(closest, nearer than which a view is preferred, farthest, farthest from afar) viewing
    distances from the target's edge: for a plan kind whose evidence is seen from some way off, a
    small target is looked at from where it covers `NEAR_VIEW_PX` first, and one that no view within
    the kind's distances sees from as far as it covers `FAR_VIEW_PX`; the kind's own distances for the
    others (no view from afar: 0)."""
    if not kind.from_afar or focus is None:
        return lo, hi, hi, 0.0
    near = max(lo + 0.5, min(hi, view_reach_m(focus, NEAR_VIEW_PX)))
    return lo, near, hi, min(FAR_VIEW_MAX_M, view_reach_m(focus, FAR_VIEW_PX))


def aim_of(low: Lowered, box, centre) -> Aim:
    """What the view tests look at: the changed parts' faces when the anomaly changes the material of
    some parts only (a cabinet's door, a book's spine); else points of the focus's box
    (`sight.target_points`) around the point the plan aims at (a long target's crossing point; a
    shadow's and a support gap's evidence lie at the target's foot; a moved target shows at either
    end)."""
    tx, ty, tz = centre
    o = low.focus
    skip = frozenset(low.targets)
    if o is None:
        return Aim(target_points(((tx - 0.2, ty - 0.2, tz - 0.2), (tx + 0.2, ty + 0.2, tz + 0.2))), skip)
    parts = changed_parts(low)
    if parts:
        return _faces(o, parts)
    hx, hy = (box[2] - box[0]) / 2, (box[3] - box[1]) / 2
    z0, z1 = o.aabb_min[2], o.aabb_max[2]
    gap = OBSERVABLES[registry().observable(low.spec.name, low.category)].at_foot
    if low.hints.aim == "ground" or gap:  # a shadow's, a support gap's evidence: the target's foot
        z1 = min(z1, z0 + 0.2)
    to = None
    if not gap:  # a floated target is not seen by its new place, but by the gap under it
        to = next(
            (e.position for e in low.effects if isinstance(e, B.SetPose) and e.target == o.id and e.position),
            None,
        )
    moved = None
    if to is not None:
        dx, dy, dz = (to[k] - o.position[k] for k in range(3))
        moved = target_points(
            (
                (o.aabb_min[0] + dx, o.aabb_min[1] + dy, z0 + dz),
                (o.aabb_max[0] + dx, o.aabb_max[1] + dy, z1 + dz),
            )
        )
    return Aim(target_points(((tx - hx, ty - hy, z0), (tx + hx, ty + hy, z1))), skip, moved=moved)


def changed_parts(low: Lowered) -> tuple[str, ...]:
    """The parts of the focus whose material the anomaly changes, when it changes some parts only."""
    o = low.focus
    if o is None:
        return ()
    parts = [e.part for e in low.effects if isinstance(e, B.SetMaterial) and e.target == o.id]
    if not parts or None in parts or len(set(parts)) == len(o.parts):
        return ()
    return tuple(dict.fromkeys(parts))


def _faces(o: B.SceneObject, parts: tuple[str, ...]) -> Aim:
    """The outer faces of `parts` of `o` but their bottoms, each as `FACE_GRID` x `FACE_GRID` points
    just off it (a back panel seen between a bookshelf's boards shows in part), with the face's
    outward normal and each point's share of its area; the parts themselves hide nothing, the
    object's other parts do."""
    pts, normals, areas = [], [], []
    cells = (np.arange(FACE_GRID) + 0.5) / FACE_GRID
    for part in (x for x in o.parts if x.id in parts):
        c = posed_corners(o, part)  # corner k: x side k // 4, y side k // 2 % 2, z side k % 2
        centre = c.mean(axis=0)
        for axis, side in ((0, 0), (0, 1), (1, 0), (1, 1), (2, 1)):
            face = [k for k in range(8) if (k >> (2 - axis)) & 1 == side]
            n = c[face].mean(axis=0) - centre
            norm = float(np.linalg.norm(n))
            if norm < 1e-9:
                continue
            n = n / norm
            e1, e2 = c[face[1]] - c[face[0]], c[face[2]] - c[face[0]]
            area = float(np.linalg.norm(np.cross(e1, e2))) / FACE_GRID**2
            for u in cells:
                for v in cells:
                    pts.append(c[face[0]] + u * e1 + v * e2 + FACE_OFFSET_M * n)
                    normals.append(n)
                    areas.append(area)
    skip = frozenset((o.id, x) for x in parts)
    return Aim(np.array(pts), skip, np.array(normals), np.array(areas), parts)
