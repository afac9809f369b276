"""Every Effect kind: its runtime effect shows in the perturbed variant and not in the clean one."""

from __future__ import annotations

import numpy as np
import pytest
from rt_scenes import anomaly, bin_, box, chair, door, fan, fence, lamp, pond, task, wall

from wac.bundle.model import (
    AddBlocker,
    AddHole,
    AddObject,
    DayNight,
    RemoveObject,
    SetAnimation,
    SetAppearance,
    SetDayNight,
    SetFlicker,
    SetFrameTint,
    SetLight,
    SetMaterial,
    SetMechanism,
    SetMotion,
    SetPartPose,
    SetPhysics,
    SetPose,
    SetRender,
    SetShadow,
    SetSolid,
    SetVisible,
    Sun,
    Tint,
    new_trigger,
)
from wac.runtime import effects as fx
from wac.runtime.render import look_at


def pair(make_env, objects, effects, targets=(), trigger=None, **kw):
    t = task(objects, anomalies=[anomaly(effects, targets, trigger)], **kw.pop("task_kw", {}))
    return make_env(t, "clean", **kw), make_env(t, "perturbed", **kw)


def ids_at(env, eye, target, fov=60.0):
    return env.renderer.render_ids(look_at(eye, target, fov))


def rgb_at(env, eye, target, fov=60.0):
    return env.renderer.render(look_at(eye, target, fov))


def count(env, ids, oid):
    return int((ids == env.object_index(oid)).sum())


def test_all_effect_kinds_are_implemented():
    documented = {
        "set_pose",
        "set_part_pose",
        "set_solid",
        "add_object",
        "remove_object",
        "set_visible",
        "set_render",
        "set_material",
        "set_shadow",
        "set_light",
        "set_physics",
        "set_motion",
        "set_mechanism",
        "set_animation",
        "set_day_night",
        "set_flicker",
        "add_hole",
        "add_blocker",
        "set_appearance",
        "set_frame_tint",
    }
    assert documented == {variant.model_fields["kind"].default for variant in fx.APPLY}


def test_set_pose_float(make_env):
    crate = box("crate", (0.6, 0.6, 0.6), (3.0, 0.0, 0.0), material="wood")
    c, p = pair(make_env, [crate], [SetPose(target="crate", position=(3.0, 0.0, 0.5))], ["crate"])

    def gap(env):  # is there anything at 0.2 m height under the crate?
        ref, _, _ = env.physics.ray((3.0, -2.0, 0.2), (3.0, 2.0, 0.2))
        return ref is None

    assert not gap(c) and gap(p)
    ic, ip = ids_at(c, (3.0, -3.0, 0.3), (3.0, 0.0, 0.3)), ids_at(p, (3.0, -3.0, 0.3), (3.0, 0.0, 0.3))
    assert ic[60, 80] == c.object_index("crate") and ip[60, 80] != p.object_index("crate")


def test_set_part_pose_misaligned_leg(make_env):
    objs = [chair("chair_1", (3.0, 0.0, 0.0))]
    eff = SetPartPose(
        target="chair_1",
        part="back",
        position=(-0.2, 0.3, 0.45),
        rotation_deg=(30, 0, 0),
    )
    c, p = pair(make_env, objs, [eff], ["chair_1"])
    cam = ((3.0, -3.0, 1.0), (3.0, 0.0, 0.5))
    assert (ids_at(c, *cam) != ids_at(p, *cam)).any()
    assert c.world.get("chair_1").parts["back"].position != p.world.get("chair_1").parts["back"].position


def test_set_solid_removes_collision(make_env):
    c, p = pair(
        make_env,
        [fence("fence_1", (2.0, 0.0, 0.0))],
        [SetSolid(target="fence_1", solid=False)],
        ["fence_1"],
    )
    assert "blocked" in c.step("move 4").outcome
    assert p.step("move 4").moved_m == pytest.approx(4.0, abs=0.03)


