"""Pass 7c, start view: W542 when the start pose already covers an anomaly's target, W543 when one
turn from the start would.

A task whose target is in view before the auditor acts measures nothing about exploring: the
paper's geometric coverage (App. E, `wac.bundle.coverage`) counts it as covered at frame a0, and
every explorer, blind or not, gets it for free.  The test is App. E's own: the target's point
within the scene's coverage limit and inside the view cone of the start pose (no occlusion test,
as in the metric).  In a multi-anomaly task only the anchor is checked: the extras are drawn over
the whole scene (§6.2, `derive.py`), and screening them by the start view would skew the draws
towards far objects.

The warning suggests a start that does not cover it: the reachable cell nearest the current start
by walking (so the task changes least) that lies beyond the coverage limit of the target, with
room around it, facing its longest free run, and from which the self-check plan still fits the
budget.  Where the area has no such cell, it suggests turning the start away.

A start facing away from a target within the limit is hardly better: the first turns of any
explorer (a look-around, a blind sweep's) cover it.  W543 flags a target within the coverage limit
of the start, whatever the heading, where the area has a place beyond the limit from which the
self-check plan still fits the budget; in an area too small for one (a small house) the heading is
all a task can hide, and W542 checks it.  Demonstration tasks (`example yes`) show their anomaly on
purpose and are not checked.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.ndimage import binary_erosion
from scipy.sparse.csgraph import dijkstra

from wac.bundle import model as B
from wac.bundle.coverage import HALF_HFOV_DEG, anomaly_target, coverage_limit_m, covers
from wac.compiler.diagnostics import Collector
from wac.compiler.honesty import task_name_span
from wac.compiler.lower import Lowered3
from wac.compiler.plan import PlanError, _free_run, _graph, make_plan
from wac.compiler.validate import Grid

MARGIN_M = 1.0  # a suggested start lies this much beyond the coverage limit of every target
ROOM_CELLS = 2  # ...with this many reachable cells around it on every side
GRID_STEP_M = 0.5  # suggested coordinates are rounded to this
HEADINGS = tuple(range(0, 360, 45))
CONE_MARGIN_DEG = 15.0  # a suggested heading keeps a target within the limit this far outside the cone
TRIES = 12  # candidates whose self-check plan is tried against the budget


def check_start_view(task, built, out: Lowered3, lowered, grid: Grid, diag: Collector, memo=None) -> None:
    """W542 when the start pose covers the anchor's target, W543 when one turn would and the area has
    a start beyond the limit (demonstrations, `example yes`, show their anomaly on purpose and are
    not checked)."""
    if (built.task_settings or {}).get("example", {}).get("flag"):
        return
    t = out.task
    expl = t.exploration
    limit = coverage_limit_m(t.scene)
    p = anomaly_target(t, 0, out.plan).point
    if p is None:
        return
    pose = _pose(expl, grid, *expl.start.position, expl.start.yaw_deg)
    dist = math.hypot(p[0] - pose["x"], p[1] - pose["y"])
    bearing = math.degrees(math.atan2(p[1] - pose["y"], p[0] - pose["x"]))
    name = ", ".join(f"`{x}`" for x in t.anomalies[0].targets) or "its place"
    what = "the target" if len(t.anomalies) == 1 else "the anchor's target"
    span = getattr((built.task_settings or {}).get("start"), "span", None) or task_name_span(task)
    if covers(pose, p, expl.eye_height_m, limit):
        off = abs((bearing - pose["yaw_deg"] + 180) % 360 - 180)
        diag.warn(
            "W542",
            f"task `{t.id}` starts with {what} ({name}) in view: {dist:.1f} m ahead, {off:.0f} deg off the "
            f"view direction, inside the coverage limit ({limit:g} m, {HALF_HFOV_DEG:.0f} deg either side)",
            span,
            suggest_start(t, lowered[0], grid, [p], limit, memo),
        )
    elif covers({**pose, "yaw_deg": bearing}, p, expl.eye_height_m, limit):
        hint = suggest_start(t, lowered[0], grid, [p], limit, memo, far_only=True)
        if hint is not None:
            diag.warn(
                "W543",
                f"task `{t.id}` starts within the coverage limit of {what} ({name}): {dist:.1f} m away "
                f"({limit:g} m limit), so one turn from the start shows it to any explorer",
                span,
                hint,
            )


def _pose(expl: B.Exploration, grid: Grid, x: float, y: float, yaw: float) -> dict:
    return {"x": x, "y": y, "z": grid.height_at(x, y), "yaw_deg": yaw, "pitch_deg": expl.start.pitch_deg}


def suggest_start(
    t: B.CompiledTask, anchor, grid: Grid, points, limit: float, memo=None, far_only: bool = False
) -> str | None:
    """The hint of W542 and W543: a start pose that covers none of `points`, as a `start` statement:
    the nearest place (by walking) beyond the coverage limit, else, in an area too small for one, the
    place farthest from the target, facing away from it.  With `far_only`, None unless a place beyond
    the limit fits the budget."""
    expl = t.exploration
    w = grid.reach.shape[1]
    roomy = binary_erosion(grid.reach, np.ones((2 * ROOM_CELLS + 1,) * 2, dtype=bool), border_value=0)
    ii, jj = np.nonzero(roomy if roomy.any() else grid.reach)
    xs, ys = grid.x0 + (jj + 0.5) * grid.cell, grid.y0 + (ii + 0.5) * grid.cell
    gap = np.min([np.hypot(xs - p[0], ys - p[1]) for p in points], axis=0)
    walk = dijkstra(_graph(grid), indices=grid.start[0] * w + grid.start[1])[ii * w + jj]
    far = gap >= limit + MARGIN_M
    if far_only and not far.any():
        return None
    if far.any():
        order = [k for k in np.lexsort((jj, ii, walk)) if far[k]]
    else:
        order = list(np.lexsort((jj, ii, walk, -np.round(gap, 1))))
    tried: set[tuple[float, float]] = set()
    for k in order:
        if not math.isfinite(walk[k]) or len(tried) >= TRIES:
            break
        x, y = _rounded(grid, *grid.centre(int(ii[k]), int(jj[k])))
        if (x, y) in tried:
            continue
        tried.add((x, y))
        yaw = _heading(t, grid, (x, y), points, limit)
        if yaw is None or not _fits(t, anchor, grid, x, y, yaw, memo):
            continue
        e = f"`start at ({x:g}, {y:g}) yaw {yaw:g} deg` in the task"
        away = min(math.hypot(x - p[0], y - p[1]) for p in points)
        if far.any():
            return (
                f"start where the target is out of view, e.g. {e}: {away:.1f} m from it, "
                f"{walk[k] * grid.cell:.1f} m walk from the current start"
            )
        return (
            f"start where the target is out of view: no reachable place is {limit + MARGIN_M:g} m or more from it, so "
            f"start as far from it as the area allows, facing away, e.g. {e}: {away:.1f} m from it"
        )
    if far_only:
        return None
    p = points[0]
    sx, sy = expl.start.position
    turned = _round_heading(math.degrees(math.atan2(sy - p[1], sx - p[0])))
    return f"start where the target is out of view: turn the start away, e.g. `start at ({sx:g}, {sy:g}) yaw {turned:g} deg`"


def _rounded(grid: Grid, x: float, y: float) -> tuple[float, float]:
    """The nearest point on the `GRID_STEP_M` lattice that stands on a reachable cell, else (x, y)."""
    rx, ry = round(x / GRID_STEP_M) * GRID_STEP_M, round(y / GRID_STEP_M) * GRID_STEP_M
    i, j = grid.cell_of(rx, ry)
    if 0 <= i < grid.reach.shape[0] and 0 <= j < grid.reach.shape[1] and grid.reach[i, j]:
        return float(rx), float(ry)
    return round(x, 2), round(y, 2)


def _round_heading(deg: float) -> float:
    return float(round(deg / 45.0) * 45 % 360)


def _heading(t: B.CompiledTask, grid: Grid, pos: tuple[float, float], points, limit: float) -> float | None:
    """The 45-deg heading with the longest free run from `pos` whose view covers none of `points`
    (ties: the one nearest the current start's), or None when every heading covers one."""
    expl = t.exploration
    best = None
    for a in HEADINGS:
        pose = _pose(expl, grid, *pos, a)
        if any(covers(pose, p, expl.eye_height_m, limit) or _near_cone(pos, a, p, limit) for p in points):
            continue
        key = (-round(_free_run(grid, pos, a, 20.0), 1), abs((a - expl.start.yaw_deg + 180) % 360 - 180), a)
        best = min(best, key) if best else key
    return None if best is None else float(best[2])


def _near_cone(pos, heading: float, p, limit: float) -> bool:
    """Within the limit and less than `CONE_MARGIN_DEG` outside the view cone: one small turn shows it."""
    if math.hypot(p[0] - pos[0], p[1] - pos[1]) > limit:
        return False
    bearing = math.degrees(math.atan2(p[1] - pos[1], p[0] - pos[0]))
    return abs((bearing - heading + 180) % 360 - 180) < HALF_HFOV_DEG + CONE_MARGIN_DEG


def _fits(t: B.CompiledTask, anchor, grid: Grid, x: float, y: float, yaw: float, memo) -> bool:
    """Whether the self-check plan from this start reaches the exposing view within the budget."""
    expl = t.exploration
    moved = expl.model_copy(
        update={"start": expl.start.model_copy(update={"position": (x, y), "yaw_deg": yaw})}
    )
    at = grid.cell_of(x, y)
    try:
        plan = make_plan(t.id, anchor, moved, dataclasses.replace(grid, start=at), memo)
    except PlanError:
        return False
    return plan.actions_needed <= expl.budget_actions
