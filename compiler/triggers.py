"""Trigger units: everything the compiler knows of one trigger kind, in one place.

A `TriggerUnit` holds a kind's syntax (its clauses, its argument, its leading form `on_…`), its
trigger class (which operators accept it, `taxonomy/operators.yaml`'s `triggers:`), its lowering to
the bundle's `Trigger` with the errors only it can make (E604, E605), its rubric words (`phrase`:
when the change happens; `action`: what an inspector does to see it), the self-check plan kind
that makes it fire and how that plan does it (`band`, `away`, `room`, `arms_by_sight`).  The
runtime's side of a kind is its rule in `wac.runtime.triggers` (`@fires`).

The tables the rest of the compiler reads (`TRIGGERS`, `TRIGGER_ARG`, `TRIGGER_CLASS`,
`LEADING_TRIGGERS`) are views of `UNITS`; the set of kinds is checked against the bundle's
`TriggerKind` and the taxonomy's trigger classes at import.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from wac.bundle import model as B
from wac.compiler.diagnostics import Collector
from wac.compiler.plan_steps import LEAVE_MARGIN_M, _moves, _waits, leave_walk
from wac.compiler.schema import BOOL, DURATION, LENGTH, Clause, _c
from wac.compiler.spans import Span
from wac.errors import PlanError
from wac.taxonomy.registry import TRIGGER_CLASSES, check_plan_kind

D = B.TRIGGER_DEFAULTS


@dataclass(frozen=True, slots=True)
class Args:
    """A trigger statement's evaluated values: `arg` (the distance or duration after the kind) and
    its clauses by key; `diameter`, the exploration bounds' diagonal (no distance beyond it)."""

    values: Mapping[str, object]
    diameter: float
    span: Span | None
    diag: Collector

    def get(self, key: str, default=None):
        return self.values.get(key, default)


SWITCH_MARGIN_M = 0.5  # the runtime's 0.25 m hysteresis band either side, and a step across it


@dataclass(frozen=True, slots=True)
class Reach:
    """What the exploration area allows of a distance trigger: the least and greatest horizontal
    distance from the target's bounds (`target`) to a point of the bounds."""

    target: str
    near: float
    far: float

    def words(self) -> str:
        return f"every point of the bounds lies {self.near:.1f}-{self.far:.1f} m from `{self.target}`"

    def advice(self, clause: str) -> str:
        """A distance with room beyond it, to 0.5 m."""
        fits = math.floor((self.far - 2 * SWITCH_MARGIN_M) * 2) / 2
        return (
            f"e.g. `{clause} {fits:g} m`"
            if fits >= 1.0
            else "widen the bounds: they leave no room either side"
        )


# why a distance trigger never switches inside the bounds: (message, hint), or None when it does
Switches = Callable[[B.Trigger, Reach], "tuple[str, str] | None"]


@dataclass(frozen=True, slots=True)
class Away:
    """A self-check plan at its viewpoint, the "before" view taken: where it stands (`pos`), the heading
    that faces the target (`yaw`), the target's ground box, how far its edge is, what captions call it."""

    grid: object  # validate.Grid
    pos: tuple[float, float]
    yaw: float
    box: tuple[float, float, float, float]
    edge: float
    name: str


def _turn(degrees: float, caption: str) -> B.PlanStep:
    return B.PlanStep(action="turn", args={"degrees": degrees}, caption=caption)


def turn_away_and_back(wait: list[B.PlanStep], name: str) -> list[B.PlanStep]:
    """Turn away, wait, turn back and look again (a revisit, a look-away, an after)."""
    return [
        _turn(180.0, "Turn away."),
        *wait,
        _turn(180.0, "Turn back."),
        B.PlanStep(action="mark", caption=f"After looking away and back: inspect the {name}'s place again."),
    ]


