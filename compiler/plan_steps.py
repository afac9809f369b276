"""The exposing actions of a self-check plan: what the agent does at the viewpoint, per plan kind
(look, walk through, push, leave and come back, watch, step back, interact), after the walk there
(`plan.py`)."""

from __future__ import annotations

import math

from wac.bundle import model as B
from wac.bundle.actions import MAX_MOVE_M
from wac.compiler.anomalies import Lowered
from wac.compiler.validate import Grid
from wac.compiler.walk_room import WALK_PAST_M
from wac.errors import PlanError

# the turns from facing the target that a walk away from it tries, the first with room winning
LEAVE_HEADINGS = (180.0, 135.0, -135.0, 90.0, -90.0, 45.0, -45.0)


LEAVE_MARGIN_M = 0.5  # a walk away ends this far beyond `exit` (the runtime's 0.25 m hysteresis, and slack)


def _edge_at(box, x: float, y: float) -> float:
    return math.hypot(max(box[0] - x, 0.0, x - box[2]), max(box[1] - y, 0.0, y - box[3]))


def leave_walk(grid: Grid, pos, yaw: float, box, exit_m: float, edge: float) -> tuple[float, float, float]:
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


def _focus_box(low: Lowered, pos, yaw: float, dist: float):
    """The ground box of the plan's focus (its hinted point, `dist` ahead of `pos`, for none)."""
    o = low.focus
    if o is not None:
        return (o.aabb_min[0], o.aabb_min[1], o.aabb_max[0], o.aabb_max[1])
    h = math.radians(yaw)
    x, y = pos[0] + math.cos(h) * dist, pos[1] + math.sin(h) * dist
    return (x - 0.2, y - 0.2, x + 0.2, y + 0.2)


def _free_run(grid: Grid, pos: tuple[float, float], heading_deg: float, limit: float = 30.0) -> float:
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


def _period(low: Lowered) -> float:
    if low.trigger.period_s:
        return low.trigger.period_s
    periodic = B.SetFlicker | B.SetDayNight | B.SetAnimation
    return next((e.period_s for e in low.effects if isinstance(e, periodic) and e.period_s), 2.0)


