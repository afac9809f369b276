"""The perturbed world's anomalies at run time: when each trigger fires, and what firing does.

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
from wac.bundle.model import TriggerKind
from wac.bundle.onscreen import on_screen

from . import effects as fx
from .render_probe import Probe
from .triggers import Percept, TriggerEvent, TriggerState
from .world import ObjectState, PartState

VIEW_RANGE_M = 60.0  # how far the self-check's visibility measure looks (validation/judges_view.py)
# effects that place an object: under a static anomaly it is frozen where they put it
PLACEMENTS = (B.SetPose, B.SetPartPose, B.AddObject)
# effects that change where an object is drawn: its new place is part of the target's
REPOSES = (B.SetPose, B.SetPartPose, B.SetAppearance)


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
            if eff.position is not None:
                g.position = np.array(eff.position, dtype=float)
            if eff.rotation_deg is not None:
                g.rotation_deg = np.array(eff.rotation_deg, dtype=float)
            if eff.scale is not None:
                g.scale = np.array(eff.scale, dtype=float)
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


__all__ = ["PLACEMENTS", "REPOSES", "VIEW_RANGE_M", "AnomalyTriggers", "LiveAnomaly"]
