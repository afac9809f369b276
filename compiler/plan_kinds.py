"""Self-check plan kinds as units: where the viewpoint lies and what the agent does there.

A plan kind (`taxonomy.registry.PLAN_KINDS`, named by a category's `plan:` or an operator unit's
`plan=`) is one `PlanKind`: its viewing distances, how its view is tested, whether its evidence
needs the agent's reach or a walk past the target, and its exposing actions (`expose`).  The
planner (`plan.py`), the walk-room checks (`walk_room.py`), the view band (`views.py`) and the
planner's messages (`view_why.py`) read these properties; none of them tests a kind's name.
`KINDS` is complete at import: a kind of the taxonomy without a unit, or a unit the taxonomy does
not know, fails there.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from wac.bundle import model as B
from wac.bundle.actions import MAX_MOVE_M
from wac.compiler.anomalies import Lowered
from wac.compiler.plan_steps import _free_run, _moves, _waits
from wac.compiler.triggers import UNITS as TRIGGER_UNITS
from wac.compiler.triggers import Away, switch_distance, turn_away_and_back
from wac.compiler.validate import Grid
from wac.errors import PlanError
from wac.taxonomy.registry import PLAN_KINDS


@dataclass(frozen=True, slots=True)
class At:
    """The viewpoint the plan reached: `dist` to the target's centre, `edge` to its bounds (distance
    triggers measure to the bounds, horizontally), `yaw` facing the target."""

    low: Lowered
    name: str  # what the captions call the target ("spot" for a place)
    dist: float
    grid: Grid
    pos: tuple[float, float]
    yaw: float
    edge: float


Expose = Callable[["PlanKind", At], list[B.PlanStep]]


@dataclass(frozen=True, slots=True)
class PlanKind:
    name: str
    near_m: float  # closest viewing distance from the target's edge
    far_m: float  # farthest
    expose: Expose  # the actions at the viewpoint that expose the anomaly
    # how a viewpoint's view is tested, in order of preference: "seen" (the whole target, then a clear
    # line, then through glass unless `reach`), "blocked" (a solid in between), "anywhere", "hidden"
    # (the target hidden behind a solid, then anywhere)
    views: Literal["seen", "blocked", "anywhere", "hidden"] = "seen"
    reach: bool = False  # the evidence needs the agent's reach (crosshair, walk into it): glass stops it
    acts: bool = False  # the agent acts on the target (interacts or pushes): messages say "reach"
    walk_past_m: float | None = None  # it walks straight through or along the target, this far past
    crosses: bool = False  # that walk must cross the target's box (not just pass beside it)
    face_on: bool = False  # viewed and walked face on, from either side (a fence, a door's leaf)
    toward_normal: bool = False  # viewed from the side its effect's `normal` points to
    from_afar: bool = False  # seen from some way off: a small target nearer, a hidden one from afar
    scene_wide: bool = False  # with no target nor focus point: done where the agent starts
    steps_back: bool = False  # the viewpoint needs room to step back beyond the trigger's distance
    observe_at_start: bool = False  # a target in view at the start is observed from there
    # what a plan that finds no viewpoint says, when the kind has its own reason (message, hint)
    none_found: tuple[str, str] | None = None

    @property
    def distances(self) -> tuple[float, float]:
        return (self.near_m, self.far_m)


KINDS: dict[str, PlanKind] = {}


def _focus_box(low: Lowered, pos, yaw: float, dist: float):
    """The ground box of the plan's focus (its hinted point, `dist` ahead of `pos`, for none)."""
    o = low.focus
    if o is not None:
        return (o.aabb_min[0], o.aabb_min[1], o.aabb_max[0], o.aabb_max[1])
    h = math.radians(yaw)
    x, y = pos[0] + math.cos(h) * dist, pos[1] + math.sin(h) * dist
    return (x - 0.2, y - 0.2, x + 0.2, y + 0.2)


