"""Uneven ground in the runtime: the agent walks up walkable stairs and ramps, and nothing else.

Flights are built straight from the bundle model (steps are walkable boxes, a ramp a walkable
wedge, as the compiler's `stairs` and `ramp` make them) and walked with `move` actions.
"""

from __future__ import annotations

import math

import pytest
from rt_scenes import box, obj, task

from wac.bundle.model import AGENT_SLOPE_DEG, AGENT_STEP_M, Part


def stairs(n: int, rise: float, run: float = 0.3, x0: float = 1.0, width: float = 1.2):
    """A flight climbing +x from x0: step k a walkable block k x rise high."""
    return [
        box(f"up_{k}", (run, width, k * rise), (x0 + (k - 0.5) * run, 0.0, 0.0), walkable=True)
        for k in range(1, n + 1)
    ]


def ramp(length: float, rise: float, x0: float = 1.0):
    part = Part(id="body", shape="wedge", size=(length, 1.5, rise), material="stone")
    return obj("slope", [part], (x0 + length / 2, 0.0, 0.0), walkable=True)


def walk(env, metres: float):
    r = None
    while metres > 1e-6:
        d = min(4.0, max(0.3, metres))
        r = env.step({"action": "move", "distance_m": d, "direction": "forward"})
        metres -= d
    return r


def test_agent_climbs_stairs_of_the_highest_step(make_env):
    env = make_env(task(stairs(6, AGENT_STEP_M) + [box("deck", (2.0, 1.2, 1.5), (3.8, 0.0, 0.0))]))
    r = walk(env, 3.4)  # over the six steps onto the deck behind them
    foot = env.physics.agent_position()
    assert foot[0] == pytest.approx(3.4, abs=0.05) and "blocked" not in r.outcome
    assert foot[2] == pytest.approx(1.5, abs=0.03)  # standing on the deck, not hovering or sunk
    assert r.pose.z == pytest.approx(1.5, abs=0.03)
    assert env.camera().eye[2] == pytest.approx(1.5 + env.eye_height, abs=0.03)  # the eye follows the surface


def test_agent_stands_on_each_tread_on_the_way_up(make_env):
    env = make_env(task(stairs(5, 0.17)))
    heights = []
    for _ in range(6):
        env.step({"action": "move", "distance_m": 0.3, "direction": "forward"})
        env.step("wait 0.5")
        foot = env.physics.agent_position()
        under = min(max(math.floor((foot[0] - 1.0) / 0.3) + 1, 0), 5) * 0.17  # tread under its centre
        # at rest on the tread under it, or on the next tread's edge (the capsule's rounded foot)
        assert under - 0.01 <= foot[2] <= under + 0.17 + 0.01
        heights.append(float(foot[2]))
    assert all(b >= a - 1e-9 for a, b in zip(heights, heights[1:], strict=False)) and heights[-1] > 3 * 0.17


def test_agent_walks_up_a_ramp_of_the_steepest_slope(make_env):
    length = 1.0 / math.tan(math.radians(AGENT_SLOPE_DEG))  # rise 1 m
    env = make_env(task([ramp(length, 1.0)]))
    walk(env, 1.0 + length - 0.35)  # stop on the ramp, short of its high end
    foot = env.physics.agent_position()
    on_slope = (foot[0] - 1.0) / length  # the surface under the capsule's centre
    assert foot[2] == pytest.approx(on_slope, abs=0.12) and foot[2] > 0.6


def test_a_crate_blocks_the_agent(make_env):
    env = make_env(task([box("crate", (0.6, 0.6, 0.6), (1.5, 0.0, 0.0))]))
    r = walk(env, 3.0)
    foot = env.physics.agent_position()
    assert "blocked" in r.outcome
    assert foot[0] == pytest.approx(1.2 - 0.3, abs=0.05) and foot[2] == pytest.approx(0.0, abs=0.01)


def test_a_walkable_block_higher_than_a_step_blocks_the_agent(make_env):
    env = make_env(task([box("plinth", (0.6, 1.2, 0.6), (1.5, 0.0, 0.0), walkable=True)]))
    r = walk(env, 3.0)
    assert "blocked" in r.outcome and env.physics.agent_position()[2] == pytest.approx(0.0, abs=0.01)


def test_steps_higher_than_the_agent_climbs_block_it(make_env):
    env = make_env(task(stairs(4, 0.35)))
    r = walk(env, 2.0)
    foot = env.physics.agent_position()
    assert "blocked" in r.outcome and foot[0] < 1.0 and foot[2] == pytest.approx(0.0, abs=0.01)


def test_no_step_up_without_walkable_objects(make_env):
    """Flat-ground behaviour is untouched: the step-up probe never runs in a world without them."""
    env = make_env(task([box("crate", (0.6, 0.6, 0.6), (5.0, 5.0, 0.0))]))
    assert not env.physics.walkable_bodies
    r = walk(env, 2.8)
    assert r.pose.x == pytest.approx(2.8, abs=0.03) and env.physics.agent_position()[2] == pytest.approx(
        0.0, abs=1e-3
    )


def test_a_thin_agent_still_climbs_the_highest_step(make_env):
    """The step-up, not the capsule's round foot, climbs: a 0.15 m radius rides over no 0.25 m edge."""
    t = task(stairs(4, AGENT_STEP_M))
    t = t.model_copy(update={"exploration": t.exploration.model_copy(update={"agent_radius_m": 0.15})})
    env = make_env(t)
    walk(env, 2.0)
    foot = env.physics.agent_position()
    assert foot[0] > 1.9 and foot[2] == pytest.approx(4 * AGENT_STEP_M, abs=0.03)


