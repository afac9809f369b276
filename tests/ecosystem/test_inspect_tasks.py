"""`inspect eval` on wac tasks with Inspect's mock model scripted to call tools: the same scores as
`wac eval --agent replay` with the same actions, and no network."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("pybullet")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from wac.audit.inspect_tasks import samples, wac_audit  # noqa: E402
from wac.audit.judge import judge_run  # noqa: E402
from wac.audit.metrics import run_metrics  # noqa: E402
from wac.audit.runner import RunConfig, run_eval  # noqa: E402
from wac.audit.session import SessionOptions  # noqa: E402

TASKS = ["city_02", "meadow_04"]
SMALL = dict(width=160, height=120)
# (tool, arguments) in order; the replay script below says the same
SCRIPT = [
    ("move", {"distance_m": 1, "direction": "forward"}),
    ("turn", {"degrees": -45}),  # left: city_02's bins in view (the judge's evidence rule)
    (
        "flag_bug",
        {
            "description": "bins inside each other",
            "category": "intersection",
            "status": "confirmed",
            "evidence": ["a2"],
        },
    ),
    ("done", {"summary": "looked around"}),
]
REPLAY = "move 1 forward\nturn -45\nflag intersection confirmed bins inside each other\ndone looked around\n"


def scripted(messages, tools, tool_choice, config):
    """The mock model: the next scripted tool call, by how many tool results the conversation holds."""
    done = sum(1 for m in messages if m.role == "tool")
    name, args = SCRIPT[min(done, len(SCRIPT) - 1)]
    assert name in {t.name for t in tools}
    out = ModelOutput.for_tool_call("mockllm/model", name, args)
    out.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)  # no tokenizer download
    return out


def test_samples_are_the_evaluation_bundles_with_the_c1_text(built):
    got = samples(built, TASKS, SessionOptions(**SMALL))
    assert [s.id for s in got] == TASKS
    for s in got:
        ctx = json.loads((built / s.id / "agent" / "context.json").read_text())
        assert ctx["instructions"] in s.input and ctx["scene_description"] in s.input
        assert "rubric" not in json.dumps(s.metadata)


def test_inspect_scores_equal_wac_eval_replay_on_the_same_actions(built, tmp_path):
    inspect_run = tmp_path / "inspect_run"
    task = wac_audit(build=str(built), tasks=TASKS, run_dir=str(inspect_run), example=False, **SMALL)
    model = get_model("mockllm/model", custom_outputs=scripted)
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", max_samples=2)
    assert log.status == "success", log.error
    by_sample = {s.id: s for s in log.samples}
    assert set(by_sample) == set(TASKS)
    # images reached the model as image content
    first_user = by_sample[TASKS[0]].messages[1]
    assert any(getattr(c, "type", None) == "image" for c in first_user.content)

    replay_run = tmp_path / "replay_run"
    script = tmp_path / "actions.txt"
    script.write_text(REPLAY)
    config = RunConfig(agent=f"replay:{script}", options=SessionOptions(example=False, **SMALL))
    assert all(s["ok"] for s in run_eval(built, replay_run, config, only=TASKS))
    judge_run(replay_run, backend="keyword")
    wac = {r["task_id"]: r for r in run_metrics(replay_run)["tasks"]}

    for tid in TASKS:
        score = by_sample[tid].scores["wac_judge"]
        assert (score.value == "C") == wac[tid]["success"], tid
        assert score.metadata["covered"] == wac[tid]["coverage"]["covered"]
        assert score.metadata["family"] == wac[tid]["family"]
        inspected = json.loads((inspect_run / "tasks" / tid / "report.json").read_text())
        replayed = json.loads((replay_run / "tasks" / tid / "report.json").read_text())
        assert inspected["bugs"] == replayed["bugs"] and inspected["actions_used"] == replayed["actions_used"]
    metrics = log.results.scores[0].metrics
    summary = run_metrics(replay_run)["summary"]
    assert metrics["accuracy"].value == pytest.approx(summary["sr"])
    assert metrics["coverage"].value == pytest.approx(summary["coverage"])
    by_family = run_metrics(replay_run)["by_family"]
    assert by_family and all(metrics[f].value == pytest.approx(c["sr"]) for f, c in by_family.items())
    assert {wac[t]["success"] for t in TASKS} == {True, False}  # both outcomes compared
    # the inspect run is a wac run too: `wac report` reads it
    assert run_metrics(inspect_run)["summary"]["sr"] == pytest.approx(summary["sr"])


def test_the_vlm_judge_scores_inspect_episodes(built, tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "audit"))
    from fake_openai import FakeOpenAI, reply_text

    verdict = reply_text(json.dumps({"reason": "b1 names the overlapping bins.", "score": 1}))
    with FakeOpenAI(lambda req: verdict) as fake:
        task = wac_audit(
            build=str(built),
            tasks=TASKS[:1],
            run_dir=str(tmp_path / "run"),
            example=False,
            judge="openai",
            judge_model="fake-vlm",
            judge_base_url=fake.base_url,
            **SMALL,
        )
        model = get_model("mockllm/model", custom_outputs=scripted)
        (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
        assert len(fake.requests) == 1 and fake.requests[0]["model"] == "fake-vlm"
    assert log.status == "success", log.error
    score = log.samples[0].scores["wac_judge"]
    assert score.value == "C" and "overlapping bins" in score.explanation
    judgment = json.loads((tmp_path / "run" / "tasks" / TASKS[0] / "judgment.json").read_text())
    assert judgment["backend"] == "openai" and judgment["success"] is True
