"""The geometry of a built world, shared by the detectors and the compiler's checks: part meshes,
interpenetration depth (FCL through trimesh), pairs of nearby objects, and what an object really
rests on (rays cast down from its underside onto the surfaces below it).

Everything here reads bundle models only; meshes use the part's primitive (a `mesh` part its
bounding box, as the physics does).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import shapely

from wac.bundle import model as B
from wac.bundle.terrain import height as terrain_height
from wac.bundle.transforms import part_corners_world, rotation, wedge_mesh

TOUCH_M = 0.015  # surfaces closer than this touch (and can support one another)


@lru_cache(maxsize=4096)
def primitive_mesh(shape: str, size: tuple[float, float, float]):
    """A part's primitive as a trimesh in its own frame, standing on its base centre."""
    import trimesh

    sx, sy, sz = size
    if shape == "box" or shape == "mesh":
        m = trimesh.creation.box(extents=size)
    elif shape in ("cylinder", "capsule"):
        m = trimesh.creation.cylinder(radius=sx / 2, height=sz, sections=16)
    elif shape == "cone":
        m = trimesh.creation.cone(radius=sx / 2, height=sz, sections=16)
        m.apply_translation((0, 0, -sz / 2))
    elif shape == "wedge":
        return wedge_mesh(sx, sy, sz)
    else:
        m = trimesh.creation.icosphere(subdivisions=1, radius=sx / 2)
    m.apply_translation((0, 0, sz / 2))
    return m


@lru_cache(maxsize=4096)
def _vertices(shape: str, size: tuple[float, float, float]) -> np.ndarray:
    v = np.array(
        primitive_mesh(shape, size).vertices, dtype=float
    )  # a plain array, not trimesh's tracked one
    v.flags.writeable = False
    return v


def part_vertices(p: B.Part, obj: B.SceneObject) -> np.ndarray:
    """World-space vertices of a part's primitive (same order as `primitive_mesh(...).vertices`)."""
    verts = _vertices(p.shape, tuple(p.size)) @ rotation(*p.rotation_deg).T + np.asarray(p.position)
    return (verts * np.asarray(obj.scale)) @ rotation(*obj.rotation_deg).T + np.asarray(obj.position)


def solid_meshes(obj: B.SceneObject, solid_only: bool = True):
    """(part id, world-space mesh, convex?) for each (solid) part.  Convexity is the primitive's,
    tested once per shape and size: a rotation, a scale and a translation keep a shape convex."""
    out = []
    for p in obj.parts:
        if solid_only and not p.solid:
            continue
        primitive = primitive_mesh(p.shape, tuple(p.size))
        m = primitive.copy()
        m.vertices = part_vertices(p, obj)
        out.append((p.id, m, primitive.is_convex))
    return out


def object_meshes(obj: B.SceneObject):
    """(part id, world-space mesh) for each solid part."""
    return [(pid, m) for pid, m, _ in solid_meshes(obj)]


@lru_cache(maxsize=2048)
def _collision_manager(obj: B.SceneObject, solid_only: bool):
    """FCL's view of an object's (solid) parts, kept for the next query of an equal object: the
    clean and perturbed worlds of a task, and the tasks of a scene, ask about the same objects."""
    import fcl
    from trimesh.collision import mesh_to_BVH, mesh_to_convex

    geoms = [
        mesh_to_convex(m) if convex else mesh_to_BVH(m) for _, m, convex in solid_meshes(obj, solid_only)
    ]
    objects = [fcl.CollisionObject(g, fcl.Transform()) for g in geoms]
    manager = fcl.DynamicAABBTreeCollisionManager()
    manager.registerObjects(objects)
    manager.setup()
    return manager, (geoms, objects)


def _every_contact(o1, o2, cdata) -> bool:
    """FCL's callback, never stopping early (its default stops at the first colliding pair)."""
    import fcl

    fcl.collide(o1, o2, cdata.request, cdata.result)
    return False


def penetration(a: B.SceneObject, b: B.SceneObject, solid_only: bool = True) -> float:
    """Deepest interpenetration between two objects' (solid) parts (0 if they do not overlap)."""
    import fcl

    if not any(p.solid or not solid_only for p in a.parts) or not any(
        p.solid or not solid_only for p in b.parts
    ):
        return 0.0
    ma, keep_a = _collision_manager(a, solid_only)
    mb, keep_b = _collision_manager(b, solid_only)
    request = fcl.CollisionRequest(num_max_contacts=100000, enable_contact=True)
    data = fcl.CollisionData(request=request)
    ma.collide(mb, data, _every_contact)
    if not data.result.is_collision:
        return 0.0
    return max((c.penetration_depth for c in data.result.contacts), default=0.0)


