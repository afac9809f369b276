"""Human labels in the report: human-rated exposure beside geometric coverage, judge-human agreement
(accuracy, Cohen's kappa) per judge, environment and family, rater agreement; known labels, known
numbers."""

from __future__ import annotations

import json

import pytest

from wac.audit.agreement import Label, Labels, human_agreement, kappa
from wac.audit.judge import judge_run
from wac.audit.runner import RunConfig, run_eval
from wac.audit.session import SessionOptions
from wac.cli import main


def _row(tid, success, env="env_a", family="physical_plausibility", covered=True):
    return {
        "task_id": tid,
        "status": "judged",
        "success": success,
        "judge": "keyword:wac-keyword/4",
        "environment": env,
        "family": family,
        "coverage": {"covered": covered},
    }


def _metrics(name, rows, paradigm="interactive"):
    return {"run": {"name": name, "paradigm": paradigm}, "tasks": rows}


def _labels(*rows) -> Labels:
    return Labels(
        labels=tuple(Label(run=r, task_id=t, rater=who, kind=k, value=v) for r, t, who, k, v in rows)
    )


def test_kappa_of_a_known_table():
    judge = [True, True, False, False, True, False]
    human = [True, False, False, False, True, True]
    assert kappa(judge, human) == pytest.approx(1 / 3, abs=1e-4)  # po 4/6, pe 1/2
    assert kappa([True, True], [True, True]) is None  # one answer throughout: undefined
    assert kappa([True], [False]) is None


def test_agreement_per_judge_environment_and_family_with_majority_votes():
    rows = [
        _row("t1", True),
        _row("t2", True, env="env_b"),
        _row("t3", False),
        _row("t4", False, env="env_b", family="temporal_consistency"),
        _row("t5", True),
        _row("t6", False, family="temporal_consistency"),
    ]
    human = {"t1": True, "t2": False, "t3": False, "t4": False, "t5": True, "t6": True}
    labels = [("r", t, who, "report", v) for t, v in human.items() for who in ("ann", "bob")]
    labels += [("r", "t1", "cid", "report", False)]  # outvoted 2 to 1
    labels += [("r", "t7", "ann", "report", True), ("r", "t7", "bob", "report", False)]  # a tie, no judgment
    a = human_agreement([_metrics("r", rows + [_row("t7", True)])], _labels(*labels))
    (g,) = a["judges"].values()
    assert g["n"] == 6 and g["accuracy"] == pytest.approx(4 / 6, abs=1e-4)
    assert g["kappa"] == pytest.approx(1 / 3, abs=1e-4)
    assert g["by_environment"]["env_b"]["n"] == 2 and g["by_environment"]["env_b"]["accuracy"] == 0.5
    assert g["by_family"]["temporal_consistency"]["accuracy"] == 0.5
    assert a["report_ties"] == 1
    assert a["raters"]["report"]["episodes"] == 7 and a["raters"]["report"]["kappa"] is not None


def test_human_rated_exposure_beside_coverage_per_run_and_paradigm():
    ms = [
        _metrics("inter", [_row("t1", True, covered=True), _row("t2", False, covered=True)]),
        _metrics("two", [_row("t1", True, covered=False)], paradigm="two-stage"),
    ]
    a = human_agreement(
        ms,
        _labels(
            ("inter", "t1", "ann", "exposure", True),
            ("inter", "t1", "bob", "exposure", True),
            ("inter", "t2", "ann", "exposure", False),
            ("inter", "t2", "bob", "exposure", True),  # a split: counts 0.5
            ("two", "t1", "ann", "exposure", False),
            ("gone", "t1", "ann", "exposure", True),  # a run not in the report
        ),
    )
    assert a["exposure"]["inter"] == {"rated": 2, "human_exposed": 0.75, "geometric_coverage": 1.0}
    assert a["exposure_by_paradigm"]["two-stage"] == {
        "rated": 1,
        "human_exposed": 0.0,
        "geometric_coverage": 0.0,
    }
    assert a["unknown_runs"] == ["gone"]


def test_wac_report_with_labels_end_to_end(built, tmp_path, capsys):
    run = tmp_path / "sweep-run"
    tasks = ["living_02", "factory_01"]
    opts = SessionOptions(example=False, width=64, height=48, budget_actions=4)
    assert all(s["ok"] for s in run_eval(built, run, RunConfig(agent="sweep", options=opts), only=tasks))
    judge_run(run)
    labels = _labels(
        ("sweep-run", "living_02", "ann", "report", False),
        ("sweep-run", "factory_01", "ann", "report", False),
        ("sweep-run", "living_02", "ann", "exposure", True),
        ("sweep-run", "factory_01", "ann", "exposure", False),
    )
    f = tmp_path / "labels.json"
    f.write_text(labels.model_dump_json())
    assert main(["report", str(run), "--labels", str(f)]) == 0
    out = capsys.readouterr().out
    assert "human-rated exposure sweep-run: 50.0% of 2" in out
    assert "judge-human agreement keyword:wac-keyword/4: accuracy 100.0%, kappa -, n=2" in out
    a = json.loads((run / "report" / "agreement.json").read_text())
    assert a["exposure"]["sweep-run"]["rated"] == 2
    assert "## Human labels" in (run / "report" / "report.md").read_text()
    f.write_text('{"format": "wac.labels/1", "labels": [{"run": "x", "task_id": "t", "kind": "seen"}]}')
    assert main(["report", str(run), "--labels", str(f)]) == 1
    err = capsys.readouterr().err
    assert "is not a wac labels file" in err and "Traceback" not in err
