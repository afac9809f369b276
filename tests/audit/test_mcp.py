"""`wac mcp`: the session's tools over MCP, checked with the SDK's own client (in memory and over stdio)."""

from __future__ import annotations

import base64
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from wac.audit.frames import png_bytes  # noqa: E402
from wac.audit.mcp_server import build_server, episode_dir, load_examples  # noqa: E402
from wac.audit.session import AuditSession, SessionOptions  # noqa: E402
from wac.audit.tools import live_tools  # noqa: E402
from wac.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TASK = "city_02"
SMALL = dict(width=160, height=120)


@dataclass(frozen=True)
class _Example:
    text: str
    figures: tuple


class FakeExamples:
    """An example library without the demo renders: one text and one figure per category."""

    def get(self, category, avoid=frozenset()):
        import numpy as np

        img = np.zeros((12, 16, 3), dtype=np.uint8)
        return _Example(
            f"Example of {category}: a reference answer.", (("figure 1: the defect", png_bytes(img)),)
        )


def session_for(bundle: Path, out: Path, examples=None, **options) -> AuditSession:
    opts = {"example": examples is not None, **SMALL, **options}
    return AuditSession(bundle, out, SessionOptions(**opts), examples)


def run(session: AuditSession, script):
    """Connect the SDK's in-memory client to a server over `session` and run `script(client)`."""
    result = {}

    async def go():
        async with Client(build_server(session)) as client:
            result["value"] = await script(client)

    anyio.run(go)
    return result["value"]


def texts(result) -> list[str]:
    return [b.text for b in result.content if b.type == "text"]


def blocks(result) -> list[tuple[str, str]]:
    return [(b.type, b.text if b.type == "text" else b.data) for b in result.content]


@pytest.fixture
def bundle(built) -> Path:
    return built / TASK


# --- tools ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("with_example", [False, True])
def test_tools_are_the_sessions_with_their_schemas(bundle, tmp_path, with_example):
    s = session_for(bundle, tmp_path / "ep", FakeExamples() if with_example else None)

    async def script(c):
        return await c.list_tools(), c.instructions

    listed, instructions = run(s, script)
    s.close()
    specs = live_tools(example=with_example)
    assert [t.name for t in listed.tools] == [t.name for t in specs] == [t.name for t in s.tools]
    for tool, spec in zip(listed.tools, specs, strict=True):
        assert tool.description == spec.description and tool.input_schema == spec.parameters
    assert ("read_example" in [t.name for t in listed.tools]) is with_example
    assert "observe" in instructions and "done(summary)" in instructions


def test_first_observe_delivers_the_initial_input_with_text_beside_every_image(bundle, tmp_path):
    s = session_for(bundle, tmp_path / "ep", FakeExamples())

    async def script(c):
        return (
            await c.call_tool("observe", {}),
            await c.call_tool("observe", {}),
            await c.call_tool("read_example"),
        )

    first, again, example = run(s, script)
    s.close()
    assert not first.is_error and texts(first)[0].startswith("# Auditing task")
    assert "Scene: A modern city street" in texts(first)[0] and "Example of intersection" in texts(first)[0]
    for res in (first, again, example):
        kinds = [b.type for b in res.content]
        assert kinds[0] == "text" and "image" in kinds
        for i, b in enumerate(res.content):
            if b.type == "image":  # each image is announced by a text block naming it
                assert res.content[i - 1].type == "text" and res.content[i - 1].text.startswith("[image")
                assert b.mime_type == "image/png" and base64.b64decode(b.data).startswith(b"\x89PNG")
    labels = [b.text.replace("=-0.00", "=0.00") for b in first.content if b.type == "text"][1:]
    assert labels == [
        "[image example.1] figure 1: the defect",
        "[image] a0 start view | pos (x=0.00, y=-8.50) yaw 90 pitch 0 | t=0.0 s",
    ]
    assert "40 of 40 environment actions left" in texts(again)[0]


def test_environment_actions_change_the_pose_and_use_the_budget(bundle, tmp_path):
    s = session_for(bundle, tmp_path / "ep")

    async def script(c):
        await c.call_tool("observe", {})
        turn = await c.call_tool("turn", {"degrees": 90})
        move = await c.call_tool("move", {"distance_m": 1.5, "direction": "forward"})
        return turn, move, await c.call_tool("observe", {})

    turn, move, now = run(s, script)
    assert not turn.is_error and "yaw 0 pitch 0" in texts(turn)[0] and "39 actions left" in texts(turn)[0]
    assert (
        not move.is_error
        and "pos (x=1.50, y=-8.50)" in texts(move)[0]
        and "38 actions left" in texts(move)[0]
    )
    assert [b.type for b in move.content] == ["text", "text", "image"] and "a2 final view" in texts(move)[1]
    assert "Current view a2" in texts(now)[0] and "38 of 40 environment actions left" in texts(now)[0]
    assert s.actions_used == 2
    s.close()