@dataclass(frozen=True, slots=True)
class TriggerUnit:
    kind: str
    trigger_class: str  # temporal, distance, contact, interact (operators.yaml `triggers:`)
    lower: Callable[[Args], B.Trigger | None]  # None after reporting a diagnostic
    phrase: Callable[[B.Trigger], str]  # when the change happens, in rubric words
    action: Callable[[B.Trigger], str]  # what the inspector does to see it happen
    clauses: tuple[Clause, ...] = ()
    arg: str | None = None  # the value type of `when KIND ARG` (after 20 s, beyond 6 m)
    leading: str | None = None  # the form that leads the anomaly statement (`on_revisit`)
    # the self-check plan kind that makes it fire (plan_kinds.py); None: the operator's or category's
    plan: str | None = None
    # the plan's viewpoint band (closest, preferred, farthest, from afar), narrowed where the trigger
    # must be armed from the viewpoint; None: the plan kind's band as it is
    band: Callable[[B.Trigger, Band], Band] | None = None
    # how a "revisit" plan makes it fire after its "before" view, up to the "after" view (None: turn
    # away for 2 s and back); it raises PlanError when the place leaves no room for it
    away: Callable[[B.Trigger, Away], list[B.PlanStep]] | None = None
    # why a viewpoint cannot make it fire (no room to walk away: (how far it gets, how far it must)),
    # tested on each candidate viewpoint; None: any viewpoint can
    room: Callable[[B.Trigger, Away], tuple[float, float] | None] | None = None
    arms_by_sight: bool = True  # a sighting arms it (a leave is armed by distance alone)
    # why it never switches inside the exploration area (E605); None: no distance to check
    switches: Switches | None = None


UNITS: dict[str, TriggerUnit] = {}
Band = tuple[float, float, float, float]


def _seen_within(trig: B.Trigger, band: Band) -> Band:
    """A sighting arms it only within `seen_within`: no viewpoint from afar beyond that."""
    lo, near, hi, far = band
    if trig.seen_within_m:
        far = min(far, trig.seen_within_m - 0.5)
    return lo, near, hi, far


def _inside_enter(trig: B.Trigger, band: Band) -> Band:
    """The viewpoint arms a `leave`: it lies inside the enter distance, never afar."""
    lo, near, hi, far = band
    hi = min(hi, (trig.enter_m or D.enter_m) * 0.8)
    return min(lo, hi * 0.6), near, hi, 0.0


def _inside_within(trig: B.Trigger, band: Band) -> Band:
    """The near viewpoint of a `within` lies inside its distance."""
    lo, near, hi, far = band
    if trig.distance_m:
        hi = min(hi, trig.distance_m * 0.8)
        lo = min(lo, hi * 0.6)
    return lo, near, hi, far


def _unit(kind: str, trigger_class: str, **props):
    def register(lower: Callable[[Args], B.Trigger | None]):
        check_plan_kind(f"trigger unit {kind}", props.get("plan"))
        UNITS[kind] = TriggerUnit(kind, trigger_class, lower, **props)
        return lower

    return register


def _never_fires(args: Args, what: str, hint: str) -> None:
    args.diag.error("E605", f"the trigger can never fire: {what}", args.span, hint)


_REPEAT = "fire on every {}, toggling back and forth"
_SEEN_WITHIN = _c("seen_within", LENGTH, "it counts as seen only within this distance", lo=0.5, hi=1000)


@_unit(
    "revisit",
    "temporal",
    clauses=(
        _c("away", DURATION, "out of view for at least this long", lo=0, hi=3600),
        _c("leave", LENGTH, "or moved at least this far away", lo=0.5, hi=1000),
        _SEEN_WITHIN,
        _c("repeat", BOOL, _REPEAT.format("revisit")),
    ),
    leading="on_revisit",
    plan="revisit",
    band=_seen_within,
    away=lambda t, a: turn_away_and_back(
        _waits(max(2.0, (t.away_s or 0.0) + 0.5), "Wait while looking elsewhere."), a.name
    ),
    phrase=lambda t: "after the agent looks away and comes back",
    action=lambda t: "turn away and come back",
)
def _revisit(args: Args) -> B.Trigger | None:
    trig = B.RevisitTrigger(
        away_s=args.get("away", D.away_s),
        leave_m=args.get("leave", D.leave_m),
        seen_within_m=args.get("seen_within", D.seen_within_m),
        repeat=bool(args.get("repeat", False)),
    )
    if trig.leave_m >= args.diameter and "away" not in args.values:
        args.diag.error(
            "E605",
            f"the revisit trigger can never fire: moving {trig.leave_m:g} m away is more than the "
            f"bounds allow ({args.diameter:.1f} m across)",
            args.span,
            "lower `leave` or add `away 3 s`",
        )
        return None
    return trig


@_unit(
    "look_away",
    "temporal",
    clauses=(_SEEN_WITHIN, _c("repeat", BOOL, "fire every time the agent looks away")),
    leading="on_look_away",
    plan="revisit",
    band=_seen_within,
    phrase=lambda t: "as soon as the agent looks away",
    action=lambda t: "turn away and come back",
)
def _look_away(args: Args) -> B.Trigger:
    return B.LookAwayTrigger(
        seen_within_m=args.get("seen_within", D.seen_within_m),
        repeat=bool(args.get("repeat", False)),
    )