def test_set_solid_on_liquid_is_a_fake_floor(make_env):
    c, p = pair(
        make_env,
        [pond("pond_1", (3.0, 0.0))],
        [SetSolid(target="pond_1", solid=True)],
        ["pond_1"],
    )
    assert c.step("move 3").pose.z < -0.5
    assert p.step("move 3").pose.z > -0.05


def test_add_object(make_env):
    cola = box("cola", (0.3, 0.3, 0.5), (3.0, 0.0, 0.0), material="red")
    c, p = pair(make_env, [], [AddObject(object=cola)], ["cola"])
    assert "cola" not in c.world.objects
    assert count(p, p.render_ids(), "cola") > 0


def test_remove_object(make_env):
    crate = box("crate", (0.6, 0.6, 0.6), (3.0, 0.0, 0.0), material="wood")
    c, p = pair(make_env, [crate], [RemoveObject(target="crate")], ["crate"])
    cam = ((0.0, 0.0, 1.6), (3.0, 0.0, 0.3))
    assert count(c, ids_at(c, *cam), "crate") > 0 and count(p, ids_at(p, *cam), "crate") == 0
    assert p.step("move 4").moved_m == pytest.approx(4.0, abs=0.03)


def test_remove_object_keeps_what_it_held_in_place(make_env):
    """`keep_in_place` (remove_support): the bin the table held is taken out of the simulation, so it
    stays in mid-air however it is touched; without it the bin is simulated (and falls when woken)."""
    objs = [box("table", (1.0, 1.0, 0.8), (3.0, 0.0, 0.0)), bin_("bin_1", (3.0, 0.0, 0.8))]
    simulated = []
    for keep in ((), ("bin_1",)):
        _, p = pair(make_env, objs, [RemoveObject(target="table", keep_in_place=keep)], ["bin_1"])
        p.step("wait 0.5")
        simulated.append(p.world.get("bin_1").simulated)
        assert p.world.get("bin_1").position[2] == pytest.approx(0.8, abs=0.01)
    assert simulated == [True, False]


def test_set_visible_hidden_but_shadow_and_collision_kept(make_env):
    crate = box("crate", (0.8, 0.8, 1.6), (3.0, 0.0, 0.0), material="wood")
    eff = SetVisible(target="crate", visible=False, casts_shadow=True, keeps_collision=True)
    c, p = pair(make_env, [crate], [eff], ["crate"])
    cam = ((0.0, 0.0, 1.6), (3.0, 0.0, 0.5))
    assert count(c, ids_at(c, *cam), "crate") > 0 and count(p, ids_at(p, *cam), "crate") == 0

    def ground(env, x, y):  # the frame's colour where a ground point projects
        img = rgb_at(env, (0.0, -3.0, 2.0), (x, y, 0.0), 10.0)
        return img[55:65, 75:85].astype(float).mean()

    shade = (3.71, -0.71)  # the sun (azimuth 135, elevation 50) throws the crate's shadow here
    assert ground(p, *shade) == pytest.approx(ground(c, *shade), rel=0.1)  # the hidden crate's shadow stays
    assert ground(p, *shade) < 0.8 * ground(p, 3.71, 1.5)
    assert "blocked" in p.step("move 4").outcome


def test_set_render_xray_draws_through_a_wall(make_env):
    objs = [wall("wall_1", (2.0, 0.0, 0.0)), box("crate", (0.6, 0.6, 0.6), (4.0, 0.0, 0.0), material="wood")]
    c, p = pair(make_env, objs, [SetRender(target="crate", render="xray")], ["crate"])
    cam = ((0.0, 0.0, 1.6), (4.0, 0.0, 0.3))
    assert count(c, ids_at(c, *cam), "crate") == 0 and count(p, ids_at(p, *cam), "crate") > 0


def test_set_render_cull_one_side(make_env):
    crate = box("crate", (0.6, 0.6, 0.6), (3.0, 0.0, 0.0), material="wood")
    c, p = pair(
        make_env,
        [crate],
        [SetRender(target="crate", render="cull", normal=(-1.0, 0.0))],
        ["crate"],
    )
    west, east = ((0.0, 0.0, 1.6), (3.0, 0.0, 0.3)), ((6.0, 0.0, 1.6), (3.0, 0.0, 0.3))
    assert count(c, ids_at(c, *west), "crate") > 0 and count(p, ids_at(p, *west), "crate") == 0
    assert count(p, ids_at(p, *east), "crate") > 0


