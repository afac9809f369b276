"""`wac validate`: variations of the plan, and shrinking a failure to a minimal counterexample."""

from __future__ import annotations

import pytest
from validation_helpers import ROOT, build

from wac.bundle.reader import Bundle
from wac.cli import main as wac
from wac.validation import validate as V
from wac.validation.capture import Step


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("val") / "build"
    assert build([ROOT / "taxonomy" / "examples" / "missing_support.wa"], ROOT, out).ok
    return out / "missing_support_demo"


@pytest.fixture(scope="module")
def kitchen(tmp_path_factory):
    """A small kitchen seen through a doorway: a dining table turns into a crude box beyond 5 m."""
    out = tmp_path_factory.mktemp("kitchen") / "build"
    assert build([ROOT / "tasks_src" / "family_house" / "kitchen_c.wa"], ROOT, out).ok
    return out / "fh_kitchen_c"


def _task_bundle(tmp_path, task_id: str) -> Bundle:
    """The bundle of the shipped task `task_id`, built from the source that declares it."""
    src = next(p for p in (ROOT / "tasks_src").rglob("*.wa") if f"task {task_id} " in p.read_text())
    out = tmp_path / "build"
    assert build([src], ROOT, out).ok
    return Bundle.open(out / task_id)


def _try(b: Bundle, var: V.Variation, by_distance: bool = False, lenient: bool = True) -> V.Outcome:
    """`var` of the bundle's plan, run in both worlds."""
    task, plan = b.task(), b.plan()
    steps, rep = V.apply(plan, task.exploration.start.yaw_deg, var, by_distance)
    return V.differential(b.path, task, plan, steps, rep, 0, lenient=lenient)


def test_the_empty_variation_is_the_plan_itself(bundle):
    task, plan = Bundle.open(bundle).task(), Bundle.open(bundle).plan()
    steps, rep = V.apply(plan, task.exploration.start.yaw_deg, V.Variation())
    assert [s.action for s in steps] == [s.action for s in plan.steps] and not rep.actions and not rep.moves


def test_a_side_step_is_re_aimed_at_the_target(bundle):
    task, plan = Bundle.open(bundle).task(), Bundle.open(bundle).plan()
    steps, rep = V.apply(plan, task.exploration.start.yaw_deg, V.Variation(side_m=1.0, pause_s=2.0))
    actions = [s.text() for s in steps if s.action != "mark"]
    assert "turn 90" in actions and "move 1" in actions and "wait 2" in actions
    assert len(rep.moves) == 1  # the side step is checked for being blocked
    inserted = [actions[i] for i in rep.actions]
    assert inserted[:2] == ["turn 90", "move 1"] and inserted[-1] == "wait 2"


