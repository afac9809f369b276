"""`wac mcp` driven by a client written against the reference harness's documented protocol
(WorldAuditBench `agent/vlm/mcp/server.py`, `agent/tools.py`): its launcher config, tool names and
arguments, and the result texts its parsers match — not against wac's own wording."""

from __future__ import annotations

import io
import json
import os
import re
import sys

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("pybullet")

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from PIL import Image  # noqa: E402

from wac.audit.mcp_server import build_server  # noqa: E402
from wac.audit.protocol import ARCHIVED, ProtocolOptions, ReferenceSession, ref_in, ref_out  # noqa: E402
from wac.audit.session import AuditSession, SessionOptions  # noqa: E402

from .conftest import ROOT  # noqa: E402

TASK = "city_02"  # an intersection task: reference code G2
W, H = 320, 192  # the reference's 5:3 frame, CI-sized
REFERENCE_TOOLS = {
    "observe", "read_example", "move", "turn", "look", "interact", "wait", "done",
    "inspect", "history", "flag_bug", "update_bug", "list_bugs", "write_notes",
}  # fmt: skip
# the reference's action line: `a{n} {desc} -> moved {m:.2f}m | pos (x=…, y=…) yaw … pitch … | sim +…s | frames: …`
ACTION = re.compile(
    r"^a(\d+) (move (forward|back) [\d.]+m|turn \d+ deg \((right|left)\)|look \d+ deg \((down|up)\)|wait [\d.]+s"
    r"|interact) -> moved (\d+\.\d{2})m \| pos \(x=-?[\d.]+, y=-?[\d.]+\) yaw -?\d+ pitch -?\d+ \| sim \+[\d.]+s \| "
    r"frames: (a\d+\.f0(\.\.a\d+\.f\d+)? \(film\), )?a\d+ \(final\)"
)


def text(result) -> str:
    return "\n".join(b.text for b in result.content if b.type == "text")


def jpegs(result) -> list[Image.Image]:
    import base64

    out = []
    for b in result.content:
        if b.type == "image":
            assert b.mime_type == "image/jpeg"
            out.append(Image.open(io.BytesIO(base64.b64decode(b.data))))
    return out


def test_refs_translate_both_ways():
    assert ref_out("a3.f1..a3.f4 (film), a3 (final); a12.f10") == "a3.f0..a3.f3 (film), a3 (final); a12.f9"
    assert ref_in(ref_out("a3.f1 a30.f2 a1 b1")) == "a3.f1 a30.f2 a1 b1"