def test_agent_mistakes_come_back_as_tool_errors_and_the_server_goes_on(bundle, tmp_path):
    s = session_for(bundle, tmp_path / "ep")

    async def script(c):
        out = [
            await c.call_tool("move", {"distance_m": 9, "direction": "sideways"}),
            await c.call_tool("inspect", {"refs": ["a7"]}),
            await c.call_tool("wait", {"seconds": 1, "extra": True}),
            await c.call_tool("teleport", {}),
        ]
        return out, await c.call_tool("inspect", {"refs": '["a0"]'})  # an array sent as JSON text

    errors, ok = run(s, script)
    s.close()
    assert all(r.is_error for r in errors)
    assert texts(errors[0])[0].startswith("ERROR: invalid arguments for move: ")
    assert "'sideways' is not one of ['forward', 'back']" in texts(errors[0])[0]
    assert "greater than the maximum of 4" in texts(errors[0])[0]
    assert "no frame a7" in texts(errors[1])[0] and "Additional properties" in texts(errors[2])[0]
    assert "teleport" in texts(errors[3])[0]
    assert not ok.is_error and [b.type for b in ok.content] == ["text", "text", "image"]


def test_an_internal_failure_is_an_error_result_not_a_crash(bundle, tmp_path, monkeypatch):
    s = session_for(bundle, tmp_path / "ep")
    real = s.call

    def broken(name, args=None):
        if name == "look":
            raise RuntimeError("secret internals")
        return real(name, args)

    monkeypatch.setattr(s, "call", broken)

    async def script(c):
        return await c.call_tool("look", {"degrees": 10}), await c.call_tool("list_bugs", {})

    bad, fine = run(s, script)
    s.close()
    assert bad.is_error and "internal error" in texts(bad)[0] and "secret" not in texts(bad)[0]
    assert not fine.is_error


def test_an_exhausted_budget_is_a_tool_error(bundle, tmp_path):
    s = session_for(bundle, tmp_path / "ep", budget_multiplier=0.05)

    async def script(c):
        return [await c.call_tool("wait", {"seconds": 0.5}) for _ in range(3)]

    results = run(s, script)
    s.close()
    assert [r.is_error for r in results] == [False, False, True]
    assert "action budget exhausted (2 of 2" in texts(results[2])[0]


def test_done_writes_the_report_with_the_flagged_bug(bundle, tmp_path):
    s = session_for(bundle, tmp_path / "ep")

    async def script(c):
        await c.call_tool("observe", {})
        flag = await c.call_tool(
            "flag_bug",
            {
                "description": "wheelie bins intersect in a heap",
                "category": "intersection",
                "status": "suspect",
                "evidence": ["a0"],
            },
        )
        done = await c.call_tool("done", {"summary": "one heap of intersecting bins"})
        return flag, done, await c.call_tool("done", {"summary": "again"}), await c.call_tool("list_bugs", {})

    flag, done, again, listed = run(s, script)
    report = json.loads((tmp_path / "ep" / "report.json").read_text())
    s.close()
    assert texts(flag)[0].startswith("Flagged b1") and not done.is_error
    assert report["done"] and report["summary"] == "one heap of intersecting bins"
    assert [(b["description"], b["evidence"]) for b in report["bugs"]] == [
        ("wheelie bins intersect in a heap", ["a0"])
    ]
    assert again.is_error and "already" in texts(again)[0] and "b1" in texts(listed)[0]


# --- sealed ground truth ---------------------------------------------------------------------------