DECK = """
scene terrace {
    description "A yard with a raised deck reached by a flight of stairs."
    type urban
    era modern
    ground grass size (30, 30)
    bounds from (-8, -8) to (8, 8)
    start at (0, -6) yaw 90 deg
    deck: box size (5, 5, 2.5) at (0, 4.5) material concrete walkable yes { name "deck" }
    up: stairs at (0, -2.5) yaw 90 deg steps 15 rise 0.1667 m run 0.3 m material stone
    crate_1: box size (0.3, 0.3, 0.3) on deck at (0, 5) material wood { name "crate" }
}
task deck_crate on terrace {
    anomaly float crate_1 by 0.4 m
}
"""


def test_a_target_seen_only_from_the_stairs_passes_its_self_check(project, tmp_path):
    """The compiler's plan walks up the flight; the runtime agent climbs it and sees the anomaly."""
    from wac.compiler.pipeline import compile_project
    from wac.validation.bundlecheck import check_bundle

    project("deck.wa", DECK, header="")
    out = tmp_path / "build"
    result = compile_project([project.root / "tasks"], project.root, out=out)
    assert result.ok, [d.render() for d in result.diagnostics]
    r = check_bundle(out / "deck_crate")
    assert r.passed, r.reasons


# -- heightfield terrain ---------------------------------------------------------------------------


def hilly(objects=(), seed: int = 3, amplitude: float = 1.5, scale: float = 12.0, start=((0.0, 0.0), 0.0)):
    from wac.bundle.model import Terrain

    t = task(list(objects) or [box("marker", (0.5, 0.5, 1.0), (15.0, 15.0, 0.0))], start=start)
    ground = t.scene.ground.model_copy(
        update={"terrain": Terrain(seed=seed, amplitude_m=amplitude, scale_m=scale)}
    )
    return t.model_copy(update={"scene": t.scene.model_copy(update={"ground": ground})})


def test_the_agent_starts_on_and_walks_over_the_heightfield(make_env):
    from wac.bundle.terrain import height

    t = hilly()
    env = make_env(t)
    g = t.scene.ground
    foot = env.physics.agent_position()
    assert foot[2] == pytest.approx(height(g, 0.0, 0.0), abs=0.02) and abs(foot[2]) > 0.1
    zs = []
    for _ in range(4):
        r = env.step({"action": "move", "distance_m": 3.0, "direction": "forward"})
        env.step("wait 0.5")
        foot = env.physics.agent_position()
        assert foot[2] == pytest.approx(height(g, foot[0], foot[1]), abs=0.05)  # on the surface
        zs.append(float(foot[2]))
    assert "blocked" not in r.outcome and foot[0] == pytest.approx(12.0, abs=0.1)
    assert max(zs) - min(zs) > 0.3  # it went up and down hills


def test_rays_meet_the_heightfield_where_the_terrain_says(make_env):
    from wac.bundle.terrain import height

    t = hilly()
    env = make_env(t)
    for x, y in ((-7.3, 4.1), (2.2, -9.6), (11.0, 11.0)):
        ref, _, point = env.physics.ray((x, y, 10.0), (x, y, -10.0))
        assert ref.kind == "ground" and point[2] == pytest.approx(height(t.scene.ground, x, y), abs=0.02)


def test_the_heightfield_is_drawn(make_env):
    """The rendered ground follows the heights: the depth below the eye matches the terrain."""
    from wac.bundle.terrain import height

    t = hilly(start=((0.0, 0.0), 0.0))
    env = make_env(t)
    env.pitch = 89.0  # straight down
    ids, depth = env.renderer.render_ids(env.camera(), with_depth=True)
    h, w = ids.shape
    eye = env.camera().eye
    assert ids[h // 2, w // 2] == -1
    assert depth[h // 2, w // 2] == pytest.approx(eye[2] - height(t.scene.ground, eye[0], eye[1]), abs=0.05)


MEADOW = """
scene meadow {
    description "Rolling grassland with a few crates and a lamp post."
    type natural
    era modern
    ground grass size (40, 40) terrain heightfield seed 3 amplitude 1.5 m scale 12 m
    bounds from (-15, -15) to (15, 15)
    start at (0, -12) yaw 90 deg
    crate_1: box size (0.6, 0.6, 0.6) at (2, 3) material wood { name "crate" }
    crate_2: box size (0.6, 0.6, 0.6) at (-4, 6) material wood { name "crate" }
    post_1: cylinder radius 0.08 height 3 at (5, -2) material metal { name "lamp post" }
}
task meadow_crate on meadow {
    anomaly float crate_1 by 0.4 m
}
"""


def test_a_task_on_a_heightfield_passes_its_self_check(project, tmp_path):
    from wac.compiler.pipeline import compile_project
    from wac.validation.bundlecheck import check_bundle

    project("meadow.wa", MEADOW, header="")
    out = tmp_path / "build"
    result = compile_project([project.root / "tasks"], project.root, out=out)
    assert result.ok, [d.render() for d in result.diagnostics]
    r = check_bundle(out / "meadow_crate")
    assert r.passed, r.reasons
