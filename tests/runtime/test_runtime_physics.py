"""Movement against solids, non-solids, dynamic objects, liquids and holes; physics determinism."""

from __future__ import annotations

import pytest
from rt_scenes import anomaly, bin_, box, pond, task, wall

from wac.bundle.model import AddHole, SetPose


def test_solid_wall_blocks_and_reports_distance(make_env):
    env = make_env(task([wall("wall_1", (2.0, 0.0, 0.0))]))
    r = env.step("move 4")
    assert "blocked" in r.outcome
    assert r.pose.x == pytest.approx(2.0 - 0.1 - 0.3, abs=0.05)
    assert r.moved_m == pytest.approx(r.pose.x, abs=1e-6)
    assert f"moved {r.moved_m:.2f} m of 4.00 m" in r.outcome


def test_non_solid_object_does_not_block(make_env):
    hedge = box("hedge", (0.4, 3.0, 1.5), (2.0, 0.0, 0.0), material="grass", solid=False)
    env = make_env(task([hedge]))
    r = env.step("move 4")
    assert r.moved_m == pytest.approx(4.0, abs=0.03)


def test_agent_pushes_dynamic_object(make_env):
    env = make_env(task([bin_("bin_1", (1.2, 0.0, 0.0))]))
    env.step("move 3")
    st = env.world.get("bin_1")
    assert st.position[0] > 1.6  # shoved along


def test_push_is_force_limited_heavy_objects_block_the_agent(make_env):
    env = make_env(task([bin_("bin_1", (1.2, 0.0, 0.0), mass=200.0)]))
    r = env.step("move 3")
    assert "blocked" in r.outcome and r.pose.x < 0.7  # stopped at the bin (0.25 + 0.3 m from its centre)
    assert env.world.get("bin_1").position[0] == pytest.approx(
        1.2, abs=0.01
    )  # 250 N does not beat its friction


def test_a_nearly_weightless_object_is_shoved_away(make_env):
    light, normal = (make_env(task([bin_("bin_1", (1.2, 0.0, 0.0), mass=m)])) for m in (0.05, 8.0))
    for env in (light, normal):
        env.step("move 1.5")
        env.step("wait 2")
    x_light, x_normal = (e.world.get("bin_1").position[0] for e in (light, normal))
    assert (
        1.9 < x_normal < 2.6
    )  # pushed along at walking pace (0.85 m after contact), then it slides a little
    assert x_light > x_normal + 1.0  # shoved off ahead of the agent


def test_kicks_on_sleeping_objects_take_effect(make_env):
    env = make_env(task([bin_("bin_1", (2.0, 0.0, 0.0))]))
    env.physics.kick(env.world.get("bin_1"), linear=(2.0, 0.0, 0.0))
    env.step("wait 1")
    assert env.world.get("bin_1").position[0] > 2.2


def test_physics_steps_are_skipped_while_nothing_moves(make_env):
    env = make_env(task([bin_("bin_1", (1.2, 0.0, 0.0))]))
    ph = env.physics
    run, skipped = ph.steps_run, ph.steps_skipped
    env.step("wait 2")
    assert ph.steps_skipped - skipped >= 230 and ph.steps_run - run <= 10
    env.step("move 1.5")  # pushes the bin: steps run until it settles
    run = ph.steps_run
    env.step("wait 2")
    assert ph.steps_run > run
    x = env.world.get("bin_1").position[0]
    env.step("wait 1")
    assert env.world.get("bin_1").position[0] == x


def test_agent_sinks_into_liquid(make_env):
    env = make_env(task([pond("pond_1", (3.0, 0.0))]))
    r = env.step("move 3")
    assert r.pose.z < -0.5
    assert "dropped" in r.outcome


def test_bounds_stop_the_agent(make_env):
    env = make_env(task([], ground=(10.0, 10.0)))  # bounds +-4
    r = env.step("move 4")
    r = env.step("move 4")
    assert r.pose.x < 4.0 and "edge" in r.outcome


def test_hole_lets_agent_fall(make_env):
    t = task([], anomalies=[anomaly([AddHole(position=(2.0, 0.0, 0.0), size=(1.5, 1.5, 1.0))])])
    env = make_env(t)
    r = env.step("move 2")
    assert r.outcome.startswith("moved ") and r.outcome.endswith("forward; respawned at the start")
    clean = make_env(t, variant="clean")
    assert clean.step("move 2").pose.z == pytest.approx(0.0, abs=0.01)


