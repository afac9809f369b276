"""Building blocks of a self-check plan's actions: moves and waits in the auditor's step sizes, the
free run along a heading, and the walk away of a `leave` trigger (`plan_kinds.py` composes them into
each plan kind's exposing actions, `triggers.py` into a trigger's way of firing).  A `grid` is the
compiler's walkable grid (`validate.Grid`); this module imports nothing of the compiler, so that the
trigger units, which the syntax pass reads, can use it."""

from __future__ import annotations

import math

from wac.bundle import model as B
from wac.bundle.actions import MAX_MOVE_M

# the turns from facing the target that a walk away from it tries, the first with room winning
LEAVE_HEADINGS = (180.0, 135.0, -135.0, 90.0, -90.0, 45.0, -45.0)


LEAVE_MARGIN_M = 0.5  # a walk away ends this far beyond `exit` (the runtime's 0.25 m hysteresis, and slack)


def _edge_at(box, x: float, y: float) -> float:
    return math.hypot(max(box[0] - x, 0.0, x - box[2]), max(box[1] - y, 0.0, y - box[3]))


def leave_walk(grid, pos, yaw: float, box, exit_m: float, edge: float) -> tuple[float, float, float]:
    """How a `leave` plan walks away from the viewpoint `pos` (facing the target at heading `yaw`):
    (turn from facing it, walk length, how far from the target's box it gets).  Of the headings
    `LEAVE_HEADINGS`, the one with the longest free run along which a straight walk ends
    `LEAVE_MARGIN_M` beyond `exit_m` of the box, the walk `exit_m` + 1 - `edge` or longer (round a
    corner a walk that long may end nearer); a walk of 0 when none does, with the heading that gets
    farthest."""
    need = max(0.3, exit_m + 1.0 - edge)
    best: tuple[float, float, float] | None = None  # (run, turn, walk) of the longest run that leaves
    farthest = (0.0, LEAVE_HEADINGS[0])
    for t in LEAVE_HEADINGS:
        run = _free_run(grid, pos, yaw + t)
        ux, uy = math.cos(math.radians(yaw + t)), math.sin(math.radians(yaw + t))
        farthest = max(farthest, (_edge_at(box, pos[0] + ux * run, pos[1] + uy * run), t))
        walk = need
        while (
            walk <= run + 1e-9
            and _edge_at(box, pos[0] + ux * walk, pos[1] + uy * walk) < exit_m + LEAVE_MARGIN_M
        ):
            walk += 0.1
        if walk <= run + 1e-9 and (best is None or run > best[0]):
            best = (run, t, walk)
    if best is None:
        return farthest[1], 0.0, farthest[0]
    return best[1], best[2], exit_m + LEAVE_MARGIN_M


def _free_run(grid, pos: tuple[float, float], heading_deg: float, limit: float = 30.0) -> float:
    """How far the agent can walk from `pos` along a heading over reachable cells."""
    h = math.radians(heading_deg)
    d = 0.0
    while d < limit:
        x, y = pos[0] + math.cos(h) * (d + 0.1), pos[1] + math.sin(h) * (d + 0.1)
        i, j = grid.cell_of(x, y)
        if not (0 <= i < grid.reach.shape[0] and 0 <= j < grid.reach.shape[1]) or not grid.reach[i, j]:
            break
        d += 0.1
    return max(0.0, d - 0.3)  # keep clear of whatever stops the run


def _moves(distance: float, direction: str, caption: str = "") -> list[B.PlanStep]:
    out = []
    left = distance
    while left > 1e-6:
        m = min(MAX_MOVE_M, left)
        out.append(
            B.PlanStep(action="move", args={"distance_m": round(max(0.3, m), 2), "direction": direction})
        )
        left -= m
    if out and caption:
        out[-1] = out[-1].model_copy(update={"caption": caption})
    return out


def _waits(seconds: float, caption: str = "") -> list[B.PlanStep]:
    out = []
    left = seconds
    while left > 1e-6:
        w = min(5.0, left)
        out.append(B.PlanStep(action="wait", args={"seconds": round(max(0.5, w), 1)}))
        left -= w
    if out and caption:
        out[-1] = out[-1].model_copy(update={"caption": caption})
    return out
