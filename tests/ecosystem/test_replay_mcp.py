"""The reference's replay paradigm over MCP: play(from_s, to_s) segments, or one report(bugs, summary)."""

from __future__ import annotations

import json
import re

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("pybullet")

from mcp.client import Client  # noqa: E402

from wac.audit.mcp_server import build_server  # noqa: E402
from wac.audit.protocol import ARCHIVED, ProtocolOptions  # noqa: E402
from wac.audit.reference_config import config_options  # noqa: E402
from wac.audit.replay_mcp import ReplayReference  # noqa: E402
from wac.audit.session import AuditSession, ReviewSession, SessionOptions, load_recording  # noqa: E402
from wac.errors import UsageError  # noqa: E402

TASK = "city_02"
SMALL = SessionOptions(example=False, width=160, height=96)


@pytest.fixture(scope="module")
def explored(built, tmp_path_factory):
    """An explorer's episode: a few moves and waits, recorded with film frames."""
    out = tmp_path_factory.mktemp("explore") / "ep"
    s = AuditSession(built / TASK, out, SMALL, None)
    s.call("observe")
    for name, args in [("move", {"distance_m": 2, "direction": "forward"}), ("turn", {"degrees": 40}),
                       ("wait", {"seconds": 2}), ("move", {"distance_m": 2, "direction": "forward"})]:  # fmt: skip
        assert not s.call(name, args).error
    s.call("done", {"summary": "explored"})
    s.close()
    return out


def _review(built, explored, tmp_path, mode, **kw):
    rec = load_recording(explored / "trajectory", interval_s=0.5)
    session = ReviewSession(built / TASK, rec, tmp_path / mode, SMALL, None)
    return ReplayReference(session, ProtocolOptions(image_format="png"), mode, **kw)


def _text(r) -> str:
    return "\n".join(b.text for b in r.content if b.type == "text")


def _run(session, script):
    out = {}

    async def go():
        async with Client(build_server(session)) as c:
            out["v"] = await script(c)

    anyio.run(go)
    return out["v"]


def test_play_segments(built, explored, tmp_path):
    s = _review(built, explored, tmp_path, "play", budget=2, preview_every=1.0)
    last = s.last_s

    async def script(c):
        tools = {t.name: t for t in (await c.list_tools()).tools}
        first = await c.call_tool("observe", {})
        seg = await c.call_tool("play", {"from_s": 0, "to_s": 1.5})
        back = await c.call_tool("play", {"from_s": 1.5, "to_s": 0.5})
        again = await c.call_tool("play", {"from_s": 0.5, "to_s": last})
        over = await c.call_tool("play", {"from_s": 0, "to_s": 1})
        ref = re.search(r"frames: (a\d+(\.f\d+)?)", _text(seg)).group(1)
        flag = await c.call_tool(
            "flag_bug",
            {"description": "bins overlap", "category": "geometry", "status": "suspect", "evidence": [ref]},
        )
        done = await c.call_tool("done", {"summary": "reviewed"})
        return tools, first, seg, back, again, over, flag, done

    tools, first, seg, back, again, over, flag, done = _run(s, script)
    s.close()
    assert "play" in tools and "wait" not in tools and "move" not in tools
    assert tools["play"].input_schema["properties"]["to_s"]["maximum"] == last
    shown = sum(1 for b in first.content if b.type == "image")
    assert 1 <= shown < len(s.session.recording.frames)  # previews, not the whole recording
    assert re.match(r"^a1 play 0\.0-1\.5s -> moved \d+\.\d{2}m \| pos \(.*\) yaw -?\d+ pitch -?\d+ \| sim \+1\.5s \| "
                    r"frames: .*\(final\)", _text(seg)), _text(seg)  # fmt: skip
    assert sum(1 for b in seg.content if b.type == "image") == 1
    assert back.is_error and "from_s < to_s" in _text(back)
    assert not again.is_error and _text(again).startswith("a2 play")
    assert over.is_error and "budget exhausted" in _text(over)
    assert (
        _text(flag).startswith("Recorded b1 [suspect] (geometry)")
        and _text(done) == "Inspection finished." + ARCHIVED
    )
    report = json.loads((tmp_path / "play" / "report.json").read_text())
    assert report["done"] and report["bugs"][0]["evidence"]
    assert json.loads((tmp_path / "play" / "meta.json").read_text())["actions_used"] == 2


def test_vqa_report_is_the_one_answer(built, explored, tmp_path):
    s = _review(built, explored, tmp_path, "vqa")

    async def script(c):
        names = {t.name for t in (await c.list_tools()).tools}
        first = await c.call_tool("observe", {})
        shown = re.findall(r"\[ref=(a\d+(?:\.f\d+)?)\]", _text(first))
        rep = await c.call_tool(
            "report",
            {
                "bugs": [
                    {
                        "description": "bins overlap",
                        "category": "geometry",
                        "status": "confirmed",
                        "evidence": [shown[-1], "a99"],
                    }  # fmt: skip
                ],
                "summary": "one bug",
            },
        )
        after = await c.call_tool("report", {"bugs": [], "summary": "again"})
        return names, first, rep, after, shown[-1]

    names, first, rep, after, cited = _run(s, script)
    s.close()
    assert "report" in names and not names & {"inspect", "history", "flag_bug", "done", "write_notes"}
    assert sum(1 for b in first.content if b.type == "image") == len(s.session.recording.frames)
    text = _text(rep)
    assert text.startswith("Report received (1 bug(s)).\nRecorded b1 [confirmed] (geometry): bins overlap")
    assert "dropped unknown frame ref(s): a99" in text and "Inspection finished." in text
    assert after.is_error and _text(after) == "ERROR: Episode is finished"
    report = json.loads((tmp_path / "vqa" / "report.json").read_text())
    assert report["done"] and len(report["bugs"][0]["evidence"]) == 1 and report["summary"] == "one bug"
    assert "(dropped unknown frame ref(s): a99)" in text and f"evidence: {cited}" in text


def test_the_config_selects_the_replay(tmp_path):
    c = config_options(
        {"environment": "vla-replay", "task": "b", "replay_dir": "ex", "replay_mode": "vqa"}, tmp_path
    )
    assert c["replay_dir"] == str(tmp_path / "ex") and c["replay_mode"] == "vqa"
    with pytest.raises(UsageError, match="needs replay_dir"):
        config_options({"environment": "vla-replay", "task": "b"}, tmp_path)
    # the reference's backends are served by wac's world of the task (issue 30: the launcher's config as written)
    assert config_options({"environment": "unreal-http", "task": "b"}, tmp_path)["replay_dir"] is None
    with pytest.raises(UsageError, match="environment must be one of"):
        config_options({"environment": "unity", "task": "b"}, tmp_path)
    with pytest.raises(UsageError, match="unknown config key"):
        config_options({"task": "b", "max_action": 3}, tmp_path)


def test_the_command_line_refuses_a_directory_without_a_recording(built, tmp_path, capsys, monkeypatch):
    from wac.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    out = tmp_path.parent / f"{tmp_path.name}-ep"
    assert main(["mcp", str(built / TASK), "--replay", str(tmp_path / "empty"), "--out", str(out)]) == 2
    assert "holds no recorded trajectory" in capsys.readouterr().err and not out.exists()
    assert main(["mcp"]) == 2 and "give a BUNDLE" in capsys.readouterr().err
