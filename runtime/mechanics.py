"""Time-driven mechanics of a running world: doors swinging, spinning parts, drift/tremble motion,
flickering lamps and delayed interactions.  Called once per simulation tick by the environment.
"""

from __future__ import annotations

import numpy as np

from .world import ObjectState, World


def advance(world: World, dt: float, rng: np.random.Generator) -> list[str]:
    """Advance every time-driven mechanism by `dt` seconds; returns short notes of what happened."""
    notes: list[str] = []
    t = world.sim_time
    for st in world.objects.values():
        if not st.present:
            continue
        _pending(st, t, notes)
        _door(st, dt, t)
        _spin(st, dt, t)
        _motion(st, t, rng)
        _flicker(st, t)
    return notes


def _pending(st: ObjectState, t: float, notes: list[str]) -> None:
    due = [p for p in st.pending if p[0] <= t + 1e-9]
    if due:
        st.pending = [p for p in st.pending if p[0] > t + 1e-9]
        for _, fn in due:
            note = fn()
            if note:
                notes.append(note)


def _door(st: ObjectState, dt: float, t: float) -> None:
    if not st.is_door:
        return
    mech = st.mechanism
    speed = st.door_speed * (mech["speed"] if mech.get("speed") else 1.0)
    target = st.door_target
    if "jam" in mech and target > 0:
        target = min(target, mech["jam"] if mech["jam"] is not None else 0.25)
    if "autoclose" in mech and st.door_target > 0 and st.open_frac >= target - 1e-6:
        opened_at = mech.setdefault("_opened_at", t)
        if t - opened_at >= (mech["autoclose"] or 2.0):
            st.door_target = 0.0
            mech.pop("_opened_at", None)
    if st.door_target == 0:
        mech.pop("_opened_at", None)
    old = st.open_frac
    if st.open_frac < target:
        st.open_frac = min(target, st.open_frac + speed * dt)
    elif st.open_frac > target:
        st.open_frac = max(target, st.open_frac - speed * dt)
    if old != st.open_frac or any(
        ps.part.hinge and ps.hinge_deg != st.open_frac * ps.part.hinge.swing_deg for ps in st.parts.values()
    ):
        visual = st.open_frac
        if "phantom" in mech:  # collider swings, the visual panel stays shut
            st.collider_frac, visual = st.open_frac, 0.0
        elif "ghost" in mech:  # the panel swings, the collider stays shut
            st.collider_frac = 0.0
        for ps in st.parts.values():
            if ps.part.hinge:
                ps.hinge_deg = visual * ps.part.hinge.swing_deg


def _spin(st: ObjectState, dt: float, t: float) -> None:
    anim = st.animation or {}
    for ps in st.parts.values():
        if ps.part.spin is None:
            continue
        if anim.get("part") not in (None, ps.part.id):
            rate, kind = ps.part.spin.rate_deg_s, None
        else:
            rate, kind = ps.part.spin.rate_deg_s, anim.get("animation")
        if kind == "freeze":
            continue
        if kind == "speed":
            rate *= anim.get("value") or 8.0
        if kind == "jump":
            period = anim.get("period_s") or 1.0
            jump = anim.get("value") or 90.0
            ps.spin_deg = (np.floor(t / period) * jump + rate * 0.0) % 360.0
            continue
        ps.spin_deg = (ps.spin_deg + rate * dt) % 360.0


def _motion(st: ObjectState, t: float, rng: np.random.Generator) -> None:
    m = st.motion
    if not m:
        return
    axis = np.asarray(m.get("axis") or (1.0, 0.0, 0.0), dtype=float)
    n = np.linalg.norm(axis)
    axis = axis / n if n > 0 else np.array([1.0, 0.0, 0.0])
    if m["motion"] == "drift":
        rng_m = m.get("range_m") or 1.0
        speed = m.get("speed_m_s") or 0.3
        phase = (t - m.get("t0", 0.0)) * speed / max(rng_m, 1e-6)
        tri = 2.0 * abs((phase / 2.0) % 1.0 - 0.5)  # 1 -> 0 -> 1 triangle wave, starts at 1
        st.motion_offset = axis * rng_m * (1.0 - tri)
    elif m["motion"] == "tremble":
        amp = m.get("amplitude_m") or 0.03
        st.motion_offset = rng.uniform(-amp, amp, size=3) * np.array([1.0, 1.0, 0.3])


def _flicker(st: ObjectState, t: float) -> None:
    period = st.mechanism.get("flicker")
    if period:
        st.lit_override = int(t / period) % 2 == 0
