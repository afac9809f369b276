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


def test_the_empty_variation_is_the_plan_itself(bundle):
    task, plan = Bundle.open(bundle).task(), Bundle.open(bundle).plan()
    steps, moves = V.apply(plan, task.exploration.start.yaw_deg, V.Variation())
    assert [s.action for s in steps] == [s.action for s in plan.steps] and not moves


def test_a_side_step_is_re_aimed_at_the_target(bundle):
    task, plan = Bundle.open(bundle).task(), Bundle.open(bundle).plan()
    steps, moves = V.apply(plan, task.exploration.start.yaw_deg, V.Variation(side_m=1.0, pause_s=2.0))
    texts = [s.text() for s in steps if s.action != "mark"]
    assert "turn 90" in texts and "move 1" in texts and "wait 2" in texts
    assert len(moves) == 1  # the side step is checked for being blocked


def test_a_failure_shrinks_to_a_minimal_counterexample(bundle, monkeypatch, capsys):
    def fragile(bdir, task, plan, steps, reposition, seed):
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