def test_set_render_flip_normals(make_env):
    crate = box("crate", (0.8, 0.8, 0.8), (3.0, 0.0, 0.0), material="wood")
    c, p = pair(make_env, [crate], [SetRender(target="crate", render="flip_normals")], ["crate"])
    cam = ((0.0, -1.0, 2.0), (3.0, 0.0, 0.4))
    assert (rgb_at(c, *cam) != rgb_at(p, *cam)).any()
    assert p.renderer.actors[("crate", "body")].GetProperty().GetFrontfaceCulling()


def test_set_render_lod_proxy(make_env):
    objs = [chair("chair_1", (8.0, 0.0, 0.0))]
    c, p = pair(make_env, objs, [SetRender(target="chair_1", render="lod_proxy")], ["chair_1"])
    cam = ((0.0, 0.0, 1.6), (8.0, 0.0, 0.5), 20.0)
    assert count(p, ids_at(p, *cam), "chair_1") > 1.5 * count(c, ids_at(c, *cam), "chair_1")


def test_set_material(make_env):
    crate = box("crate", (0.8, 0.8, 0.8), (3.0, 0.0, 0.0), material="wood")
    c, p = pair(make_env, [crate], [SetMaterial(target="crate", material="magenta")], ["crate"])
    cam = ((0.0, 0.0, 1.6), (3.0, 0.0, 0.4))
    ids = ids_at(c, *cam)
    mask = ids == c.object_index("crate")
    mc, mp = rgb_at(c, *cam)[mask].mean(axis=0), rgb_at(p, *cam)[mask].mean(axis=0)
    assert mp[2] > mc[2] + 40  # magenta has blue, wood hardly any


def _shadow_scene():
    return [box("block", (1.0, 1.0, 2.0), (0.0, 3.0, 0.0), material="stone")]


def _ground_brightness(env, point):
    img = rgb_at(env, (point[0] - 5.0, point[1] - 5.0, 4.0), point, 20.0)
    return float(img[55:65, 75:85].astype(float).mean())


def test_set_shadow_removed(make_env):
    kw = {"task_kw": {"sun": Sun(azimuth_deg=0.0, elevation_deg=45.0)}}
    c, p = pair(
        make_env,
        _shadow_scene(),
        [SetShadow(target="block", casts_shadow=False)],
        ["block"],
        **kw,
    )
    at = (-1.5, 3.0, 0.0)
    assert _ground_brightness(p, at) > _ground_brightness(c, at) + 5


def test_set_shadow_displaced(make_env):
    kw = {"task_kw": {"sun": Sun(azimuth_deg=0.0, elevation_deg=45.0)}}
    eff = SetShadow(target="block", casts_shadow=True, shadow_offset=(0.0, -4.0))
    c, p = pair(make_env, _shadow_scene(), [eff], ["block"], **kw)
    moved = (-1.5, -1.0, 0.0)
    assert _ground_brightness(p, moved) < _ground_brightness(c, moved) - 5
    assert _ground_brightness(p, (-1.5, 3.0, 0.0)) > _ground_brightness(c, (-1.5, 3.0, 0.0)) + 5


def _night():
    return {"task_kw": {"sun": Sun(elevation_deg=50.0, intensity=0.05)}}


def test_set_light_dark_lamp(make_env):
    eff = SetLight(target="lamp_1", lit=True, illuminates=False)
    c, p = pair(make_env, [lamp("lamp_1", (3.0, 0.0, 0.0))], [eff], ["lamp_1"], **_night())
    ground = (3.0, -1.5, 0.0)
    assert _ground_brightness(c, ground) > _ground_brightness(p, ground) + 5
    assert p.world.lamp_lit(p.world.get("lamp_1"))


