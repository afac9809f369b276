"""Walking in free space without simulating (`Physics._walk_freely`): the agent lands where Bullet
would put it, and every step near a body, over a hole or while something moves is simulated."""

from __future__ import annotations

import pytest
from rt_scenes import anomaly, bin_, box, pond, task, wall

from wac.bundle.model import AddHole


def pair(make_env, t):
    """The same world twice: walking freely where it may, and simulating every step."""
    fast, slow = make_env(t), make_env(t)
    slow.physics._walk_freely = lambda vx, vy: False
    return fast, slow


def run(env, actions):
    return [env.step(a) for a in actions]


def test_a_walk_in_free_space_is_walked_and_ends_where_simulation_ends(make_env):
    fast, slow = pair(make_env, task([box("crate", (0.6, 0.6, 0.6), (0.0, 6.0, 0.0))]))
    acts = ["move 3", "turn 30", "move 2.5", "move 1 backward", "wait 1"]
    for a, b in zip(run(fast, acts), run(slow, acts), strict=True):
        assert a.outcome == b.outcome
        assert (a.pose.x, a.pose.y) == pytest.approx((b.pose.x, b.pose.y), abs=1e-9)
        assert a.pose.z == pytest.approx(b.pose.z, abs=1e-9)
    assert slow.physics.steps_walked == 0
    assert fast.physics.steps_walked > 5 * fast.physics.steps_run  # almost every step was walked


def test_steps_near_a_wall_are_simulated_and_blocked_alike(make_env):
    fast, slow = pair(make_env, task([wall("wall_1", (3.0, 0.0, 0.0))]))
    a, b = fast.step("move 4"), slow.step("move 4")
    assert "blocked" in a.outcome and a.outcome == b.outcome
    assert a.pose.x == pytest.approx(b.pose.x, abs=1e-6)
    assert 0 < fast.physics.steps_walked and fast.physics.steps_run > 0  # the approach walked, the wall met


@pytest.mark.parametrize(
    "objects, effects",
    [
        ([pond("pond_1", (3.0, 0.0))], []),  # the agent sinks into the water
        ([], [AddHole(position=(3.0, 0.0, 0.0), size=(1.5, 1.5, 1.0))]),  # and falls through the hole
    ],
    ids=["liquid", "hole"],
)
def test_the_ground_opening_under_the_agent_is_simulated(make_env, objects, effects):
    t = task(objects, anomalies=[anomaly(effects)] if effects else ())
    fast, slow = pair(make_env, t)
    a, b = fast.step("move 3"), slow.step("move 3")
    assert a.outcome == b.outcome and ("dropped" in a.outcome or "respawned" in a.outcome)
    assert (a.pose.x, a.pose.y, a.pose.z) == pytest.approx((b.pose.x, b.pose.y, b.pose.z), abs=1e-6)


def test_a_moving_object_far_away_keeps_being_simulated(make_env):
    """The agent walks away from a bin that was just shoved: the steps are simulated while it slides,
    so it ends where it would have (a walk that skipped them would leave it frozen mid-slide)."""
    t = task([bin_("bin_1", (-6.0, 0.0, 0.0))])
    fast, slow = pair(make_env, t)
    for env in (fast, slow):
        env.physics.kick(env.world.get("bin_1"), linear=(-3.0, 0.0, 0.0))
        env.step("move 4")
    x_fast, x_slow = (e.world.get("bin_1").position[0] for e in (fast, slow))
    assert x_fast < -6.3 and x_fast == pytest.approx(x_slow, abs=1e-4)  # not frozen mid-slide
    assert fast.physics.steps_walked > 0  # once it came to rest the walk went on freely
