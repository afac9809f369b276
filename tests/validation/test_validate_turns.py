"""`wac validate` turns away as auditors do (validation/turn_away.py): turns of other sizes either way,
looks up and down, walks away; whichever way, a change that must happen unseen must not happen with
the target on screen, and a way that never makes the trigger fire is no counterexample."""

from __future__ import annotations

import math

import numpy as np
import pytest
from validation_helpers import HERE, ROOT, build

from wac.bundle.reader import Bundle
from wac.validation import validate as V
from wac.validation.capture import Step

SUITE = HERE / "auditor"


def _bundle(tmp_path_factory, rel: str, task_id: str) -> Bundle:
    out = tmp_path_factory.mktemp(task_id) / "build"
    res = build([SUITE / rel], SUITE, out)
    assert not [d for d in res.diagnostics if d.severity == "error"]
    return Bundle.open(out / task_id)


@pytest.fixture(scope="module")
def hoarding(tmp_path_factory) -> Bundle:
    """A 14 m site hoarding that vanishes on a look-away, seen from 2.5 m in front of its middle."""
    return _bundle(tmp_path_factory, "valid/trig_hoarding_look_away.wa", "trig_hoarding_look_away")


@pytest.fixture(scope="module")
def hoarding_end(tmp_path_factory) -> Bundle:
    """The same, the auditor starting 2 m in front of the hoarding, 1 m from its east end."""
    return _bundle(tmp_path_factory, "valid/trig_hoarding_end_look_away.wa", "trig_hoarding_end_look_away")


@pytest.fixture(autouse=True)
def _cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _exposing(steps: list[Step]) -> list[str]:
    first = next(i for i, s in enumerate(steps) if s.action == "mark")
    return [s.text() for s in steps[first:] if s.action != "mark"]


def test_the_turn_away_is_replaced_and_undone_with_its_look_and_walk(hoarding):
    task, plan = hoarding.task(), hoarding.plan()
    ex = task.exploration
    var = V.Variation(away_turn_deg=-60.0, away_look_deg=30.0, away_walk_m=2.5)
    steps, rep = V.apply(plan, ex.start.yaw_deg, var, False, ex.start.pitch_deg)
    assert _exposing([Step.of(s) for s in plan.steps]) == ["turn 180", "wait 2", "turn 180"]
    assert _exposing(steps) == [
        "turn -60",
        "look 30",
        "move 2.5",
        "wait 2",
        "move 2.5 back",
        "look -30",
        "turn 60",
    ]
    assert rep.turns_away and not rep.actions  # its own steps are the plan's away part, not a repositioning
    turned = [s for s in steps if s.action == "turn" and s.caption]
    assert [s.caption for s in turned] == ["Turn away.", "Turn back."]  # the evidence captions stay
    net = sum(float(s.kwargs["degrees"]) for s in steps if s.action == "turn")
    plan_net = sum(float(s.args["degrees"]) for s in plan.steps if s.action == "turn")
    assert math.isclose(net % 360, plan_net % 360, abs_tol=0.1)  # back facing where the plan faces


def test_the_search_draws_small_turns_either_way_looks_and_walks_for_a_trigger_that_waits(
    hoarding, monkeypatch
):
    drawn: list[V.Variation] = []
    apply = V.apply

    def spy(plan, yaw, var, *args):
        drawn.append(var)
        return apply(plan, yaw, var, *args)

    monkeypatch.setattr(V, "apply", spy)
    monkeypatch.setattr(V, "differential", lambda *a, **k: V.Outcome(True, True, None, None, ""))
    assert V.validate_bundle(hoarding.path, examples=30).passed
    turns = [v.away_turn_deg for v in drawn if v.away_turn_deg]
    assert all(45.0 <= abs(t) <= 180.0 for t in turns)
    assert any(abs(t) < 90.0 for t in turns if t > 0) and any(abs(t) < 90.0 for t in turns if t < 0)
    looks = [v.away_look_deg for v in drawn if v.away_look_deg]
    assert min(looks) <= -20.0 and max(looks) >= 20.0  # up and down
    assert any(1.0 <= v.away_walk_m <= 4.0 for v in drawn)