def test_set_light_glow_on_non_lamp(make_env):
    crate = box("crate", (0.8, 0.8, 0.8), (3.0, 0.0, 0.0), material="wood")
    c, p = pair(make_env, [crate], [SetLight(target="crate", lit=True)], ["crate"], **_night())
    cam = ((0.0, 0.0, 1.6), (3.0, 0.0, 0.4))
    mask = ids_at(c, *cam) == c.object_index("crate")
    assert rgb_at(p, *cam)[mask].mean() > rgb_at(c, *cam)[mask].mean() + 30


def test_set_physics_light_object_slides_far(make_env):
    objs = [bin_("bin_1", (1.5, 0.0, 0.0), mass=200.0)]
    c, p = pair(make_env, objs, [SetPhysics(target="bin_1", mass_kg=0.5, friction=0.05)], ["bin_1"])
    for env in (c, p):
        env.step("move 1")
        env.step("interact")
        env.step("wait 2")
    dc = c.world.get("bin_1").position[0] - 1.5
    dp = p.world.get("bin_1").position[0] - 1.5
    assert dp > dc + 0.3


def test_set_physics_bounce(make_env):
    objs = [bin_("bin_1", (3.0, 0.0, 0.0))]
    c, p = pair(make_env, objs, [SetPhysics(target="bin_1", restitution=0.95)], ["bin_1"])
    heights = []
    for env in (c, p):
        hs = []
        for _ in range(4):
            env.step("wait 0.5")
            hs.append(env.world.get("bin_1").position[2])
        heights.append(max(hs))
    assert heights[0] < 0.02 and heights[1] > 0.05


def test_set_motion_drift_and_tremble(make_env):
    crate = box("crate", (0.6, 0.6, 0.6), (3.0, 0.0, 0.0), material="wood")
    eff = SetMotion(target="crate", motion="drift", axis=(0.0, 1.0, 0.0), range_m=1.0, speed_m_s=0.5)
    c, p = pair(make_env, [crate], [eff], ["crate"])
    ys = []
    for env in (c, p):
        env.step("wait 1")
        ys.append(env.world.get("crate").world_position()[1])
    assert ys[0] == 0.0 and 0.3 < ys[1] < 0.7
    eff = SetMotion(target="crate", motion="tremble", amplitude_m=0.05)
    c, p = pair(make_env, [crate], [eff], ["crate"])
    p.step("wait 0.5")
    assert 0 < np.abs(p.world.get("crate").motion_offset).max() <= 0.05
    c.step("wait 0.5")
    assert not c.world.get("crate").motion_offset.any()


def _door_pair(make_env, mech, value=None):
    return pair(
        make_env,
        [door("door_1", (1.8, 0.0, 0.0))],
        [SetMechanism(target="door_1", mechanism=mech, value=value)],
        ["door_1"],
    )


def test_mechanism_autoclose(make_env):
    c, p = _door_pair(make_env, "autoclose", 1.0)
    for env in (c, p):
        env.step("interact")
        env.step("wait 4")
    assert c.world.get("door_1").open_frac == 1.0 and p.world.get("door_1").open_frac == 0.0


def test_mechanism_jam_blocks(make_env):
    c, p = _door_pair(make_env, "jam", 0.2)
    for env in (c, p):
        env.step("interact")
        env.step("wait 2")
    assert p.world.get("door_1").open_frac == pytest.approx(0.2)
    assert c.step("move 3").moved_m > 2.9 and "blocked" in p.step("move 3").outcome


def test_mechanism_ghost_door(make_env):
    c, p = _door_pair(make_env, "ghost")
    for env in (c, p):
        env.step("interact")
        env.step("wait 2")
    assert p.world.get("door_1").parts["panel"].hinge_deg == pytest.approx(90.0)  # looks open
    assert c.step("move 3").moved_m > 2.9 and "blocked" in p.step("move 3").outcome


def test_mechanism_phantom_door(make_env):
    c, p = _door_pair(make_env, "phantom")
    for env in (c, p):
        env.step("interact")
        env.step("wait 2")
    assert p.world.get("door_1").parts["panel"].hinge_deg == 0.0  # looks shut
    assert p.step("move 3").moved_m > 2.9