def _walk_away(trig: B.Trigger, at: Away) -> list[B.PlanStep]:
    """A leave fires when the agent walks beyond `exit` and comes back: the longest free heading away."""
    turn, walk, reach = leave_walk(at.grid, at.pos, at.yaw, at.box, trig.exit_m, at.edge)
    if not walk:
        raise PlanError(
            f"there is no room to walk {trig.exit_m:g} m away from the {at.name}: a straight walk from the "
            f"viewpoint gets {reach:.1f} m from it at most",
            "lower the trigger's `exit` distance or widen the bounds",
        )
    return [
        _turn(-turn, "Turn away."),
        *_moves(walk, "forward", "Walk away from the area."),
        *_moves(walk, "back", "Walk back to the viewpoint."),
        _turn(turn, "Face the place again."),
        B.PlanStep(
            action="mark", caption=f"After leaving and returning: inspect the {at.name}'s place again."
        ),
    ]


def _no_room_to_leave(trig: B.Trigger, at: Away) -> tuple[float, float] | None:
    _, walk, reach = leave_walk(at.grid, at.pos, at.yaw, at.box, trig.exit_m, at.edge)
    return None if walk else (reach, trig.exit_m + LEAVE_MARGIN_M)


def _leave_switches(trig: B.Trigger, r: Reach) -> tuple[str, str] | None:
    enter, exit_ = trig.enter_m or 0.0, trig.exit_m or 0.0
    if exit_ + SWITCH_MARGIN_M <= r.far and enter > r.near:
        return None
    if enter <= r.near:
        what = f"the agent never comes within `enter` {enter:g} m of `{r.target}` ({r.words()})"
        hint = f"raise `enter` above {r.near:.1f} m, or pick a target inside the bounds"
    else:
        what = f"the agent never gets `exit` {exit_:g} m away from `{r.target}` ({r.words()})"
        hint = f"lower `exit` to at most {r.far - SWITCH_MARGIN_M:.1f} m ({r.advice('exit')}), or widen the bounds"
    return f"the `leave` trigger can never fire with these bounds: {what}", hint


@_unit(
    "leave",
    "temporal",
    clauses=(
        _c("enter", LENGTH, "arms when the agent comes this close", lo=0.5, hi=1000),
        _c("exit", LENGTH, "fires when it then goes this far away", lo=0.5, hi=1000),
        _c("repeat", BOOL, _REPEAT.format("leave")),
    ),
    plan="revisit",
    band=_inside_enter,
    away=_walk_away,
    room=_no_room_to_leave,
    arms_by_sight=False,
    switches=_leave_switches,
    phrase=lambda t: f"after the agent leaves the area (beyond {t.exit_m:g} m) and returns",
    action=lambda t: f"walk more than {t.exit_m:g} m away and return",
)
def _leave(args: Args) -> B.Trigger | None:
    enter, exit_ = args.get("enter", D.enter_m), args.get("exit", D.exit_m)
    if exit_ <= enter:
        args.diag.error(
            "E604",
            f"`leave` fires beyond `exit` ({exit_:g} m), which must be farther than `enter` ({enter:g} m)",
            args.span,
        )
        return None
    if exit_ >= args.diameter:
        _never_fires(
            args,
            f"leaving {exit_:g} m is farther than the bounds allow (at most {args.diameter:.1f} m across)",
            "lower `exit` or widen the bounds",
        )
        return None
    return B.LeaveTrigger(enter_m=enter, exit_m=exit_, repeat=bool(args.get("repeat", False)))


@_unit(
    "after",
    "temporal",
    arg=DURATION,
    plan="revisit",
    away=lambda t, a: turn_away_and_back(_waits(t.after_s + 0.5, "Wait while looking elsewhere."), a.name),
    phrase=lambda t: f"after about {t.after_s:g} s, while unobserved",
    action=lambda t: "wait while looking elsewhere",
)
def _after(args: Args) -> B.Trigger:
    return B.AfterTrigger(after_s=args.get("arg"))


@_unit(
    "every",
    "temporal",
    arg=DURATION,
    plan="watch",
    phrase=lambda t: f"every {t.period_s:g} s",
    action=lambda t: "wait while looking elsewhere",
)
def _every(args: Args) -> B.Trigger:
    return B.EveryTrigger(period_s=args.get("arg"))


def _viewpoint(kind: B.TriggerKind) -> Callable[[Args], B.Trigger | None]:
    def lower(args: Args) -> B.Trigger | None:
        d = args.get("arg")
        if d >= args.diameter:
            _never_fires(
                args,
                f"{d:g} m is more than the bounds span ({args.diameter:.1f} m)",
                "use a shorter distance",
            )
            return None
        return B.new_trigger(kind, distance_m=d)

    return lower