def test_a_plan_without_a_trigger_that_waits_is_not_turned(monkeypatch, tmp_path):
    out = tmp_path / "build"
    assert build([ROOT / "taxonomy" / "examples" / "missing_support.wa"], ROOT, out).ok
    drawn: list[V.Variation] = []
    apply = V.apply
    monkeypatch.setattr(V, "apply", lambda plan, yaw, var, *a: drawn.append(var) or apply(plan, yaw, var, *a))
    monkeypatch.setattr(V, "differential", lambda *a, **k: V.Outcome(True, True, None, None, ""))
    V.validate_bundle(out / "missing_support_demo", examples=10)
    assert len(drawn) > 5 and not any(v.turns_away for v in drawn)


def test_a_small_turn_that_keeps_the_hoarding_on_screen_tests_nothing_and_a_wide_one_fires_unseen(hoarding):
    task, plan = hoarding.task(), hoarding.plan()
    ex = task.exploration

    def run(var):
        steps, rep = V.apply(plan, ex.start.yaw_deg, var, False, ex.start.pitch_deg)
        return V.differential(hoarding.path, task, plan, steps, rep, 0)

    small = run(V.Variation(away_turn_deg=60.0))
    assert small.ok and not small.valid and "the trigger never fired" in small.why
    wide = run(V.Variation(away_turn_deg=-150.0, away_look_deg=-30.0))
    assert wide.ok and wide.valid, wide.why


def _sampled_points_in_view(env, an) -> bool:
    """The rule the runtime used before: some sample point of the target's box (centre, inner corners,
    a grid) inside the view frustum with a clear ray."""
    from wac.runtime.geometry import box_grid, corner_points

    lo, hi = env._target_box(an)
    cam = env.camera()
    eye, f, up = np.asarray(cam.eye), cam.forward(), cam.up()
    right = np.cross(f, up)
    th = math.tan(math.radians(env.hfov) / 2)
    tv = th * env.height / env.width
    c = (lo + hi) / 2
    pts = [c] + [c + 0.8 * (np.array(k) - c) for k in corner_points(lo, hi)] + box_grid(lo, hi)
    cand = [
        p
        for p in pts
        if (z := float((p - eye) @ f)) > 0.05
        and abs(float((p - eye) @ right)) / z <= th
        and abs(float((p - eye) @ up)) / z <= tv
    ]
    if not cand:
        return False
    return any(
        ref is None or frac > 0.97 or ref.object_id in an.spec.targets
        for ref, frac in env.physics.rays([eye] * len(cand), cand)
    )


def test_a_change_watched_under_an_auditors_turn_is_a_counterexample(hoarding_end, monkeypatch):
    """Standing by the hoarding's end, an auditor turns 69 deg right.  With the runtime's old rule
    (sample points of the box) the look-away fires while two metres of the hoarding fill the frame's
    edge: validate reports the change happening in view.  With the pixel rule the trigger waits, and
    only the full turn away makes it fire, unseen."""
    from wac.runtime.triggers import AnomalyTriggers

    task, plan = hoarding_end.task(), hoarding_end.plan()
    look = Step("turn", (("degrees", 69.0),), "Turn away.")
    steps = [
        Step("wait", (("seconds", 1.0),)),
        Step("mark", (), "Before."),
        look,
        Step("wait", (("seconds", 2.0),)),
    ]
    steps += [Step("turn", (("degrees", -69.0),), "Turn back."), Step("mark", (), "After.")]
    away = V.Repositioning(turns_away=True)
    now = V.differential(hoarding_end.path, task, plan, steps, away, 0)
    assert now.ok and not now.valid and "the trigger never fired" in now.why
    with monkeypatch.context() as m:
        m.setattr(AnomalyTriggers, "target_in_view", _sampled_points_in_view)
        before = V.differential(hoarding_end.path, task, plan, steps, away, 0)
    assert not before.ok and "the change happened in view" in before.why and "px of hoarding_1" in before.why
    full = [
        *steps[:2],
        Step("turn", (("degrees", 180.0),)),
        steps[3],
        Step("turn", (("degrees", 180.0),)),
        steps[-1],
    ]
    done = V.differential(hoarding_end.path, task, plan, full, away, 0)
    assert done.ok and done.valid, done.why


def test_validate_fails_a_change_the_auditor_can_watch(tmp_path_factory):
    b = _bundle(tmp_path_factory, "broken/trig_hoarding_colour_every.wa", "trig_depot_hoarding_colours")
    res = V.validate_bundle(b.path, examples=2)
    assert not res.passed and "the change happened in view" in res.why
