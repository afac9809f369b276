"""Self-check plans: the actions from the start pose that expose the anomaly.

A shortest path on the walkable grid leads to a viewpoint chosen for the category's plan
kind (side view, walk-through, push, revisit, …); the path is straightened and turned into
the auditor's own actions (turn, move ≤ 4 m, look), followed by the exposing actions.
The number of actions must fit the task's budget.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import shapely
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from wac.bundle import model as B
from wac.bundle.actions import MAX_MOVE_M
from wac.bundle.model import AGENT_STEP_M
from wac.bundle.transforms import rotation
from wac.compiler.anomalies import Lowered
from wac.compiler.plan_kinds import KINDS, At, PlanKind
from wac.compiler.plan_steps import _free_run
from wac.compiler.triggers import UNITS as TRIGGER_UNITS
from wac.compiler.triggers import Away, seen_within, switch_distance
from wac.compiler.validate import Grid
from wac.compiler.view_why import no_room, out_of_reach, unseen
from wac.compiler.views import EYE_M, _hidden, _seen, aim_of, faces_turned_to, unburied, view_band
from wac.compiler.walk_room import CROSSING_M, across, crossing, walk_blocked
from wac.errors import PlanError  # noqa: F401 - re-exported
from wac.taxonomy.registry import OBSERVABLES, registry


def plan_kind(low: Lowered) -> PlanKind:
    """The plan kind: the trigger's (temporal and distance triggers decide first), else the operator
    unit's, else the category's."""
    trigger = TRIGGER_UNITS.get(low.trigger.kind.value)
    if trigger is not None and trigger.plan is not None:
        return KINDS[trigger.plan]
    return KINDS[low.unit.plan or registry().category(low.category).plan]


def _invisible_wall(low: Lowered) -> B.AddBlocker | None:
    """The anomaly's invisible wall when it has a face (1.5 times longer than thick)."""
    wall = next((e for e in low.effects if isinstance(e, B.AddBlocker)), None)
    if wall is not None and max(wall.size[:2]) >= 1.5 * min(wall.size[:2]):
        return wall
    return None


def _preferred_direction(kind: PlanKind, low: Lowered, spin_view: str):
    """A direction (unit vector from the target) the viewpoint should lie in, if the plan needs one.
    `spin_view` ("front", "either", "any") relaxes the view of a turning part, see `SPIN_VIEWS`."""
    o = low.focus
    wall = _invisible_wall(low)
    if wall is not None:
        # an invisible wall is walked into face on: a path at its end slips past it
        yaw = math.radians((wall.rotation_deg or (0.0, 0.0, 0.0))[0])
        along_x = (math.cos(yaw), math.sin(yaw))
        return (along_x if wall.size[0] < wall.size[1] else (-along_x[1], along_x[0])), True
    if kind.face_on and o is not None:
        face = across(o)
        if face is not None:  # a fence, a gate, a door's leaf: walked through face on, like a wall
            return face, True
        yaw = math.radians(o.rotation_deg[0])
        return (math.cos(yaw), math.sin(yaw)), True  # along the object's facing axis, either side
    if kind.toward_normal:
        normal = next(
            (e.normal for e in low.effects if isinstance(e, B.SetRender | B.SetMechanism) and e.normal), None
        )
        if normal:
            return normal, False
    axis = _spin_axis(low) if spin_view != "any" else None
    if axis is not None:
        return axis, spin_view == "either"
    return None, False


# A changed animation is seen facing the turning part (edge-on its turning barely shows): first
# from the side its axis points to (a fan blows along +axis; from behind, its motor and guard
# hide the blades), then from either side, then from anywhere, as the scene allows.
SPIN_VIEWS = ("front", "either", "any")