def _period(low: Lowered) -> float:
    if isinstance(low.trigger, B.EveryTrigger) and low.trigger.period_s:
        return low.trigger.period_s
    periodic = B.SetFlicker | B.SetDayNight | B.SetAnimation
    return next((e.period_s for e in low.effects if isinstance(e, periodic) and e.period_s), 2.0)


def plan_kind_unit(name: str, near_m: float, far_m: float, **props) -> Callable[[Expose], Expose]:
    """Register the decorated function as the exposing actions of plan kind `name`."""

    def register(fn: Expose) -> Expose:
        if name in KINDS:
            raise TypeError(f"two units for plan kind {name!r}")
        KINDS[name] = PlanKind(name, near_m, far_m, fn, **props)
        return fn

    return register


def _mark(caption: str) -> B.PlanStep:
    return B.PlanStep(action="mark", caption=caption)


def _walk(kind: PlanKind, at: At, caption: str) -> B.PlanStep:
    length = round(min(MAX_MOVE_M, at.dist + (kind.walk_past_m or 0.0)), 2)
    return B.PlanStep(action="move", args={"distance_m": length, "direction": "forward"}, caption=caption)


def _view(kind: PlanKind, at: At) -> list[B.PlanStep]:
    return [_mark(f"View the {at.name} from about {at.dist:.1f} m.")]


plan_kind_unit("view", 1.5, 4.0, from_afar=True)(_view)
plan_kind_unit("view_side", 1.5, 3.5, from_afar=True)(_view)
plan_kind_unit("occluded_view", 2.0, 5.0, views="anywhere")(_view)
plan_kind_unit("view_through", 2.0, 5.0, views="hidden")(_view)


@plan_kind_unit("walk_through", 1.2, 2.0, walk_past_m=1.5, crosses=True, face_on=True)
def _walk_through(kind: PlanKind, at: At) -> list[B.PlanStep]:
    return [
        _mark(f"Before moving, face the {at.name}."),
        _walk(kind, at, f"Walk forward through the {at.name}, with no turn or detour."),
        B.PlanStep(
            action="turn", args={"degrees": 135.0}, caption=f"Turn 135 deg to look back at the {at.name}."
        ),
    ]


@plan_kind_unit("walk_along", 2.0, 3.0, walk_past_m=2.0)
def _walk_along(kind: PlanKind, at: At) -> list[B.PlanStep]:
    return [
        _mark("Face the clear way ahead."),
        _walk(kind, at, "Attempt to walk forward; compare the commanded and actual distance."),
    ]


@plan_kind_unit("push", 1.0, 1.6, reach=True, acts=True)
def _push(kind: PlanKind, at: At) -> list[B.PlanStep]:
    return [
        _mark(f"Before contact: the {at.name} at rest."),
        B.PlanStep(
            action="move",
            args={"distance_m": round(min(MAX_MOVE_M, at.dist + 0.5), 2), "direction": "forward"},
            caption=f"Walk into the {at.name}.",
        ),
        B.PlanStep(action="move", args={"distance_m": 1.5, "direction": "back"}, caption="Step back."),
        B.PlanStep(action="wait", args={"seconds": 2.0}, caption=f"Watch how the {at.name} settles."),
    ]


@plan_kind_unit("revisit", 2.0, 4.5, from_afar=True, observe_at_start=True)
def _revisit(kind: PlanKind, at: At) -> list[B.PlanStep]:
    """Observe, make the trigger fire the way its unit says (look away and wait, walk away and back),
    observe again."""
    trig, name = at.low.trigger, at.name
    out = [_mark(f"Before leaving: observe the {name} and its surroundings.")]
    unit = TRIGGER_UNITS.get(trig.kind.value)
    if unit is None or unit.away is None:
        return out + turn_away_and_back(_waits(2.0), name)
    box = _focus_box(at.low, at.pos, at.yaw, at.dist)
    return out + unit.away(trig, Away(at.grid, at.pos, at.yaw, box, at.edge, name))


