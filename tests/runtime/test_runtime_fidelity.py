"""Operators behave as the paper (C.5) and the reference runtime (WorldAuditBench bugs.js/core.js)
describe: each test states the observable and measures it in the clean and perturbed worlds."""

from __future__ import annotations

import numpy as np
import pytest
from rt_scenes import anomaly, bin_, box, door, task, wall

from wac.bundle.model import (
    AddHole,
    SetMechanism,
    SetMotion,
    SetPhysics,
    SetRender,
    SetVisible,
    Sun,
    new_trigger,
)
from wac.runtime import mechanics
from wac.runtime.geometry import rotation_matrix
from wac.runtime.render import look_at


def pair(make_env, objects, effects, targets=(), trigger=None, **kw):
    t = task(objects, anomalies=[anomaly(effects, targets, trigger)], **kw.pop("task_kw", {}))
    return make_env(t, "clean", **kw), make_env(t, "perturbed", **kw)


def _tilt_deg(st) -> float:
    """Angle between the object's up axis and world up."""
    up = rotation_matrix(st.rotation_deg) @ np.array([0.0, 0.0, 1.0])
    return float(np.degrees(np.arccos(np.clip(up[2], -1.0, 1.0))))


# --- overturn (C.5 abnormal trajectory: the wheelie bin) --------------------------------------------
def test_overturn_rolls_continuously_to_the_angle_and_rests_near_its_place(make_env):
    """The perturbed bin turns ~180 deg (upside down) through a continuous roll that never leaves the
    ground and rests one roll (its height plus its depth) from where it stood; the clean bin does whatever
    physics gives under the same push (never upside down)."""
    eff = SetPhysics(target="bin_1", torque_deg=180.0)
    c, p = pair(make_env, [bin_("bin_1", (1.5, 0.0, 0.0))], [eff], ["bin_1"], new_trigger(kind="contact"))
    out = {}
    for name, env in (("clean", c), ("perturbed", p)):
        st = env.world.get("bin_1")
        start = st.world_position().copy()
        track = []
        env.add_tick_listener(
            lambda env=env, st=st, track=track: track.append(
                (st.world_position().copy(), env.world.aabb(st)[0][2], _tilt_deg(st))
            )
        )
        env.step("move 1.2")
        env.step("wait 3")
        pos = np.array([t[0] for t in track])
        out[name] = {
            "tilt": _tilt_deg(st),
            "shift": float(np.hypot(*(st.world_position() - start)[:2])),
            "lift": max(t[1] for t in track),
            "jump": float(np.max(np.linalg.norm(np.diff(pos, axis=0), axis=1))),
            "turn": float(np.max(np.abs(np.diff([t[2] for t in track])))),
        }
    assert out["perturbed"]["tilt"] == pytest.approx(180.0, abs=5.0)
    assert out["clean"]["tilt"] < 100.0
    lo, hi = p.world.aabb(p.world.get("bin_1"))
    height, depth = float(hi[2] - lo[2]), float(hi[0] - lo[0])
    # near where it started: a 180 deg roll over two edges moves it by its height plus its depth, no more
    assert out["perturbed"]["shift"] == pytest.approx(height + depth, abs=0.15)
    assert out["perturbed"]["lift"] < 0.05  # never leaves the ground
    # continuous: per 0.05 s control tick it moves a few cm and turns a few degrees, no teleport
    assert out["perturbed"]["jump"] < 0.25 and out["perturbed"]["turn"] < 15.0
    assert p.trigger_count() == 1


def test_overturn_angle_is_the_requested_one(make_env):
    eff = SetPhysics(target="bin_1", torque_deg=90.0)
    _, p = pair(make_env, [bin_("bin_1", (1.5, 0.0, 0.0))], [eff], ["bin_1"], new_trigger(kind="contact"))
    p.step("move 1.2")
    p.step("wait 3")
    assert _tilt_deg(p.world.get("bin_1")) == pytest.approx(90.0, abs=5.0)