def _exposing(
    kind: str, low: Lowered, name: str, dist: float, grid: Grid, pos, yaw: float, edge: float
) -> list[B.PlanStep]:
    """The actions that expose the anomaly; `dist` is to the target's centre, `edge` to its bounds
    (distance triggers measure to the bounds, horizontally)."""
    trig = low.trigger
    mark = lambda caption: B.PlanStep(action="mark", caption=caption)  # noqa: E731
    if kind in ("view", "view_side", "occluded_view", "view_through"):
        return [mark(f"View the {name} from about {dist:.1f} m.")]
    if kind == "walk_through":
        return [
            mark(f"Before moving, face the {name}."),
            B.PlanStep(
                action="move",
                args={
                    "distance_m": round(min(MAX_MOVE_M, dist + WALK_PAST_M[kind]), 2),
                    "direction": "forward",
                },
                caption=f"Walk forward through the {name}, with no turn or detour.",
            ),
            B.PlanStep(
                action="turn", args={"degrees": 135.0}, caption=f"Turn 135 deg to look back at the {name}."
            ),
        ]
    if kind == "walk_along":
        return [
            mark("Face the clear way ahead."),
            B.PlanStep(
                action="move",
                args={
                    "distance_m": round(min(MAX_MOVE_M, dist + WALK_PAST_M[kind]), 2),
                    "direction": "forward",
                },
                caption="Attempt to walk forward; compare the commanded and actual distance.",
            ),
        ]
    if kind == "push":
        return [
            mark(f"Before contact: the {name} at rest."),
            B.PlanStep(
                action="move",
                args={"distance_m": round(min(MAX_MOVE_M, dist + 0.5), 2), "direction": "forward"},
                caption=f"Walk into the {name}.",
            ),
            B.PlanStep(action="move", args={"distance_m": 1.5, "direction": "back"}, caption="Step back."),
            B.PlanStep(action="wait", args={"seconds": 2.0}, caption=f"Watch how the {name} settles."),
        ]
    if kind == "revisit":
        out = [mark(f"Before leaving: observe the {name} and its surroundings.")]
        if trig.kind == B.TriggerKind.leave and trig.exit_m:
            turn, walk, reach = leave_walk(grid, pos, yaw, _focus_box(low, pos, yaw, dist), trig.exit_m, edge)
            if not walk:
                raise PlanError(
                    f"there is no room to walk {trig.exit_m:g} m away from the {name}: a straight walk from the "
                    f"viewpoint gets {reach:.1f} m from it at most",
                    "lower the trigger's `exit` distance or widen the bounds",
                )
            out += [B.PlanStep(action="turn", args={"degrees": -turn}, caption="Turn away.")]
            out += _moves(walk, "forward", "Walk away from the area.")
            out += _moves(walk, "back", "Walk back to the viewpoint.")
            out += [B.PlanStep(action="turn", args={"degrees": turn}, caption="Face the place again.")]
            out.append(mark(f"After leaving and returning: inspect the {name}'s place again."))
            return out
        out.append(B.PlanStep(action="turn", args={"degrees": 180.0}, caption="Turn away."))
        if trig.kind == B.TriggerKind.after and trig.after_s:
            out += _waits(trig.after_s + 0.5, "Wait while looking elsewhere.")
        elif trig.kind == B.TriggerKind.revisit:
            out += _waits(max(2.0, (trig.away_s or 0.0) + 0.5), "Wait while looking elsewhere.")
        else:
            out += _waits(2.0)
        out.append(B.PlanStep(action="turn", args={"degrees": 180.0}, caption="Turn back."))
        out.append(mark(f"After looking away and back: inspect the {name}'s place again."))
        return out
    if kind == "watch":
        half = max(0.5, _period(low) / 2)  # a state toggling every period shows two states in three marks
        return (
            [mark(f"Observe the {name}.")]
            + _waits(half, "Wait and watch.")
            + [mark(f"Observe the {name} again.")]
            + _waits(half, "Wait and watch.")
            + [mark(f"Observe the {name} a third time.")]
        )
    if kind == "near_far":
        threshold = trig.distance_m if trig.distance_m else 6.0
        back = max(1.0, threshold + 1.0 - edge)
        room = _free_run(grid, pos, yaw + 180.0)
        if room < back:
            raise PlanError(
                f"there is no room to step back beyond {threshold:g} m from the target "
                f"(only {room:.1f} m behind the nearest good viewpoint)",
                "use a shorter distance in the trigger, or give the area more room",
            )
        return (
            [mark(f"Observe the {name} at the near viewpoint.")]
            + _moves(back, "back", "From farther away, compare it with fixed references.")
            + [mark(f"Observe the {name} from farther away.")]
            + _moves(back, "forward", "Restore the near viewpoint.")
            + [mark(f"Observe the {name} near again.")]
        )
    if kind == "interact_walk":
        open_time = low.focus.open_time_s if low.focus is not None else 1.0
        return [
            mark(f"Before interacting: face the closed {name}."),
            B.PlanStep(action="interact", caption=f"Open the {name}."),
            B.PlanStep(
                action="wait",
                args={"seconds": round(min(5.0, max(0.5, open_time + 0.5)), 1)},
                caption=f"The {name} after its opening time.",
            ),
            B.PlanStep(
                action="move",
                args={
                    "distance_m": round(min(MAX_MOVE_M, dist + WALK_PAST_M[kind]), 2),
                    "direction": "forward",
                },
                caption="Walk forward through the doorway; compare the commanded and actual distance.",
            ),
        ]
    if kind == "interact_blocked":
        return [
            mark(f"Face the {name} with the obstacle in between."),
            B.PlanStep(action="interact", caption=f"Interact with the {name} through the obstacle."),
            B.PlanStep(action="wait", args={"seconds": 2.0}, caption="Watch for a response."),
        ]
    if kind == "view_sides":
        return [
            mark(f"View the {name} from this side."),
            B.PlanStep(
                action="move",
                args={"distance_m": 1.0, "direction": "back"},
                caption=f"Step back and view the {name} again.",
            ),
        ]
    if kind == "interact":
        wait = 3.0
        if low.hints.respond_after_s:  # a mechanism that answers late (autoclose, delay): wait for it
            wait = min(5.0, low.hints.respond_after_s + 1.5)
        return [
            mark(f"Before interacting: the {name}."),
            B.PlanStep(action="interact", caption=f"Interact with the {name}."),
            B.PlanStep(
                action="wait", args={"seconds": round(wait, 1)}, caption="Wait and watch the response."
            ),
        ]
    raise ValueError(f"plan kind {kind!r} has no exposing actions")  # PLAN_KINDS and this function disagree