def test_a_reference_client_runs_an_episode_over_stdio(built, tmp_path):
    work, run_dir = tmp_path / "agent_cwd", tmp_path / "run"
    work.mkdir()
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "environment": "wac",
                "task": TASK,
                "build": str(built),
                "run_dir": str(run_dir),
                "max_actions": 2,
                "max_tool_calls": 400,
                "require_full_budget": True,
                "observation": "on-demand",
                "icl": {"enabled": True},
                "width": W,
                "height": H,
            }
        )
    )
    params = StdioServerParameters(
        command=sys.executable,
        cwd=str(work),
        args=["-m", "wac.cli", "mcp", "--config", str(config)],
        env={
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
            "WAC_CACHE_DIR": str(tmp_path / "cache"),
        },
    )

    async def episode():
        got = {}
        with open(tmp_path / "stderr.txt", "w") as err:
            async with Client(stdio_client(params, errlog=err), mode="legacy", read_timeout_seconds=120) as c:
                tools = {t.name: t for t in (await c.list_tools()).tools}
                got["tools"], got["instructions"] = tools, c.instructions
                got["early"] = await c.call_tool("observe", {})
                got["example"] = await c.call_tool("read_example", {"code": "G2"})
                got["observe"] = await c.call_tool("observe", {})
                got["move"] = await c.call_tool("move", {"distance_m": 1, "direction": "forward"})
                got["inspect"] = await c.call_tool(
                    "inspect", {"refs": ["a1.f0"], "region": [0.2, 0.2, 0.8, 0.8]}
                )
                crop = re.search(r"(a1\.f0#c\d+)", text(got["inspect"])).group(1)
                got["flag"] = await c.call_tool(
                    "flag_bug",
                    {
                        "description": "two bins overlap, see a1.f0",
                        "category": "geometry",
                        "status": "confirmed",
                        "evidence": [crop, "a1"],
                    },
                )
                got["early_done"] = await c.call_tool("done", {"summary": "found it"})
                got["turn"] = await c.call_tool("turn", {"degrees": -30})
                got["history"] = await c.call_tool("history", {"from_action": 2, "to_action": 1})
                got["unknown"] = await c.call_tool("teleport", {})
                got["done"] = await c.call_tool("done", {"summary": "two bins overlap (b1)"})
                got["after"] = await c.call_tool("list_bugs", {})
        return got

    got = anyio.run(episode)
    tools = got["tools"]
    assert REFERENCE_TOOLS <= set(tools)
    assert tools["read_example"].input_schema["properties"]["code"]["enum"] == ["G2"]
    assert (
        "After read_example, call observe" in got["instructions"]
        and "at most 400 tool calls" in got["instructions"]
    )
    # scene tools wait for the example; the example is delivered once
    assert got["early"].is_error and text(got["early"]).startswith(
        "ERROR: Read all ICL examples before using scene tools. Call read_example for: G2"
    )
    ex = text(got["example"])
    assert (
        ex.startswith("ICL demonstration G2:")
        and "Use observe to start/resume" in ex
        and jpegs(got["example"])
    )
    first = text(got["observe"])
    assert "[observation a0] start view" in first and "Reference answer" not in first
    (a0,) = jpegs(got["observe"])
    assert a0.format == "JPEG" and a0.size == (W, H) and "[ref=a0]" in first
    # the action line, in the reference's wording and numbering
    move = text(got["move"])
    m = ACTION.match(move)
    assert m and m.group(1) == "1" and "(blocked)" not in move and "dropped" not in move, move
    assert ACTION.match(text(got["turn"])) and "turn 30 deg (left)" in text(got["turn"])
    # crops are citable
    assert text(got["inspect"]).startswith("Returning 1 frame(s): a1.f0#c1")
    assert "[ref=a1.f0#c1]" in text(got["inspect"]) and jpegs(got["inspect"])
    flag = text(got["flag"])
    assert re.match(r"^Recorded b1 \[confirmed\] \(geometry\): two bins overlap, see a1\.f0\nLedger:\n", flag)
    assert "evidence: a1.f0#c1, a1" in flag  # as cited: a crop stays a crop, as in the reference's ledger
    assert got["early_done"].is_error and "full action budget" in text(got["early_done"])
    assert re.search(
        r"^a1 \[call \d+\] model: - \| a1 move forward 1\.0m -> moved", text(got["history"]), re.M
    )
    assert text(got["history"]).index("a1 [call") < text(got["history"]).index("a2 [call")
    assert got["unknown"].is_error and text(got["unknown"]) == "ERROR: Unknown tool"
    assert text(got["done"]) == "Inspection finished." + ARCHIVED  # on-demand: the reference's note follows
    assert got["after"].is_error and text(got["after"]) == "ERROR: Episode is finished"

    # the reference's episode outputs beside wac's
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "completed" and meta["actions_used"] == 2 and meta["max_actions"] == 2
    assert meta["icl_complete"] and meta["icl_examples_delivered"] == ["G2"] and meta["environment"] == "wac"
    assert (
        meta["flags"][0]["evidence"] == ["a1.f0#c1", "a1"] and meta["done_summary"] == "two bins overlap (b1)"
    )
    calls = [json.loads(line) for line in (run_dir / "mcp-calls.jsonl").read_text().splitlines()]
    assert [c["tool"] for c in calls][:3] == ["observe", "read_example", "observe"]
    assert {"time", "tool", "arguments", "text", "images", "is_error"} <= set(calls[0])
    index = {
        r["ref"]: r for r in map(json.loads, (run_dir / "frames" / "index.jsonl").read_text().splitlines())
    }
    for ref, name in (
        ("a0", "a000"),
        ("a1", "a001"),
        ("a1.f0", "a001_f00"),
        ("a2", "a002"),
        ("a1.f0#c1", "a001_f00_c01"),
    ):
        assert (
            index[ref]["file"] == f"{name}.jpg"
            and Image.open(run_dir / "frames" / f"{name}.jpg").format == "JPEG"
        )
    assert index["a1.f0#c1"]["parent"] == "a1.f0" and index["a1.f0#c1"]["region"] == [0.2, 0.2, 0.8, 0.8]
    assert json.loads((run_dir / "tools.json").read_text()).keys() >= {"move", "read_example"}
    report = json.loads((run_dir / "report.json").read_text())  # wac's own report, in wac's numbering
    assert report["done"] and report["bugs"][0]["evidence"] == ["a1.f1", "a1"]
    assert list(work.iterdir()) == []


