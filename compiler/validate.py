"""Pass 5, check the clean world: its declarations hold (E503), the start is sound, and the
walkable grid shows what the agent can reach.  What the clean world holds (nothing floats,
interpenetrates or is otherwise anomalous) is the detectors' (`compiler/world_alone.py`).

Reachability rasterises solid footprints (inflated by the agent's radius) onto a grid
inside the bounds polygon and labels its connected components with scipy.  Walkable objects
(stairs, ramps) are surfaces rather than obstacles: their tops give the cells heights, and cells
connect only a step apart (`_connect`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import shapely
from scipy import ndimage
from shapely import contains_xy
from shapely.geometry import MultiPolygon, Point, Polygon

from wac.bundle import model as B
from wac.bundle.model import AGENT_SLOPE_DEG, AGENT_STEP_M
from wac.bundle.terrain import height as terrain_height
from wac.bundle.terrain import height_range
from wac.compiler.assemble import Built
from wac.compiler.diagnostics import Collector
from wac.compiler.sight import Sight, hull, posed_corners
from wac.compiler.sight import build as build_sight
from wac.compiler.sight import combine as combine_sight
from wac.detectors.geometry import TOUCH_M, near_pairs, object_meshes, penetration  # noqa: F401  (re-exported)

CELL_M = 0.2
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
    occupancy: np.ndarray  # bool, cells covered by solid footprints (not inflated; the views use `sight`)
    # height of the surface the agent stands on in each cell (walkable objects' tops); None: flat
    height: np.ndarray | None = None
    # the footprints of the fixed solids that stop the agent (walkable ones are surfaces, dynamic ones
    # are shoved), by object id: a walk through one asks whether the others leave it room
    # (`walk_room.walk_blocked`)
    solids: dict = field(default_factory=dict)
    # the drawn, opaque parts of the clean world as prisms: what hides a target from a viewpoint
    # (`plan._seen`, `plan._hidden`)
    sight: Sight = field(default_factory=Sight)
    # the doors that start closed and open when used: the agent may open them, the self-check plan
    # walks as if they were walls (`view_why` names one that shuts the start off)
    doors: frozenset = frozenset()

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


def footprint(
    obj: B.SceneObject, solid_only: bool = True, ground: float = 0.0
) -> Polygon | MultiPolygon | None:
    """The object's outline on the ground: with `solid_only`, of its solid parts between a kerb's
    and the agent's height above `ground` (the height of the ground under it).  The union of the
    parts' outlines, each posed as the clean world starts (`sight.posed_corners`), not their common
    hull: the agent walks between a shelter's posts and through the jambs of a door that stands
    open, past its swung panel."""
    pts = [posed_corners(obj, p) for p in obj.parts if p.solid or not solid_only]
    lo, hi = ground + STEP_M, ground + AGENT_TOP_M
    pts = [p for p in pts if (p[:, 2].max() > lo and p[:, 2].min() < hi)] if solid_only else pts
    if not pts:
        return None
    if len(pts) == 1:
        return hull(pts[0])
    return shapely.union_all([hull(p) for p in pts])


def _touch(a: B.SceneObject, b: B.SceneObject) -> bool:
    return all(
        a.aabb_min[k] <= b.aabb_max[k] + TOUCH_M and b.aabb_min[k] <= a.aabb_max[k] + TOUCH_M
        for k in range(3)
    )


def check_clean(built: Built, diag: Collector, span, memo: dict | None = None) -> None:
    """Declarations the clean world cannot honour: an `attached_to` naming no object (E503).  What
    the clean world holds (floating, interpenetrating and every other category) is judged from the
    built world by the detectors: `world_alone.check_clean_world`."""
    for o in built.scene.objects:
        if o.attached_to is not None and o.attached_to not in built.objects:
            thing = built.things.get(o.id)
            diag.error(
                "E503",
                f"`{o.id}` is attached to unknown object `{o.attached_to}`",
                thing.span if thing else span,
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
    return Grid(
        minx,
        miny,
        CELL_M,
        free,
        reach,
        (si, sj),
        occupied,
        height,
        _solids(built, memo),
        _sight(built, memo),
        frozenset(
            o.id
            for o in built.objects.values()
            if not o.open and B.Interaction.open in o.interactions and any(p.hinge for p in o.parts)
        ),
    )


def _sight(built: Built, memo: dict | None) -> Sight:
    """`Grid.sight`: the scene's prisms found once per build, with the task's objects added."""
    key = ("sight", built.scene_key)
    scene = memo.get(key) if memo is not None else None
    mats = built.scene.materials
    if scene is None:
        scene = build_sight([o for o in built.scene.objects if o.id not in built.task_local], mats)
        if memo is not None:
            memo[key] = scene
    if not built.task_local:
        return scene
    return combine_sight(scene, build_sight([built.objects[i] for i in sorted(built.task_local)], mats))


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
