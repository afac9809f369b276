"""Why the planner found no viewpoint: E534's messages name the cause the compiler knows.

"No reachable point has a clear view" with the hint "obstacles cut the start off" was the message
for every failure: a distance trigger that never switches, a changed face turned to a wall, a
lamp behind a glass pane.  Here each failure of `plan.py` is explained by what the planner saw:
the room a viewpoint has to step away (`no_room`), what stands in front of a changed part's faces
or hides the target from every viewpoint (`unseen`), what stands between the closest reachable
point and the target (`out_of_reach`).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import shapely

from wac.bundle import model as B
from wac.compiler.anomalies import Lowered
from wac.compiler.plan_kinds import PlanKind
from wac.compiler.triggers import switch_distance
from wac.compiler.validate import Grid
from wac.compiler.views import EYE_M, FACE_OFFSET_M, _seen
from wac.errors import PlanError

FACE_REACH_M = 0.6  # what stands this close in front of a changed face covers it


def _what(o: B.SceneObject | None) -> str:
    return f"`{o.id}`" if o is not None else "the spot"


def no_room(
    low: Lowered, focus: B.SceneObject | None, room: list[tuple[float, float]], farthest: float
) -> PlanError:
    """No viewpoint that sees the target has room to step back beyond a `within`/`beyond` distance,
    or to walk a `leave` trigger's `exit` away.  Where no reachable point is that far (walls close the
    area in, whatever the bounds say) the task cannot work; where one is, but round a corner, the
    self-check plan (which steps back and walks away in a straight line) cannot show it: say which,
    how far the agent gets, and a distance that fits."""
    best, need = max(room)
    trig = low.trigger
    leave = trig.kind == B.TriggerKind.leave
    d = trig.exit_m if leave else switch_distance(trig, 0.0)
    # leave: (how far from the target the best straight walk gets, how far it must); a step back:
    # (the free run behind, the step needed to get 1 m beyond the distance)
    want = need if leave else d + 1.0  # how far from the target the agent must get
    reach = best if leave else want - (need - best)  # how far a straight move gets
    what = f"`exit` {d:g} m" if leave else f"{d:g} m"
    if farthest + 1e-9 < want:
        fits = max(0.5, np.floor((min(farthest, reach) - (want - d)) * 2) / 2)  # one the plan can show
        return PlanError(
            f"{'the `leave` trigger can never fire' if leave else f'the `{trig.kind.value}` trigger never switches'}"
            f": no reachable point is beyond {what} from {_what(focus)}; the farthest the agent gets is "
            f"{farthest:.1f} m (walls close the area in, whatever the bounds)",
            f"lower the distance to {fits:g} m or less (`{'exit' if leave else trig.kind.value} {fits:g} m`), "
            "or open the area",
        )
    fits = max(0.5, np.floor((reach - (want - d)) * 2) / 2)
    move = "walk away" if leave else "step back"
    return PlanError(
        f"there is no room to {move} beyond {what} from {_what(focus)} in a straight line: from the viewpoints that "
        f"see it a straight {move} gets {reach:.1f} m from it at most (the farthest reachable point, round a "
        f"corner, is {farthest:.1f} m away; the self-check plan moves in a straight line)",
        f"lower the distance to {fits:g} m or less, or give the area a straight run away from the target",
    )


def _names(grid: Grid, oid: str) -> tuple[str, bool]:
    """`id` (human name) of an object of the sight prisms, and whether it is all glass."""
    ks = [k for k, o in enumerate(grid.sight.owner) if o == oid]
    name = grid.sight.names[ks[0]] if ks else oid
    glass = bool(ks) and all(grid.sight.glass[k] for k in ks)
    return f"`{oid}` ({name})", glass


def face_cover(grid: Grid, focus: B.SceneObject, aim) -> tuple[str, float, bool] | None:
    """What stands right in front of the largest face of the changed parts: (object id, gap in m,
    whether it lies on the part's top).  A face against the object's own body (a door's back) is
    expected to be hidden: another object in front of a face is named first."""
    covers = []
    for i in np.argsort(-aim.areas, kind="stable"):
        n, p = aim.normals[i], aim.points[i]
        if aim.areas[i] < 0.2 * aim.areas.max() or n[2] < -0.7:  # a sliver of an edge; the bottom
            continue
        z = p[2] - FACE_OFFSET_M * n[2]  # on the face
        if n[2] > 0.7:  # the top: what rests on it
            ks = [
                int(k)
                for k in (
                    grid.sight.tree.query(shapely.Point(p[0], p[1])) if grid.sight.tree is not None else []
                )
                if grid.sight.owner[k] not in aim.skip
                and (grid.sight.owner[k], grid.sight.part[k]) not in aim.skip
                and z - 0.02 <= grid.sight.lo[k] <= z + FACE_REACH_M
                and grid.sight.polys[k].contains(shapely.Point(p[0], p[1]))
            ]
            if ks:
                k = min(ks, key=lambda k: grid.sight.lo[k])
                covers.append(
                    (
                        grid.sight.owner[k] == focus.id,
                        grid.sight.owner[k],
                        max(0.0, grid.sight.lo[k] - z),
                        True,
                    )
                )
            continue
        end = (p[0] + n[0] * FACE_REACH_M, p[1] + n[1] * FACE_REACH_M)
        hits = grid.sight.blockers((p[0], p[1]), p[2], end, p[2], aim.skip, glass=True)
        if hits:
            k = hits[0]
            gap = shapely.distance(grid.sight.polys[k], shapely.Point(p[0], p[1])) + FACE_OFFSET_M
            covers.append((grid.sight.owner[k] == focus.id, grid.sight.owner[k], float(gap), False))
    if not covers:
        return None
    _, oid, gap, top = min(covers, key=lambda c: c[0])  # stable: the largest face another object covers
    return oid, float(gap), top


def unseen(
    grid: Grid,
    low: Lowered,
    aim,
    box,
    eyes: list[tuple[float, float]],
    lo: float,
    hi: float,
    reach: bool = False,
) -> PlanError:
    """No candidate viewpoint sees the target: a changed part faces a solid, or something hides the
    target from every viewpoint (the one met most often on the sight lines of the cheapest ones)."""
    focus = low.focus
    if aim.normals is not None and focus is not None:
        parts = ", ".join(f"`{p}`" for p in aim.parts)
        what = f"the changed surface (part {parts} of `{focus.id}`)"
        cover = face_cover(grid, focus, aim)
        if cover is not None:
            oid, gap, top = cover
            name, _ = _names(grid, oid)
            own = oid == focus.id
            if top:
                where = (
                    f"lies under another part of `{focus.id}`"
                    if own
                    else f"is covered by {name} resting on it"
                )
            else:
                where = f"faces {'its own body' if own else name} {gap:.2f} m away"
            return PlanError(
                f"{what} {where}: no reachable viewpoint sees it",
                f"change a part that shows, or move `{oid}` off it"
                if top and oid != focus.id
                else f"change a part that faces open space, or move or turn the {focus.name} so that the changed "
                "part faces the room",
            )
        return PlanError(
            f"no reachable viewpoint sees {what}: its faces are hidden or turned away from every reachable point",
            f"change a part that faces open space, or move or turn the {focus.name}",
        )
    tally: Counter = Counter()
    panes: Counter = Counter()
    for a in eyes[:40]:
        eye = EYE_M + grid.height_at(*a)
        for p in aim.points:
            hits = grid.sight.blockers(a, eye, p[:2], p[2], aim.skip, box, glass=reach)
            if hits:
                tally[grid.sight.owner[hits[0]]] += 1
                panes[grid.sight.owner[hits[0]]] += bool(grid.sight.glass[hits[0]])
    if reach and tally:
        oid, n = tally.most_common(1)[0]
        name, _ = _names(grid, oid)
        if panes[oid] * 2 > n:
            return PlanError(
                f"a glass pane, {name}, stands between the agent and {_what(focus)} at every reachable point "
                f"{lo:.1f}-{hi:.1f} m from it: the agent cannot reach through glass",
                "move the target out from behind the glass, or leave a way round the pane to it",
            )
        return PlanError(
            f"{name} stands between the agent and {_what(focus)} at every reachable point {lo:.1f}-{hi:.1f} m "
            "from it: the agent cannot reach it",
            "open a way to it (a door, a gap), or move the target where the agent can reach it",
        )
    if not tally:
        return PlanError(
            f"no reachable point {lo:.1f}-{hi:.1f} m from {_what(focus)} sees it",
            "the ground hides it from every reachable point: move the start, the target or the bounds",
        )
    oid, _ = tally.most_common(1)[0]
    name, _ = _names(grid, oid)
    seen_from = _cut_off_views(grid, aim, box, lo, hi)
    door = shut_door(grid) if seen_from else None
    if door is not None:
        return _door_error(grid, door, focus)
    if seen_from:
        return PlanError(
            f"the target cannot be reached: the points that see {_what(focus)} ({lo:.1f}-{hi:.1f} m from it) are "
            f"cut off from the start, and from the start's side {name} hides it",
            "obstacles cut the start off from the target; move the start or open a way",
        )
    return PlanError(
        f"{_what(focus)} is hidden from every reachable point {lo:.1f}-{hi:.1f} m from it, by {name} most often",
        "move the target or what hides it, or open a way to a point that sees it",
    )


def shut_door(grid: Grid) -> str | None:
    """A closed door that the agent could open and that stands between the cells the start reaches and
    walkable cells it does not (the plan walks as if it were a wall)."""
    for oid in sorted(grid.doors):
        fp = grid.solids.get(oid)
        if fp is None:
            continue
        x0, y0, x1, y1 = fp.buffer(2 * grid.cell).bounds
        j0, j1 = max(0, int((x0 - grid.x0) // grid.cell)), int((x1 - grid.x0) // grid.cell) + 1
        i0, i1 = max(0, int((y0 - grid.y0) // grid.cell)), int((y1 - grid.y0) // grid.cell) + 1
        reach, free = grid.reach[i0:i1, j0:j1], grid.free[i0:i1, j0:j1]
        if reach.any() and (free & ~reach).any():
            return oid
    return None


def _door_error(grid: Grid, oid: str, focus: B.SceneObject | None) -> PlanError:
    name, _ = _names(grid, oid)
    return PlanError(
        f"the target cannot be reached: the closed door {name} shuts the start off from {_what(focus)}; the "
        "agent may open it, but the self-check plan walks as if it were a wall",
        "let the door stand open (`open yes`, or `door … open yes` in a room), leave another way in, or start "
        "on the target's side of it",
    )


def _cut_off_views(grid: Grid, aim, box, lo: float, hi: float, tries: int = 60) -> bool:
    """Whether a walkable point the agent cannot get to from the start sees the target from the plan
    kind's distances (so what is wrong is the way there, not the view)."""
    ii, jj = np.nonzero(grid.free & ~grid.reach)
    if not len(ii):
        return False
    cx, cy = grid.x0 + (jj + 0.5) * grid.cell, grid.y0 + (ii + 0.5) * grid.cell
    dx = np.maximum.reduce([box[0] - cx, np.zeros_like(cx), cx - box[2]])
    dy = np.maximum.reduce([box[1] - cy, np.zeros_like(cy), cy - box[3]])
    edge = np.hypot(dx, dy)
    ks = np.flatnonzero((edge >= lo) & (edge <= hi))
    step = max(1, len(ks) // tries)
    return any(_seen(grid, (cx[k], cy[k]), aim, box) for k in ks[::step])


def out_of_reach(
    grid: Grid, low: Lowered, box, near: tuple[float, float], dist: float, kind: PlanKind
) -> PlanError:
    """No reachable point lies within the plan kind's distances: name what stands between the closest
    reachable point and the target (a glass pane: the agent cannot reach through glass)."""
    focus = low.focus
    centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    line = shapely.LineString([near, centre])
    skip = set(low.targets)
    between = []
    for oid, fp in grid.solids.items():
        if oid in skip or fp is None or not fp.intersects(line):
            continue
        between.append((fp.distance(shapely.Point(near)), oid))
    interact = kind.acts
    doing = "reach" if interact else "get near"
    door = shut_door(grid)
    if door is not None:
        return _door_error(grid, door, focus)
    if between:
        _, oid = min(between)
        name, glass = _names(grid, oid)
        if glass:
            return PlanError(
                f"a glass pane, {name}, stands between the agent and {_what(focus)}: the closest reachable point "
                f"is {dist:.1f} m from it, and the agent cannot {doing} through glass",
                "move the target out from behind the glass, or leave a way round the pane to it",
            )
        return PlanError(
            f"the target cannot be reached: {name} stands between the agent and {_what(focus)}; the closest "
            f"reachable point is {dist:.1f} m from it",
            "open a way past it (a door, a gap), move the start, or move the target",
        )
    return PlanError(
        f"the target cannot be reached: the closest reachable point is {dist:.1f} m from it",
        "the path from the start is blocked, or the target lies outside the bounds; "
        "move the start, the target or the bounds",
    )