def test_mechanism_speed(make_env):
    c, p = _door_pair(make_env, "speed", 10.0)
    for env in (c, p):
        env.step("interact")
    assert p.world.get("door_1").open_frac == 1.0 and c.world.get("door_1").open_frac < 0.7


def test_mechanism_dead_and_delay(make_env):
    c, p = _door_pair(make_env, "dead")
    r, rc = p.step("interact"), c.step("interact")
    assert r.outcome == rc.outcome  # the text says the attempt, never the (perceivable) result
    assert "nothing happens" not in r.outcome
    c.step("wait 3")
    assert c.world.get("door_1").open_frac == 1.0
    p.step("wait 3")
    assert p.world.get("door_1").open_frac == 0.0
    c, p = _door_pair(make_env, "delay", 2.0)
    p.step("interact")
    p.step("wait 1")
    assert p.world.get("door_1").open_frac == 0.0
    p.step("wait 3")
    assert p.world.get("door_1").open_frac == 1.0


def test_mechanism_through_walls(make_env):
    objs = [wall("wall_1", (1.0, 0.0, 0.0)), lamp("lamp_1", (2.2, 0.0, 0.0), lit=False)]
    # the lamp's pole is behind the wall; raise the view so the crosshair meets the wall first
    c, p = pair(make_env, objs, [SetMechanism(target="lamp_1", mechanism="through_walls")], ["lamp_1"])
    oc, op = c.step("interact").outcome, p.step("interact").outcome
    assert ("nothing" in oc or "wall" in oc) and op == oc  # the agent sees the wall, not the lamp
    assert p.world.lamp_lit(p.world.get("lamp_1")) and not c.world.lamp_lit(c.world.get("lamp_1"))


def test_set_animation(make_env):
    for anim, check in (
        ("freeze", lambda c, p: p == 0.0 and c > 50),
        ("speed", lambda c, p: p > 3 * c or (p % 360) != (c % 360)),
        ("jump", lambda c, p: p % 90 == 0),
    ):
        cl, pe = pair(
            make_env,
            [fan("fan_1", (3.0, 0.0, 0.0))],
            [
                SetAnimation(
                    target="fan_1",
                    animation=anim,
                    value=None if anim != "jump" else 90.0,
                    period_s=1.0,
                )
            ],
            ["fan_1"],
        )
        cl.step("wait 1")
        pe.step("wait 1")
        a = cl.world.get("fan_1").parts["blades"].spin_deg
        b = pe.world.get("fan_1").parts["blades"].spin_deg
        assert check(a, b), (anim, a, b)


def test_set_day_night_abrupt(make_env):
    kw = {"task_kw": {"day_night": DayNight(period_s=60.0, transition="gradual", phase=0.2)}}
    c, p = pair(make_env, [], [SetDayNight(period_s=2.0, transition="abrupt")], **kw)
    skies = []
    for env in (c, p):
        vals = []
        for _ in range(4):
            env.step("wait 0.5")
            vals.append(env.world.daylight()[2])
        skies.append(vals)
    assert len(set(np.round(skies[0], 1))) == 1 and set(skies[1]) == {0.0, 1.0}


def test_set_flicker(make_env):
    c, p = pair(
        make_env,
        [lamp("lamp_1", (3.0, 0.0, 0.0))],
        [SetFlicker(target="lamp_1", period_s=0.5)],
        ["lamp_1"],
    )
    states = []
    for env in (c, p):
        s = []
        for _ in range(4):
            env.step("wait 0.5")
            s.append(env.world.lamp_lit(env.world.get("lamp_1")))
        states.append(s)
    assert states[0] == [True] * 4 and set(states[1]) == {True, False}


def test_add_hole(make_env):
    c, p = pair(make_env, [], [AddHole(position=(2.0, 0.0, 0.0), size=(1.5, 1.5, 1.0))])
    assert c.step("move 2").pose.z == pytest.approx(0.0, abs=0.01)
    assert p.step("move 2").outcome.endswith("respawned at the start")  # fell through, as the reference
    cam = ((0.0, 0.0, 1.6), (2.0, 0.0, 0.0))
    assert (ids_at(c, *cam) == ids_at(p, *cam)).all()  # looks intact


