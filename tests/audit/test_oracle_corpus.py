"""The pipeline check over the shipped corpus: the oracle succeeds under the keyword judge.

The oracle replays each task's self-check plan and files the rubric's finding, so a failure here
means a broken link between compiler, simulator, runner, judge and metrics — not a weak agent.
CI runs one task of each category spread over the environments and one of each operator with an
interaction mechanism (`corpus_sample`); `WAC_FULL_CORPUS=1` runs every shipped task.
"""

from __future__ import annotations

import json

from corpus_sample import MECHANISMS, corpus_sample

from wac.audit.judge import judge_run
from wac.audit.metrics import run_metrics
from wac.audit.runner import RunConfig, eval_bundles, run_eval
from wac.audit.session import SessionOptions


def test_oracle_succeeds_on_every_shipped_task(built, tmp_path):
    run = tmp_path / "run"
    config = RunConfig(agent="oracle", options=SessionOptions(example=False, width=96, height=72))
    only = corpus_sample(built, MECHANISMS)
    statuses = run_eval(built, run, config, jobs=2, only=only)
    assert len(statuses) == len(eval_bundles(built, only)) == len(only) >= 15
    assert [s["task_id"] for s in statuses if not s["ok"]] == []
    judge_run(run, backend="keyword", jobs=1)
    failed = []
    for s in statuses:
        j = json.loads((run / "tasks" / s["task_id"] / "judgment.json").read_text())
        if not j["success"]:
            failed.append((s["task_id"], [e["reason"] for e in j["entries"]]))
        # the evidence rule was applied with the pixels the episode recorded (audit/evidence.py)
        assert {e["evidence_test"] for e in j["entries"]} <= {"pixels", "scene-wide"}, s["task_id"]
    assert failed == []
    m = run_metrics(run)
    assert m["run"]["pipeline_check"] is True and m["run"]["label"]
    assert m["summary"]["sr"] == 1.0
