"""Pass 5, check the clean world: nothing floats or interpenetrates, the start is sound,
and the walkable grid shows what the agent can reach.

Pairs of objects are found with a broad phase (shapely's STRtree over the objects' ground
boxes), so a scene of n objects costs about n log n, not n²; interpenetration of the
candidate pairs then uses trimesh's collision manager (FCL) on the solid parts' meshes;
reachability rasterises solid footprints (inflated by the agent's radius) onto a grid
inside the bounds polygon and labels its connected components with scipy.  Walkable objects
(stairs, ramps) are surfaces rather than obstacles: their tops give the cells heights, and cells
connect only a step apart (`_connect`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import shapely
from scipy import ndimage
from shapely import contains_xy
from shapely.geometry import MultiPoint, Point, Polygon

from wac.bundle import model as B
from wac.bundle.model import AGENT_SLOPE_DEG, AGENT_STEP_M
from wac.bundle.terrain import height as terrain_height
from wac.bundle.terrain import height_range
from wac.bundle.transforms import part_corners_world, wedge_mesh
from wac.compiler.assemble import Built
from wac.compiler.diagnostics import Collector

CELL_M = 0.2
TOUCH_M = 0.015  # objects closer than this touch (and can support one another)
PENETRATION_M = 0.02  # deeper overlaps between solids are errors
STEP_M = 0.08  # the agent rolls over solids lower than this (it climbs only walkable ones: ramps, stairs)
AGENT_TOP_M = 1.8  # and walks under solids higher than this


@dataclass(frozen=True)
class Grid:
    """The walkable grid: `free[i, j]` for the cell centred at (x0 + (j+.5) c, y0 + (i+.5) c)."""

    x0: float
    y0: float
    cell: float
    free: np.ndarray  # bool, walkable and inside the bounds
    reach: np.ndarray  # bool, connected to the start
    start: tuple[int, int]
    occupancy: np.ndarray  # bool, cells covered by solid footprints (not inflated): for line of sight
    # height of the surface the agent stands on in each cell (walkable objects' tops); None: flat
    height: np.ndarray | None = None
    # footprints of the solids standing on the ground (walls, not lintels) and their tops' z: below its
    # top such a solid hides what is behind it (an occluded view's test, `plan._hidden`)
    standing: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    standing_top: np.ndarray = field(default_factory=lambda: np.empty(0))
    # the footprints of the fixed solids that stop the agent (walkable ones are surfaces, dynamic ones
    # are shoved), by object id: a walk through one asks whether the others leave it room
    # (`walk_room.walk_blocked`)
    solids: dict = field(default_factory=dict)

    def height_at(self, x: float, y: float) -> float:
        if self.height is None:
            return 0.0
        i, j = self.cell_of(x, y)
        if 0 <= i < self.height.shape[0] and 0 <= j < self.height.shape[1]:
            return float(self.height[i, j])
        return 0.0

    def cell_of(self, x: float, y: float) -> tuple[int, int]:
        return int((y - self.y0) // self.cell), int((x - self.x0) // self.cell)

    def cells_of(self, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`cell_of` of many points at once (row and column arrays)."""
        return ((ys - self.y0) // self.cell).astype(int), ((xs - self.x0) // self.cell).astype(int)

    def centre(self, i: int, j: int) -> tuple[float, float]:
        return self.x0 + (j + 0.5) * self.cell, self.y0 + (i + 0.5) * self.cell


def footprint(obj: B.SceneObject, solid_only: bool = True, ground: float = 0.0) -> Polygon | None:
    """The object's outline on the ground: with `solid_only`, of its solid parts between a kerb's
    and the agent's height above `ground` (the height of the ground under it)."""
    pts = [
        part_corners_world(p, obj.position, obj.rotation_deg, obj.scale)
        for p in obj.parts
        if p.solid or not solid_only
    ]
    lo, hi = ground + STEP_M, ground + AGENT_TOP_M
    pts = [p for p in pts if (p[:, 2].max() > lo and p[:, 2].min() < hi)] if solid_only else pts
    if not pts:
        return None
    hull = MultiPoint(np.vstack(pts)[:, :2]).convex_hull
    return hull if isinstance(hull, Polygon) else hull.buffer(0.02)


def _overlap(a: B.SceneObject, b: B.SceneObject, margin: float) -> bool:
    return all(
        a.aabb_min[k] < b.aabb_max[k] - margin and b.aabb_min[k] < a.aabb_max[k] - margin for k in range(3)
    )


def _touch(a: B.SceneObject, b: B.SceneObject) -> bool:
    return all(
        a.aabb_min[k] <= b.aabb_max[k] + TOUCH_M and b.aabb_min[k] <= a.aabb_max[k] + TOUCH_M
        for k in range(3)
    )


@lru_cache(maxsize=4096)
def _primitive_mesh(shape: str, size: tuple[float, float, float]):
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


def object_meshes(obj: B.SceneObject):
    """(part id, world-space mesh) for each solid part; meshes use their bounding boxes."""
    return [(pid, m) for pid, m, _ in _solid_meshes(obj)]


def _solid_meshes(obj: B.SceneObject):
    """(part id, world-space mesh, convex?) for each solid part.  Convexity is the primitive's,
    tested once per shape and size: a rotation, a scale and a translation keep a shape convex, and
    testing every placed copy again was most of the clean-scene check's time."""
    from wac.bundle.transforms import rotation

    out = []
    for p in obj.parts:
        if not p.solid:
            continue
        primitive = _primitive_mesh(p.shape, tuple(p.size))
        m = primitive.copy()
        verts = m.vertices @ rotation(*p.rotation_deg).T + np.asarray(p.position)
        verts = (verts * np.asarray(obj.scale)) @ rotation(*obj.rotation_deg).T + np.asarray(obj.position)
        m.vertices = verts
        out.append((p.id, m, primitive.is_convex))
    return out


def _collision_manager(obj: B.SceneObject):
    """An FCL broad phase over the object's solid parts (and the geometries it must keep alive)."""
    import fcl
    from trimesh.collision import mesh_to_BVH, mesh_to_convex

    geoms = [mesh_to_convex(m) if convex else mesh_to_BVH(m) for _, m, convex in _solid_meshes(obj)]
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


def penetration(a: B.SceneObject, b: B.SceneObject) -> float:
    """Deepest interpenetration between two objects' solid parts (0 if they do not overlap)."""
    import fcl

    ma, keep_a = _collision_manager(a)
    mb, keep_b = _collision_manager(b)
    request = fcl.CollisionRequest(num_max_contacts=100000, enable_contact=True)
    data = fcl.CollisionData(request=request)
    ma.collide(mb, data, _every_contact)
    if not data.result.is_collision:
        return 0.0
    return max((c.penetration_depth for c in data.result.contacts), default=0.0)


def check_clean(built: Built, diag: Collector, span, memo: dict | None = None) -> None:
    """Nothing in the clean scene floats or interpenetrates (benign objects excepted).

    The scene's own objects are checked once per build (`memo`); each task then checks
    only the objects it declares itself.
    """
    if memo is None:
        _check_clean(built, diag, span, None)
        return
    key = ("clean", built.scene_key)
    if key not in memo:
        scene_diag = Collector()
        _check_clean(
            built,
            scene_diag,
            span,
            frozenset(o.id for o in built.scene.objects if o.id not in built.task_local),
        )
        memo[key] = tuple(scene_diag.items)
    diag.items.extend(memo[key])
    if built.task_local:
        _check_clean(built, diag, span, built.task_local, pairs_with=True)


def near_pairs(objects, gap: float) -> list[tuple[int, int]]:
    """Index pairs (i < j) of objects whose bounding boxes are at most `gap` apart on every axis.

    The broad phase of the clean-scene check: an STRtree over the ground boxes, then the
    heights compared; callers test the candidates exactly.
    """
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


def _below(o: B.SceneObject, objects) -> tuple[B.SceneObject, float] | None:
    """The object right beneath `o` (its ground box overlapping o's) and the gap to its top."""
    best = None
    for other in objects:
        if other.id == o.id or other.aabb_max[2] > o.aabb_min[2] + TOUCH_M:
            continue
        if all(other.aabb_min[k] < o.aabb_max[k] and o.aabb_min[k] < other.aabb_max[k] for k in (0, 1)):
            gap = o.aabb_min[2] - other.aabb_max[2]
            if best is None or gap < best[1]:
                best = (other, gap)
    return best


def _check_clean(
    built: Built, diag: Collector, span, only: frozenset[str] | None, pairs_with: bool = False
) -> None:
    benign = {b.object for b in built.scene.benign}
    everything = built.scene.objects
    pairs = near_pairs(everything, TOUCH_M)
    touching: set[int] = {
        i for pair in pairs for i in pair if _touch(everything[pair[0]], everything[pair[1]])
    }
    floating = []
    for i, o in enumerate(everything):
        if only is not None and o.id not in only:
            continue
        if o.attached_to is not None and o.attached_to not in built.objects:
            thing = built.things.get(o.id)
            diag.error(
                "E503",
                f"`{o.id}` is attached to unknown object `{o.attached_to}`",
                thing.span if thing else span,
            )
        if o.id in benign or o.aabb_min[2] <= _ground_top(built.scene.ground, o) + TOUCH_M:
            continue
        if o.support is not None or o.attached_to is not None:
            continue
        if i in touching:
            continue
        floating.append(o)
    for o in floating:
        thing = built.things.get(o.id)
        under = _below(o, everything)
        if under is None:
            diag.error(
                "E501",
                f"`{o.id}` floats {o.aabb_min[2]:.2f} m above the ground in the clean scene",
                thing.span if thing else span,
                "put it on the ground (drop the z coordinate), rest it `on` another object, or mark it `benign`",
            )
        else:
            other, gap = under
            diag.error(
                "E501",
                f"`{o.id}` floats {gap:.2f} m above `{other.id}` beneath it in the clean scene "
                f"({o.aabb_min[2]:.2f} m above the ground)",
                thing.span if thing else span,
                f"rest it on that object (`on {other.id}`), lower it by {gap:.2f} m, or mark it `benign`",
            )
    for i, j in pairs:
        a, b = everything[i], everything[j]
        if not (a.solid and b.solid):
            continue
        if a.id in benign or b.id in benign:
            continue
        if only is not None:
            if pairs_with and a.id not in only and b.id not in only:
                continue
            if not pairs_with and (a.id not in only or b.id not in only):
                continue
        if b.id in (a.support, a.attached_to) or a.id in (b.support, b.attached_to):
            continue
        if not _overlap(a, b, PENETRATION_M):
            continue
        depth = penetration(a, b)
        if depth > PENETRATION_M:
            thing = built.things.get(b.id) or built.things.get(a.id)
            diag.error(
                "E502",
                f"`{a.id}` and `{b.id}` interpenetrate by {depth:.2f} m in the clean scene",
                thing.span if thing else span,
                f"move one of them apart, declare `attached_to {a.id}` on {b.id} if it is set into it, or mark one `benign`",
            )


def _ground_top(ground: B.Ground, o: B.SceneObject) -> float:
    """Highest ground under an object (0 on flat ground)."""
    return height_range(ground, o.aabb_min[:2], o.aabb_max[:2])[1] if ground.terrain is not None else 0.0


def _ground_under(ground: B.Ground, o: B.SceneObject) -> float:
    """Lowest ground under an object: what its obstacle heights are measured from."""
    return height_range(ground, o.aabb_min[:2], o.aabb_max[:2])[0] if ground.terrain is not None else 0.0


def footprints(built: Built, memo: dict | None) -> dict[str, Polygon | None]:
    """Solid footprints of every object; the scene's own are computed once per build."""
    key = ("footprints", built.scene_key)
    cached = memo.get(key) if memo is not None else None
    g = built.scene.ground
    if cached is None:
        cached = {
            o.id: footprint(o, ground=_ground_under(g, o))
            for o in built.scene.objects
            if o.id not in built.task_local and o.solid
        }
        if memo is not None:
            memo[key] = cached
    out = dict(cached)
    out.update(
        {
            oid: footprint(built.objects[oid], ground=_ground_under(g, built.objects[oid]))
            for oid in built.task_local
            if built.objects[oid].solid
        }
    )
    return out


STANDING_M = 0.3  # an object whose bottom is this close to the ground stands on it (a wall, not a lintel)


def _standing(built: Built, memo: dict | None) -> tuple[np.ndarray, np.ndarray]:
    """The footprints of the solid objects that stand on the ground, and their tops' z; the scene's
    are found once per build, the task's added."""
    fps = footprints(built, memo)
    g = built.scene.ground

    def stands(i: str) -> bool:
        return (
            fps.get(i) is not None
            and built.objects[i].aabb_min[2] - _ground_under(g, built.objects[i]) <= STANDING_M
        )

    key = ("standing", built.scene_key)
    scene = memo.get(key) if memo is not None else None
    if scene is None:
        scene = [o.id for o in built.scene.objects if o.id not in built.task_local and stands(o.id)]
        if memo is not None:
            memo[key] = scene
    ids = scene + [i for i in sorted(built.task_local) if stands(i)]
    return np.array([fps[i] for i in ids], dtype=object), np.array(
        [built.objects[i].aabb_max[2] for i in ids]
    )


def walkable_grid(built: Built, memo: dict | None = None) -> Grid:
    """The walkable grid of a task: the scene's obstacles rasterised once per bounds, the task's added.

    Walkable objects (ramps, stairs) are not obstacles: their tops are surface heights (`_surface`),
    as is a heightfield ground, whose cells steeper than the agent walks are not free; two
    neighbouring cells connect only when their heights differ by at most a step (`_connect`).
    Scenes with neither keep the flat grid (`height` None) and its plain connected components."""
    expl = built.exploration
    key = ("grid", built.scene_key, expl.bounds, expl.agent_radius_m)
    base = memo.get(key) if memo is not None else None
    walk = {o.id for o in built.objects.values() if o.walkable and o.solid}
    if base is None:
        fps = footprints(built, memo)
        scene_ids = [o.id for o in built.scene.objects if o.id not in built.task_local]
        base = _rasterise(expl, [fps.get(i) if i not in walk else None for i in scene_ids])
        if memo is not None:
            memo[key] = base
    minx, miny, nx, ny, gx, gy, inside, blocked, occupied = base
    if built.task_local:
        extra = _rasterise(
            expl,
            [
                footprint(built.objects[i], ground=_ground_under(built.scene.ground, built.objects[i]))
                for i in sorted(built.task_local)
                if built.objects[i].solid and i not in walk
            ],
        )
        blocked = blocked | extra[7]
        occupied = occupied | extra[8]
    free = inside & ~blocked
    sx, sy = expl.start.position
    si, sj = int((sy - miny) // CELL_M), int((sx - minx) // CELL_M)
    height = None
    ground = built.scene.ground
    if walk or ground.terrain is not None:
        height = _surface([built.objects[i] for i in sorted(walk)], gx, gy, ground)
        if ground.terrain is not None:
            free = free & ~_too_steep(ground, gx, gy)
        free, labels = _connect(free, height, expl.agent_radius_m)
    else:
        labels, _ = ndimage.label(free)
    reach = np.zeros_like(free)
    if 0 <= si < ny and 0 <= sj < nx and free[si, sj]:
        reach = labels == labels[si, sj]
    standing, tops = _standing(built, memo)
    return Grid(
        minx, miny, CELL_M, free, reach, (si, sj), occupied, height, standing, tops, _solids(built, memo)
    )


def _solids(built: Built, memo: dict | None) -> dict:
    """`Grid.solids`: the footprints of the fixed solids that are not walkable; the scene's found
    once per build, the task's added."""
    fps = footprints(built, memo)

    def fixed(i: str) -> bool:
        o = built.objects[i]
        return fps.get(i) is not None and not o.walkable and not o.dynamic

    key = ("solids", built.scene_key)
    scene = memo.get(key) if memo is not None else None
    if scene is None:
        scene = {o.id: fps[o.id] for o in built.scene.objects if o.id not in built.task_local and fixed(o.id)}
        if memo is not None:
            memo[key] = scene
    return scene | {i: fps[i] for i in sorted(built.task_local) if fixed(i)}


def _too_steep(ground: B.Ground, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """Cells where the terrain slopes more steeply than the agent walks up."""
    d = CELL_M / 2
    sx = (terrain_height(ground, gx + d, gy) - terrain_height(ground, gx - d, gy)) / (2 * d)
    sy = (terrain_height(ground, gx, gy + d) - terrain_height(ground, gx, gy - d)) / (2 * d)
    return np.hypot(sx, sy) > np.tan(np.radians(AGENT_SLOPE_DEG))


def _surface(objects: list[B.SceneObject], gx: np.ndarray, gy: np.ndarray, ground: B.Ground) -> np.ndarray:
    """Height of the surface in each cell: the highest top of a walkable object over its centre
    (rays cast down onto the solid parts' meshes), else the ground's (0 unless a heightfield)."""
    height = np.asarray(terrain_height(ground, gx, gy), dtype=float) * np.ones_like(gx, dtype=float)
    for o in objects:
        fp = footprint(o, solid_only=False)
        if fp is None:
            continue
        cells = contains_xy(fp.buffer(1e-4), gx, gy)  # a cell on the edge between two steps
        if not cells.any():
            continue
        xs, ys = gx[cells], gy[cells]
        top = np.full(len(xs), -np.inf)
        for _, mesh in object_meshes(o):
            top = np.maximum(top, _top_z(mesh.triangles, xs, ys))
        height[cells] = np.maximum(height[cells], top)
    return height


def _top_z(triangles: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Highest z of the triangles over each point (x, y), -inf where none covers it: a vertical ray
    cast down (the parts have a dozen triangles, so a loop over them is cheap)."""
    top = np.full(len(xs), -np.inf)
    for (ax, ay, az), (bx, by, bz), (cx, cy, cz) in triangles:
        det = (by - cy) * (ax - cx) + (cx - bx) * (ay - cy)
        if abs(det) < 1e-12:
            continue  # a vertical face
        u = ((by - cy) * (xs - cx) + (cx - bx) * (ys - cy)) / det
        v = ((cy - ay) * (xs - cx) + (ax - cx) * (ys - cy)) / det
        w = 1.0 - u - v
        inside = (u >= -1e-6) & (v >= -1e-6) & (w >= -1e-6)  # shared edges belong to both
        top = np.where(inside, np.maximum(top, u * az + v * bz + w * cz), top)
    return top


def _connect(free: np.ndarray, height: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Cells the agent can stand on over uneven ground and their connected components: a cell is
    taken when no surface within the agent's radius rises more than a step above it (the side of
    a flight of stairs is a wall), and neighbours connect when their heights differ by a step at most."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    k = max(1, int(round(radius / CELL_M)))
    yy, xx = np.mgrid[-k : k + 1, -k : k + 1]
    disc = (xx * xx + yy * yy) * CELL_M * CELL_M <= radius * radius + 1e-9
    above = ndimage.maximum_filter(height, footprint=disc, mode="nearest") - height
    free = free & (above <= AGENT_STEP_M + 1e-9)
    h, w = free.shape
    idx = np.arange(h * w).reshape(h, w)
    rows, cols = [], []
    for di, dj in ((0, 1), (1, 0)):
        a, b = free[: h - di, : w - dj], free[di:, dj:]
        step = np.abs(height[: h - di, : w - dj] - height[di:, dj:]) <= AGENT_STEP_M + 1e-9
        both = a & b & step
        rows.append(idx[: h - di, : w - dj][both])
        cols.append(idx[di:, dj:][both])
    r, c = np.concatenate(rows), np.concatenate(cols)
    graph = coo_matrix((np.ones(len(r), dtype=np.int8), (r, c)), shape=(h * w, h * w))
    _, comp = connected_components(graph, directed=False)
    labels = np.where(free, comp.reshape(h, w) + 1, 0)
    return free, labels


def _rasterise(expl: B.Exploration, fps: list) -> tuple:
    """Bounds grid with the given footprints marked: (x0, y0, nx, ny, gx, gy, inside, blocked, occupied)."""
    poly = Polygon(expl.bounds)
    minx, miny, maxx, maxy = poly.bounds
    nx = max(1, int(np.ceil((maxx - minx) / CELL_M)))
    ny = max(1, int(np.ceil((maxy - miny) / CELL_M)))
    xs = minx + (np.arange(nx) + 0.5) * CELL_M
    ys = miny + (np.arange(ny) + 0.5) * CELL_M
    gx, gy = np.meshgrid(xs, ys)
    inside = contains_xy(poly.buffer(-expl.agent_radius_m * 0.5), gx, gy)
    blocked = np.zeros_like(inside)
    occupied = np.zeros_like(inside)
    r = expl.agent_radius_m
    for fp in fps:
        if fp is None:
            continue
        fx0, fy0, fx1, fy1 = fp.bounds
        j0, j1 = max(0, int((fx0 - r - minx) // CELL_M)), min(nx, int((fx1 + r - minx) // CELL_M) + 1)
        i0, i1 = max(0, int((fy0 - r - miny) // CELL_M)), min(ny, int((fy1 + r - miny) // CELL_M) + 1)
        if j0 >= j1 or i0 >= i1:
            continue
        sub_x, sub_y = gx[i0:i1, j0:j1], gy[i0:i1, j0:j1]
        blocked[i0:i1, j0:j1] |= contains_xy(fp.buffer(r, quad_segs=4), sub_x, sub_y)
        occupied[i0:i1, j0:j1] |= contains_xy(fp.buffer(CELL_M * 0.5, quad_segs=2), sub_x, sub_y)
    return minx, miny, nx, ny, gx, gy, inside, blocked, occupied


def check_start(built: Built, grid: Grid, diag: Collector, span, memo: dict | None = None) -> None:
    expl = built.exploration
    poly = Polygon(expl.bounds)
    if not poly.is_valid:
        diag.error(
            "E510", "the bounds polygon crosses itself", span, "list its corners in order around the area"
        )
        return
    sx, sy = expl.start.position
    if not poly.contains(Point(sx, sy)):
        diag.error(
            "E511",
            f"the start ({sx:g}, {sy:g}) is outside the exploration bounds",
            span,
            "move the start inside `bounds` or widen the bounds",
        )
        return
    for oid, fp in sorted(footprints(built, memo).items()):
        o = built.objects[oid]
        if fp is not None and fp.distance(Point(sx, sy)) < expl.agent_radius_m * 0.9:
            diag.error(
                "E512",
                f"the start ({sx:g}, {sy:g}) is inside `{o.id}`",
                span,
                f"move the start at least {expl.agent_radius_m:g} m away from {o.id}",
            )
            return
    si, sj = grid.start
    if not (0 <= si < grid.free.shape[0] and 0 <= sj < grid.free.shape[1]) or not grid.free[si, sj]:
        diag.error(
            "E513", f"the start ({sx:g}, {sy:g}) is too close to the bounds or an obstacle to stand on", span
        )