def test_add_blocker(make_env):
    c, p = pair(make_env, [], [AddBlocker(position=(2.0, 0.0, 0.0), size=(0.3, 4.0, 2.5))])
    assert c.step("move 4").moved_m == pytest.approx(4.0, abs=0.03)
    r = p.step("move 4")
    assert "blocked" in r.outcome and r.pose.x < 1.8
    assert (p.render_ids() <= 0).all()  # nothing drawn


def test_set_appearance_under_distance_trigger(make_env):
    crate = box("crate", (0.6, 0.6, 0.6), (8.0, 0.0, 0.0), material="wood")
    eff = SetAppearance(target="crate", scale=(2.5, 2.5, 2.5))
    c, p = pair(make_env, [crate], [eff], ["crate"], new_trigger(kind="beyond", distance_m=5.0))
    p.step("wait 0.5")
    cam = ((0.0, 0.0, 1.6), (8.0, 0.0, 0.3), 30.0)
    assert count(p, ids_at(p, *cam), "crate") > 3 * count(c, ids_at(c, *cam), "crate")
    p.step("move 4")  # within 5 m: back to normal size
    assert p.world.get("crate").appearance_scale is None


def test_set_pose_mirror_and_invert(make_env):
    objs = [chair("chair_1", (3.0, 0.0, 0.0)), chair("chair_2", (3.0, 2.0, 0.0))]
    effs = [
        SetPose(target="chair_1", scale=(1.0, -1.0, 1.0), rotation_deg=(90.0, 0.0, 0.0)),
        SetPose(target="chair_2", position=(3.0, 2.0, 0.9), rotation_deg=(0.0, 0.0, 180.0)),
    ]
    c, p = pair(make_env, objs, effs, ["chair_1", "chair_2"])
    cam = ((0.0, 1.0, 1.4), (3.0, 1.0, 0.4))
    assert (ids_at(c, *cam) != ids_at(p, *cam)).any()
    lo, hi = p.world.aabb(p.world.get("chair_2"))
    assert lo[2] == pytest.approx(0.0, abs=0.02) and hi[2] == pytest.approx(
        0.9, abs=0.02
    )  # upside down, on the ground
    p.step("wait 0.5")  # physics accepts the mirrored collider
    assert p.physics.bodies["chair_1"]


def test_mechanism_one_way_lets_in_and_traps(make_env):
    shed = box("shed", (3.0, 3.0, 2.5), (4.0, 0.0, 0.0), material="wood")
    eff = SetMechanism(target="shed", mechanism="one_way", normal=(-1.0, 0.0))  # enter from the west
    c, p = pair(make_env, [shed], [eff], ["shed"])
    assert "blocked" in c.step("move 4").outcome
    r = p.step("move 4")  # walks in through the west face
    assert r.pose.x > 3.0
    p.step("turn 180")
    r = p.step("move 3")  # cannot get back out
    assert "blocked" in r.outcome and r.pose.x > 2.5
    st = p.world.get("shed")  # the runtime's bookkeeping is typed, apart from the declared mechanisms
    assert st.mechanism == {"one_way": None} and st.mechanism_state.trapped
    assert st.mechanism_state.one_way_normal == pytest.approx((-1.0, 0.0))
    with pytest.raises(AttributeError):
        st.mechanism_state.traped  # noqa: B018  (a misspelt field fails, never reads as None)


def test_one_way_other_sides_still_block(make_env):
    shed = box("shed", (3.0, 3.0, 2.5), (4.0, 0.0, 0.0), material="wood")
    eff = SetMechanism(target="shed", mechanism="one_way", normal=(0.0, 1.0))  # enter from the north
    _, p = pair(make_env, [shed], [eff], ["shed"])
    assert "blocked" in p.step("move 4").outcome


def test_fake_floor_blocker_over_liquid(make_env):
    eff = AddBlocker(target="pond_1", position=(3.0, 0.0, -0.03), size=(3.0, 3.0, 0.05))
    c, p = pair(make_env, [pond("pond_1", (3.0, 0.0))], [eff], ["pond_1"])
    assert c.step("move 3").pose.z == pytest.approx(0.02 - 0.8, abs=0.05)
    assert p.step("move 3").pose.z > -0.05


