"""Anomaly triggers: when each anomaly of the perturbed world switches on (and off).

`TriggerState.update` is called every control tick with what the agent perceives of the
anomaly's target (in view? how far?) and returns "on", "off" or None.  The semantics follow
`TriggerKind` in bundle/model.py:

- always: on at load.
- revisit: the target was seen (within `seen_within_m` if given), then has been out of view for
  `away_s` (default 2 s) or the agent moved `leave_m` since it was last seen; fires only while
  the target is out of view.  With `repeat`, re-arms on the next sighting and toggles.
- look_away: fires on the seen (within `seen_within_m` if given) -> out-of-view transition
  (toggles with `repeat`).
- leave: the agent came within `enter_m`, then went beyond `exit_m` (toggles with `repeat`).
- after: at `after_s`; deferred while the target is in view when `only_unseen`.
- every: toggles on and off every `period_s` (off during the first period).
- beyond / within: on while the agent is farther / nearer than `distance_m`, with a 0.25 m
  hysteresis band.
- contact / interact: fires on the agent's contact with / interaction with the target.

leave also defers while the target is in view when `only_unseen`; look_away always does (`TriggerBase.defers`).

Each kind's rule is one function registered with `@fires(kind, …)` (its update, and when it needs
to know whether the target is in view); `FIRES` covers every `TriggerKind` at import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from wac.bundle.model import TRIGGER_DEFAULTS, Trigger, TriggerKind

HYSTERESIS_M = 0.25


@dataclass(frozen=True)
class Percept:
    """What the trigger needs to know this tick."""

    time: float
    in_view: bool
    distance: float  # agent to target (horizontal, to the target's bounds)
    agent_xy: tuple[float, float]
    contact: bool = False
    interacted: bool = False


@dataclass(frozen=True)
class TriggerEvent:
    """One logged trigger transition (kept out of everything the agent sees)."""

    step: int
    sim_time: float
    anomaly: int
    operator: str
    trigger: str
    event: str  # fired | deactivated | deferred
    detail: str = ""
    target_in_view: bool = False  # the target's place was in view from the agent's eye just before the change

    def as_dict(self) -> dict:
        return {
            "step": self.step,
            "sim_time": round(self.sim_time, 4),
            "anomaly": self.anomaly,
            "operator": self.operator,
            "trigger": self.trigger,
            "event": self.event,
            "detail": self.detail,
            "target_in_view": self.target_in_view,
        }


@dataclass
class TriggerState:
    """Mutable bookkeeping of one anomaly's trigger."""

    trigger: Trigger
    active: bool = False
    fired: int = 0
    seen: bool = False
    was_in_view: bool = False
    last_seen_t: float = 0.0
    seen_xy: tuple[float, float] = (0.0, 0.0)
    entered: bool = False
    want: bool = False  # a pending fire, waiting for the target to leave view
    done: bool = False
    notes: list[str] = field(default_factory=list)

    def initial(self) -> bool:
        """Whether the anomaly is on when the world loads."""
        return self.trigger.kind.static

    def needs_view(self, time: float, distance: float) -> bool:
        """Whether this tick's `Percept.in_view` can change what `update` does (the runtime renders
        the target's pixels to know, so it asks only then)."""
        if self.done:
            return False
        return FIRES[self.trigger.kind].needs_view(self, time, distance)

    def update(self, pc: Percept) -> str | None:
        """Advance with this tick's percept; returns "on", "off", "deferred" or None."""
        if self.done:
            return None
        return FIRES[self.trigger.kind].update(self, pc)

    # --- helpers ----------------------------------------------------------------------------
    def _leave_m(self) -> tuple[float, float]:
        """A leave trigger's (enter, exit) distances, the compiler's defaults where a bundle omits them."""
        tr = self.trigger
        enter = tr.enter_m if tr.enter_m is not None else TRIGGER_DEFAULTS.enter_m
        exit_ = (
            tr.exit_m if tr.exit_m is not None else enter + TRIGGER_DEFAULTS.exit_m - TRIGGER_DEFAULTS.enter_m
        )
        return enter, exit_

    def _set(self, on: bool) -> str | None:
        if on == self.active:
            return None
        self.active = on
        if on:
            self.fired += 1
        return "on" if on else "off"

    def _fire_once(self, cond: bool, pc: Percept, defer: bool) -> str | None:
        if not cond:
            return None
        if defer and pc.in_view:
            if not self.want:
                self.want = True
                return "deferred"
            return None
        self.want = False
        return self._toggle_or_fire(pc)

    def _toggle_or_fire(self, pc: Percept) -> str | None:
        if self.trigger.repeats:
            self.active = not self.active
            self.fired += 1
            return "on" if self.active else "off"
        self.done = True
        self.active = True
        self.fired += 1
        return "on"


Update = Callable[[TriggerState, Percept], "str | None"]
NeedsView = Callable[[TriggerState, float, float], bool]


@dataclass(frozen=True, slots=True)
class Firing:
    """One trigger kind's rule: how a tick's percept advances it, and when it needs to know whether
    the target is in view."""

    update: Update
    needs_view: NeedsView


FIRES: dict[TriggerKind, Firing] = {}


