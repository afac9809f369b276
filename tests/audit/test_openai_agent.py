"""The `openai` agent against a local fake of an OpenAI-compatible endpoint (tests/audit/fake_openai.py)."""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeOpenAI, reply_text, reply_tools

from wac.audit.agents import AgentError
from wac.audit.agents.openai_agent import NUDGE, ModelCallError, OpenAIAgent
from wac.audit.examples import ExampleLibrary
from wac.audit.session import AuditSession, SessionOptions
from wac.bundle.model import Rubric

TASK = "market_03"
OPTIONS = SessionOptions(width=160, height=120)


@pytest.fixture(scope="module")
def examples(built, tmp_path_factory):
    return ExampleLibrary(built, cache_dir=tmp_path_factory.mktemp("ex_cache"), width=160, height=120)


@pytest.fixture
def make_session(built, tmp_path, examples):
    made = []

    def make(task: str = TASK, options: SessionOptions = OPTIONS):
        s = AuditSession(built / task, tmp_path / f"ep{len(made)}", options, examples)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def scripted(*replies):
    """A fake-server script answering the n-th request with replies[n] (the last one repeats)."""
    seen = []

    def script(body):
        seen.append(body)
        return replies[min(len(seen), len(replies)) - 1]

    return script


def agent(server, **kw) -> OpenAIAgent:
    return OpenAIAgent(base_url=server.base_url, model="fake-vlm", api_key="none", backoff_s=0, **kw)


def image_parts(content) -> list[tuple[str, str]]:
    """(caption text, image url) for every image part, with the text part right before it."""
    out = []
    for i, part in enumerate(content):
        if part["type"] == "image_url":
            before = content[i - 1]
            assert before["type"] == "text" and before["text"].strip(), "an image without its caption"
            out.append((before["text"], part["image_url"]["url"]))
    return out