def distance(a: B.SceneObject, b: B.SceneObject) -> float:
    """Smallest distance between two objects' parts (0 when they touch or overlap)."""
    import fcl

    ma, keep_a = _collision_manager(a, False)
    mb, keep_b = _collision_manager(b, False)
    request = fcl.DistanceRequest()
    data = fcl.DistanceData(request=request)

    def cb(o1, o2, d):
        dist = fcl.distance(o1, o2, d.request, d.result)
        d.result.min_distance = min(d.result.min_distance, dist)
        return False, d.result.min_distance

    data.result.min_distance = float("inf")
    ma.distance(mb, data, cb)
    return max(0.0, float(data.result.min_distance))


def near_pairs(objects, gap: float) -> list[tuple[int, int]]:
    """Index pairs (i < j) of objects whose bounding boxes are at most `gap` apart on every axis:
    an STRtree over the ground boxes, then the heights compared; callers test the candidates exactly."""
    if len(objects) < 2:
        return []
    lo = np.array([o.aabb_min for o in objects], dtype=float)
    hi = np.array([o.aabb_max for o in objects], dtype=float)
    half = gap / 2 + 1e-9
    boxes = shapely.box(lo[:, 0] - half, lo[:, 1] - half, hi[:, 0] + half, hi[:, 1] + half)
    a, b = shapely.STRtree(boxes).query(boxes, predicate="intersects")
    keep = a < b
    a, b = a[keep], b[keep]
    keep = (lo[a, 2] <= hi[b, 2] + gap + 1e-9) & (lo[b, 2] <= hi[a, 2] + gap + 1e-9)
    return sorted(zip(a[keep].tolist(), b[keep].tolist(), strict=True))


def cross2(a, b) -> float:
    """The z of the cross product of two plan vectors: how far b lies from a's line (a a unit vector)."""
    return float(a[0] * b[1] - a[1] * b[0])


def world_bounds(parts, position, rotation_deg, scale) -> tuple[tuple[float, ...], tuple[float, ...]]:
    pts = np.vstack([part_corners_world(p, position, rotation_deg, scale) for p in parts])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    return tuple(round(float(v), 6) for v in lo), tuple(round(float(v), 6) for v in hi)


_EXTENTS: dict[int, tuple[B.SceneObject, np.ndarray]] = {}  # id(object) -> (it, `own_extents`)


def own_extents(obj: B.SceneObject) -> np.ndarray:
    """The object's size in its own frame (x, y, z), scale included: what it measures, however turned
    (kept for the object: a task's worlds share most of their objects; read-only)."""
    got = _EXTENTS.get(id(obj))
    if got is None or got[0] is not obj:
        if len(_EXTENTS) > 4096:  # it keeps the objects alive: a scene or two
            _EXTENTS.clear()
        pts = np.vstack([part_corners_world(p, (0, 0, 0), (0, 0, 0), (1, 1, 1)) for p in obj.parts])
        e = (pts.max(axis=0) - pts.min(axis=0)) * np.abs(np.asarray(obj.scale))
        e.setflags(write=False)
        got = _EXTENTS[id(obj)] = (obj, e)
    return got[1]


def centre_of_mass(obj: B.SceneObject) -> np.ndarray:
    """World centre of mass of the solid parts (of every part when none is solid), uniform density;
    each primitive weighs by its box volume, which is what decides balance to a few centimetres."""
    parts = [p for p in obj.parts if p.solid] or list(obj.parts)
    pts, w = [], []
    for p in parts:
        c = part_corners_world(p, obj.position, obj.rotation_deg, obj.scale)
        pts.append(c.mean(axis=0))
        w.append(max(float(np.prod(np.asarray(p.size) * np.abs(np.asarray(obj.scale)))), 1e-9))
    return np.average(np.asarray(pts), axis=0, weights=np.asarray(w))


# --- what an object rests on ----------------------------------------------------------------------

SAMPLE_M = 0.08  # spacing of the points sampled over a part's downward faces