def _spin_axis(low: Lowered) -> tuple[float, float] | None:
    """The horizontal world direction of the axis a changed animation turns about (a fan's, a
    windmill's), if the anomaly changes one and its axis is not upright."""
    o = low.focus
    anim = next((e for e in low.effects if isinstance(e, B.SetAnimation)), None)
    if o is None or anim is None:
        return None
    part = next((p for p in o.parts if p.spin and (anim.part is None or p.id == anim.part)), None)
    if part is None:
        return None
    local = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}[part.spin.axis]
    v = rotation(*o.rotation_deg) @ (rotation(*part.rotation_deg) @ np.asarray(local))
    norm = math.hypot(v[0], v[1])
    if norm < 0.5:  # about an upright axis (a ceiling fan, a turntable): every side shows it
        return None
    return (v[0] / norm, v[1] / norm)


def _graph(grid: Grid) -> csr_matrix:
    """8-connected graph of the reachable cells, edge weights in cells; over uneven ground only
    between cells whose heights differ by a step at most."""
    h, w = grid.reach.shape
    idx = np.arange(h * w).reshape(h, w)
    ok = grid.reach
    rows, cols, weights = [], [], []
    for di, dj in ((0, 1), (1, 0), (1, 1), (1, -1)):
        i1 = h - di
        j0, j1 = max(0, -dj), w - max(0, dj)
        both = ok[0:i1, j0:j1] & ok[di : i1 + di, j0 + dj : j1 + dj]
        if grid.height is not None:
            rise = np.abs(grid.height[0:i1, j0:j1] - grid.height[di : i1 + di, j0 + dj : j1 + dj])
            both &= rise <= AGENT_STEP_M + 1e-9
        rows.append(idx[0:i1, j0:j1][both])
        cols.append(idx[di : i1 + di, j0 + dj : j1 + dj][both])
        weights.append(np.full(int(both.sum()), math.hypot(di, dj)))
    r, c, wt = np.concatenate(rows), np.concatenate(cols), np.concatenate(weights)
    return csr_matrix(
        (np.concatenate([wt, wt]), (np.concatenate([r, c]), np.concatenate([c, r]))), shape=(h * w, h * w)
    )


def _edge_distance(box, x, y) -> float:
    dx = max(box[0] - x, 0.0, x - box[2])
    dy = max(box[1] - y, 0.0, y - box[3])
    return math.hypot(dx, dy)


def _clear_lines(grid: Grid, a: tuple[float, float], ends: np.ndarray) -> np.ndarray:
    """For every row b of `ends`: whether the straight segment a-b is walkable (its samples every half
    cell all on reachable cells, no rise between two of them over a step)."""
    ns = np.array([max(2, int(math.dist(a, b) / (grid.cell / 2))) for b in ends.tolist()])
    reps = ns + 1
    first = np.concatenate(([0], np.cumsum(reps)[:-1]))
    k = (np.arange(reps.sum()) - np.repeat(first, reps)).astype(float)
    n = np.repeat(ns, reps)
    x = a[0] + (np.repeat(ends[:, 0], reps) - a[0]) * k / n
    y = a[1] + (np.repeat(ends[:, 1], reps) - a[1]) * k / n
    i, j = grid.cells_of(x, y)
    h, w = grid.reach.shape
    inside = (i >= 0) & (i < h) & (j >= 0) & (j < w)
    i, j = np.clip(i, 0, h - 1), np.clip(j, 0, w - 1)
    ok = np.logical_and.reduceat(inside & grid.reach[i, j], first)
    if grid.height is not None:
        rise = np.abs(np.diff(grid.height[i, j].astype(float))) > AGENT_STEP_M + 1e-9
        rise[first[1:] - 1] = False  # between one segment's last sample and the next one's first
        ok &= ~np.logical_or.reduceat(np.append(rise, False), first)
    return ok


def _straighten(grid: Grid, pts: list[tuple[float, float]], block: int = 32) -> list[tuple[float, float]]:
    """The path's corners: from each corner, the farthest later point in a clear line (else the next)."""
    ends = np.asarray(pts, dtype=float)
    out = [pts[0]]
    i = 0
    while i < len(pts) - 1:
        j = i + 1
        hi = len(pts)
        while hi > i + 2:  # the farthest first, a block of candidates at a time
            lo = max(i + 2, hi - block)
            clear = np.flatnonzero(_clear_lines(grid, pts[i], ends[lo:hi]))
            if len(clear):
                j = lo + int(clear[-1])
                break
            hi = lo
        out.append(pts[j])
        i = j
    return out