def test_no_vtk_errors_with_special_actors(make_env):
    """Projected shadows, proxies and x-ray actors all compile under the shadow pass."""
    import vtk

    out = vtk.vtkStringOutputWindow()
    vtk.vtkOutputWindow.SetInstance(out)
    objs = [
        _shadow_scene()[0],
        chair("chair_1", (8.0, 0.0, 0.0)),
        box("crate", (0.6, 0.6, 0.6), (4.0, 2.0, 0.0)),
    ]
    effs = [
        SetShadow(target="block", casts_shadow=True, shadow_offset=(1.0, 1.0)),
        SetRender(target="chair_1", render="lod_proxy"),
        SetRender(target="crate", render="xray"),
        SetVisible(target="crate", visible=False, casts_shadow=True),
    ]
    _, p = pair(make_env, objs, effs, ["block"])
    p.step("turn 20")
    assert "ERR" not in out.GetOutput() and "error" not in out.GetOutput().lower()


def test_set_physics_overturn_on_contact(make_env):
    eff = SetPhysics(target="bin_1", torque_deg=180.0)
    c, p = pair(make_env, [bin_("bin_1", (1.5, 0.0, 0.0))], [eff], ["bin_1"], new_trigger(kind="contact"))
    from wac.bundle.transforms import rotation

    tilt = []  # angle of the bin's up axis from vertical
    for env in (c, p):
        env.step("move 1.2")
        env.step("wait 2")
        up = rotation(*(float(v) for v in env.world.get("bin_1").rotation_deg)) @ np.array([0.0, 0.0, 1.0])
        tilt.append(float(np.degrees(np.arccos(np.clip(up[2], -1.0, 1.0)))))
    # a walk-in tips the clean bin at most onto its side (pushed at hip height); the faulty one turns over
    assert tilt[0] <= 100 and tilt[1] > 150, tilt
    assert p.trigger_count() == 1


def test_set_frame_tint_covers_every_pixel_of_the_perturbed_frame_only(make_env):
    """The reference's corrupted frame: rgb * (1 - strength) + colour * strength over the whole
    image (sky included); what is drawn where is unchanged."""
    crate = box("crate", (0.6, 0.6, 0.6), (3.0, 0.0, 0.0), material="wood")
    eff = SetFrameTint(color=(1.0, 0.0, 0.2), strength=0.35)
    c, p = pair(make_env, [crate], [eff], ["crate"])
    cam = ((0.0, 0.0, 1.6), (3.0, 0.0, 1.0), 60.0)
    clean, pert = rgb_at(c, *cam).astype(float), rgb_at(p, *cam).astype(float)
    expected = clean * 0.65 + np.array([255.0, 0.0, 51.0]) * 0.35
    assert np.abs(pert - expected).max() <= 1.0
    assert (ids_at(c, *cam) == ids_at(p, *cam)).all()


def test_set_frame_tint_composes_with_the_scene_tint_and_undoes(make_env):
    c, _ = pair(make_env, [], [])
    w = c.world
    undo = fx.apply(
        SetFrameTint(color=(1.0, 0.0, 0.2), strength=0.35), fx.EffectContext(world=w, physics=None)
    )
    assert w.scene.tint == Tint(color=(1.0, 0.0, 0.2), strength=0.35)
    undo()
    assert w.scene.tint is None
    # two blends are one: the composed tint gives the same pixels as the scene's tint, then the frame's
    from wac.runtime.atmosphere import tinted

    img = np.arange(0, 256, 5, dtype=np.uint8).reshape(-1, 1, 1).repeat(3, axis=2)
    first, second = Tint(color=(0.0, 0.0, 1.0), strength=0.3), Tint(color=(1.0, 0.0, 0.0), strength=0.5)
    both = fx.over(first, second.color, second.strength)
    once, twice = tinted(img, both).astype(int), tinted(tinted(img, first), second).astype(int)
    assert np.abs(once - twice).max() <= 1