@plan_kind_unit("watch", 2.0, 5.0, from_afar=True, scene_wide=True)
def _watch(kind: PlanKind, at: At) -> list[B.PlanStep]:
    half = max(0.5, _period(at.low) / 2)  # a state toggling every period shows two states in three marks
    return (
        [_mark(f"Observe the {at.name}.")]
        + _waits(half, "Wait and watch.")
        + [_mark(f"Observe the {at.name} again.")]
        + _waits(half, "Wait and watch.")
        + [_mark(f"Observe the {at.name} a third time.")]
    )


@plan_kind_unit("near_far", 1.5, 2.5, steps_back=True)
def _near_far(kind: PlanKind, at: At) -> list[B.PlanStep]:
    trig = at.low.trigger
    threshold = switch_distance(trig)
    back = max(1.0, threshold + 1.0 - at.edge)
    room = _free_run(at.grid, at.pos, at.yaw + 180.0)
    if room < back:
        raise PlanError(
            f"there is no room to step back beyond {threshold:g} m from the target "
            f"(only {room:.1f} m behind the nearest good viewpoint)",
            "use a shorter distance in the trigger, or give the area more room",
        )
    return (
        [_mark(f"Observe the {at.name} at the near viewpoint.")]
        + _moves(back, "back", "From farther away, compare it with fixed references.")
        + [_mark(f"Observe the {at.name} from farther away.")]
        + _moves(back, "forward", "Restore the near viewpoint.")
        + [_mark(f"Observe the {at.name} near again.")]
    )


@plan_kind_unit("interact_walk", 0.9, 1.5, reach=True, acts=True, walk_past_m=1.5, face_on=True)
def _interact_walk(kind: PlanKind, at: At) -> list[B.PlanStep]:
    open_time = at.low.focus.open_time_s if at.low.focus is not None else 1.0
    return [
        _mark(f"Before interacting: face the closed {at.name}."),
        B.PlanStep(action="interact", caption=f"Open the {at.name}."),
        B.PlanStep(
            action="wait",
            args={"seconds": round(min(5.0, max(0.5, open_time + 0.5)), 1)},
            caption=f"The {at.name} after its opening time.",
        ),
        _walk(kind, at, "Walk forward through the doorway; compare the commanded and actual distance."),
    ]


@plan_kind_unit(
    "interact_blocked",
    0.8,
    1.8,
    views="blocked",
    acts=True,
    none_found=(
        "no reachable point within reach of the target has an obstacle between it and the target",
        "interact_through needs a wall or other solid between the agent and the target",
    ),
)
def _interact_blocked(kind: PlanKind, at: At) -> list[B.PlanStep]:
    return [
        _mark(f"Face the {at.name} with the obstacle in between."),
        B.PlanStep(action="interact", caption=f"Interact with the {at.name} through the obstacle."),
        B.PlanStep(action="wait", args={"seconds": 2.0}, caption="Watch for a response."),
    ]


@plan_kind_unit("view_sides", 1.5, 4.0, from_afar=True, toward_normal=True)
def _view_sides(kind: PlanKind, at: At) -> list[B.PlanStep]:
    return [
        _mark(f"View the {at.name} from this side."),
        B.PlanStep(
            action="move",
            args={"distance_m": 1.0, "direction": "back"},
            caption=f"Step back and view the {at.name} again.",
        ),
    ]


@plan_kind_unit("interact", 0.8, 1.4, reach=True, acts=True)
def _interact(kind: PlanKind, at: At) -> list[B.PlanStep]:
    wait = 3.0
    if at.low.hints.respond_after_s:  # a mechanism that answers late (autoclose, delay): wait for it
        wait = min(5.0, at.low.hints.respond_after_s + 1.5)
    return [
        _mark(f"Before interacting: the {at.name}."),
        B.PlanStep(action="interact", caption=f"Interact with the {at.name}."),
        B.PlanStep(action="wait", args={"seconds": round(wait, 1)}, caption="Wait and watch the response."),
    ]


if set(KINDS) != set(PLAN_KINDS):  # the taxonomy's plan kinds and these units are one list
    raise ImportError(f"plan kinds without a unit or unknown to the taxonomy: {set(KINDS) ^ set(PLAN_KINDS)}")