def _turn(cur_yaw: float, want_yaw: float) -> float:
    d = (cur_yaw - want_yaw + 180.0) % 360.0 - 180.0  # positive = turn right (clockwise)
    return round(d, 1)


DYNAMIC_CLEARANCE_M = 0.3  # plans keep this much more than the agent's radius from dynamic objects


def make_plan(
    task_id: str,
    low: Lowered,
    expl: B.Exploration,
    grid: Grid,
    memo: dict | None = None,
    keep_clear: tuple[tuple[float, float, float, float], ...] = (),
) -> B.SelfCheckPlan:
    """The self-check plan.  Its walk and viewpoint keep the agent's radius + `DYNAMIC_CLEARANCE_M`
    from the `keep_clear` boxes (dynamic objects: brushing one moves it, a second change) and from
    where the anomaly puts things (`_new_places`) where the area allows; otherwise it plans on the
    plain walkable grid."""
    keep_clear = tuple(keep_clear) + _new_places(low)
    views = SPIN_VIEWS if _spin_axis(low) is not None else SPIN_VIEWS[-1:]
    for view in views[:-1]:
        try:
            return _plan_on(task_id, low, expl, grid, memo, keep_clear, view)
        except PlanError:
            pass
    return _plan_on(task_id, low, expl, grid, memo, keep_clear, views[-1])


def over_budget(plan: B.SelfCheckPlan, budget: int) -> tuple[str, str]:
    """E535's message and hint: of the plan's actions, how many walk to the viewpoint (and how far)
    and how many expose the anomaly there, so the author knows whether a closer start helps."""
    at = next((i for i, s in enumerate(plan.steps) if s.caption), len(plan.steps))
    walk = sum(1 for s in plan.steps[:at] if s.action != "mark")
    metres = sum(float(s.args.get("distance_m", 0.0)) for s in plan.steps[:at] if s.action == "move")
    there = plan.actions_needed - walk
    n = plan.actions_needed
    message = (
        f"exposing the anomaly takes {n} actions, more than the budget of {budget}: {walk} to walk {metres:.1f} m "
        f"to the viewpoint" + (f" and {there} there" if there else "")
    )
    if there >= budget:
        return message, f"raise `budget` to {n}: the actions at the viewpoint alone take {there}"
    return message, f"start closer to the target (the walk takes {walk} actions) or raise `budget` to {n}"