def test_poses_are_deterministic(make_env):
    t = task([bin_("bin_1", (1.2, 0.1, 0.0)), wall("w", (4.0, 1.0, 0.0))])
    acts = ["move 3", "turn 20", "move 2", "wait 1"]
    a = [make_env(t).step(x).pose for x in acts[:1]]
    e1, e2 = make_env(t), make_env(t)
    p1 = [e1.step(x).pose for x in acts]
    p2 = [e2.step(x).pose for x in acts]
    assert p1 == p2 and a[0] == p1[0]
    assert (e1.world.get("bin_1").position == e2.world.get("bin_1").position).all()


def test_statically_displaced_dynamic_objects_stay_put(make_env):
    """A floated or interpenetrating dynamic object keeps the pose its static anomaly gave it."""
    t = task(
        [bin_("bin_1", (2.0, 0.0, 0.0)), bin_("bin_2", (5.0, 0.0, 0.0)), bin_("bin_3", (5.0, 3.0, 0.0))],
        anomalies=[
            anomaly(
                [
                    SetPose(target="bin_1", position=(2.0, 0.0, 0.5)),
                    SetPose(target="bin_3", position=(5.3, 0.0, 0.0)),
                ]
            )
        ],
    )
    env = make_env(t)
    env.step("wait 2")
    assert env.world.get("bin_1").position[2] == pytest.approx(0.5, abs=1e-9)
    assert env.world.get("bin_3").position[0] == pytest.approx(5.3, abs=1e-9)
    assert env.world.get("bin_2").position[0] == pytest.approx(
        5.0, abs=0.005
    )  # woken but held by the frozen one
    assert "blocked" in env.step("move 2").outcome  # still solid


def test_dynamic_objects_sleep_until_touched(make_env):
    t = task([bin_("bin_1", (2.0, 0.0, 0.0))])
    env = make_env(t)
    env.step("wait 1")
    assert env.world.get("bin_1").position[0] == pytest.approx(2.0, abs=1e-3)
    env.step("move 2")
    assert env.world.get("bin_1").position[0] > 2.05


def test_fixed_bodies_meet_everything_but_each_other(make_env):
    """Static objects and the ground compute no contacts with each other (no impulse could move
    either; skipping them is most of a large scene's step time), while the agent, dynamic objects,
    rays and closest-point queries meet them as before."""
    from wac.runtime import climb, physics_bodies

    crate = box("crate", (0.6, 0.6, 0.6), (0.0, 2.0, 0.0))
    env = make_env(task([wall("wall_1", (2.0, 0.0, 0.0)), crate, bin_("bin_1", (-1.5, -1.5, 0.0))]))
    ph, p = env.physics, env.physics.p
    ph.kick(env.world.get("bin_1"), linear=(-1.0, 0.0, 0.0))
    env.step("wait 1")
    fixed = set(ph.ground_bodies) | {b for oid in ("wall_1", "crate") for b, _ in ph.bodies[oid]}
    contacts = p.getContactPoints(physicsClientId=ph.cid)
    assert not [c for c in contacts if c[1] in fixed and c[2] in fixed]
    (bin_body, _), (crate_body, _) = ph.bodies["bin_1"][0], ph.bodies["crate"][0]
    assert any(bin_body in c[1:3] and (c[1] in fixed or c[2] in fixed) for c in contacts)  # on the ground
    moved = env.world.get("bin_1").position
    assert moved[0] < -1.55 and abs(moved[2]) < 0.02  # slid along the ground, not through it
    assert p.getClosestPoints(crate_body, ph.ground_bodies[0], 0.01, physicsClientId=ph.cid)
    ref, _, _ = ph.ray((0.0, 2.0, 3.0), (0.0, 2.0, -1.0))
    assert ref is not None and ref.object_id == "crate"
    assert climb.RAY_SOLID == physics_bodies.RAY_SOLID
    r = env.step("move 4")
    assert "blocked" in r.outcome and r.pose.x == pytest.approx(2.0 - 0.1 - 0.3, abs=0.05)
