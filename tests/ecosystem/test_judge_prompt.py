"""`--judge-prompt reference`: the C.4 rules plus the reference judge's extra rules, sent to the VLM judge."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("pybullet")
pytest.importorskip("openai")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "audit"))

from fake_openai import FakeOpenAI, reply_text  # noqa: E402

from wac.audit.judge import JUDGE_PROMPT, judge_run  # noqa: E402
from wac.audit.judge_prompts import REFERENCE_RULES, judge_prompt  # noqa: E402
from wac.audit.runner import RunConfig, run_eval  # noqa: E402
from wac.audit.session import SessionOptions  # noqa: E402
from wac.cli import main  # noqa: E402
from wac.errors import UsageError  # noqa: E402


def test_the_reference_prompt_is_c4_with_the_extra_rules_before_the_reply_format():
    ref = judge_prompt(JUDGE_PROMPT, "reference")
    assert judge_prompt(JUDGE_PROMPT, "c4") == JUDGE_PROMPT
    head = JUDGE_PROMPT.split("\n\nReply with only")[0]
    assert ref.startswith(head) and ref.endswith(JUDGE_PROMPT[len(head) :])
    for rule in REFERENCE_RULES:
        assert rule in ref and ref.index(rule) < ref.index("Reply with only")
    assert [r.split(".")[0] for r in REFERENCE_RULES] == ["8", "9", "10", "11"]  # numbered after C.4's 1-7
    with pytest.raises(UsageError, match="unknown judge prompt"):
        judge_prompt(JUDGE_PROMPT, "paper")


@pytest.fixture(scope="module")
def run(built, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("jp")
    script = tmp / "a.txt"
    script.write_text("move 1 forward\nflag intersection confirmed bins inside each other\ndone ok\n")
    run = tmp / "run"
    config = RunConfig(agent=f"replay:{script}", options=SessionOptions(example=False, width=160, height=120))
    assert all(s["ok"] for s in run_eval(built, run, config, only=["city_02"]))
    return run


def _verdict(req):
    return reply_text(json.dumps({"reason": "b1 reports the bins inside each other.", "score": 1}))


def test_the_judge_sends_the_chosen_prompt_and_records_it(run):
    with FakeOpenAI(_verdict) as fake:
        judge_run(
            run, backend="openai", model="fake-vlm", base_url=fake.base_url, api_key="k", prompt="reference"
        )
        (req,) = fake.requests
        assert req["messages"][0]["content"] == judge_prompt(JUDGE_PROMPT, "reference")
        j = json.loads((run / "tasks" / "city_02" / "judgment.json").read_text())
        assert j["model"] == "fake-vlm (reference prompt)" and j["success"] is True
        # another prompt is another judge: the judgment is not up to date and is redone
        (status,) = judge_run(run, backend="openai", model="fake-vlm", base_url=fake.base_url, api_key="k")
        assert status["status"] == "judged" and len(fake.requests) == 2
        assert fake.requests[1]["messages"][0]["content"] == JUDGE_PROMPT


def test_the_keyword_judge_refuses_a_prompt(run, capsys):
    with pytest.raises(UsageError, match="applies to the openai judge"):
        judge_run(run, backend="keyword", prompt="reference")
    assert main(["judge", str(run), "--judge-prompt", "reference"]) == 2
    assert "openai judge" in capsys.readouterr().err