@pytest.mark.parametrize("task", [TASK, "city_07"])
def test_nothing_the_agent_reads_gives_the_ground_truth_away(built, tmp_path, monkeypatch, task):
    monkeypatch.setenv("WAC_CACHE_DIR", str(tmp_path / "cache"))
    bundle = built / task
    options = SessionOptions(**SMALL)
    examples = load_examples(
        built, options, json.loads((bundle / "agent" / "context.json").read_text())["example"]
    )
    s = AuditSession(bundle, tmp_path / "ep", options, examples)

    async def script(c):
        listed = await c.list_tools()
        seen = [c.instructions or ""] + [t.description + json.dumps(t.input_schema) for t in listed.tools]
        calls = [
            ("observe", {}),
            ("read_example", {}),
            ("turn", {"degrees": 30}),
            ("interact", {}),
            ("move", {"distance_m": 2, "direction": "forward"}),
            ("wait", {"seconds": 2}),
            ("look", {"degrees": 10}),
            ("inspect", {"refs": ["a1", "a3.f1"], "region": [0.2, 0.2, 0.8, 0.8]}),
            ("history", {"from_action": 0, "to_action": 10}),
            ("write_notes", {"text": "checked the street"}),
            ("flag_bug", {"description": "something odd", "category": "other", "status": "suspect"}),
            ("list_bugs", {}),
            ("observe", {}),
            ("inspect", {"refs": ["a99"]}),
            ("teleport", {}),
            ("done", {"summary": "finished"}),
        ]
        for name, args in calls:
            if name in {t.name for t in listed.tools}:
                seen += texts(await c.call_tool(name, args))
        return "\n".join(seen)

    seen = run(s, script)
    s.close()
    rubric = json.loads((bundle / "rubric.json").read_text())
    task_json = json.loads((bundle / "task.json").read_text())
    secrets = [e[k] for e in rubric["entries"] for k in ("target", "expected", "inspection")]
    secrets += [t for a in task_json["anomalies"] for t in a["targets"]]
    secrets += [
        e[key] for a in task_json["anomalies"] for e in a["effects"] for key in ("target",) if key in e
    ]
    secrets.append(task_json["id"])
    assert "a0 start view" in seen and "In-context example" in seen and "Flagged b1" in seen
    for secret in secrets:
        assert secret not in seen, f"tool text leaks {secret!r}"


# --- command line and stdio ------------------------------------------------------------------------


def test_bad_input_is_a_one_line_usage_error(built, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    assert main(["mcp", str(tmp_path / "missing")]) == 2
    assert main(["mcp", str(tmp_path / "empty")]) == 2
    assert main(["mcp", str(built / TASK), "--out", "inside"]) == 2  # the agent's working directory
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("wac: error: ") for line in err)
    assert "no such bundle" in err[0] and "not a task bundle" in err[1] and "working directory" in err[2]
    assert not (tmp_path / "inside").exists()


def test_the_default_episode_directory_is_a_fresh_one_outside_the_working_directory(tmp_path):
    work = tmp_path / "agent_cwd"
    work.mkdir()
    first, second = episode_dir(None, work), episode_dir(None, work)
    try:
        assert first != second and not list(first.iterdir())
        assert work not in first.parents and first.resolve() != work.resolve()
    finally:
        first.rmdir()
        second.rmdir()


def test_a_harness_connects_over_stdio(built, tmp_path):
    """What Claude Code, Codex CLI and Gemini CLI do: spawn `wac mcp`, list tools, call them, hang up."""
    work, out, errlog = tmp_path / "agent_cwd", tmp_path / "episode", tmp_path / "server_stderr.txt"
    work.mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        cwd=str(work),
        args=[
            "-m",
            "wac.cli",
            "mcp",
            str(built / TASK),
            "--out",
            str(out),
            "--width",
            "160",
            "--height",
            "120",
            "--protocol",  # wac's own texts; the reference protocol is tested in tests/ecosystem
            "wac",
        ],
        env={
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
            "WAC_CACHE_DIR": str(tmp_path / "cache"),
        },
    )
    stray: list[BaseException] = []

    async def on_message(message):
        if isinstance(message, BaseException):  # a line on stdout that is not JSON-RPC
            stray.append(message)

    async def go():
        with open(errlog, "w") as fh:
            async with Client(
                stdio_client(params, errlog=fh),
                mode="legacy",
                message_handler=on_message,
                read_timeout_seconds=60,
            ) as c:
                names = [t.name for t in (await c.list_tools()).tools]
                first = await c.call_tool("observe", {})
                move = await c.call_tool("move", {"distance_m": 1, "direction": "forward"})
                return names, c.instructions, first, move

    names, instructions, first, move = anyio.run(go)
    assert names == [t.name for t in live_tools()] and "observe" in instructions
    assert texts(first)[0].startswith("# Auditing task") and "In-context example" in texts(first)[0]
    assert [b.type for b in first.content].count("image") >= 2  # the example's figures and a0
    assert not move.is_error and "moved 1.00 m" in texts(move)[0]
    assert not stray
    report = json.loads((out / "report.json").read_text())  # written when the client hung up
    assert report["actions_used"] == 1 and not report["done"]
    assert (out / "trajectory" / "trajectory.jsonl").is_file() and (out / "tools.jsonl").is_file()
    assert list(work.iterdir()) == []  # nothing of the episode in the agent's working directory
    log = errlog.read_text()
    assert f"recording the episode to {out}" in log and "report in" in log
