"""The runner: run directories, resuming, failures recorded (not crashed), both paradigms, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wac.audit.runner import RunConfig, finished, run_eval
from wac.audit.session import SessionOptions
from wac.errors import UsageError

SMALL = SessionOptions(example=False, width=160, height=120)
TASKS = ["city_02", "meadow_04"]


def _script(tmp_path: Path, text: str) -> str:
    f = tmp_path / "actions.txt"
    f.write_text(text, encoding="utf-8")
    return f"replay:{f}"


@pytest.fixture(scope="module")
def tasks(built):
    ids = [t for t in TASKS if (built / t).is_dir()]
    assert len(ids) == 2, "the shipped corpus lost a task this test uses"
    return ids


def test_eval_writes_a_run_directory_and_resumes(built, tasks, tmp_path):
    agent = _script(
        tmp_path, "move 1 forward\nturn 45\nflag intersection bins inside each other\ndone looked around\n"
    )
    config = RunConfig(agent=agent, options=SMALL)
    run = tmp_path / "run"
    first = run_eval(built, run, config, only=tasks)
    assert [s["task_id"] for s in first] == tasks and all(s["ok"] for s in first)
    meta = json.loads((run / "run.json").read_text())
    assert meta["format"] == "wac.run/1" and meta["tasks"] == tasks and meta["pipeline_check"] is False
    for t in tasks:
        d = run / "tasks" / t
        assert finished(d)
        rep = json.loads((d / "report.json").read_text())
        assert rep["actions_used"] == 2 and rep["done"] and rep["bugs"][0]["category"] == "intersection"
        assert (d / "trajectory" / "step_002.png").is_file() and (d / "tools.jsonl").is_file()
        assert not (d.parent / f"{t}.partial").exists()
    stamp = (run / "tasks" / tasks[0] / "report.json").stat().st_mtime_ns
    # an interrupted task (no report) is redone; finished ones are skipped untouched
    (run / "tasks" / tasks[1] / "report.json").unlink()
    second = run_eval(built, run, config, only=tasks)
    assert second[0].get("skipped") and not second[1].get("skipped")
    assert (run / "tasks" / tasks[0] / "report.json").stat().st_mtime_ns == stamp
    assert finished(run / "tasks" / tasks[1])


def test_resuming_with_another_configuration_is_refused(built, tasks, tmp_path):
    run = tmp_path / "run"
    run_eval(built, run, RunConfig(agent="random", options=SMALL), only=tasks[:1])
    with pytest.raises(UsageError, match="different run"):
        run_eval(
            built,
            run,
            RunConfig(agent="random", options=SessionOptions(example=False, width=160, height=120, seed=3)),
            only=tasks[:1],
        )
    statuses = run_eval(built, run, RunConfig(agent="random", options=SMALL), only=tasks[:1], fresh=True)
    assert not statuses[0].get("skipped")


def test_an_agent_failure_is_recorded_and_the_run_goes_on(built, tasks, tmp_path):
    config = RunConfig(agent=f"replay:{tmp_path / 'missing.txt'}", options=SMALL)
    statuses = run_eval(built, tmp_path / "run", config, only=tasks)
    assert [s["ok"] for s in statuses] == [False, False]
    err = json.loads((tmp_path / "run" / "tasks" / tasks[0] / "error.json").read_text())
    assert err["kind"] in ("usage", "crash") and err["message"]
    assert not finished(tmp_path / "run" / "tasks" / tasks[0])


def test_two_stage_records_then_reviews(built, tasks, tmp_path):
    explorer = _script(tmp_path, "move 2 forward\nturn 90\nwait 2\nturn 90\nmove 2 forward\nwait 5\nwait 5\n")
    config = RunConfig(agent="oracle", paradigm="two-stage", explorer=explorer, explore_s=6.0, options=SMALL)
    run = tmp_path / "run"
    (status,) = run_eval(built, run, config, only=tasks[:1])
    assert status["ok"], status
    d = run / "tasks" / tasks[0]
    explore = json.loads((d / "explore" / "report.json").read_text())
    assert explore["paradigm"] == "interactive"
    steps = (d / "explore" / "trajectory" / "trajectory.jsonl").read_text().splitlines()
    assert json.loads(steps[-1])["sim_time"] <= 6.0 + 5.0  # stopped by the exploration time limit
    review = json.loads((d / "report.json").read_text())
    assert review["paradigm"] == "two-stage" and review["actions_used"] == 0
    episode = json.loads((d / "episode.json").read_text())
    assert episode["recording"]["interval_s"] == 0.5 and episode["recording"]["frames"] >= 10
    assert json.loads((run / "run.json").read_text())["pipeline_check"] is True


def test_two_stage_needs_an_explorer():
    with pytest.raises(UsageError, match="explorer"):
        RunConfig(agent="oracle", paradigm="two-stage")


def _wac(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "wac.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def test_cli_user_mistakes_are_one_line_errors(tmp_path):
    r = _wac("eval", str(tmp_path), "--agent", "random", "--out", str(tmp_path / "run"))
    assert r.returncode == 2 and "not a wac build" in r.stderr and "Traceback" not in r.stderr
    r = _wac("audit", str(tmp_path), "--agent", "random", "--out", str(tmp_path / "ep"))
    assert r.returncode == 2 and "not a bundle" in r.stderr and "Traceback" not in r.stderr


def test_cli_audit_runs_one_episode(built, tasks, tmp_path):
    r = _wac(
        "audit",
        str(built / tasks[0]),
        "--agent",
        "random",
        "--out",
        str(tmp_path / "ep"),
        "--width",
        "160",
        "--height",
        "120",
        "--budget-multiplier",
        "0.25",
        "--no-example",
    )
    assert r.returncode == 0, r.stderr
    rep = json.loads((tmp_path / "ep" / "report.json").read_text())
    assert rep["budget"] == 10 and rep["actions_used"] == 10


def test_episodes_recorded_outside_eval_can_be_judged(built, tasks, tmp_path):
    """`wac mcp --out RUN/tasks/<id>` episodes (no run.json) are judged and reported as an external agent."""
    from wac.audit.judge import judge_run
    from wac.audit.metrics import run_metrics
    from wac.audit.session import AuditSession

    run = tmp_path / "run"
    with AuditSession(built / tasks[0], run / "tasks" / tasks[0], SMALL) as s:
        s.call("observe")
        s.call(
            "flag_bug",
            {
                "description": "the wheelie bins are heaped inside each other, clipping through",
                "category": "intersection",
                "status": "confirmed",
                "evidence": ["a0"],
            },
        )
        s.call("done", {"summary": "one bug"})
    (status,) = judge_run(run, backend="keyword")
    m = run_metrics(run)
    assert m["run"]["agent"] == "external" and m["summary"]["judged"] == 1
    assert json.loads((run / "tasks" / tasks[0] / "judgment.json").read_text())["success"] is True