def _viewpoint_switches(trig: B.Trigger, r: Reach) -> tuple[str, str] | None:
    d, word = trig.distance_m or 0.0, trig.kind.value
    if r.far > d + SWITCH_MARGIN_M and r.near < d - SWITCH_MARGIN_M:
        return None
    within = trig.kind == B.TriggerKind.within
    if r.far <= d + SWITCH_MARGIN_M:
        what = f"the agent is always within {d:g} m of `{r.target}` ({r.words()}), so the `{word}` change is {'always' if within else 'never'} on"
    else:
        what = f"the agent is never within {d:g} m of `{r.target}` ({r.words()}), so the `{word}` change is {'never' if within else 'always'} on"
    return (
        f"the `{word}` trigger never switches with these bounds: {what}",
        f"use a distance between {r.near + SWITCH_MARGIN_M:.1f} and {r.far - SWITCH_MARGIN_M:.1f} m "
        f"({r.advice(word)}), or widen the bounds",
    )


_unit(
    "beyond",
    "distance",
    arg=LENGTH,
    plan="near_far",
    switches=_viewpoint_switches,
    phrase=lambda t: f"when seen from farther than {t.distance_m:g} m",
    action=lambda t: f"compare views nearer and farther than {t.distance_m:g} m",
)(_viewpoint(B.TriggerKind.beyond))
_unit(
    "within",
    "distance",
    arg=LENGTH,
    plan="near_far",
    band=_inside_within,
    switches=_viewpoint_switches,
    phrase=lambda t: f"when seen from closer than {t.distance_m:g} m",
    action=lambda t: f"compare views nearer and farther than {t.distance_m:g} m",
)(_viewpoint(B.TriggerKind.within))


def _no_values(kind: B.TriggerKind) -> Callable[[Args], B.Trigger]:
    """The lowering of a trigger that takes no values (contact, interact)."""

    def lower(args: Args) -> B.Trigger:
        return B.new_trigger(kind)

    return lower


_unit("contact", "contact", leading="on_contact", phrase=lambda t: "on contact", action=lambda t: "interact")(
    _no_values(B.TriggerKind.contact)
)
_unit(
    "interact",
    "interact",
    leading="on_interact",
    phrase=lambda t: "when interacted with",
    action=lambda t: "interact",
)(_no_values(B.TriggerKind.interact))


def lower_trigger(kind: str, args: Args) -> B.Trigger | None:
    """The bundle's trigger of `when KIND …` (None after a diagnostic)."""
    return UNITS[kind].lower(args)


def switch_distance(trig: B.Trigger, otherwise: float = 6.0) -> float:
    """The distance a viewpoint trigger (beyond, within) switches at; `otherwise` for another kind or
    one without a distance (a near-far plan of a static anomaly still steps back that far)."""
    if trig.kind.viewpoint and trig.distance_m:
        return trig.distance_m
    return otherwise


def seen_within(trig: B.Trigger) -> float:
    """How near its target must be to count as seen: a sighting trigger's `seen_within_m` (revisit,
    look_away), else the default."""
    if isinstance(trig, B.RevisitTrigger | B.LookAwayTrigger) and trig.seen_within_m:
        return trig.seen_within_m
    return D.seen_within_m


def trigger_phrase(trig: B.Trigger) -> str:
    """When a dynamic anomaly happens, in rubric words ("" without a trigger)."""
    unit = UNITS.get(trig.kind.value)
    return unit.phrase(trig) if unit is not None else ""


def trigger_action(trig: B.Trigger) -> str:
    """What the inspector does to see a dynamic anomaly happen."""
    unit = UNITS.get(trig.kind.value)
    return unit.action(trig) if unit is not None else "interact"


# views of the units for the syntax (elaborate.py), the language server and the docs
TRIGGERS: dict[str, tuple[Clause, ...]] = {k: u.clauses for k, u in UNITS.items()}
TRIGGER_ARG: dict[str, str] = {k: u.arg for k, u in UNITS.items() if u.arg is not None}
TRIGGER_CLASS: dict[str, str] = {k: u.trigger_class for k, u in UNITS.items()}
LEADING_TRIGGERS: dict[str, str] = {u.leading: k for k, u in UNITS.items() if u.leading is not None}

if set(UNITS) | {"always"} != {k.value for k in B.TriggerKind}:
    raise ImportError(f"trigger units and the bundle's TriggerKind disagree: {sorted(set(UNITS))}")
if {u.trigger_class for u in UNITS.values()} | {"static"} != set(TRIGGER_CLASSES):
    raise ImportError("trigger units and the taxonomy's trigger classes disagree")
