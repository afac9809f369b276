"""Each trigger kind: unit semantics on synthetic percepts, and a few end-to-end in the world."""

from __future__ import annotations

import pytest
from rt_scenes import anomaly, bin_, box, task

from wac.bundle.model import (
    TRIGGER_DEFAULTS,
    RemoveObject,
    SetMaterial,
    SetPhysics,
    SetVisible,
    TriggerKind,
    new_trigger,
)
from wac.runtime.triggers import Missed, Percept, TriggerState, why_not_fired


def pc(t, in_view=False, dist=5.0, xy=(0.0, 0.0), contact=False, interacted=False):
    return Percept(t, in_view, dist, xy, contact, interacted)


def run(trig, percepts):
    st = TriggerState(trig)
    return [st.update(p) for p in percepts], st


def test_always_is_on_at_load():
    assert TriggerState(new_trigger()).initial()
    assert not TriggerState(new_trigger(kind=TriggerKind.after, after_s=1)).initial()


def test_revisit_needs_sighting_then_time_away_and_fires_unseen():
    out, st = run(
        new_trigger(kind=TriggerKind.revisit, away_s=2.0),
        [pc(0), pc(1), pc(2, True), pc(3), pc(3.9), pc(4.1), pc(9)],
    )
    assert out == [None, None, None, None, None, "on", None]
    assert st.fired == 1


def test_revisit_by_distance_moved():
    out, _ = run(
        new_trigger(kind=TriggerKind.revisit, leave_m=3.0),
        [pc(0, True, xy=(0, 0)), pc(1, xy=(1, 0)), pc(20, xy=(2.9, 0)), pc(21, xy=(3.1, 0))],
    )
    assert out == [None, None, None, "on"]


def test_revisit_seen_within():
    out, _ = run(
        new_trigger(kind=TriggerKind.revisit, away_s=1.0, seen_within_m=4.0),
        [pc(0, True, dist=10), pc(5), pc(6, True, dist=3), pc(8)],
    )
    assert out == [None, None, None, "on"]


def test_revisit_repeat_toggles():
    out, _ = run(
        new_trigger(kind=TriggerKind.revisit, away_s=1.0, repeat=True),
        [pc(0, True), pc(2), pc(3, True), pc(5)],
    )
    assert out == [None, "on", None, "off"]


def test_look_away_fires_on_transition():
    out, _ = run(
        new_trigger(kind=TriggerKind.look_away), [pc(0), pc(1, True), pc(2, True), pc(3), pc(4, True), pc(5)]
    )
    assert out == [None, None, None, "on", None, None]


def test_look_away_seen_within():
    out, _ = run(
        new_trigger(kind=TriggerKind.look_away, seen_within_m=4.0),
        [pc(0, True, dist=10), pc(1, dist=10), pc(2, True, dist=3), pc(3, True, dist=6), pc(4, dist=6)],
    )
    assert out == [None, None, None, None, "on"]


def test_leave_enter_then_exit_deferred_while_in_view():
    out, _ = run(
        new_trigger(kind=TriggerKind.leave, enter_m=3, exit_m=8),
        [
            pc(0, dist=10),
            pc(1, dist=2),
            pc(2, dist=5),
            pc(3, True, dist=9),
            pc(4, True, dist=9),
            pc(5, dist=9),
        ],
    )
    assert out == [None, None, None, "deferred", None, "on"]


def test_a_leave_trigger_without_distances_uses_the_compilers_defaults():
    d = TRIGGER_DEFAULTS
    near, far = d.enter_m - 0.5, d.exit_m + 0.5
    out, _ = run(
        new_trigger(kind=TriggerKind.leave), [pc(0, dist=near), pc(1, dist=d.exit_m - 0.5), pc(2, dist=far)]
    )
    assert out == [None, None, "on"]
    out, _ = run(new_trigger(kind=TriggerKind.leave), [pc(0, dist=d.enter_m + 0.5), pc(1, dist=far)])
    assert out == [None, None]  # never came within enter_m: not armed


def test_after_deferred_while_in_view():
    out, _ = run(new_trigger(kind=TriggerKind.after, after_s=3), [pc(1), pc(3.5, True), pc(4, True), pc(4.5)])
    assert out == [None, "deferred", None, "on"]
    out, _ = run(new_trigger(kind=TriggerKind.after, after_s=3, only_unseen=False), [pc(1), pc(3.5, True)])
    assert out == [None, "on"]


def test_every_toggles():
    out, st = run(new_trigger(kind=TriggerKind.every, period_s=2), [pc(t) for t in (0, 1, 2, 3, 4, 6)])
    assert out == [None, None, "on", None, "off", "on"]
    assert st.fired == 2


def test_beyond_and_within_with_hysteresis():
    out, _ = run(
        new_trigger(kind=TriggerKind.beyond, distance_m=6),
        [pc(0, dist=d) for d in (5, 6.1, 6.3, 5.9, 5.7, 6.3)],
    )
    assert out == [None, None, "on", None, "off", "on"]
    out, _ = run(
        new_trigger(kind=TriggerKind.within, distance_m=3), [pc(0, dist=d) for d in (5, 2.9, 2.7, 3.1, 3.3)]
    )
    assert out == [None, None, "on", None, "off"]


def test_contact_and_interact_fire_on_rising_edge():
    out, st = run(
        new_trigger(kind=TriggerKind.contact),
        [pc(0), pc(1, contact=True), pc(2, contact=True), pc(3), pc(4, contact=True)],
    )
    assert out == [None, "on", None, None, None] and st.fired == 1
    out, _ = run(
        new_trigger(kind=TriggerKind.interact, repeat=True),
        [pc(0, interacted=True), pc(1), pc(2, interacted=True)],
    )
    assert out == ["on", None, "on"]


