"""Time-driven mechanics of a running world: doors swinging, spinning parts, drift/tremble motion,
flickering lamps and delayed interactions.  Called once per simulation tick by the environment.
"""

from __future__ import annotations

import numpy as np

from .geometry import euler_from_matrix
from .world import ObjectState, World


def advance(world: World, dt: float, rng: np.random.Generator) -> list[str]:
    """Advance every time-driven mechanism by `dt` seconds; returns short notes of what happened."""
    notes: list[str] = []
    t = world.sim_time
    for st in world.selection(_mechanical)():
        # each step below is a no-op without its mechanism
        if st.pending:
            _pending(st, t, notes)
        if st.is_door:
            _door(st, dt, t)
        if st.spinning_parts:
            _spin(st, dt, t)
        if st.motion:
            _motion(st, t, rng)
        if st.mechanism:
            _flicker(st, t)
    return notes


def _mechanical(st: ObjectState) -> bool:
    """Whether time may change the object: a present one with a delayed interaction, a door, a
    spinning part, a motion or a mechanism."""
    return st.present and bool(st.pending or st.is_door or st.spinning_parts or st.motion or st.mechanism)


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
        if st.mechanism_state.opened_at is None:
            st.update_mechanism_state(opened_at=t)
        if t - st.mechanism_state.opened_at >= (mech["autoclose"] or 2.0):
            st.door_target = 0.0
            st.update_mechanism_state(opened_at=None)
    if st.door_target == 0 and st.mechanism_state.opened_at is not None:
        st.update_mechanism_state(opened_at=None)
    if "phantom" in mech:
        # the collider swings (collider_frac) while the panel, which `open_frac` describes as everywhere
        # else, stays shut: what is seen is a closed door
        st.collider_frac = _towards(st.collider_frac or 0.0, target, speed * dt)
        st.open_frac = 0.0
    else:
        st.open_frac = _towards(st.open_frac, target, speed * dt)
        if "ghost" in mech or "jam" in mech:  # the panel swings (part-way), the collider stays shut
            st.collider_frac = 0.0
    for ps in st.hinged_parts:
        if ps.hinge_deg != st.open_frac * ps.part.hinge.swing_deg:
            ps.hinge_deg = st.open_frac * ps.part.hinge.swing_deg


def _towards(value: float, target: float, step: float) -> float:
    if value < target:
        return min(target, value + step)
    return max(target, value - step)


def _spin(st: ObjectState, dt: float, t: float) -> None:
    anim = st.animation or {}
    for ps in st.spinning_parts:
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
    if m["motion"] == "tip":
        _tip(st, m, t)
        return
    axis = np.asarray(m.get("axis") or (1.0, 0.0, 0.0), dtype=float)
    n = np.linalg.norm(axis)
    axis = axis / n if n > 0 else np.array([1.0, 0.0, 0.0])
    elapsed = t - m.get("t0", 0.0)
    if m["motion"] == "drift":
        st.motion_offset = axis * drift_offset(elapsed, m.get("range_m") or 1.0, m.get("speed_m_s") or 0.3)
    elif m["motion"] == "tremble":
        st.motion_offset = tremble_offset(elapsed, m.get("amplitude_m") or 0.03)


def drift_offset(elapsed: float, range_m: float, speed_m_s: float) -> float:
    """Signed offset along the drift axis: out from the base to +range, back through it to -range and
    home again, at constant speed (base +/- range, as the reference's drift)."""
    r = max(range_m, 1e-6)
    ph = (elapsed * speed_m_s / r) % 4.0  # one cycle = 4 legs of `range` each
    if ph < 1.0:
        return r * ph
    if ph < 3.0:
        return r * (2.0 - ph)
    return r * (ph - 4.0)


# Rocking frequencies (Hz) of the tremble: all within 1.5-2.5 Hz, incommensurate so the motion never
# repeats exactly, slow enough to show in frames taken a few times a second.
TREMBLE_HZ = ((1.7, 2.3), (2.0, 1.55), (1.85,))


def tremble_offset(elapsed: float, amplitude_m: float) -> np.ndarray:
    """Smooth rocking in place (solver oscillation): a few sines at 1.5-2.5 Hz per axis, within the
    amplitude, with a small vertical lift."""
    tau = 2.0 * np.pi * elapsed
    (fx1, fx2), (fy1, fy2), (fz,) = TREMBLE_HZ
    x = (np.sin(tau * fx1) + 0.5 * np.sin(tau * fx2 + 1.1)) / 1.5
    y = (np.sin(tau * fy1 + 0.6) + 0.5 * np.sin(tau * fy2 + 2.0)) / 1.5
    z = 0.3 * abs(np.sin(tau * fz + 0.4))
    return amplitude_m * np.array([x, y, z])


def tip_matrix(m: dict, angle_deg: float) -> np.ndarray:
    """4x4 world transform that rolls an upright object `angle_deg` over its far base edge (then over
    each next edge, every 90 deg), as a box tipping across the ground: the far edge stays on the
    ground while it turns, so the motion is continuous and never lifts off."""
    u = np.array([m["dir"][0], m["dir"][1], 0.0])
    axis = np.array([-u[1], u[0], 0.0])  # top moves along +u
    pivot = np.asarray(m["pivot"], dtype=float)
    spans = (m["height"], m["depth"])  # how far the next edge lies along u after each quarter turn
    out = np.eye(4)
    left, k = angle_deg, 0
    while left > 1e-9:
        step = min(90.0, left)
        out = _rotation_about(pivot, axis, step) @ out
        if step == 90.0:
            pivot = pivot + u * spans[k % 2]
        left -= step
        k += 1
    return out


def _rotation_about(pivot: np.ndarray, axis: np.ndarray, angle_deg: float) -> np.ndarray:
    a = np.radians(angle_deg)
    x, y, z = axis
    k = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    r = np.eye(3) + np.sin(a) * k + (1 - np.cos(a)) * (k @ k)
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = r, pivot - r @ pivot
    return out


def _tip(st: ObjectState, m: dict, t: float) -> None:
    frac = min(max((t - m["t0"]) / m["duration_s"], 0.0), 1.0)
    ease = frac * frac * (3.0 - 2.0 * frac)  # starts and ends at rest
    w = tip_matrix(m, m["angle_deg"] * ease) @ m["start"]
    st.position = w[:3, 3].copy()
    st.rotation_deg = np.array(euler_from_matrix(w[:3, :3]))


def _flicker(st: ObjectState, t: float) -> None:
    period = st.mechanism.get("flicker")
    if period:
        st.lit_override = int(t / period) % 2 == 0