def test_a_failure_shrinks_to_a_minimal_counterexample(bundle, monkeypatch, capsys):
    def fragile(bdir, task, plan, steps, reposition, seed, lenient=True):
        sidestep = any(s.action == "turn" and abs(float(s.kwargs["degrees"])) == 90.0 for s in steps)
        why = "perturbed: the target is out of view after a side step"
        return V.Outcome(not sidestep, True, None, None, "" if not sidestep else why)

    monkeypatch.setattr(V, "differential", fragile)
    assert wac(["validate", str(bundle), "--examples", "40"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "out of view after a side step" in out
    assert "minimal counterexample: side step" in out and "pause" not in out and "seed" not in out
    assert "wac play" in out and "turn 90" in out or "turn -90" in out


def test_a_build_directory_validates_in_parallel_as_it_does_in_one_process(tmp_path, capsys):
    """`wac validate BUILD -j 2` checks every bundle of a build, reports them in input order with
    the verdicts one process gives, and ends with a count; a bad argument is a usage error."""
    import re

    out = tmp_path / "build"
    srcs = [ROOT / "taxonomy" / "examples" / f"{n}.wa" for n in ("missing_support", "scale")]
    assert build(srcs, ROOT, out).ok

    def verdicts(*extra):
        assert wac(["validate", str(out), "--examples", "2", *extra]) == 0
        text = capsys.readouterr().out
        return text, [re.sub(r"\(\d+\.\d s\)", "", line) for line in text.splitlines() if ": ok:" in line]

    par, par_lines = verdicts("-j", "2")
    seq, seq_lines = verdicts("-j", "1")
    assert [line.split(":")[0] for line in par_lines] == ["missing_support_demo", "scale_demo"]
    assert par_lines == seq_lines
    assert "validated 2 task(s)" in par and "2 passed, 0 failed" in par and "on 2 process(es)" in par
    assert wac(["validate", str(out), "-j", "0"]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err


def test_a_variation_whose_own_steps_set_off_the_anomaly_is_discarded(tmp_path):
    """The side step of a variation turns away from the target: under a look-away trigger that
    turn moves the drum before the plan's first observation, so the variation tests nothing (it
    is discarded, not reported as a counterexample).  The plan itself still shows the anomaly."""
    b = _task_bundle(tmp_path, "factory_05")
    side = _try(b, V.Variation(side_m=1.0))
    assert not side.valid and "set off the anomaly (look_away)" in side.why
    assert _try(b, V.Variation()).ok


def test_a_view_through_a_doorway_keeps_the_clean_table_the_reference(kitchen):
    """1.5 m farther back from the kitchen table's near viewpoint, under `beyond 5 m`: the walk back
    is 1.5 m shorter, so the far view is the plan's, through the doorway whose frame hides one end of
    the table.  The same view in both worlds is compared: the clean table is the reference (its
    width cut by the frame is no anomaly), and the proxy box differs from it."""
    b = Bundle.open(kitchen)
    task, plan = b.task(), b.plan()
    steps, rep = V.apply(plan, task.exploration.start.yaw_deg, V.Variation(closer_m=-1.5), True)
    back = [
        float(s.kwargs["distance_m"]) for s in steps if s.action == "move" and s.kwargs["direction"] == "back"
    ]
    planned = [
        float(s.args["distance_m"])
        for s in plan.steps
        if s.action == "move" and s.args["direction"] == "back"
    ]
    assert sum(back) == pytest.approx(sum(planned), abs=0.05)  # 1.5 m of the variation's own + the rest
    o = V.differential(b.path, task, plan, steps, rep, 0)
    assert o.valid and o.ok, o.why
    assert not o.clean.anomalous and "looks as in the clean world at" in o.perturbed.detail


def test_a_variation_from_which_the_target_is_out_of_sight_is_no_evidence(kitchen):
    """Looking up at the ceiling in every view, the table is in none: a variation like that is
    discarded, not a counterexample.  The plan itself gets no such leniency (the self-check's plan
    must show the anomaly)."""
    from wac.validation.capture import Step

    b = Bundle.open(kitchen)
    task, plan = b.task(), b.plan()
    steps = [Step("look", (("degrees", -60.0),)) if s.action == "look" else Step.of(s) for s in plan.steps]
    o = V.differential(b.path, task, plan, steps, V.Repositioning(), 0)
    assert not o.valid and o.why.startswith("out of sight: ") and "in view in 0 of the" in o.why
    strict = V.differential(b.path, task, plan, steps, V.Repositioning(), 0, lenient=False)
    assert strict.valid and not strict.ok and strict.perturbed.unseen


def test_under_a_distance_trigger_a_nearer_viewpoint_walks_that_much_farther(tmp_path):
    """A `beyond 6 m` plan steps back to 7 m from the target and returns.  A variation that starts
    the walk 0.6 m nearer the target still ends it beyond the threshold (the walk is measured from
    the target, as an auditor's "from farther away" is); one that starts 1 m farther walks 1 m less."""
    out = tmp_path / "build"
    assert build([ROOT / "taxonomy" / "examples" / "view_dependent.wa"], ROOT, out).ok
    b = Bundle.open(out / "view_dependent_demo")
    task, plan = b.task(), b.plan()
    yaw = task.exploration.start.yaw_deg

    def walks(var, by_distance=True):
        steps, rep = V.apply(plan, yaw, var, by_distance)
        exposing = steps[rep.actions.stop + sum(1 for s in steps[: rep.actions.stop] if s.action == "mark") :]
        away = [
            float(s.kwargs["distance_m"])
            for s in exposing
            if s.action == "move" and s.kwargs["direction"] == "back"
        ]
        back = [
            float(s.kwargs["distance_m"])
            for s in exposing
            if s.action == "move" and s.kwargs["direction"] == "forward"
        ]
        return sum(away), sum(back), max(away + back)

    planned, _, _ = walks(V.Variation())
    away, back, longest = walks(V.Variation(closer_m=0.6))
    assert away == pytest.approx(planned + 0.6, abs=0.02) and back == pytest.approx(away) and longest <= 4.0
    assert walks(V.Variation(closer_m=0.6), by_distance=False)[0] == pytest.approx(planned)
    assert walks(V.Variation(closer_m=-1.0))[0] == pytest.approx(planned - 1.0, abs=0.02)


def test_a_walk_into_the_target_from_a_farther_viewpoint_still_reaches_it(tmp_path):
    """A missing-collision plan walks from its viewpoint into and through the target.  A variation
    that starts 1 m farther back walks 1 m farther (whatever the trigger); one that starts nearer
    walks as planned (it passes through all the same)."""
    out = tmp_path / "build"
    assert build([ROOT / "taxonomy" / "examples" / "missing_collision.wa"], ROOT, out).ok
    b = Bundle.open(out / "missing_collision_demo")
    task, plan = b.task(), b.plan()
    yaw = task.exploration.start.yaw_deg

    def walk_in(var):
        steps, rep = V.apply(plan, yaw, var)
        exposing = [s for s in steps[rep.actions.stop :] if s.action != "mark"]
        run = []
        for s in exposing:
            if s.action != "move" or s.kwargs["direction"] != "forward":
                break
            run.append(float(s.kwargs["distance_m"]))
        return sum(run)

    planned = walk_in(V.Variation())
    assert planned > 0
    assert walk_in(V.Variation(closer_m=-1.0)) == pytest.approx(planned + 1.0, abs=0.02)
    assert walk_in(V.Variation(closer_m=0.5)) == pytest.approx(planned)


def test_a_task_whose_every_variation_was_discarded_says_so(bundle, monkeypatch, capsys):
    """An "ok" that rests on the plan alone is not the same evidence as six variations: it says so."""

    def only_the_plan(bdir, task, plan, steps, rep, seed, lenient=True):
        if lenient:  # every variation (never the plan itself)
            return V.Outcome(True, False, None, None, "out of sight: the target is cut off")
        return V.Outcome(True, True, None, None, "")

    monkeypatch.setattr(V, "differential", only_the_plan)
    assert wac(["validate", str(bundle), "--examples", "6"]) == 0
    out = capsys.readouterr().out
    assert "in all 1 valid variation(s)" in out and "only the plan itself could be tested" in out


def test_a_walk_into_the_target_from_beside_a_wall_still_reaches_it(tmp_path):
    """The barrel stands just past a wall's end.  The plan's viewpoint used to stand where a side step
    to the left put the wall's end in the way of the walk at the barrel (discarded: "the way to the
    target is blocked", or held short of it, "not touching it"); the planner now keeps its viewpoint
    clear of what the anomaly and its walk need (issue 27), and the walks at the barrel from either
    side of it reach it and show the launch."""
    b = _task_bundle(tmp_path, "cottage_barrel_tumbles")
    for side in (-0.5, -0.38, 0.4):
        o = _try(b, V.Variation(side_m=side))
        assert o.valid and o.ok, (side, o.why)
    assert _try(b, V.Variation(), lenient=False).ok


def test_a_walk_through_an_opened_door_stopped_in_the_clean_world_is_no_evidence(tmp_path):
    """The corridor's east door swings open into the corridor.  A metre to the right of the plan's
    viewpoint, the walk through the doorway meets the open leaf and the hose reel beside it in the
    clean world: touching the door is not passing it, so the walk cannot show the clean world's
    way open and the variation is discarded (it was counted as a failure: the perturbed walk slid
    on to the wall beside the doorway).  The plan's own walk passes into the stair lobby."""
    b = _task_bundle(tmp_path, "service_east_door")
    o = _try(b, V.Variation(side_m=1.0))
    assert not o.valid and o.why.startswith("the walk through the target is stopped in the clean world"), (
        o.why
    )
    o = _try(b, V.Variation(), lenient=False)
    assert o.ok and o.clean.detail.startswith("walked 3.00 m of 3.00 m"), (o.why, o.clean)


# the plan of concourse_east_gates before walks through were taken across a thin target: from
# (5.0, -1.0), 24 deg off the row of ticket gates, at gates_e_4 (1.0 x 0.2 m, 0.4 m gaps)
OBLIQUE_GATE_WALK = [
    ("turn", (("degrees", 29.1),)),
    *[("move", (("direction", "forward"), ("distance_m", m))) for m in (4.0, 4.0, 2.3)],
    ("turn", (("degrees", 36.5),)),
    ("look", (("degrees", 24.5),)),
    ("mark", ()),
    ("move", (("direction", "forward"), ("distance_m", 3.92))),
    ("turn", (("degrees", 135.0),)),
]


def test_a_walk_that_slides_past_the_gate_in_the_clean_world_never_shows_it_blocking(tmp_path):
    """Walked into obliquely, the solid gate turns the agent aside along its face and it goes on
    3.45 m of 3.92 m, about as far as through the gate without collision: the self-check must not
    read that as the gate blocking (it did), and a variation doing it is no evidence.  The plan
    now walks across the row, face on, and the gate stops the clean walk after 1.2 m."""
    from wac.validation.bundlecheck import check_bundle

    b = _task_bundle(tmp_path, "concourse_east_gates")
    steps = [Step(a, kw) for a, kw in OBLIQUE_GATE_WALK]
    res = check_bundle(b.path, steps=steps)
    assert not res.passed and any("goes on past gates_e_4" in r for r in res.reasons), res.reasons
    task, plan = b.task(), b.plan()
    # as a variation: the walk at the gate (action 6) ends against the next gate, not this one
    o = V.differential(b.path, task, plan, steps, V.Repositioning(walk_in=range(6, 7)), 0, lenient=True)
    assert not o.valid and o.why == "the way to the target is blocked by gates_e_5", o.why
    res = check_bundle(b.path)
    assert res.passed and res.clean.detail.startswith("blocked: moved 1.2"), (res.reasons, res.clean)


def test_a_light_object_knocked_over_alike_in_both_worlds_is_no_anomaly_in_the_clean_one(tmp_path):
    """fh_living_room_a (`launch toy_basket … when contact`), side step -0.4 m: the walk knocks the
    1 kg basket upside down in the clean world.  The response to contact is judged against the same
    contact in the other world, so the clean basket is the reference, not an anomaly, and the
    perturbed one, launched 1.6 m up, still shows it."""
    b = _task_bundle(tmp_path, "fh_living_room_a")
    o = _try(b, V.Variation(side_m=-0.4))
    assert o.valid and o.ok, o.why
    assert o.clean.value >= 120.0 and not o.clean.anomalous  # tipped over, as a light basket may
    assert o.perturbed.anomalous and "rose" in o.perturbed.detail
    # from 0.82 m farther back the walk shoves the clean basket ahead until a wall stops the agent,
    # not touching it any more: it reached the target, and the variation counts
    o = _try(b, V.Variation(closer_m=-0.82))
    assert o.valid and o.ok, o.why


def test_a_further_anomaly_switching_during_the_repositioning_is_no_concern_of_the_plan():
    """A multi-anomaly task's other anomaly (a revisit) may fire while the variation steps aside;
    only the anomaly under test switching then makes the variation useless."""
    from types import SimpleNamespace

    rep = V.Repositioning(actions=range(5, 8))

    def run(anomaly, trigger="revisit", step=7):
        ev = SimpleNamespace(anomaly=anomaly, step=step, event="fired", trigger=trigger)
        return SimpleNamespace(events=(ev,))

    assert V._switched_during(run(1), rep, 0) == ""
    assert V._switched_during(run(0), rep, 0) == "set off the anomaly (revisit)"
    assert V._switched_during(run(0, step=12), rep, 0) == ""  # after the repositioning
    assert V._switched_during(run(0, trigger="every"), rep, 0) == ""  # on a clock


def _far_point_walk(angle_deg: float) -> list:
    from wac.validation.capture import Step

    return [
        Step("mark", ()),
        Step("turn", (("degrees", angle_deg),)),
        Step("move", (("direction", "forward"), ("distance_m", 4.0))),
        Step("move", (("direction", "forward"), ("distance_m", 0.82))),
        Step("move", (("direction", "back"), ("distance_m", 4.0))),
        Step("move", (("direction", "back"), ("distance_m", 0.82))),
        Step("turn", (("degrees", -angle_deg),)),
    ]


@pytest.mark.parametrize(("turn", "at", "longer"), [(180.0, (1.0, 0.0), 1.0), (-135.0, (1.0, 0.0), 0.97)])
def test_a_walk_to_a_distance_triggers_far_point_ends_as_far_from_the_target(turn, at, longer):
    """The plan faces a target 5 m ahead, turns and walks 4.82 m away.  From 1 m nearer, a walk
    straight back is 1 m longer; one at 135 deg gains less distance per metre and is 0.97 m longer:
    either way it ends as far from the target as the plan's."""
    import math

    yaw = 0.0
    extra = V._far_walk_extra(_far_point_walk(turn), (0.0, 0.0), yaw, at, yaw, (5.0, 0.0))
    assert extra == pytest.approx(longer, abs=0.01)
    a = math.radians(yaw - turn)  # a turn right (positive) lowers the yaw
    plan_far = math.hypot(4.82 * math.cos(a) - 5.0, 4.82 * math.sin(a))
    var_far = math.hypot(at[0] + (4.82 + extra) * math.cos(a) - 5.0, at[1] + (4.82 + extra) * math.sin(a))
    assert var_far == pytest.approx(plan_far, abs=0.01)


def test_a_walk_away_cut_short_by_a_bush_is_no_evidence(tmp_path):
    """meadow_12 (`hide tree_1 when leave enter 4 m exit 7 m`), 1 m closer: the walk away runs
    into the undergrowth the plan's walk passed and ends 0.4 m short, inside the exit distance, so
    the tree never leaves.  The variation cannot test the plan; the plan itself still passes."""
    b = _task_bundle(tmp_path, "meadow_12")
    o = _try(b, V.Variation(closer_m=1.0), by_distance=True)
    assert not o.valid and "cut short" in o.why and "against meadow_bushes_2" in o.why
    assert _try(b, V.Variation(), by_distance=True, lenient=False).ok


def test_a_repositioning_that_slides_along_a_wall_is_no_evidence(tmp_path):
    """living_12 (`interact_through reading_lamp`): the plan stands 0.1 m from the wall it reaches
    through and aims at the lamp's 3 cm pole.  Walking 0.3 m closer slides the agent along the
    wall, 5 cm off its line, and the interaction then meets the wall in both worlds: the variation
    is discarded, not a counterexample (the move still covered 0.28 of its 0.3 m)."""
    o = _try(_task_bundle(tmp_path, "living_12"), V.Variation(closer_m=0.3))
    assert not o.valid and o.why.startswith("repositioning blocked: move 0.3 ended"), o.why
    assert "off its line" in o.why


def test_an_anachronism_out_of_view_is_no_evidence(tmp_path):
    """temple_06 (a traffic cone behind the pagoda), side step -1 m: the pagoda hides the cone in
    the deciding view.  An era judged over what is in view says nothing of an object out of it: the
    variation is discarded ("out of sight"), and the plan itself still shows the cone."""
    b = _task_bundle(tmp_path, "temple_06")
    o = _try(b, V.Variation(side_m=-1.0))
    assert not o.valid and o.why.startswith("out of sight: ") and "cone_1" in o.why, o.why
    o = _try(b, V.Variation(), lenient=False)
    assert o.ok and "is in view: " in o.perturbed.detail and "after the ancient era" in o.perturbed.detail