# --- end to end ------------------------------------------------------------------------------------


def _crate_task(trigger, effects=None):
    crate = box("crate", (0.6, 0.6, 0.6), (5.0, 0.0, 0.0), material="wood")
    eff = effects or [RemoveObject(target="crate")]
    return task([crate], anomalies=[anomaly(eff, ["crate"], trigger, operator="hide")])


def test_revisit_in_world_changes_only_while_out_of_view(make_env):
    env = make_env(_crate_task(new_trigger(kind=TriggerKind.revisit, away_s=2.0)))
    env.step("wait 1")  # crate seen
    env.step("wait 3")
    assert env.world.get("crate").present  # still in view: no change
    env.step("turn 180")
    env.step("wait 3")
    assert not env.world.get("crate").present
    assert env.trigger_count() == 1
    fired = [e for e in env.events if e.event == "fired"]
    assert len(fired) == 1 and fired[0].operator == "hide"


def test_look_away_in_world(make_env):
    env = make_env(_crate_task(new_trigger(kind=TriggerKind.look_away)))
    env.step("wait 1")
    assert env.world.get("crate").present
    env.step("turn 120")
    assert not env.world.get("crate").present


def test_after_in_world_is_deferred_while_watched(make_env):
    env = make_env(_crate_task(new_trigger(kind=TriggerKind.after, after_s=1.0)))
    env.step("wait 3")
    assert env.world.get("crate").present
    assert any(e.event == "deferred" for e in env.events)
    env.step("turn 150")
    assert not env.world.get("crate").present


def test_leave_in_world(make_env):
    env = make_env(_crate_task(new_trigger(kind=TriggerKind.leave, enter_m=2.0, exit_m=4.0)))
    env.step("move 3")  # within 2 m of the crate
    env.step("turn 180")
    env.step("move 3")  # now 4+ m away and looking away
    assert not env.world.get("crate").present


def test_within_in_world_and_back(make_env):
    eff = [SetVisible(target="crate", visible=False)]
    env = make_env(_crate_task(new_trigger(kind=TriggerKind.within, distance_m=2.0), eff))
    env.step("move 3.5")
    assert not env.world.get("crate").visible
    env.step("move 3 back")
    assert env.world.get("crate").visible
    kinds = [e.event for e in env.events]
    assert kinds == ["fired", "deactivated"]


def test_every_in_world(make_env):
    eff = [SetMaterial(target="crate", material="red")]
    env = make_env(_crate_task(new_trigger(kind=TriggerKind.every, period_s=1.0), eff))
    env.step("wait 1.5")
    assert env.world.get("crate").parts["body"].material == "red"
    env.step("wait 1")
    assert env.world.get("crate").parts["body"].material == "wood"


def test_contact_in_world(make_env):
    t = task(
        [bin_("bin_1", (1.5, 0.0, 0.0))],
        anomalies=[
            anomaly(
                [SetPhysics(target="bin_1", impulse=(0.0, 0.0, 80.0))],
                ["bin_1"],
                new_trigger(kind=TriggerKind.contact),
                operator="launch",
            )
        ],
    )
    env = make_env(t)
    env.step("move 1.5")
    assert env.trigger_count() == 1
    env.step("wait 0.5")
    assert env.world.get("bin_1").position[2] > 0.5  # flying


def test_interact_trigger_in_world(make_env):
    crate = box("crate", (0.6, 0.6, 2.0), (1.5, 0.0, 0.0), material="wood", interactions=("push",))
    t = task(
        [crate],
        anomalies=[
            anomaly(
                [SetMaterial(target="crate", material="red")],
                ["crate"],
                new_trigger(kind=TriggerKind.interact),
            )
        ],
    )
    env = make_env(t)
    env.step("interact")
    assert env.world.get("crate").parts["body"].material == "red"
    assert env.trigger_count() == 1


def test_clean_variant_ignores_anomalies(make_env):
    env = make_env(_crate_task(new_trigger(kind=TriggerKind.look_away)), variant="clean")
    env.step("wait 1")
    env.step("turn 120")
    assert env.world.get("crate").present and env.events == []


@pytest.mark.parametrize("kind", list(TriggerKind))
def test_every_trigger_kind_is_handled(kind):
    st = TriggerState(new_trigger(kind))  # each kind's fields left to the defaults
    st.update(pc(0.0))  # never raises


@pytest.mark.parametrize(
    ("trig", "missed", "words"),
    [
        (
            new_trigger(kind=TriggerKind.revisit, seen_within_m=3.0),
            Missed(False, (), 9.0),
            "never seen within 3 m",
        ),
        (
            new_trigger(kind=TriggerKind.revisit, away_s=4.0),
            Missed(True, (), 9.0),
            "never out of view for 4 s",
        ),
        (new_trigger(kind=TriggerKind.look_away), Missed(False, (), 9.0), "never on screen and then off it"),
        (
            new_trigger(kind=TriggerKind.leave, enter_m=2.0, exit_m=8.0),
            Missed(True, (3.0, 5.5), 9.0),
            "within 2 m and then go beyond 8 m (the plan goes from 3.0 m to 5.5 m)",
        ),
        (
            new_trigger(kind=TriggerKind.after, after_s=30.0),
            Missed(True, (), 12.0),
            "ends at 12.0 s, before 30 s",
        ),
        (
            new_trigger(kind=TriggerKind.beyond, distance_m=6.0),
            Missed(True, (), 9.0),
            "never went farther than 6 m",
        ),
        (
            new_trigger(kind=TriggerKind.within, distance_m=2.0),
            Missed(True, (), 9.0),
            "never went nearer than 2 m",
        ),
    ],
)
def test_a_trigger_that_never_fired_says_why_in_its_kinds_words(trig, missed, words):
    assert words in why_not_fired(trig, missed)