def test_tool_loop_images_usage_and_done(make_session):
    session = make_session()
    replies = (
        reply_tools([("move", {"distance_m": 1.5, "direction": "forward"}), ("turn", {"degrees": -30})]),
        reply_tools(
            [
                (
                    "flag_bug",
                    {
                        "description": "a sack floats above the ground",
                        "category": "missing_support",
                        "status": "suspect",
                        "evidence": ["a2"],
                    },
                ),
                ("write_notes", {"text": "sack by the stall"}),
            ],
            prompt_tokens=150,
            completion_tokens=30,
        ),
        reply_tools([("done", {"summary": "one bug"})]),
    )
    with FakeOpenAI(scripted(*replies)) as server:
        agent(server).run(session)
    reqs = server.requests
    assert len(reqs) == 3 and all(r["model"] == "fake-vlm" for r in reqs)
    assert [t["function"]["name"] for t in reqs[0]["tools"]] == [t.name for t in session.tools]
    assert all(
        t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in reqs[0]["tools"]
    )
    system, first = reqs[0]["messages"][:2]
    assert system["role"] == "system" and "flag_bug" in system["content"]
    assert first["role"] == "user" and first["content"][0]["text"].startswith("# Auditing task")
    pics = image_parts(first["content"])
    # the example's figures (as many as its demonstration has), then the start frame
    assert len(pics) >= 2 and all(url.startswith("data:image/png;base64,") for _, url in pics)
    assert all(c.startswith("Example figure") for c, _ in pics[:-1])
    assert pics[0][0].startswith("Example figure 1") and pics[-1][0].startswith("a0 start view | pos (")
    # the results of the first two tool calls come back as tool messages, their frames as a user message
    msgs = reqs[1]["messages"]
    assert msgs[2]["role"] == "assistant" and [c["id"] for c in msgs[2]["tool_calls"]] == ["call_0", "call_1"]
    tool_msgs = [m for m in msgs if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["call_0", "call_1"]
    assert tool_msgs[0]["content"].startswith("a1 move forward 1.50 m") and tool_msgs[1][
        "content"
    ].startswith("a2 turn")
    frames = image_parts(msgs[-1]["content"])
    assert msgs[-1]["role"] == "user" and [c.split(" ")[0] for c, _ in frames] == ["a1", "a2"]
    assert any(m["role"] == "tool" and m["content"].startswith("Flagged b1") for m in reqs[2]["messages"])
    assert session.done and session.summary == "one bug" and len(session.ledger.active()) == 1
    assert session.usage == {"prompt_tokens": 350, "completion_tokens": 70, "calls": 3}
    assert (session.out / "model.jsonl").is_file()


def test_http_500_is_a_model_call_error_after_the_retries(make_session):
    session = make_session()
    with FakeOpenAI(lambda body: 500) as server, pytest.raises(ModelCallError, match="after 3 attempt"):
        agent(server, retries=2).run(session)
    assert len(server.requests) == 3 and session.actions_used == 0


def test_client_errors_are_not_retried_and_malformed_replies_fail(make_session):
    with FakeOpenAI(lambda body: 401) as server, pytest.raises(ModelCallError, match="HTTP 401"):
        agent(server, retries=3).run(make_session())
    assert len(server.requests) == 1
    bad = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    with FakeOpenAI(lambda body: bad) as server, pytest.raises(ModelCallError, match="malformed"):
        agent(server, retries=1).run(make_session())
    assert len(server.requests) == 2


def test_a_reply_without_tools_is_nudged_once_then_the_agent_stops(make_session):
    session = make_session()
    prose = reply_text("I think the scene is fine.")
    with FakeOpenAI(scripted(reply_tools([("turn", {"degrees": 10})]), prose)) as server:
        agent(server).run(session)
    assert len(server.requests) == 3 and server.requests[2]["messages"][-1] == {
        "role": "user",
        "content": NUDGE,
    }
    assert not session.done and session.usage["calls"] == 3


def test_bad_tool_arguments_are_answered_not_executed(make_session):
    session = make_session()
    bad = reply_tools([("move", {})])
    bad["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "{not json"
    with FakeOpenAI(scripted(bad, reply_tools([("done", {"summary": "x"})]))) as server:
        agent(server).run(session)
    tool = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")
    assert (
        tool["content"].startswith("ERROR: the arguments of move are not valid JSON")
        and session.actions_used == 0
    )


def test_only_the_newest_images_stay_inline(make_session):
    session = make_session()
    turns = [reply_tools([("turn", {"degrees": 20})], id_prefix=f"c{i}") for i in range(4)]
    with FakeOpenAI(scripted(*turns, reply_tools([("done", {"summary": "x"})]))) as server:
        agent(server, keep_images=2).run(session)
    last = server.requests[-1]["messages"]
    first = image_parts(server.requests[0]["messages"][1]["content"])
    assert (
        len(image_parts(last[1]["content"])) == len(first) >= 2
    )  # the C.1 input keeps its example and start frame
    later = [p for m in last[2:] if isinstance(m.get("content"), list) for p in m["content"]]
    assert sum(p["type"] == "image_url" for p in later) == 2
    assert sum("[image a1 not repeated here" in p.get("text", "") for p in later) == 1


@pytest.mark.parametrize("task", [TASK, "city_05"])
def test_nothing_but_tool_results_reaches_the_model(built, make_session, task):
    """No request carries the rubric, the target's id or the bundle's whereabouts."""
    session = make_session(task)
    replies = (
        reply_tools([("read_example", {}), ("list_bugs", {})]),
        reply_tools(
            [
                ("move", {"distance_m": 2, "direction": "forward"}),
                ("look", {"degrees": 15}),
                ("interact", {}),
                ("wait", {"seconds": 1}),
            ]
        ),
        reply_tools(
            [
                ("inspect", {"refs": ["a1", "a1.f1"], "region": [0, 0, 0.5, 0.5]}),
                ("history", {"from_action": 0, "to_action": 4}),
                ("observe", {}),
            ]
        ),
        reply_tools(
            [
                ("flag_bug", {"description": "odd", "category": "other", "status": "suspect"}),
                ("update_bug", {"id": "b1", "status": "retracted"}),
                ("done", {"summary": "none"}),
            ]
        ),
    )
    with FakeOpenAI(scripted(*replies)) as server:
        agent(server).run(session)
    assert session.done
    sent = json.dumps(server.requests)
    rubric = Rubric.model_validate_json((built / task / "rubric.json").read_text())
    task_json = json.loads((built / task / "task.json").read_text())
    secrets = [s for e in rubric.entries for s in (e.target, e.expected, e.inspection)]
    secrets += [t for an in task_json["anomalies"] for t in an["targets"]]
    secrets += [e["target"] for an in task_json["anomalies"] for e in an["effects"] if e.get("target")]
    secrets += [str(built), "rubric", "selfcheck"]
    for s in secrets:
        assert s not in sent, s


def test_options_come_from_arguments_or_the_environment(monkeypatch):
    for name in ("OPENAI_BASE_URL", "WAC_MODEL", "OPENAI_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(AgentError, match="needs a model"):
        OpenAIAgent()
    with pytest.raises(AgentError, match="needs an API key"):
        OpenAIAgent(model="m")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:9/v1")
    monkeypatch.setenv("WAC_MODEL", "local-vlm")
    a = OpenAIAgent(max_calls="7", temperature="0.2", timeout="5")
    assert (a.base_url, a.model, a.api_key, a.max_calls, a.temperature, a.timeout) == (
        "http://localhost:9/v1",
        "local-vlm",
        "none",
        7,
        0.2,
        5.0,
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert OpenAIAgent(model="other").api_key == "sk-test"