def _session(built, tmp_path, **protocol):
    options = SessionOptions(example=False, width=160, height=96)
    s = AuditSession(built / TASK, tmp_path / "ep", options, None)
    return ReferenceSession(s, ProtocolOptions(**protocol))


def _run(session, script):
    out = {}

    async def go():
        async with Client(build_server(session)) as c:
            out["v"] = await script(c)

    anyio.run(go)
    return out["v"]


def test_call_cap_and_inspect_budget(built, tmp_path):
    s = _session(built, tmp_path, max_tool_calls=5, inspect_budget=1, image_format="png")

    async def script(c):
        names = {t.name for t in (await c.list_tools()).tools}
        r = [await c.call_tool("observe", {})]
        r.append(await c.call_tool("inspect", {"refs": ["a0"]}))
        r.append(await c.call_tool("inspect", {"refs": ["a0"]}))
        r.append(await c.call_tool("flag_bug", {"description": "x", "category": "other", "status": "suspect",
                                                "evidence": ["a0#c4"]}))  # fmt: skip
        r.append(await c.call_tool("list_bugs", {}))
        r.append(await c.call_tool("list_bugs", {}))
        r.append(await c.call_tool("done", {"summary": "x"}))
        return names, r

    names, r = _run(s, script)
    s.close()
    assert not r[1].is_error and "image/png" in {b.mime_type for b in r[1].content if b.type == "image"}
    assert r[2].is_error and "inspect budget exhausted (1 calls)" in text(r[2])
    assert r[3].is_error and text(r[3]) == "ERROR: unknown crop ref(s): a0#c4; crops so far: none yet"
    assert text(r[5]) == "ERROR: Tool-call budget exhausted; call done"
    assert text(r[6]) == "Inspection finished." + ARCHIVED  # done stays possible


def test_no_inspect_tool_and_move_extras(built, tmp_path):
    s = _session(built, tmp_path, inspect_budget=0, move_extras=True)

    async def script(c):
        names = {t.name for t in (await c.list_tools()).tools}
        await c.call_tool("observe", {})
        return names, await c.call_tool("move", {"distance_m": 4, "direction": "back"})

    names, move = _run(s, script)
    s.close()
    assert "inspect" not in names
    assert ACTION.match(text(move)) and re.search(r"\[moved [\d.]+ m of 4\.00 m back", text(move))


def test_the_reference_protocol_is_wac_mcps_default(built):
    from wac.audit.reference_config import apply_config
    from wac.cli import parser

    args = parser().parse_args(["mcp", str(built / TASK)])
    proto = apply_config(args)
    assert isinstance(proto, ProtocolOptions) and proto.image_format == "jpeg" and proto.max_tool_calls == 400
    assert (args.width, args.height) == (960, 576)
    args = parser().parse_args(["mcp", str(built / TASK), "--protocol", "wac"])
    assert apply_config(args) is None and (args.width, args.height) == (640, 480)
    args = parser().parse_args(
        ["mcp", str(built / TASK), "--image-format", "png", "--width", "640", "--height", "480"]
    )
    assert apply_config(args).image_format == "png" and (args.width, args.height) == (640, 480)


def test_wac_eval_runs_agents_in_the_reference_protocol(built, tmp_path):
    """`wac eval --protocol reference`: the agent reads the reference's texts; the run is judged as any other."""
    from wac.audit.judge import judge_run
    from wac.audit.runner import RunConfig, run_eval

    script = tmp_path / "a.txt"
    script.write_text(
        "move 1 forward\nturn 45\nflag intersection confirmed bins inside each other\ndone ok\n"
    )
    results = {}
    for protocol in ("wac", "reference"):
        run = tmp_path / protocol
        config = RunConfig(
            agent=f"replay:{script}", options=SessionOptions(width=160, height=96), protocol=protocol
        )
        assert all(s["ok"] for s in run_eval(built, run, config, only=[TASK]))
        (status,) = judge_run(run, backend="keyword")
        d = run / "tasks" / TASK
        report = json.loads((d / "report.json").read_text())
        results[protocol] = (status["success"], report["bugs"][0]["evidence"], report["actions_used"])
        assert json.loads((run / "run.json").read_text())["protocol"] == protocol
    assert results["wac"] == results["reference"]
    calls = [
        json.loads(line) for line in (tmp_path / "reference" / "tasks" / TASK / "mcp-calls.jsonl").open()
    ]
    moves = [c["text"] for c in calls if c["tool"] == "move"]
    assert ACTION.match(moves[0]) and "In-context example" in calls[0]["text"]  # the example with observe
