"""Room for the self-check walks that go straight through their target.

A ghost door, an invisible wall, a solid without collision, a hole in the floor: their plans walk
through (or across) the target and on, and one of the two worlds must let that walk through.  The
planner (`plan.py`) stands only where the walk has room beyond the target in the clean scene, and
walks through a long, thin target face on; where no viewpoint has room, the task is E534.  The
judges read the same walk with the thresholds of `wac.bundle.actions` (`PASSED_SLACK_M`,
`CROSSED_SHARE`).
"""

from __future__ import annotations

import math

import numpy as np
import shapely

from wac.bundle import model as B
from wac.bundle.actions import CROSSED_SHARE, MAX_MOVE_M, PASSED_SLACK_M
from wac.compiler.plan_kinds import PlanKind
from wac.compiler.validate import Grid, footprint

# a plan kind that walks straight through (or along a path through) the target goes its
# `walk_past_m` past the target's centre (plan_kinds.py); one side of the differential lets the agent
# through, so the far side must have walkable room in the clean scene (`walk_blocked`), when the
# observable is read from that walk (`ObservableKind.walked`; a jammed door's evidence is the door)
CROSSING_M = 0.05  # a solid this close to a walk's line lies across it and stops the walk


def crossing(
    grid: Grid, expl: B.Exploration, o: B.SceneObject, centre, box, kind: PlanKind, others, dist
) -> tuple:
    """Where to walk through the long, thin target `o`: its centre if a walk across it there has
    room, else the point nearest the centre along its length (steps of 0.4 m, keeping the agent's
    radius from its ends) where one has, from either side; the centre when none has (the planner
    then says why).  A sign fixed to the middle of a fence keeps its collision: walk through the
    fence beside it."""
    face = across(o)
    if face is None:
        return centre
    fp = footprint(o)
    long = (-face[1], face[0])
    half = max(
        abs((x - centre[0]) * long[0] + (y - centre[1]) * long[1]) for x, y in shapely.get_coordinates(fp)
    )
    back = (dist[0] + dist[1]) / 2 + 0.5  # a viewpoint in the middle of the plan kind's distances

    def room(p, clear: float) -> bool:
        return any(
            not walk_blocked(
                grid,
                expl,
                (p[0] + sd * face[0] * back, p[1] + sd * face[1] * back),
                p,
                box,
                kind,
                others,
                clear,
            )
            for sd in (1.0, -1.0)
        )

    if room(centre, CROSSING_M):
        return centre
    offsets = np.arange(0.4, max(0.0, half - expl.agent_radius_m - 0.1) + 1e-9, 0.4)
    points = [
        (centre[0] + long[0] * v, centre[1] + long[1] * v)
        for v in sorted({*offsets, *-offsets}, key=lambda v: (abs(v), v))
    ]
    for clear in (expl.agent_radius_m, CROSSING_M):  # clear of what stands beside the way, if it can be
        for p in points:
            if room(p, clear):
                return float(p[0]), float(p[1])
    return centre


def across(o: B.SceneObject) -> tuple[float, float] | None:
    """The horizontal direction straight across a long, thin object's footprint (1.5 times longer
    than wide, like an invisible wall's face), None for a compact one: a walk through a row of
    ticket gates crosses the row, whichever way the gate's own axes run."""
    fp = footprint(o)
    if fp is None:
        return None
    ring = np.asarray(shapely.minimum_rotated_rectangle(fp).exterior.coords)[:4]
    a, b = ring[1] - ring[0], ring[2] - ring[1]
    long, short = (a, b) if np.hypot(*a) >= np.hypot(*b) else (b, a)
    if np.hypot(*long) < 1.5 * np.hypot(*short):
        return None
    n = short / np.hypot(*short)
    return float(n[0]), float(n[1])


def walk_blocked(
    grid: Grid, expl: B.Exploration, pos, target, box, kind: PlanKind, others, clear: float = CROSSING_M
) -> str:
    """Why a walk of plan kind `kind` from `pos` straight through `target` cannot show its anomaly
    ("" if it can); `others`: the footprints of the fixed solids but the target, and their index.

    The walk goes the kind's `walk_past_m` past the target's centre.  Where the clean world lets it
    through (an opened door, a path across an invisible wall) it must cover that length but the last
    `PASSED_SLACK_M`; where it walks into a solid whose collision is removed (walk_through) it must get
    `CROSSED_SHARE` of it, or stop inside the target (a wardrobe against a wall).  It stops where it
    leaves the exploration area, or a radius short of a solid across its line, within `clear` of it
    (one farther beside the line is brushed past); stopping sooner is a plan that proves nothing."""
    solids, tree = others
    r = expl.agent_radius_m
    d = math.dist(pos, target)
    length = min(MAX_MOVE_M, d + (kind.walk_past_m or 0.0))
    need = length * CROSSED_SHARE if kind.crosses else length - PASSED_SLACK_M
    ux, uy = (target[0] - pos[0]) / d, (target[1] - pos[1]) / d
    s = np.arange(0.0, need + r, grid.cell / 4)
    xs, ys = pos[0] + ux * s, pos[1] + uy * s
    stop, why = need, ""
    out = ~shapely.contains_xy(shapely.Polygon(expl.bounds), xs, ys)
    if out.any() and s[np.argmax(out)] < stop:
        stop, why = float(s[np.argmax(out)]), "leaves the exploration area"
    pts = shapely.points(xs, ys)
    line = shapely.LineString([pos, (xs[-1], ys[-1])])
    for k in tree.query(line, predicate="dwithin", distance=clear):
        hit = shapely.dwithin(solids[k], pts, clear)
        if hit.any() and s[np.argmax(hit)] - r < stop:
            stop, why = max(0.0, float(s[np.argmax(hit)]) - r), "runs into a solid"
    if not why:
        return ""
    ex, ey = pos[0] + ux * stop, pos[1] + uy * stop
    if kind.crosses and box[0] + 0.05 < ex < box[2] - 0.05 and box[1] + 0.05 < ey < box[3] - 0.05:
        return ""  # it stops inside the target: evidence too
    return f"of {length:.1f} m {why} and stops {stop:.1f} m from the viewpoint, at ({ex:.1f}, {ey:.1f})"
