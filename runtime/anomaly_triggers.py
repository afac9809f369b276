"""The perturbed world's anomalies at run time: when each trigger fires, and what firing does.

`AnomalyTriggers` is the part of `WorldEnv` (runtime/env.py) that runs the task's anomalies: each
control tick it takes the percepts a trigger needs (the agent's distance to the target, whether any
of the target can be on screen, contact, interaction), updates the trigger, and on a transition
applies the anomaly's effects (`runtime/effects.py`) or undoes them and logs a `TriggerEvent`.  The
effects are the bundle's; nothing here knows the compiler's operators.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from wac.bundle import model as B
from wac.bundle.model import TriggerKind

from . import effects as fx
from .geometry import box_grid, corner_points
from .triggers import Percept, TriggerEvent, TriggerState

VIEW_RANGE_M = 60.0
MAX_VIEW_RAYS = 48  # rays cast per in-view test of a target's box grid
# effects that place an object: under a static anomaly it is frozen where they put it
PLACEMENTS = (B.SetPose, B.SetPartPose, B.AddObject)


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

    def target_in_view(self, an: LiveAnomaly, box=None) -> bool:
        """Whether any of the target can be on screen: sample points of its box (its centre and
        inner corners first; then a grid over the whole box, for a long or tall target whose
        centre is off screen while an end is not) inside the view frustum, with a clear line to
        the eye or landing on the target."""
        box = box if box is not None else self._target_box(an)
        if box is None:
            return False
        lo, hi = box
        c = (lo + hi) / 2
        inner = [c] + [c + 0.8 * (np.array(k) - c) for k in corner_points(lo, hi)]
        if self._any_visible(an, inner):
            return True
        return self._any_visible(an, box_grid(lo, hi))

    def _any_visible(self, an: LiveAnomaly, pts) -> bool:
        cam = self.camera()
        eye = np.asarray(cam.eye)
        f, up = cam.forward(), cam.up()
        right = np.cross(f, up)
        th = math.tan(math.radians(self.hfov) / 2)
        tv = th * self.height / self.width
        cand = []
        for p in pts:
            d = p - eye
            z = float(d @ f)
            if z <= 0.05 or np.linalg.norm(d) > VIEW_RANGE_M:
                continue
            if abs(float(d @ right)) / z <= th and abs(float(d @ up)) / z <= tv:
                cand.append(p)
        if not cand:
            return False
        if len(cand) > MAX_VIEW_RAYS:
            cand = [cand[i] for i in np.linspace(0, len(cand) - 1, MAX_VIEW_RAYS).round().astype(int)]
        targets = set(an.spec.targets) | {e.target for e in an.spec.effects if e.target}
        for ref, frac in self.physics.rays([eye] * len(cand), cand):
            if ref is None or ref.kind == "agent" or (ref.object_id in targets) or frac > 0.97:
                return True
        return False

    def _update_triggers(self) -> None:
        foot = self.physics.agent_position()
        contacts_needed = any(a.trig.trigger.kind == TriggerKind.contact for a in self.anomalies)
        for an in self.anomalies:
            if an.trig.done and an.trig.trigger.kind not in (
                TriggerKind.beyond,
                TriggerKind.within,
                TriggerKind.every,
            ):
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
            in_view = (
                self.target_in_view(an, box)
                if k in (TriggerKind.revisit, TriggerKind.look_away, TriggerKind.leave, TriggerKind.after)
                else False
            )
            contact = False
            if contacts_needed and k == TriggerKind.contact:
                contact = any(self.physics.touching(t) for t in an.spec.targets if t in self.world.objects)
            interacted = bool(set(an.spec.targets) & self._interacted)
            pc = Percept(self.sim_time, in_view, dist, (float(foot[0]), float(foot[1])), contact, interacted)
            res = an.trig.update(pc)
            seen = (
                in_view
                if k in (TriggerKind.revisit, TriggerKind.look_away, TriggerKind.leave, TriggerKind.after)
                else None
            )
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
        if on:
            ctx = fx.EffectContext(self.world, self.physics, push, self.sim_time)
            if an.undos and an.trig.trigger.kind in (TriggerKind.contact, TriggerKind.interact):
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


__all__ = ["MAX_VIEW_RAYS", "PLACEMENTS", "VIEW_RANGE_M", "AnomalyTriggers", "LiveAnomaly"]
