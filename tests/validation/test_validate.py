"""`wac validate`: variations of the plan, and shrinking a failure to a minimal counterexample."""

from __future__ import annotations

import pytest
from validation_helpers import ROOT, build

from wac.bundle.reader import Bundle
from wac.cli import main as wac
from wac.validation import validate as V


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
    out = tmp_path / "build"
    assert build([ROOT / "tasks_src" / "factory" / "drum_moves_look_away.wa"], ROOT, out).ok
    b = Bundle.open(out / "factory_05")
    task, plan = b.task(), b.plan()
    yaw = task.exploration.start.yaw_deg
    steps, rep = V.apply(plan, yaw, V.Variation(side_m=1.0))
    side = V.differential(b.path, task, plan, steps, rep, 0)
    assert not side.valid and "set off the anomaly (look_away)" in side.why
    steps, rep = V.apply(plan, yaw, V.Variation())
    assert V.differential(b.path, task, plan, steps, rep, 0).ok


def test_a_view_through_a_doorway_does_not_change_a_size(kitchen):
    """Stepping back 1.5 m from the kitchen table's near viewpoint frames it through a doorway, whose
    frame hides one end in every view: the clean table's width then changes with the frame, not the
    table.  Those widths are not compared, and the proxy box still shows by its outline."""
    b = Bundle.open(kitchen)
    task, plan = b.task(), b.plan()
    steps, rep = V.apply(plan, task.exploration.start.yaw_deg, V.Variation(closer_m=-1.5))
    o = V.differential(b.path, task, plan, steps, rep, 0)
    assert o.valid and o.ok, o.why
    assert "cuts its width short" in o.clean.detail


def test_a_variation_from_which_the_target_is_out_of_sight_is_no_evidence(kitchen):
    """A side step beside the kitchen doorway leaves the table cut off at the frame's edge in every
    view, in both worlds: the variation is discarded, not a counterexample.  The plan itself gets
    no such leniency (the self-check's plan must show the anomaly)."""
    b = Bundle.open(kitchen)
    task, plan = b.task(), b.plan()
    steps, rep = V.apply(plan, task.exploration.start.yaw_deg, V.Variation(side_m=1.0))
    o = V.differential(b.path, task, plan, steps, rep, 0)
    assert not o.valid and o.why.startswith("out of sight: ") and "seen whole in 0" in o.why
    strict = V.differential(b.path, task, plan, steps, rep, 0, lenient=False)
    assert strict.valid and not strict.ok and strict.perturbed.unseen


def test_under_a_distance_trigger_a_nearer_viewpoint_walks_that_much_farther(tmp_path):
    """A `beyond 6 m` plan steps back to 7 m from the target and returns.  A variation that starts
    the walk 0.6 m nearer the target still ends it beyond the threshold (the walk is measured from
    the target, as an auditor's "from farther away" is); one that starts farther walks as planned."""
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
    assert walks(V.Variation(closer_m=-1.0))[0] == pytest.approx(planned)


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


def test_a_walk_into_the_target_turned_aside_by_a_wall_is_no_evidence(tmp_path):
    """The barrel stands just past a wall's end.  Half a metre to the left, the walk at it meets the
    wall, slides along it and past the barrel without touching it: the variation cannot test a
    contact trigger and is discarded (the plan's own walk reaches the barrel)."""
    src = next(
        p for p in (ROOT / "tasks_src").rglob("*.wa") if "task cottage_barrel_tumbles " in p.read_text()
    )
    out = tmp_path / "build"
    assert build([src], ROOT, out).ok
    b = Bundle.open(out / "cottage_barrel_tumbles")
    task, plan = b.task(), b.plan()
    steps, rep = V.apply(plan, task.exploration.start.yaw_deg, V.Variation(side_m=-0.5))
    o = V.differential(b.path, task, plan, steps, rep, 0)
    assert not o.valid and o.why.startswith("the way to the target is blocked"), o.why
    steps, rep = V.apply(plan, task.exploration.start.yaw_deg, V.Variation())
    assert V.differential(b.path, task, plan, steps, rep, 0, lenient=False).ok


def test_a_light_object_knocked_over_alike_in_both_worlds_is_no_anomaly_in_the_clean_one(tmp_path):
    """fh_living_room_a (`launch toy_basket … when contact`), side step -0.31 m: the walk knocks the
    1 kg basket upside down in the clean world.  The response to contact is judged against the same
    contact in the other world, so the clean basket is the reference, not an anomaly, and the
    perturbed one, launched 1.6 m up, still shows it."""
    out = tmp_path / "build"
    assert build([ROOT / "tasks_src" / "family_house" / "living_room_a.wa"], ROOT, out).ok
    b = Bundle.open(out / "fh_living_room_a")
    task, plan = b.task(), b.plan()
    var = V.Variation(side_m=-0.31)
    steps, rep = V.apply(plan, task.exploration.start.yaw_deg, var)
    o = V.differential(b.path, task, plan, steps, rep, 0)
    assert o.valid and o.ok, o.why
    assert o.clean.value >= 120.0 and not o.clean.anomalous  # tipped over, as a light basket may
    assert o.perturbed.anomalous and "rose" in o.perturbed.detail