def _tried(cost: np.ndarray, cheapest: int = 400, spread: int = 200) -> np.ndarray:
    """The candidates a view test tries, in order: the `cheapest` by cost, then `spread` more drawn
    evenly from the rest (a view from the far side of the target, when the near side sees nothing),
    those of infinite cost left out."""
    order = np.argsort(cost, kind="stable")
    order = order[: int(np.isfinite(cost).sum())]
    rest = order[cheapest:]
    return np.concatenate([order[:cheapest], rest[:: max(1, len(rest) // spread)]])


def _new_places(low: Lowered) -> tuple[tuple[float, float, float, float], ...]:
    """The ground boxes of what the anomaly puts somewhere in the perturbed world: its target at the
    place it moves to, the objects it adds.  A viewpoint there stands inside the change, and the
    runtime holds back a change that would appear on screen."""
    o, out = low.focus, []
    for e in low.effects:
        if isinstance(e, B.SetPose) and e.position is not None and o is not None and e.target == o.id:
            dx, dy = e.position[0] - o.position[0], e.position[1] - o.position[1]
            if abs(dx) + abs(dy) > 1e-6:
                out.append((o.aabb_min[0] + dx, o.aabb_min[1] + dy, o.aabb_max[0] + dx, o.aabb_max[1] + dy))
        elif isinstance(e, B.AddObject):
            n = e.object
            out.append((n.aabb_min[0], n.aabb_min[1], n.aabb_max[0], n.aabb_max[1]))
    return tuple(out)


def _plan_on(task_id, low, expl, grid, memo, keep_clear, view: str) -> B.SelfCheckPlan:
    """The plan on the grid cleared around dynamic objects where the area allows, else on the plain grid."""
    if keep_clear:
        cleared = _cleared(grid, expl, keep_clear)
        if cleared is not None:
            try:
                return _make_plan(task_id, low, expl, cleared, memo, view)
            except PlanError:
                pass
    return _make_plan(task_id, low, expl, grid, memo, view)


def _cleared(grid: Grid, expl: B.Exploration, boxes) -> Grid | None:
    """The grid without the cells closer than the agent's radius + the clearance to any box (the cells
    around the start stay, so that an agent starting near one can still leave)."""
    h, w = grid.reach.shape
    xs = grid.x0 + (np.arange(w) + 0.5) * grid.cell
    ys = grid.y0 + (np.arange(h) + 0.5) * grid.cell
    gx, gy = np.meshgrid(xs, ys)
    near = np.zeros_like(grid.reach)
    margin = expl.agent_radius_m + DYNAMIC_CLEARANCE_M
    for x0, y0, x1, y1 in boxes:  # each box touches only the cells within `margin` of it
        j0 = max(0, math.floor((x0 - margin - grid.x0) / grid.cell) - 1)
        j1 = min(w, math.ceil((x1 + margin - grid.x0) / grid.cell) + 1)
        i0 = max(0, math.floor((y0 - margin - grid.y0) / grid.cell) - 1)
        i1 = min(h, math.ceil((y1 + margin - grid.y0) / grid.cell) + 1)
        if j0 >= j1 or i0 >= i1:
            continue
        wx, wy = gx[i0:i1, j0:j1], gy[i0:i1, j0:j1]
        dx = np.maximum(np.maximum(x0 - wx, wx - x1), 0.0)
        dy = np.maximum(np.maximum(y0 - wy, wy - y1), 0.0)
        near[i0:i1, j0:j1] |= np.hypot(dx, dy) < margin
    sx, sy = expl.start.position
    near &= np.hypot(gx - sx, gy - sy) > 0.6
    if not near.any():
        return None
    return dataclasses.replace(grid, reach=grid.reach & ~near)


def _watch_from_start(
    task_id: str, low: Lowered, expl: B.Exploration, observable: str, target
) -> B.SelfCheckPlan:
    """A scene-wide change (day-night) with no focus: watched from where the agent stands."""
    steps = [
        B.PlanStep(action="mark", caption="State A: observe the scene's lighting."),
        B.PlanStep(action="wait", args={"seconds": 3.0}, caption="Wait while watching."),
        B.PlanStep(action="mark", caption="State B: the lighting has changed abruptly."),
        B.PlanStep(action="wait", args={"seconds": 3.0}),
        B.PlanStep(action="mark", caption="State A again."),
    ]
    return B.SelfCheckPlan(
        task_id=task_id,
        category=registry().category(low.category).id.value,
        observable=observable,
        expect=_expect(low),
        steps=tuple(steps),
        actions_needed=2,
        view_point=expl.start.position,
        target_point=target,
    )


def _band(kind: PlanKind, low: Lowered) -> tuple[float, float, float, float]:
    """(closest, preferred nearer than, farthest, farthest from afar) viewpoint distances from the
    target's edge: the kind's band (`views.view_band`), narrowed where the trigger needs it
    (`TriggerUnit.band`)."""
    band = view_band(kind, low.focus, *kind.distances)
    trigger = TRIGGER_UNITS.get(low.trigger.kind.value)
    return trigger.band(low.trigger, band) if trigger is not None and trigger.band is not None else band


def _paths(grid: Grid, memo: dict | None):
    """Shortest path lengths and predecessors from the start cell over the walkable grid, kept per
    start and grid in `memo` (the tasks of a scene start in different places on the same grid)."""
    start_idx = grid.start[0] * grid.reach.shape[1] + grid.start[1]
    cells = (grid.reach.tobytes(), grid.reach.shape, None if grid.height is None else grid.height.tobytes())
    key = ("paths", start_idx, *cells)
    if memo is not None and key in memo:
        return memo[key]
    graph = memo.get(("graph", *cells)) if memo is not None else None
    if graph is None:
        graph = _graph(grid)
        if memo is not None:
            memo["graph", *cells] = graph
    found = shortest_path(graph, directed=False, indices=start_idx, return_predecessors=True)
    if memo is not None:
        memo[key] = found
    return found


def _route(expl: B.Exploration, grid: Grid, preds, goal: int, aim) -> tuple[list[B.PlanStep], tuple, float]:
    """The auditor's actions from the start pose along the shortest path to cell `goal`, then
    turned and pitched at `aim` (x, y, z): (steps, where it ends, its yaw)."""
    w = grid.reach.shape[1]
    start_idx = grid.start[0] * w + grid.start[1]
    path_idx = [goal]
    while path_idx[-1] != start_idx and preds[path_idx[-1]] >= 0:
        path_idx.append(preds[path_idx[-1]])
    path_idx.reverse()
    pts = [expl.start.position] + [grid.centre(int(p // w), int(p % w)) for p in path_idx[1:]]
    way = _straighten(grid, pts) if len(pts) > 1 else pts
    steps: list[B.PlanStep] = []
    yaw = expl.start.yaw_deg
    pos = expl.start.position
    for nxt in way[1:]:
        d = math.dist(pos, nxt)
        if d < 0.05:
            continue
        want = math.degrees(math.atan2(nxt[1] - pos[1], nxt[0] - pos[0]))
        t = _turn(yaw, want)
        if abs(t) > 0.5:
            steps.append(B.PlanStep(action="turn", args={"degrees": t}))
            yaw = want
        while d > 1e-6:
            m = min(MAX_MOVE_M, d)
            if m < 0.3:
                m = 0.3
            steps.append(B.PlanStep(action="move", args={"distance_m": round(m, 2), "direction": "forward"}))
            d -= m
        pos = nxt
    aim_x, aim_y, tz = aim
    want = math.degrees(math.atan2(aim_y - pos[1], aim_x - pos[0]))
    t = _turn(yaw, want)
    if abs(t) > 0.5:
        steps.append(B.PlanStep(action="turn", args={"degrees": t}))
        yaw = want
    flat_d = max(0.5, math.dist(pos, (aim_x, aim_y)))
    pitch = round(math.degrees(math.atan2(EYE_M + grid.height_at(*pos) - tz, flat_d)), 1)
    if abs(pitch - expl.start.pitch_deg) > 5:
        steps.append(B.PlanStep(action="look", args={"degrees": round(pitch - expl.start.pitch_deg, 1)}))
    return steps, pos, yaw


def _tiers(kind: PlanKind, low: Lowered, spin_view: str, cand, vx, vy, edge, band, cell: float) -> list:
    """The candidate viewpoints in tiers of preference: in the kind's preferred direction from the
    target (`vx`, `vy`: from the target to each cell), then any; nearer than `near` first; from afar
    last.  `cand`: the cells within the band's distances."""
    near, hi, far = band
    direction, either_side = _preferred_direction(kind, low, spin_view)
    facing = np.ones_like(cand)  # the cells in the preferred direction, where one is kept to
    tiers = [cand]
    if direction is not None:
        norm = np.hypot(vx, vy) + 1e-9
        cos = (vx * direction[0] + vy * direction[1]) / norm
        aligned = cand & ((np.abs(cos) if either_side else cos) > math.cos(math.radians(25)))
        if either_side:  # walking through: stand on the centre line itself
            lateral = np.abs(vx * direction[1] - vy * direction[0])
            on_line = aligned & (lateral <= cell * 0.75)
            if on_line.any():
                aligned = on_line
        if aligned.any():
            # an invisible wall's face is a preference: where columns hide it, any clear view will do
            tiers = [aligned, cand] if _invisible_wall(low) is not None else [aligned]
            facing = (np.abs(cos) if either_side else cos) > math.cos(math.radians(25))
            cand = aligned
        elif spin_view != "any" and _spin_axis(low) is not None:  # SPIN_VIEWS: relax, then try again
            raise PlanError("no reachable point faces the turning part", "")
        elif not either_side and (cand & (cos > 0.1)).any():  # at least the side the direction points to
            facing = cos > 0.1
            tiers = [cand & facing, cand]
    if near < hi:  # a small target from where it fills enough of the frame first
        tiers = [t & (edge <= near) for t in tiers] + tiers
    if far > hi:  # a target hidden from near by what it stands on (a roof's edge) is seen from farther
        tiers.append((edge > hi) & (edge <= far) & facing)
    return tiers


def _target(kind: PlanKind, low: Lowered, expl: B.Exploration, grid: Grid, observable: str):
    """Where the plan looks: (the target's ground box, the point it is judged at, the point the view
    is aimed at, the solids a walk through it may run into with their index, or None)."""
    focus = low.focus
    if focus is not None:
        box = (focus.aabb_min[0], focus.aabb_min[1], focus.aabb_max[0], focus.aabb_max[1])
        tz = (focus.aabb_min[2] + focus.aabb_max[2]) / 2
    else:
        fx, fy, fz = low.hints.focus_point or (*expl.start.position, 1.0)
        box = (fx - 0.2, fy - 0.2, fx + 0.2, fy + 0.2)
        tz = fz
    tx, ty = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    others = None  # the solids a walk through the target may run into, and their index
    if kind.walk_past_m is not None and OBSERVABLES[observable].walked:
        solids = [fp for oid, fp in grid.solids.items() if focus is None or oid != focus.id]
        others = (solids, shapely.STRtree(solids))
        if focus is not None:  # a long target is crossed where the walk has room (a sign on a fence)
            tx, ty = crossing(grid, expl, focus, (tx, ty), box, kind, others, kind.distances)
    aim_x, aim_y = tx, ty
    if focus is not None and low.hints.aim == "ground":
        # the evidence lies on the ground around the target (its shadow): aim at the base, and for a
        # displaced shadow at the point between where the shadow is and where it should be
        tz = focus.aabb_min[2]
        off = next(
            (e.shadow_offset for e in low.effects if isinstance(e, B.SetShadow) and e.shadow_offset), None
        )
        if off:
            aim_x, aim_y = tx + off[0] / 2, ty + off[1] / 2
    return box, (tx, ty, tz), (aim_x, aim_y), others


def _no_viewpoint(kind: PlanKind, low: Lowered, grid: Grid, refused, room, cells, tiers, named, box, band):
    """Why no candidate viewpoint would do, as the author's error: the kind's own reason, no room to
    walk on past the target, no room to step away, or no view of it (`view_why`)."""
    cx, cy, edge, cost = cells
    lo, hi = band
    focus = low.focus
    if kind.none_found is not None:
        return PlanError(*kind.none_found)
    if "walk" in refused:
        what = f"the {focus.name}" if focus is not None else "the spot"
        return PlanError(
            f"there is no room to walk through {what}: {refused['walk']}",
            "the far side needs walkable room inside the bounds (a room, a yard, open ground behind it); "
            "widen the bounds, clear the far side, or pick a target the agent can walk through",
        )
    if room:
        return no_room(low, focus, room, float(edge.max()))
    tried = np.logical_or.reduce(tiers)
    order = np.argsort(np.where(tried, cost, np.inf), kind="stable")[: int(tried.sum())]
    far_hi = float(edge[tried].max())
    eyes = [(cx[k], cy[k]) for k in order]
    return unseen(grid, low, named, box, eyes, lo, max(hi, far_hi), kind.reach)


def _reachable(grid: Grid, box):
    """The reachable cells: their rows, columns, centres and distances from the box's edge."""
    ii, jj = np.nonzero(grid.reach)
    if len(ii) == 0:
        raise PlanError(
            "the start position is enclosed: nothing is reachable", "move the start into open space"
        )
    cx = grid.x0 + (jj + 0.5) * grid.cell
    cy = grid.y0 + (ii + 0.5) * grid.cell
    dx = np.maximum.reduce([box[0] - cx, np.zeros_like(cx), cx - box[2]])
    dy = np.maximum.reduce([box[1] - cy, np.zeros_like(cy), cy - box[3]])
    return ii, jj, cx, cy, np.hypot(dx, dy)


def _make_plan(
    task_id: str,
    low: Lowered,
    expl: B.Exploration,
    grid: Grid,
    memo: dict | None = None,
    spin_view: str = "any",
) -> B.SelfCheckPlan:
    cat = registry().category(low.category)
    observable = registry().observable(low.spec.name, low.category)  # the operator's, else the category's
    kind = plan_kind(low)
    focus = low.focus
    box, (tx, ty, tz), (aim_x, aim_y), others = _target(kind, low, expl, grid, observable)
    if kind.scene_wide and focus is None and low.hints.focus_point is None:
        return _watch_from_start(task_id, low, expl, observable, (tx, ty, tz))
    lo, near, hi, far = _band(kind, low)
    h, w = grid.reach.shape
    ii, jj, cx, cy, edge = _reachable(grid, box)
    cand = (edge >= lo) & (edge <= hi)
    tiers = _tiers(kind, low, spin_view, cand, cx - tx, cy - ty, edge, (near, hi, far), grid.cell)
    if not any(t.any() for t in tiers):
        k = int(np.argmin(edge))
        raise out_of_reach(grid, low, box, (cx[k], cy[k]), float(edge[k]), kind)
    start_idx = grid.start[0] * w + grid.start[1]
    lengths, preds = _paths(grid, memo)
    flat = ii * w + jj
    cost = lengths[flat] * grid.cell + np.abs(edge - (lo + hi) / 2) * 0.5
    # what the view needs, in order of preference: a clear line to the target, (interact_blocked) a
    # solid in between, or any view (occluded_view); a view through a solid prefers one that hides the
    # whole target (the anomaly draws it through the solid), and takes any view after
    target = (tx, ty)
    named = aim_of(low, box, (tx, ty, tz))  # what the messages name
    aim = unburied(named, grid)
    if aim.normals is not None:  # a changed part: only the cells its free faces turn to can see it
        turned = faces_turned_to(
            aim, cx, cy, EYE_M + (grid.height[ii, jj] if grid.height is not None else 0.0)
        )
        tiers = [t & turned for t in tiers]
    clear = lambda k: _seen(grid, (cx[k], cy[k]), aim, box, through_glass=False)  # noqa: E731
    whole = lambda k: _seen(grid, (cx[k], cy[k]), aim, box, through_glass=False, share=1.0)  # noqa: E731
    # a view of the whole target first, then of most of it (a post before a long fence); glass hides
    # nothing from the auditor, but the self-check's segmentation draws it opaque: a view with no
    # pane in the way first; a reach (interact, push) goes through no pane at all
    through = lambda k: _seen(grid, (cx[k], cy[k]), aim, box)  # noqa: E731
    anywhere = lambda k: True  # noqa: E731
    views = {
        "blocked": [lambda k: not clear(k)],  # a pane stops a reach as a wall does
        "anywhere": [anywhere],
        "hidden": [lambda k: _hidden(grid, (cx[k], cy[k]), target, box, tz, aim.skip), anywhere],
        "seen": [whole, clear] if kind.reach else [whole, clear, through],
    }[kind.views]

    refused: dict[str, str] = {}  # why the cheapest candidate was passed over
    trigger = TRIGGER_UNITS.get(low.trigger.kind.value)  # how the plan makes it fire
    room: list[tuple[float, float]] = []  # (room, room needed) of viewpoints too cramped to step away

    def first(tier, ok, clear_m: float = CROSSING_M) -> int | None:
        """The cheapest candidate of `tier` whose view is `ok` (and whose walk through the target passes
        what stands beside it `clear_m` clear)."""
        for k in _tried(np.where(tier, cost, np.inf)):
            if others is not None:  # there must be room to walk on past the target
                why = walk_blocked(grid, expl, (cx[k], cy[k]), target, box, kind, others, clear_m)
                if why:
                    if clear_m == CROSSING_M:  # the reason of the last, most lenient pass
                        refused.setdefault("walk", f"from ({cx[k]:.1f}, {cy[k]:.1f}) the walk {why}")
                    continue
            if not ok(k):
                continue
            if kind.steps_back:  # there must be room to step back past the trigger's distance
                threshold = switch_distance(low.trigger)
                away = math.degrees(math.atan2(cy[k] - ty, cx[k] - tx))
                run = _free_run(grid, (cx[k], cy[k]), away)
                if run < threshold + 1.0 - edge[k]:
                    room.append((run, threshold + 1.0 - edge[k]))
                    continue
            if trigger is not None and trigger.room is not None:  # room to make it fire (walk away)
                facing = math.degrees(math.atan2(ty - cy[k], tx - cx[k]))
                short = trigger.room(low.trigger, Away(grid, (cx[k], cy[k]), facing, box, edge[k], ""))
                if short is not None:
                    room.append(short)
                    continue
            return k
        return None

    # a walk through the target that keeps the agent's radius from what stands beside it first: one that
    # brushes past a pot may be stopped by it
    clears = (expl.agent_radius_m, CROSSING_M) if others is not None else (CROSSING_M,)
    chosen = next(
        (k for ok in views for c in clears for tier in tiers if (k := first(tier, ok, c)) is not None), None
    )
    if chosen is None:
        raise _no_viewpoint(kind, low, grid, refused, room, (cx, cy, edge, cost), tiers, named, box, (lo, hi))
    armed_by_sight = trigger is None or trigger.arms_by_sight  # a leave trigger arms by distance alone
    if (
        kind.observe_at_start
        and armed_by_sight
        and _in_view_at_start(grid, expl, low, box, (tx, ty, tz), aim)
    ):
        # the trigger is armed by the first sighting: a walk that turns away would fire it before the
        # "before" view, so the target already in view is observed (and left) from the start
        chosen = None
    goal = flat[chosen] if chosen is not None else start_idx
    steps, pos, yaw = _route(expl, grid, preds, goal, (aim_x, aim_y, tz))
    name = focus.name if focus is not None else "spot"
    at = At(low, name, math.dist(pos, (tx, ty)), grid, pos, yaw, _edge_distance(box, *pos))
    steps += kind.expose(kind, at)
    n = sum(1 for s in steps if s.action != "mark")
    return B.SelfCheckPlan(
        task_id=task_id,
        category=cat.id.value,
        observable=observable,
        expect=_expect(low),
        steps=tuple(steps),
        actions_needed=n,
        view_point=(round(pos[0], 3), round(pos[1], 3)),
        target_point=(round(tx, 3), round(ty, 3), round(tz, 3)),
    )


START_HFOV_DEG = 90.0  # the agent's field of view (runtime default)
START_VFOV_DEG = 2 * math.degrees(math.atan(math.tan(math.radians(START_HFOV_DEG / 2)) * 0.75))  # 4:3 frame


def _in_view_at_start(grid: Grid, expl: B.Exploration, low: Lowered, box, centre, aim) -> bool:
    """Whether the target's centre is well inside the start view, close enough to count as seen by
    its trigger."""
    sx, sy = expl.start.position
    cx, cy, cz = centre
    bearing = math.degrees(math.atan2(cy - sy, cx - sx))
    if abs(_turn(expl.start.yaw_deg, bearing)) > START_HFOV_DEG / 2 - 5.0:
        return False
    down = math.degrees(math.atan2(EYE_M - cz, max(0.3, math.dist((sx, sy), (cx, cy)))))
    if abs(down - expl.start.pitch_deg) > START_VFOV_DEG / 2 - 5.0:
        return False
    if _edge_distance(box, sx, sy) > seen_within(low.trigger):
        return False
    return _seen(grid, (sx, sy), aim, box)


def _expect(low: Lowered) -> str:
    observable = registry().observable(low.spec.name, low.category)
    return (
        f"{observable.replace('_', ' ')} differs between the clean and perturbed worlds ({low.spec.summary})"
    )
