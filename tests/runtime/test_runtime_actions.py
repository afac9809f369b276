"""Each action: ranges, time, direction conventions, budget, parse."""

from __future__ import annotations

import numpy as np
import pytest
from rt_scenes import box, door, task

from wac.errors import WacError
from wac.runtime.env import Action, ActionError, BudgetExhausted, validate


def empty(**kw):
    return task([box("marker", (0.5, 0.5, 1.0), (10.0, 10.0, 0.0))], **kw)


def test_move_forward_and_back_distance_and_time(make_env):
    env = make_env(empty())
    r = env.step({"action": "move", "distance_m": 2.8, "direction": "forward"})
    assert r.pose.x == pytest.approx(2.8, abs=0.03) and abs(r.pose.y) < 1e-6
    assert r.sim_elapsed == pytest.approx(2.0, abs=0.02)  # 1.4 m/s
    assert r.moved_m == pytest.approx(2.8, abs=0.03) and "blocked" not in r.outcome
    r = env.step("move 1 back")
    assert r.pose.x == pytest.approx(1.8, abs=0.05)


def test_turn_positive_is_right(make_env):
    env = make_env(empty())
    r = env.step(Action.of("turn", degrees=90))
    assert r.pose.yaw_deg == pytest.approx(-90.0)  # clockwise seen from above
    env.step("move 1")
    assert env.pose().y == pytest.approx(-1.0, abs=0.03)
    r = env.step("turn -180")
    assert r.pose.yaw_deg == pytest.approx(90.0)
    assert r.sim_elapsed == pytest.approx(1.5, abs=0.02)


def test_look_positive_is_down_and_clamped(make_env):
    env = make_env(empty())
    r = env.step("look 30")
    assert r.pose.pitch_deg == pytest.approx(30.0)
    assert env.camera().forward()[2] < 0
    r = env.step("look 90")
    assert r.pose.pitch_deg == pytest.approx(89.0)
    r = env.step("look -90")
    assert r.pose.pitch_deg == pytest.approx(-1.0)


def test_wait_advances_time(make_env):
    env = make_env(empty())
    r = env.step("wait 2.5")
    assert r.sim_time == pytest.approx(2.5, abs=0.01) and r.pose.x == pytest.approx(0.0, abs=1e-3)


def test_interact_opens_a_door_over_time(make_env):
    t = task([door("door_1", (1.8, 0.0, 0.0), open_time=1.0)])
    env = make_env(t, film_interval_s=0.25)
    r = env.step("interact")
    assert r.outcome == "you try to open or close the door"  # the attempt; the frames show the result
    st = env.world.get("door_1")
    assert 0.3 < st.open_frac < 0.7  # 0.5 s into a 1 s swing
    env.step("wait 1")
    assert st.open_frac == 1.0 and st.parts["panel"].hinge_deg == pytest.approx(90.0)
    r = env.step("move 3")  # the swung panel no longer blocks the doorway
    assert r.moved_m == pytest.approx(3.0, abs=0.05)


def test_closed_door_blocks(make_env):
    env = make_env(task([door("door_1", (1.8, 0.0, 0.0))]))
    r = env.step("move 3")
    assert "blocked" in r.outcome and r.pose.x < 1.8 - 0.3


def test_interact_nothing_in_reach(make_env):
    env = make_env(empty())
    r = env.step("interact")
    assert "nothing" in r.outcome and r.sim_elapsed == pytest.approx(0.5, abs=0.01)


@pytest.mark.parametrize(
    "bad",
    [
        {"action": "move", "distance_m": 0.1, "direction": "forward"},
        {"action": "move", "distance_m": 5, "direction": "forward"},
        {"action": "move", "distance_m": 1, "direction": "left"},
        {"action": "turn", "degrees": 181},
        {"action": "look", "degrees": -91},
        {"action": "wait", "seconds": 0.2},
        {"action": "wait", "seconds": 6},
        {"action": "wait", "seconds": "x"},
        {"action": "jump"},
        {"action": "turn"},
        {"action": "interact", "target": "door"},
    ],
)
def test_out_of_range_arguments_are_clear_errors(bad):
    from wac.runtime.env import WorldEnv

    with pytest.raises(ActionError) as exc:
        validate(WorldEnv._coerce(bad))
    assert isinstance(exc.value, WacError) and str(exc.value)


def test_bad_action_costs_nothing(make_env):
    env = make_env(empty())
    with pytest.raises(ActionError):
        env.step("turn 400")
    assert env.steps == 0 and env.sim_time == 0.0
    r = env.try_step("wait 9")
    assert not r.ok and "between 0.5 and 5" in r.outcome


def test_budget_is_enforced(make_env):
    env = make_env(empty(budget=3))
    for _ in range(3):
        r = env.step("wait 0.5")
    assert r.done and r.budget_left == 0
    with pytest.raises(BudgetExhausted, match="budget exhausted"):
        env.step("wait 0.5")
    r = env.try_step("turn 10")
    assert not r.ok and "budget" in r.outcome
    assert env.observe().budget_left == 0  # observing is free


def test_parse():
    assert Action.parse("move 3").kwargs == {"distance_m": 3.0, "direction": "forward"}
    assert Action.parse("move 2 back").kwargs["direction"] == "back"
    assert Action.parse("turn -45").kwargs == {"degrees": -45.0}
    with pytest.raises(ActionError):
        Action.parse("dance")


def test_film_frames_during_an_action(make_env):
    env = make_env(empty(), film_interval_s=0.5)
    r = env.step("move 3")  # 2.14 s
    assert [round(f.t_sim, 2) for f in r.film] == [0.5, 1.0, 1.5, 2.0]
    assert all(f.frame.shape == (120, 160, 3) for f in r.film)
    assert r.frame.dtype == np.uint8
    assert r.film[0].frame.tobytes() != r.frame.tobytes()  # the view moved between film and final frame


@pytest.mark.parametrize(
    ("name", "key"), [("move", "distance_m"), ("turn", "degrees"), ("look", "degrees"), ("wait", "seconds")]
)
def test_the_tool_schemas_publish_the_ranges_the_runtime_checks(name, key):
    from wac.audit.tools import live_tools

    prop = {t.name: t for t in live_tools()}[name].parameters["properties"][key]
    extra = {"direction": "forward"} if name == "move" else {}
    for ok in (prop["minimum"], prop["maximum"]):
        validate(Action.of(name, **{key: ok}, **extra))
    for bad in (prop["minimum"] - 0.1, prop["maximum"] + 0.1):
        with pytest.raises(ActionError, match="must be between"):
            validate(Action.of(name, **{key: bad}, **extra))