# --- drift and tremble (reference: drift base +/- range; mesh_tremble 1.5-2.5 Hz rocking) ------------
def test_drift_goes_both_ways_about_its_base(make_env):
    crate = box("crate", (0.6, 0.6, 0.6), (3.0, 0.0, 0.0), material="wood")
    eff = SetMotion(target="crate", motion="drift", axis=(0.0, 1.0, 0.0), range_m=1.0, speed_m_s=1.0)
    c, p = pair(make_env, [crate], [eff], ["crate"])
    ys = {"clean": [], "perturbed": []}
    for name, env in (("clean", c), ("perturbed", p)):
        env.add_tick_listener(
            lambda env=env, name=name: ys[name].append(env.world.get("crate").world_position()[1])
        )
        env.step("wait 5")
    assert max(ys["perturbed"]) == pytest.approx(1.0, abs=0.06)
    assert min(ys["perturbed"]) == pytest.approx(-1.0, abs=0.06)
    assert set(ys["clean"]) == {0.0}


def test_drift_offset_is_a_triangle_about_zero():
    r, v = 1.2, 0.3
    period = 4 * r / v
    ts = np.linspace(0, period, 401)
    off = np.array([mechanics.drift_offset(t, r, v) for t in ts])
    assert off.max() == pytest.approx(r) and off.min() == pytest.approx(-r)
    assert np.max(np.abs(np.diff(off))) <= v * (ts[1] - ts[0]) + 1e-9  # constant speed, no jumps


def test_tremble_is_smooth_rocking_between_1_5_and_2_5_hz():
    amp, dt = 0.03, 0.01
    ts = np.arange(0, 20.0, dt)
    xy = np.array([mechanics.tremble_offset(t, amp)[:2] for t in ts])
    assert np.abs(xy).max() <= amp + 1e-9
    for axis in range(2):
        spec = np.abs(np.fft.rfft(xy[:, axis] - xy[:, axis].mean()))
        freqs = np.fft.rfftfreq(len(ts), dt)
        assert 1.5 <= freqs[int(np.argmax(spec))] <= 2.5
        # smooth: the step between samples is bounded by the fastest sine, not noise of the full range
        assert np.max(np.abs(np.diff(xy[:, axis]))) < 2 * np.pi * 2.5 * amp * dt * 1.5


def test_tremble_in_the_world_rocks_without_noise(make_env):
    crate = box("crate", (0.6, 0.6, 0.6), (3.0, 0.0, 0.0), material="wood")
    eff = SetMotion(target="crate", motion="tremble", amplitude_m=0.05)
    c, p = pair(make_env, [crate], [eff], ["crate"])
    xs = []
    p.add_tick_listener(lambda: xs.append(p.world.get("crate").motion_offset[0]))
    p.step("wait 2")
    xs = np.array(xs)
    assert 0.02 < np.abs(xs).max() <= 0.05
    sign_changes = int(np.sum(np.diff(np.sign(xs)) != 0))
    assert 4 <= sign_changes <= 12  # 1.5-2.5 Hz over 2 s: a handful of swings, not a per-tick buzz
    c.step("wait 0.5")
    assert not c.world.get("crate").motion_offset.any()


# --- floor_hole (reference core.js: fall into the void, respawn at the spawn, `respawned` flag) ------
def test_a_fall_through_a_hole_respawns_at_the_start_and_the_agent_can_go_on(make_env):
    c, p = pair(make_env, [], [AddHole(position=(2.0, 0.0, 0.0), size=(1.5, 1.5, 4.0))])
    start = p.pose()
    r = p.step("move 2")
    assert r.outcome.endswith("; respawned at the start")
    assert (r.pose.x, r.pose.y, r.pose.z) == pytest.approx((start.x, start.y, start.z), abs=0.02)
    assert r.pose.yaw_deg == pytest.approx(start.yaw_deg)
    # the rest of the budget is usable: the next move is not "blocked"
    p.step("turn 90")
    nxt = p.step("move 1.5")
    assert "blocked" not in nxt.outcome and nxt.moved_m == pytest.approx(1.5, abs=0.05)
    cr = c.step("move 2")
    assert "respawned" not in cr.outcome and cr.pose.x == pytest.approx(2.0, abs=0.05)


