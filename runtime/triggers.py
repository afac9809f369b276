"""Anomaly triggers: when each anomaly of the perturbed world switches on (and off), and what switching does.

A trigger kind's rule (its bundle model is `wac.bundle.triggers`, its compiler unit
`wac.compiler.triggers`) is one function registered here with `@fires(kind, …)`: `TriggerState.update`
is called every control tick with what the agent perceives of the anomaly's target (in view? how
far?) and returns "on", "off" or None; `FIRES` covers every `TriggerKind` at import.  The rules:

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

`AnomalyTriggers` is the part of `WorldEnv` (runtime/env.py) that runs the task's anomalies: each
control tick it takes the percepts a trigger needs (the agent's distance to the target, whether the
target is on screen, contact, interaction), updates the trigger, and on a transition applies the
anomaly's effects (`runtime/effects.py`) or undoes them and logs a `TriggerEvent`.  The effects are
the bundle's; nothing here knows the compiler's operators.

"On screen" is decided by pixels, as the self-check judges a watched change
(`wac.bundle.onscreen.WATCH_PX`): the target's pixels in a small segmentation render of what the
agent's camera shows (`render_probe.ViewProbe`), occluders in front included.  The target is what
the change touches: the anomaly's targets, drawn whether they are shown now or not (a hidden object's
place still shows), an object it adds (drawn where it will appear), a target at the pose the change
will give it (a crate that jumps sideways into the view is watched), and the box of a hole or an
invisible wall.  Only triggers that wait for the target to be out of view pay for it, and only on
the ticks where the answer can change their course (`TriggerState.needs_view`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from wac.bundle import model as B
from wac.bundle.model import TRIGGER_DEFAULTS, Trigger, TriggerKind
from wac.bundle.onscreen import on_screen

from . import effects as fx
from .render_probe import Probe
from .world import ObjectState, PartState

HYSTERESIS_M = 0.25
VIEW_RANGE_M = 60.0  # how far the self-check's visibility measure looks (validation/judges_view.py)
# effects that place an object: under a static anomaly it is frozen where they put it
PLACEMENTS = (B.SetPose, B.SetPartPose, B.AddObject)
# effects that change where an object is drawn: its new place is part of the target's
REPOSES = (B.SetPose, B.SetPartPose, B.SetAppearance)


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


@dataclass(frozen=True, slots=True)
class Missed:
    """What a run shows of a trigger that never fired: whether its target was ever seen (by the
    trigger's own measure), the agent's distances to the target's bounds, and when the run ended."""

    seen: bool
    distances: tuple[float, ...]
    end_s: float


Update = Callable[[TriggerState, Percept], "str | None"]
NeedsView = Callable[[TriggerState, float, float], bool]
WhyNot = Callable[[Trigger, Missed], str]


@dataclass(frozen=True, slots=True)
class Firing:
    """One trigger kind's rule: how a tick's percept advances it, when it needs to know whether the
    target is in view, and why a run in which it never fired did not make it fire (", …" words)."""

    update: Update
    needs_view: NeedsView
    why_not: WhyNot


FIRES: dict[TriggerKind, Firing] = {}


def _never(st: TriggerState, time: float, distance: float) -> bool:
    return False


def _no_reason(tr: Trigger, run: Missed) -> str:
    return ""


def fires(
    *kinds: TriggerKind, needs_view: NeedsView = _never, why_not: WhyNot = _no_reason
) -> Callable[[Update], Update]:
    """Register the decorated function as the update rule of `kinds`."""

    def register(fn: Update) -> Update:
        for k in kinds:
            if k in FIRES:
                raise TypeError(f"two rules for trigger kind {k.value!r}")
            FIRES[k] = Firing(fn, needs_view, why_not)
        return fn

    return register


def why_not_fired(tr: Trigger, run: Missed) -> str:
    """Why a run did not make `tr` fire, in words that follow "never fired" (empty when its rule
    has nothing to say)."""
    return FIRES[tr.kind].why_not(tr, run)


def _within(tr: Trigger) -> str:
    return f" within {tr.seen_within_m:g} m" if tr.seen_within_m else ""


@fires(TriggerKind.always)
def _always(st: TriggerState, pc: Percept) -> str | None:
    return None  # on from the start (`initial`)


@fires(
    TriggerKind.beyond,
    TriggerKind.within,
    why_not=lambda tr, run: (
        f": the agent never went {'farther' if tr.kind == TriggerKind.beyond else 'nearer'} than {tr.distance_m:g} m"
    ),
)
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


@fires(
    TriggerKind.after,
    needs_view=_after_needs_view,
    why_not=lambda tr, run: (
        f": the plan ends at {run.end_s:.1f} s, before {tr.after_s:g} s (or the target stayed in view)"
    ),
)
def _after(st: TriggerState, pc: Percept) -> str | None:
    tr = st.trigger
    return st._fire_once(pc.time >= (tr.after_s or 0.0), pc, defer=tr.defers)


def _sighting_needs_view(st: TriggerState, time: float, distance: float) -> bool:
    """Once the target was seen, or from within `seen_within`."""
    tr = st.trigger
    near = tr.seen_within_m is None or distance <= tr.seen_within_m
    armed = st.seen if tr.kind == TriggerKind.revisit else st.was_in_view
    return near or armed or st.want


@fires(
    TriggerKind.look_away,
    needs_view=_sighting_needs_view,
    why_not=lambda tr, run: f": the target was never on screen{_within(tr)} and then off it",
)
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


def _leave_why_not(tr: Trigger, run: Missed) -> str:
    ds = run.distances
    got = f" (the plan goes from {min(ds):.1f} m to {max(ds):.1f} m)" if ds else ""
    return f": the agent must come within {tr.enter_m:g} m and then go beyond {tr.exit_m:g} m{got}"


@fires(TriggerKind.leave, needs_view=_leave_needs_view, why_not=_leave_why_not)
def _leave(st: TriggerState, pc: Percept) -> str | None:
    enter, exit_ = st._leave_m()
    if pc.distance < enter:
        st.entered = True
    fire = st.entered and pc.distance > exit_
    if fire:
        st.entered = False
    return st._fire_once(fire or st.want, pc, defer=st.trigger.defers)


def _revisit_why_not(tr: Trigger, run: Missed) -> str:
    if not run.seen:
        return f": the target was never seen{_within(tr)}"
    return f": the target was seen but never out of view for {tr.away_s or TRIGGER_DEFAULTS.away_s:g} s" + (
        f" nor left by {tr.leave_m:g} m" if tr.leave_m else ""
    )


@fires(TriggerKind.revisit, needs_view=_sighting_needs_view, why_not=_revisit_why_not)
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


@dataclass
class LiveAnomaly:
    """One anomaly of the perturbed world: its bundle spec, its trigger's state, the undos of its
    applied effects."""

    index: int
    spec: B.Anomaly
    trig: TriggerState
    undos: list = field(default_factory=list)


class AnomalyTriggers:
    """Trigger evaluation and effect switching for `WorldEnv` (a mixin: it uses the env's `world`,
    `physics`, `camera()`, view size, `anomalies`, `sim_time`, `steps`, `events` and `recorder`)."""

    anomalies: list[LiveAnomaly]
    _switch_listeners: tuple[Callable[[LiveAnomaly, bool], None], ...] = ()

    def add_switch_listener(self, fn: Callable[[LiveAnomaly, bool], None]) -> None:
        """Call `fn(anomaly, on)` just before an anomaly's effects are applied (on) or undone: the
        world as it was before the change (checks measure the target there; agents never see it)."""
        self._switch_listeners = (*self._switch_listeners, fn)

    def _freeze_overlaps(self) -> None:
        """Freeze simulated objects that a static anomaly made interpenetrate a frozen one (push_into)."""
        frozen = [st for st in self.world.objects.values() if st.frozen]
        if not frozen:
            return
        ph = self.physics
        changed = False
        for st in self.world.objects.values():
            if not st.simulated:
                continue
            mine = [b for b, part in ph.bodies.get(st.id, []) if part is None]
            for other in frozen:
                theirs = [
                    b for b, part in ph.bodies.get(other.id, []) if part is None or not part.startswith("#")
                ]
                if any(
                    pt[8] < -0.005
                    for a in mine
                    for b in theirs
                    for pt in ph.p.getClosestPoints(a, b, 0.0, physicsClientId=ph.cid)
                ):
                    st.frozen = True
                    st.bump()
                    changed = True
                    break
        if changed:
            ph.sync()

    def _target_box(self, an: LiveAnomaly):
        spec = an.spec
        for tid in spec.targets:
            if tid in self.world.objects:
                return self.world.aabb(self.world.objects[tid])
        for eff in spec.effects:
            if isinstance(eff, B.AddObject):
                return np.asarray(eff.object.aabb_min, dtype=float), np.asarray(
                    eff.object.aabb_max, dtype=float
                )
            if isinstance(eff, B.AddHole | B.AddBlocker):
                c, s = np.asarray(eff.position, dtype=float), np.asarray(eff.size, dtype=float)
                return c - [s[0] / 2, s[1] / 2, 0], c + [s[0] / 2, s[1] / 2, s[2]]
            if eff.target in self.world.objects:
                return self.world.aabb(self.world.objects[eff.target])
        return None

    def target_px(self, an: LiveAnomaly) -> float:
        """The target's pixels (640x480) in what the agent's camera would show now (module docstring)."""
        if self.renderer is None:
            return 0.0
        return self.renderer.probe_px(self.camera(), self._probe(an))

    def target_in_view(self, an: LiveAnomaly) -> bool:
        """Whether the auditor can watch the target: at least `WATCH_PX` of its pixels on screen."""
        return on_screen(self.target_px(an))

    def _probe(self, an: LiveAnomaly) -> Probe:
        """What counts as the anomaly's target on screen now (module docstring)."""
        w = self.world
        objects: list[str] = [t for t in an.spec.targets if t in w.objects]
        stand_ins: list[ObjectState] = []
        places = []
        reposed: dict[str, list] = {}
        for eff in an.spec.effects:
            if isinstance(eff, B.AddObject):
                if eff.object.id in w.objects:
                    objects.append(eff.object.id)
                else:
                    stand_ins.append(_state_of(eff.object))
            elif isinstance(eff, B.AddHole | B.AddBlocker):
                c, sz = np.asarray(eff.position, dtype=float), np.asarray(eff.size, dtype=float)
                places.append(
                    (tuple(c - [sz[0] / 2, sz[1] / 2, 0]), tuple(c + [sz[0] / 2, sz[1] / 2, sz[2]]))
                )
            elif eff.target in w.objects:
                objects.append(eff.target)
                if isinstance(eff, REPOSES):
                    reposed.setdefault(eff.target, []).append(eff)
        for oid, effs in reposed.items():
            st = w.objects[oid]
            # where the switch will draw it: at the effects' pose, or back at its own when undone
            stand_ins.append(_as_built(st) if an.undos else _reposed(st, effs))
        return Probe(tuple(dict.fromkeys(objects)), tuple(stand_ins), tuple(places))

    def _update_triggers(self) -> None:
        foot = self.physics.agent_position()
        contacts_needed = any(a.trig.trigger.kind == TriggerKind.contact for a in self.anomalies)
        for an in self.anomalies:
            if an.trig.done and not an.trig.trigger.kind.level:
                continue
            k = an.trig.trigger.kind
            if k == TriggerKind.always:
                continue
            box = self._target_box(an)
            if box is not None:
                lo, hi = box
                dx = max(lo[0] - foot[0], 0.0, foot[0] - hi[0])
                dy = max(lo[1] - foot[1], 0.0, foot[1] - hi[1])
                dist = float(math.hypot(dx, dy))
            else:
                dist = math.inf
            needed = an.trig.needs_view(self.sim_time, dist)
            in_view = self.target_in_view(an) if needed else False
            contact = False
            if contacts_needed and k == TriggerKind.contact:
                contact = any(self.physics.touching(t) for t in an.spec.targets if t in self.world.objects)
            interacted = bool(set(an.spec.targets) & self._interacted)
            pc = Percept(self.sim_time, in_view, dist, (float(foot[0]), float(foot[1])), contact, interacted)
            res = an.trig.update(pc)
            seen = in_view if needed else None
            if res == "deferred":
                self._log(an, "deferred", "target in view", True)
            elif res == "on":
                push = None
                if k == TriggerKind.contact and box is not None:
                    d = (box[0][:2] + box[1][:2]) / 2 - foot[:2]
                    n = float(np.linalg.norm(d))
                    push = (float(d[0] / n), float(d[1] / n)) if n > 1e-6 else None
                self._switch(an, True, f"distance {dist:.2f} m", push, seen)
            elif res == "off":
                self._switch(an, False, f"distance {dist:.2f} m", in_view=seen)
        self._interacted.clear()

    def _switch(self, an: LiveAnomaly, on: bool, detail: str, push=None, in_view: bool | None = None) -> None:
        """Apply (or undo) an anomaly's effects and log it; `in_view` is whether its target was in view
        this tick (computed here, before the change, when the trigger did not need it)."""
        if in_view is None:
            in_view = self.target_in_view(an)
        for listener in self._switch_listeners:
            listener(an, on)
        if on:
            ctx = fx.EffectContext(self.world, self.physics, push, self.sim_time)
            if an.undos and an.trig.trigger.kind.by_touch:
                an.undos = []  # re-applied on a repeated contact: keep the current state as the base
            for eff in an.spec.effects:
                if isinstance(eff, B.SetPhysics):
                    self.physics.sync()  # kicks go to the current bodies
                an.undos.append(fx.apply(eff, ctx))
                if an.trig.trigger.kind == TriggerKind.always and isinstance(eff, PLACEMENTS):
                    # a static misplacement (float, sink, push_into, pile, ...) must stay as placed:
                    # physics would otherwise drop it or push the overlap apart
                    st = self.world.get(eff.object.id if isinstance(eff, B.AddObject) else eff.target)
                    st.frozen = True
                    st.bump()
            self._log(an, "fired", detail, in_view)
        else:
            for undo in reversed(an.undos):
                undo()
            an.undos = []
            self._log(an, "deactivated", detail, in_view)

    def _log(self, an: LiveAnomaly, event: str, detail: str, in_view: bool) -> None:
        ev = TriggerEvent(
            self.steps,
            self.sim_time,
            an.index,
            an.spec.operator,
            str(an.spec.trigger.kind),
            event,
            detail,
            bool(in_view),
        )
        self.events.append(ev)
        if self.recorder is not None:
            self.recorder.write_event(ev)

    def trigger_count(self, index: int = 0) -> int:
        """How many times anomaly `index` fired (for checks)."""
        return sum(1 for e in self.events if e.anomaly == index and e.event == "fired")


def _state_of(spec: B.SceneObject) -> ObjectState:
    """An object's state as `World.add` would make it, outside the world: an added object's stand-in."""
    parts = {
        p.id: PartState(p, tuple(p.position), tuple(p.rotation_deg), p.material, p.solid) for p in spec.parts
    }
    return ObjectState(
        spec=spec,
        index=0,
        position=np.array(spec.position, dtype=float),
        rotation_deg=np.array(spec.rotation_deg, dtype=float),
        scale=np.array(spec.scale, dtype=float),
        parts=parts,
    )


def _copy_parts(st: ObjectState) -> dict[str, PartState]:
    return {k: dataclasses.replace(ps) for k, ps in st.parts.items()}


def _reposed(st: ObjectState, effects: list) -> ObjectState:
    """`st` as its pose effects will leave it (the same fields `effects.py` sets), outside the world."""
    g = dataclasses.replace(st, parts=_copy_parts(st))
    for eff in effects:
        if isinstance(eff, B.SetPose):
            fx.posed(g, eff)
        elif isinstance(eff, B.SetPartPose) and eff.part in g.parts:
            ps = g.parts[eff.part]
            ps.position = tuple(eff.position) if eff.position is not None else ps.position
            ps.rotation_deg = tuple(eff.rotation_deg) if eff.rotation_deg is not None else ps.rotation_deg
        elif isinstance(eff, B.SetAppearance) and eff.scale is not None:
            g.appearance_scale = np.asarray(eff.scale, dtype=float)
    return g


def _as_built(st: ObjectState) -> ObjectState:
    """`st` at the pose its bundle gives it: where undoing a pose change draws it again."""
    g = dataclasses.replace(
        st,
        parts=_copy_parts(st),
        position=np.array(st.spec.position, dtype=float),
        rotation_deg=np.array(st.spec.rotation_deg, dtype=float),
        scale=np.array(st.spec.scale, dtype=float),
        appearance_scale=None,
    )
    for ps in g.parts.values():
        ps.position, ps.rotation_deg = tuple(ps.part.position), tuple(ps.part.rotation_deg)
    return g
