# ruff: noqa: F811 - the fixtures of test_openai_agent are imported by name
"""The bring-your-own-model path under a misbehaving OpenAI-compatible server (issue 14): rate limits
with Retry-After, silent servers, invalid tool arguments, no tool support, image bounds, options."""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeOpenAI, Silent, Status, no_tool_support, reply_tools
from test_openai_agent import OPTIONS, agent, examples, make_session, scripted  # noqa: F401

from wac.audit.agents import AgentError
from wac.audit.agents import openai_agent as oa
from wac.audit.agents.openai_agent import ModelCallError, OpenAIAgent, system_prompt
from wac.audit.runner import RunConfig, run_eval
from wac.audit.tools import live_tools
from wac.cli import main

DONE = reply_tools([("done", {"summary": "nothing found"})])


@pytest.fixture
def sleeps(monkeypatch):
    waited: list[float] = []
    monkeypatch.setattr(oa.time, "sleep", lambda s: waited.append(s))
    return waited


def test_retry_after_is_honoured(make_session, sleeps):
    limited = Status(429, (("Retry-After", "30"),))
    with FakeOpenAI(scripted(limited, DONE)) as server:
        agent(server, retry_budget_s=120).run(make_session())
    assert sleeps == [30.0] and len(server.requests) == 2


def test_a_wait_beyond_the_retry_budget_fails_at_once(make_session, sleeps):
    limited = Status(503, (("Retry-After", "300"),))
    with FakeOpenAI(lambda body: limited) as server, pytest.raises(ModelCallError, match="retry budget"):
        agent(server, retry_budget_s=60).run(make_session())
    assert sleeps == [] and len(server.requests) == 1


def test_a_silent_server_costs_one_short_timeout_per_attempt(make_session):
    with (
        FakeOpenAI(lambda body: Silent(5.0)) as server,
        pytest.raises(ModelCallError, match="Timeout"),
    ):
        agent(server, timeout=0.3, retries=1).run(make_session())
    assert len(server.requests) == 2


def test_invalid_tool_arguments_are_never_echoed_and_are_logged(make_session):
    session = make_session()
    bad = reply_tools([("move", {})])
    bad["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"distance_m": 1, @@oops'
    with FakeOpenAI(scripted(bad, DONE)) as server:
        agent(server).run(session)
    sent = [m for m in server.requests[1]["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
    assert [c["function"]["arguments"] for c in sent[0]["tool_calls"]] == ["{}"]
    assert "@@oops" not in json.dumps(server.requests[1]["messages"])
    log = [json.loads(x) for x in (session.out / "tools.jsonl").read_text().splitlines()]
    bad_call = next(r for r in log if r["tool"] == "move")
    assert bad_call["error"] and "not valid JSON" in bad_call["text"] and session.tool_counts["move"] == 1


def test_an_endpoint_without_tool_support_is_an_episode_error(built, tmp_path):
    with FakeOpenAI(no_tool_support) as server:
        config = RunConfig(
            agent="openai",
            options=OPTIONS,
            agent_options=(("base_url", server.base_url), ("model", "m"), ("backoff_s", "0")),
        )
        st = run_eval(built, tmp_path / "run", config, only=["market_03"])
    err = json.loads((tmp_path / "run" / "tasks" / "market_03" / "error.json").read_text())
    assert not st[0]["ok"] and err["kind"] == "model" and "tool calling" in err["message"]


def _msg(n_first: int, n_later: int) -> list[dict]:
    def img(ref):
        return [
            {"type": "text", "text": ref},
            {"type": "image_url", "image_url": {"url": f"data:{ref}"}, "_ref": ref},
        ]

    first = [p for k in range(n_first) for p in img(f"a{k}")]
    out = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": [{"type": "text", "text": "t"}, *first]},
    ]
    for k in range(n_later):
        out.append({"role": "user", "content": img(f"b{k}")})
    return out


def test_requests_carry_at_most_max_images():
    a = OpenAIAgent(base_url="http://127.0.0.1:9/v1", model="m", max_images=40, keep_images=8)
    sent = a._payload(_msg(120, 12))
    urls = [
        p["image_url"]["url"]
        for m in sent
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]
    assert len(urls) == 40
    first = [u for u in urls if u.startswith("data:a")]
    assert len(first) == 32 and first[0] == "data:a0" and first[-1] == "data:a119"
    assert urls[-8:] == [f"data:b{k}" for k in range(4, 12)]
    assert "a1 not repeated here" in json.dumps(sent)


def test_film_frames_are_not_called_low_resolution():
    assert "low-resolution" not in system_prompt(live_tools(), observation="film")


def test_unknown_agent_options_are_errors_with_a_suggestion(built, tmp_path, capsys):
    with pytest.raises(AgentError, match="did you mean 'base_url'"):
        RunConfig(agent="openai", agent_options=(("base-url", "http://x"),))
    code = main(
        ["eval", str(built), "--agent", "random", "--agent-option", "modle=x", "--out", str(tmp_path / "r")]
    )
    err = capsys.readouterr().err
    assert code == 2 and "unknown agent option 'modle'" in err and "Traceback" not in err
    # the explorer's and the analyser's options together are known in a two-stage run
    RunConfig(agent="random", paradigm="two-stage", explorer="sweep", agent_options=(("lane_m", "4"),))


@pytest.mark.parametrize("key", ["api-key", "api_key", "openai_key", "access_token", "client_secret"])
def test_secret_options_are_refused_and_never_stored(built, tmp_path, capsys, key):
    code = main(
        ["eval", str(built), "--agent", "openai", "--agent-option", f"{key}=sk-123", "--out", str(tmp_path)]
    )
    assert code == 2 and "looks like a secret" in capsys.readouterr().err
    config = RunConfig(agent="openai", agent_options=(("api_key", "sk-123"), ("model", "m")))
    assert "sk-123" not in json.dumps(config.as_dict()) and config.as_dict()["agent_options"] == {
        "model": "m"
    }