def underside(obj: B.SceneObject, parts=None) -> np.ndarray:
    """Points on the downward-facing surfaces of the object's parts (world space), on a regular grid:
    where it can rest on something (a box on a table that overhangs it rests on its face's middle),
    and each part's lowest points whatever their faces (the edge a tilted box stands on)."""
    out = []
    r_obj = rotation(*obj.rotation_deg)
    scale = np.asarray(obj.scale, dtype=float)
    for p in parts if parts is not None else obj.parts:
        pts, normals = _surface_samples(p.shape, tuple(p.size))
        r_part = rotation(*p.rotation_deg)
        world = ((pts @ r_part.T + np.asarray(p.position)) * scale) @ r_obj.T + np.asarray(obj.position)
        n = ((normals @ r_part.T) / scale) @ r_obj.T
        nz = n[:, 2] / np.maximum(np.linalg.norm(n, axis=1), 1e-12)
        low = world[:, 2] <= world[:, 2].min() + 0.005
        out.append(world[(nz < -0.05) | low])
    return np.vstack(out) if out else np.empty((0, 3))


@lru_cache(maxsize=4096)
def _surface_samples(shape: str, size: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Points about SAMPLE_M apart over a primitive's surface (its own frame) and their face normals."""
    prim = primitive_mesh(shape, size)
    tris = prim.vertices[prim.faces]
    n = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    pts, normals = [], []
    for t, nn in zip(tris, n, strict=True):
        g = _triangle_grid(t)
        pts.append(g)
        normals.append(np.repeat(nn[None, :], len(g), axis=0))
    out = np.vstack(pts), np.vstack(normals)
    out[0].flags.writeable = False
    out[1].flags.writeable = False
    return out


def _triangle_grid(t: np.ndarray) -> np.ndarray:
    """Points spread over a triangle about SAMPLE_M apart (its corners included)."""
    a, b, c = t
    span = max(np.linalg.norm(b - a), np.linalg.norm(c - a), np.linalg.norm(c - b))
    k = int(min(12, max(1, np.ceil(span / SAMPLE_M))))
    i, j = np.meshgrid(np.arange(k + 1), np.arange(k + 1))
    keep = i + j <= k
    u, v = i[keep] / k, j[keep] / k
    return a + np.outer(u, b - a) + np.outer(v, c - a)


def _upward_triangles(obj: B.SceneObject, solid_only: bool) -> np.ndarray:
    tris = []
    for p in obj.parts:
        if solid_only and not p.solid:
            continue
        prim = primitive_mesh(p.shape, tuple(p.size))
        t = part_vertices(p, obj)[prim.faces]
        n = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
        tris.append(t[n[:, 2] > 1e-9])
    return np.vstack(tris) if tris else np.empty((0, 3, 3))


def top_under(support: B.SceneObject, xs, ys) -> float:
    """The highest drawn surface of `support` straight under any of the points (x, y): where an object
    set down on it there comes to rest (the bed of a cart, not the top of its sides).  -inf if none."""
    pts = np.stack([np.asarray(xs, float), np.asarray(ys, float), np.full(len(xs), 1e6)], axis=1)
    return float(surface_below(_upward_triangles(support, False), pts).max())


def surface_below(triangles: np.ndarray, pts: np.ndarray, slack: float = TOUCH_M) -> np.ndarray:
    """For each point, the highest z of the triangles under it that lies no higher than the point
    (plus `slack`): a ray cast straight down.  -inf where none lies below."""
    top = np.full(len(pts), -np.inf)
    xs, ys, zs = pts[:, 0], pts[:, 1], pts[:, 2]
    for (ax, ay, az), (bx, by, bz), (cx, cy, cz) in triangles:
        det = (by - cy) * (ax - cx) + (cx - bx) * (ay - cy)
        if abs(det) < 1e-12:
            continue
        u = ((by - cy) * (xs - cx) + (cx - bx) * (ys - cy)) / det
        v = ((cy - ay) * (xs - cx) + (ax - cx) * (ys - cy)) / det
        w = 1.0 - u - v
        inside = (u >= -1e-6) & (v >= -1e-6) & (w >= -1e-6)
        z = u * az + v * bz + w * cz
        ok = inside & (z <= zs + slack)
        top = np.where(ok, np.maximum(top, z), top)
    return top


@dataclass(frozen=True)
class Rest:
    """What an object rests on: the gap under its lowest point, the objects (and 'ground') its
    underside touches, the contact points' outline, and where its centre of mass falls."""

    gap_m: float  # from its lowest point to what lies under it (inf over nothing)
    under: str | None  # what lies under the lowest point ('ground', an object id, None)
    touching: tuple[str, ...]  # what its underside rests on
    contacts: np.ndarray  # (n, 3) underside points that rest on something
    com: np.ndarray
    com_outside_m: float  # how far the centre of mass lies outside the contacts' outline (0 inside)
    on_top: int = 0  # contacts resting on a surface (not sunk into what is under them)
    gap_at_com_m: float = 0.0  # the gap straight under the centre of mass, between the contacts' outline


SHALLOW_M = 0.03  # a point sunk this little into a surface rests on it (a leg on the edge of a slab)
EMBED_M = 0.1  # an underside point this far inside what is under it still rests on it (sunk, not floating)


def rest(
    obj: B.SceneObject,
    others: list[B.SceneObject],
    ground: B.Ground,
    holes: tuple[tuple[float, float, float, float], ...] = (),
    solid_only: bool = False,
) -> Rest:
    """Where `obj` rests, from its drawn parts (`solid_only`: its solid parts onto solid surfaces,
    as the physics sees it).  `others` are candidate supporters (callers pass the objects whose
    bounds reach under this one); `holes` are ground rectangles (x0, y0, x1, y1) with no floor."""
    parts = [p for p in obj.parts if p.solid] if solid_only else list(obj.parts)
    pts = underside(obj, parts)
    com = centre_of_mass(obj)
    if len(pts) == 0:
        return Rest(np.inf, None, (), np.empty((0, 3)), com, np.inf)
    best = np.full(len(pts), -np.inf)  # the highest surface under each point (or just above it)
    owner = np.full(len(pts), -1)
    for k, o in enumerate(others):
        tris = _upward_triangles(o, solid_only)
        if len(tris) == 0:
            continue
        z = surface_below(tris, pts, EMBED_M)
        better = z > best
        best = np.where(better, z, best)
        owner = np.where(better, k, owner)
    g = np.asarray(terrain_height(ground, pts[:, 0], pts[:, 1]), dtype=float) * np.ones(len(pts))
    for x0, y0, x1, y1 in holes:
        inside = (pts[:, 0] > x0) & (pts[:, 0] < x1) & (pts[:, 1] > y0) & (pts[:, 1] < y1)
        g = np.where(inside, -np.inf, g)
    # the ground is under every point not in a hole, however deep the point is sunk
    ground_first = g >= best
    best = np.where(ground_first, g, best)
    owner = np.where(ground_first, -2, owner)
    gaps = np.maximum(pts[:, 2] - best, 0.0)
    touch = gaps <= TOUCH_M
    # a point sunk into what is beside it bears nothing (a wall panel's edge in the wall next to it);
    # sunk into what lies under the centre of mass (a crate set into a table top), it rests there
    sunk = touch & (pts[:, 2] < best - SHALLOW_M) & (owner != -2)
    for j in np.flatnonzero(sunk):
        lo, hi = others[int(owner[j])].aabb_min, others[int(owner[j])].aabb_max
        if lo[0] <= com[0] <= hi[0] and lo[1] <= com[1] <= hi[1]:
            sunk[j] = False
    bearing = touch & ~sunk
    k = int(np.argmin(np.hypot(pts[:, 0] - com[0], pts[:, 1] - com[1])))
    under_com = float(gaps[k]) if np.isfinite(gaps[k]) and not sunk[k] else np.inf
    # the nearest it comes to resting on something, of the points not sunk into what is beside it
    i = int(np.argmin(np.where(sunk, np.inf, gaps))) if (~sunk).any() else k
    gap = float(gaps[i]) if not sunk[i] else np.inf
    under = None if not np.isfinite(gap) else ("ground" if owner[i] == -2 else others[int(owner[i])].id)
    touching = sorted(
        {"ground" if owner[j] == -2 else others[int(owner[j])].id for j in np.flatnonzero(bearing)}
    )
    contacts = pts[bearing]
    on_top = int(np.count_nonzero(touch & (pts[:, 2] >= best - TOUCH_M)))
    return Rest(gap, under, tuple(touching), contacts, com, _outside(com, contacts), on_top, under_com)


def _outside(com: np.ndarray, contacts: np.ndarray) -> float:
    """How far the centre of mass lies outside the outline of the contact points, in plan (m)."""
    if len(contacts) == 0:
        return np.inf
    pts = shapely.MultiPoint(contacts[:, :2]).convex_hull
    return float(pts.distance(shapely.Point(com[0], com[1])))