def _never(st: TriggerState, time: float, distance: float) -> bool:
    return False


def fires(*kinds: TriggerKind, needs_view: NeedsView = _never) -> Callable[[Update], Update]:
    """Register the decorated function as the update rule of `kinds`."""

    def register(fn: Update) -> Update:
        for k in kinds:
            if k in FIRES:
                raise TypeError(f"two rules for trigger kind {k.value!r}")
            FIRES[k] = Firing(fn, needs_view)
        return fn

    return register


@fires(TriggerKind.always)
def _always(st: TriggerState, pc: Percept) -> str | None:
    return None  # on from the start (`initial`)


@fires(TriggerKind.beyond, TriggerKind.within)
def _viewpoint(st: TriggerState, pc: Percept) -> str | None:
    tr = st.trigger
    d = tr.distance_m if tr.distance_m is not None else TRIGGER_DEFAULTS.distance_m
    if tr.kind == TriggerKind.beyond:
        on = pc.distance > d + HYSTERESIS_M if not st.active else pc.distance > d - HYSTERESIS_M
    else:
        on = pc.distance < d - HYSTERESIS_M if not st.active else pc.distance < d + HYSTERESIS_M
    return st._set(on)


@fires(TriggerKind.every)
def _every(st: TriggerState, pc: Percept) -> str | None:
    p = st.trigger.period_s or 1.0
    return st._set(int(pc.time / p + 1e-9) % 2 == 1)


@fires(TriggerKind.contact, TriggerKind.interact)
def _touch(st: TriggerState, pc: Percept) -> str | None:
    now = pc.contact if st.trigger.kind == TriggerKind.contact else pc.interacted
    rising = now and not st.was_in_view  # was_in_view doubles as "was touching"
    st.was_in_view = now
    if not rising:
        return None
    st.fired += 1
    st.active = True
    st.done = not st.trigger.repeats
    return "on"  # with repeat, each new contact/interaction re-applies the effects


def _after_needs_view(st: TriggerState, time: float, distance: float) -> bool:
    """A fire that is due must wait for the target to be out of view."""
    tr = st.trigger
    return tr.defers and (st.want or time >= (tr.after_s or 0.0))


@fires(TriggerKind.after, needs_view=_after_needs_view)
def _after(st: TriggerState, pc: Percept) -> str | None:
    tr = st.trigger
    return st._fire_once(pc.time >= (tr.after_s or 0.0), pc, defer=tr.defers)


def _sighting_needs_view(st: TriggerState, time: float, distance: float) -> bool:
    """Once the target was seen, or from within `seen_within`."""
    tr = st.trigger
    near = tr.seen_within_m is None or distance <= tr.seen_within_m
    armed = st.seen if tr.kind == TriggerKind.revisit else st.was_in_view
    return near or armed or st.want


@fires(TriggerKind.look_away, needs_view=_sighting_needs_view)
def _look_away(st: TriggerState, pc: Percept) -> str | None:
    tr = st.trigger
    seen = pc.in_view and (tr.seen_within_m is None or pc.distance <= tr.seen_within_m)
    fire = st.was_in_view and not pc.in_view
    st.was_in_view = seen or (st.was_in_view and pc.in_view)
    return st._fire_once(fire or st.want, pc, defer=True)


def _leave_needs_view(st: TriggerState, time: float, distance: float) -> bool:
    """A fire that is due (entered, now beyond `exit`) must wait for the target to be out of view."""
    enter, exit_ = st._leave_m()
    return st.trigger.defers and (st.want or ((st.entered or distance < enter) and distance > exit_))


@fires(TriggerKind.leave, needs_view=_leave_needs_view)
def _leave(st: TriggerState, pc: Percept) -> str | None:
    enter, exit_ = st._leave_m()
    if pc.distance < enter:
        st.entered = True
    fire = st.entered and pc.distance > exit_
    if fire:
        st.entered = False
    return st._fire_once(fire or st.want, pc, defer=st.trigger.defers)


@fires(TriggerKind.revisit, needs_view=_sighting_needs_view)
def _revisit(st: TriggerState, pc: Percept) -> str | None:
    tr = st.trigger
    seen_ok = tr.seen_within_m is None or pc.distance <= tr.seen_within_m
    if pc.in_view:
        if seen_ok:
            st.seen = True
        st.last_seen_t = pc.time
        st.seen_xy = pc.agent_xy
        return None
    if not st.seen:
        return None
    away = pc.time - st.last_seen_t
    moved = ((pc.agent_xy[0] - st.seen_xy[0]) ** 2 + (pc.agent_xy[1] - st.seen_xy[1]) ** 2) ** 0.5
    need_t = tr.away_s if tr.away_s is not None else (TRIGGER_DEFAULTS.away_s if tr.leave_m is None else None)
    fire = (need_t is not None and away >= need_t) or (tr.leave_m is not None and moved >= tr.leave_m)
    if fire:
        st.seen = False
        return st._toggle_or_fire(pc)
    return None


if set(FIRES) != set(TriggerKind):
    raise ImportError(f"trigger kinds without a rule: {sorted(set(TriggerKind) - set(FIRES))}")