def test_the_respawn_outcome_names_nothing_of_the_anomaly(make_env):
    _, p = pair(make_env, [], [AddHole(position=(2.0, 0.0, 0.0), size=(1.5, 1.5, 4.0))])
    out = p.step("move 2").outcome.lower()
    assert not any(w in out for w in ("hole", "anomal", "collision", "bug", "dropped", "fell"))


# --- visibility: vanish vs hide; x-ray keeps its shadow ---------------------------------------------
SUN = {"task_kw": {"sun": Sun(azimuth_deg=0.0, elevation_deg=45.0)}}
BLOCK = (0.0, 3.0)  # a 2 m block; with the sun at azimuth 0, elevation 45 its shadow falls at -x


def _ground(env, point=(-1.5, 3.0, 0.0)) -> float:
    img = env.renderer.render(look_at((point[0] - 5.0, point[1] - 5.0, 4.0), point, 20.0))
    return float(img[55:65, 75:85].astype(float).mean())


def _ids(env, oid, eye=(0.0, -3.0, 1.6), at=(0.0, 3.0, 0.8)) -> int:
    return int((env.renderer.render_ids(look_at(eye, at, 60.0)) == env.object_index(oid)).sum())


def _block():
    return [box("block", (1.0, 1.0, 2.0), (*BLOCK, 0.0), material="stone")]


@pytest.mark.parametrize(
    ("effect", "shadow_kept"),
    [
        # reference `vanish` (three.js visible = false): not drawn, casts no shadow, still solid
        (
            SetVisible(target="block", visible=False, casts_shadow=False, keeps_collision=True),
            False,
        ),
        # wac `hide` without a trigger: not drawn, its shadow remains, still solid
        (
            SetVisible(target="block", visible=False, casts_shadow=True, keeps_collision=True),
            True,
        ),
    ],
    ids=["vanish", "hide"],
)
def test_vanish_and_hide_differ_only_in_the_shadow(make_env, effect, shadow_kept):
    c, p = pair(make_env, _block(), [effect], ["block"], **SUN)
    assert _ids(c, "block") > 0 and _ids(p, "block") == 0
    lit = _ground(c, (1.5, 3.0, 0.0))  # sunlit ground on the other side
    assert _ground(c) < 0.8 * lit  # the clean block's shadow
    if shadow_kept:
        assert _ground(p) == pytest.approx(_ground(c), rel=0.1)
    else:
        assert _ground(p) > 0.9 * lit
    p.step("turn -90")  # face +y, the block straight ahead
    assert "blocked" in p.step("move 4").outcome  # still solid either way


def test_xray_keeps_the_targets_shadow(make_env):
    objs = [*_block(), wall("wall_1", (0.0, 1.0, 0.0), size=(4.0, 0.2, 2.5))]
    c, p = pair(make_env, objs, [SetRender(target="block", render="xray")], ["block"], **SUN)
    assert _ids(c, "block") == 0 and _ids(p, "block") > 0  # drawn through the wall in front of it
    assert _ground(p) == pytest.approx(_ground(c), rel=0.1)  # and its shadow is the clean one


# --- jam (reference anim_interrupted: stops part-way and still blocks) --------------------------------
def test_a_jammed_door_keeps_its_collider_shut_even_when_nearly_open(make_env):
    eff = SetMechanism(target="door_1", mechanism="jam", value=0.9)
    c, p = pair(make_env, [door("door_1", (1.8, 0.0, 0.0))], [eff], ["door_1"])
    for env in (c, p):
        env.step("interact")
        env.step("wait 2")
    st = p.world.get("door_1")
    assert st.open_frac == pytest.approx(0.9) and st.parts["panel"].hinge_deg == pytest.approx(81.0)
    assert c.step("move 3").moved_m > 2.9
    assert "blocked" in p.step("move 3").outcome
