"""The compatibility suite: the reference harness's own MCP contract, run against `wac mcp`.

Written against UCSB-NLP-Chang/WorldAuditBench at commit REFERENCE_COMMIT: our own port of its
`tests/test_native_mcp.py` (round trip, archive, crop, budget, done; delivery modes; ICL gating;
restart; non-finite numbers; the full-budget guard with its completion hook
`agent/vlm/native/after_agent.py`), with the server started exactly as its launcher
(`agent/vlm/native/launch.py`, `prepare`) starts it — `<command> --config episode-config.json`
from the run's workspace — only the command changed to `wac mcp`.  The config is the one the
launcher writes, key for key, never trimmed.  Then the reference's run-directory readers
(`scripts/experiments/run_batch.py`, the judge pipelines' `fetch`) are applied to wac's run
directory, and the input schemas are checked to be enforced with the reference's error texts.

Each `check()` is one ported round-trip or ICL check: 20 + 15, all passing with the verbatim config.
"""

from __future__ import annotations

import base64
import json
import math
import os
import sys
from pathlib import Path

import anyio
import jsonschema
import pytest

pytest.importorskip("mcp")
pytest.importorskip("pybullet")

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from wac.audit.protocol import ARCHIVED, FILM_MAX, ProtocolOptions, ReferenceSession  # noqa: E402
from wac.audit.session import AuditSession, SessionOptions  # noqa: E402

from .conftest import ROOT  # noqa: E402

REFERENCE_COMMIT = "1fb54b1b0c0fe057464706b1ffb68904fbee2b08"
TASK, CODE = "city_02", "G2"  # an intersection task; the reference's subcategory code G2
TOOLS = {
    "read_example",
    "observe",
    "move",
    "turn",
    "look",
    "interact",
    "wait",
    "inspect",
    "history",
    "write_notes",
    "flag_bug",
    "update_bug",
    "list_bugs",
    "done",
}  # fmt: skip  (launch.py TOOLS)
DEFAULT_INSTRUCTION = (
    "Inspect the assigned 3D environment for anomalies. Explore and gather visual evidence. "
    "Report each distinct anomaly with a clear description and evidence frame references."
)
CHECKS: list[str] = []  # the ported checks that ran and passed, by name
ROUND_TRIP_CHECKS, ICL_CHECKS = 20, 15  # every one of them passes with the launcher's verbatim config


def check(name: str, ok: bool, detail: object = "") -> None:
    assert ok, f"{name}: {detail}"
    CHECKS.append(name)


def text(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def images(result) -> int:
    return sum(c.type == "image" for c in result.content)


# --- the launcher, as it writes a run ------------------------------------------------------------


def launcher_run(tmp: Path, task: str, *, icl: bool, max_actions=2, max_tool_calls=40, **flags) -> Path:
    """A run directory as launch.py's `prepare` lays it out (run/workspace, run/episode-config.json),
    with the episode config it writes: every key, in its order, absent flags at their defaults."""
    run = tmp / "run"
    (run / "workspace").mkdir(parents=True)
    manifest = {"enabled": False}
    if icl:  # ExamplePack.manifest() of a one-example snapshot in run/icl
        (run / "icl").mkdir()
        manifest = {"enabled": True, "sha256": "0" * 64, "codes": [CODE], "example_count": 1, "image_count": 2,
                    "delivery": "mcp-before-observation", "excluded_task_ids": ["s01"]}  # fmt: skip
    episode = {
        "upstream": str(tmp / "WorldAuditBench"),
        "run_dir": str(run / "episode"),
        "environment": flags.get("environment", "threejs"),
        "environment_url": None,
        "task": task,
        "instruction": DEFAULT_INSTRUCTION,
        "max_actions": max_actions,
        "max_tool_calls": max_tool_calls,
        "require_full_budget": flags.get("require_full_budget", False),
        "seed": flags.get("seed", 5),
        "observation": flags.get("observation", "on-demand"),
        "inspect_budget": flags.get("inspect_budget"),
        "icl": manifest,
        "icl_directory": str(run / "icl") if icl else None,
        "subcategory": CODE if icl else None,
        "scene_description": "A city intersection with street furniture.",
        "allow_icl_overlap": False,
        # environment threejs: the pinned page (browser-config.json), unused by wac
        "browser_root": str(tmp / "browser-release"),
        "browser_page": "city.html",
        "browser_case": "city-02",
        "page_sha256": "0" * 64,
    }
    (run / "episode-config.json").write_text(json.dumps(episode, indent=2) + "\n")
    return run


def server(run: Path, tmp: Path, env: dict | None = None) -> StdioServerParameters:
    """launch.py's `common` server entry with only the command changed: `wac mcp --config FILE`."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "wac.cli", "mcp", "--config", str(run / "episode-config.json")],
        cwd=str(run / "workspace"),
        env={
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
            "WAC_CACHE_DIR": os.environ.get("WAC_CACHE_DIR", str(tmp / "cache")),
            **(env or {}),
        },
    )


def drive(params, tmp: Path, script):
    out = {}

    async def go():
        with open(tmp / "stderr.txt", "w") as err:
            async with Client(stdio_client(params, errlog=err), mode="legacy", read_timeout_seconds=180) as c:
                out["v"] = await script(c)

    anyio.run(go)
    return out["v"]


# --- test_native_mcp.py, ported ------------------------------------------------------------------


def test_stdio_round_trip_archive_crop_budget_and_done(built, tmp_path):
    """test_stdio_round_trip_archive_crop_budget_and_done, the launcher's zero-shot config."""
    CHECKS.clear()
    run = launcher_run(tmp_path, str(built / TASK), icl=False)
    ep = run / "episode"

    async def script(c):
        names = {t.name for t in (await c.list_tools()).tools}
        check("tool list is launch.py TOOLS (read_example listed without ICL)", names == TOOLS, names)
        check("discovery never starts a game", not (ep / "episode.started").exists())
        first = await c.call_tool("observe", {})
        check("observe: one image", images(first) == 1 and not first.is_error, text(first))
        waited = await c.call_tool("wait", {"seconds": 2})
        check(
            "wait: one image, film refs from a1.f0",
            images(waited) == 1 and "a1.f0" in text(waited),
            text(waited),
        )
        recalled = await c.call_tool("inspect", {"refs": ["a0", "a1.f0", "a1"]})
        check("inspect three refs", images(recalled) == 3 and not recalled.is_error, text(recalled))
        crop = await c.call_tool("inspect", {"refs": ["a1.f0"], "region": [0.1, 0.2, 0.8, 0.9]})
        check("crop ref #c1", images(crop) == 1 and "#c1" in text(crop), text(crop))
        five = await c.call_tool("inspect", {"refs": ["a0"] * 5})
        check("five refs refused (maxItems 4)", five.is_error, text(five))
        check("unknown ref refused", (await c.call_tool("inspect", {"refs": ["a999"]})).is_error)
        far = await c.call_tool("move", {"distance_m": 999, "direction": "forward"})
        check("move beyond 4 m refused", far.is_error, text(far))
        note = await c.call_tool("write_notes", {"text": "Recheck a1.f0."})
        check("write_notes", not note.is_error, text(note))
        flag = await c.call_tool("flag_bug", {"description": "Synthetic hypothesis", "category": "visual",
                                              "status": "suspect", "evidence": ["a1.f0"]})  # fmt: skip
        check("flag_bug", not flag.is_error, text(flag))
        retract = await c.call_tool("update_bug", {"id": "b1", "status": "retracted"})
        check("update_bug retracts", not retract.is_error, text(retract))
        check("turn", not (await c.call_tool("turn", {"degrees": 30})).is_error)
        over = await c.call_tool("move", {"distance_m": 1, "direction": "forward"})
        check("budget of 2 actions exhausted", over.is_error, text(over))
        history = text(await c.call_tool("history", {"from_action": 1, "to_action": 2}))
        check("history has wait and turn", "wait" in history and "turn" in history, history)
        done = await c.call_tool("done", {"summary": "Synthetic transport verified"})
        check("done", not done.is_error, text(done))
        check("wait after done refused", (await c.call_tool("wait", {"seconds": 1})).is_error)

    drive(server(run, tmp_path), tmp_path, script)
    meta = json.loads((ep / "meta.json").read_text())
    check("meta completed, 2 actions", meta["status"] == "completed" and meta["actions_used"] == 2, meta)
    check("retracted flag gone from meta", meta["flags"] == [], meta["flags"])
    check("notes.md kept", "Recheck" in (ep / "notes.md").read_text())
    assert len(CHECKS) == ROUND_TRIP_CHECKS, CHECKS
    assert list((run / "workspace").iterdir()) == []  # nothing of the episode in the agent's directory


@pytest.mark.parametrize("mode,count", [("film", 6), ("final", 1), ("on-demand", 1)])
def test_delivery_modes(built, tmp_path, mode, count):
    """test_delivery_modes: a 2 s wait films from t=0 every 0.5 s (5 frames) under the reference's timing."""
    s = _episode(built, tmp_path, "film" if mode == "film" else "final")
    try:
        s.call("observe", {})
        r = s.call("wait", {"seconds": 2})
        assert not r.error, r.text
        assert len(r.images) == count
        if mode != "final":
            assert (
                "a1.f0..a1.f4 (film)" in r.text and "a1.f4" in s.session.archive
            )  # a1.f3 in the reference's numbering
    finally:
        s.close()


def test_icl_gating_order_recall_and_evidence_separation(built, tmp_path):
    """test_icl_real_stdio_images_order_gating_recall_and_evidence_separation, the launcher's ICL config."""
    CHECKS.clear()
    run = launcher_run(tmp_path, str(built / TASK), icl=True)
    ep = run / "episode"

    async def script(c):
        early = await c.call_tool("observe", {})
        check("observe refused before the example", early.is_error, text(early))
        check("wait refused before the example", (await c.call_tool("wait", {"seconds": 0.5})).is_error)
        check("no episode.started before the example", not (ep / "episode.started").exists())
        other = await c.call_tool("read_example", {"code": "G1"})
        check("another category's example refused", other.is_error, text(other))
        result = await c.call_tool("read_example", {})
        t = text(result)
        check("example delivered", not result.is_error and t.startswith(f"ICL demonstration {CODE}:"), t)
        check("example has a reference answer", "Reference answer" in t, t)
        kinds = [c.type for c in result.content]
        first = kinds.index("image") if "image" in kinds else -1
        answer = next(
            (
                i
                for i, c in enumerate(result.content)
                if c.type == "text" and c.text.startswith("Reference answer")
            ),
            -1,
        )
        check("figures before the answer", 0 < first < answer, kinds)
        meta = json.loads((ep / "meta.json").read_text())
        check(
            "reading spends no action",
            meta["actions_used"] == 0 and meta["environment_started"] is False,
            meta,
        )
        check("observe after the example", not (await c.call_tool("observe", {})).is_error)
        recall = await c.call_tool("read_example", {"code": CODE})
        check("example re-read by code", not recall.is_error and images(recall) == images(result) > 0)
        leak = await c.call_tool("flag_bug", {"description": "Do not let demonstration evidence leak into reports",
                                              "category": "collision", "evidence": ["icl:G2:1"]})  # fmt: skip
        check("demonstration refs are not evidence", leak.is_error, text(leak))
        check("wait after the example", not (await c.call_tool("wait", {"seconds": 0.5})).is_error)
        check("done", not (await c.call_tool("done", {"summary": "ICL transport verified"})).is_error)

    drive(server(run, tmp_path), tmp_path, script)
    meta = json.loads((ep / "meta.json").read_text())
    check("icl complete", meta["icl_complete"] and meta["icl_examples_delivered"] == [CODE], meta)
    check("one action, completed", meta["actions_used"] == 1 and meta["status"] == "completed", meta)
    assert len(CHECKS) == ICL_CHECKS, CHECKS


def test_restart_does_not_reset_an_existing_episode(built, tmp_path, capsys):
    """test_restart_does_not_reset_existing_episode: a second server on a used run directory refuses."""
    from wac.cli import main

    run = launcher_run(tmp_path, str(built / TASK), icl=False)
    s = _episode(built, tmp_path, "final", out=run / "episode")
    s.call("observe", {})
    s.close()
    before = (run / "episode" / "meta.json").read_bytes()
    cwd = os.getcwd()
    os.chdir(run / "workspace")
    try:
        code = main(["mcp", "--config", str(run / "episode-config.json")])
        assert code == 2 and "must be a new or empty directory" in capsys.readouterr().err
    finally:
        os.chdir(cwd)
    assert (run / "episode" / "meta.json").read_bytes() == before


def test_invalid_numbers_and_schemas_do_not_advance(built, tmp_path):
    """test_invalid_crop_and_numbers_do_not_advance, and the schemas enforced with jsonschema's texts."""
    s = _episode(built, tmp_path, "final")
    try:
        s.call("observe", {})
        nan = s.call("move", {"distance_m": float("nan"), "direction": "forward"})
        assert nan.error and nan.text == "ERROR: Non-finite numbers are not permitted"
        assert s.actions_used == 0
        schemas = {t.name: t.parameters for t in s.tools}
        for name, args in [
            ("inspect", {"refs": ["a0"] * 5}),
            ("flag_bug", {"description": "x", "category": "visual"}),
            ("move", {"distance_m": 2, "direction": "sideways"}),
            ("wait", {"seconds": 1, "extra": True}),
        ]:
            first = next(jsonschema.Draft202012Validator(schemas[name]).iter_errors(args))
            r = s.call(name, args)
            assert r.error and r.text == f"ERROR: {first}", r.text
        crop = s.call("inspect", {"refs": ["a0"], "region": [0.5, 0.5, 0.2, 0.9]})
        assert crop.text == "ERROR: Crop must have x0 < x1 and y0 < y1"
        assert s.actions_used == 0
    finally:
        s.close()


def test_full_budget_done_guard_and_completion_hook(built, tmp_path):
    """test_full_budget_done_guard_and_native_completion_hook: done waits for the budget; the hook
    (after_agent.py `decide`, our port below) reads wac's meta.json as it reads the reference's."""
    cfg = {"max_actions": 2, "max_tool_calls": 40, "require_full_budget": True}
    s = _episode(built, tmp_path, "final", require_full_budget=True, budget=2)
    meta = lambda: json.loads((s.out / "meta.json").read_text())  # noqa: E731
    try:
        assert s.call("done", {"summary": "premature"}).error and not s.done
        result, state = decide(cfg, meta(), {})
        assert result["decision"] == "block" and "0/2" in result["reason"]
        for _ in range(3):
            result, state = decide(cfg, meta(), state)
        assert result["continue"] is False
        assert not s.call("wait", {"seconds": 0.5}).error
        assert s.call("done", {"summary": "still premature"}).error
        assert not s.call("wait", {"seconds": 0.5}).error
        result, _ = decide(cfg, meta(), {})
        assert "done now" in result["reason"]
        assert not s.call("done", {"summary": "complete"}).error
        assert decide(cfg, meta(), {})[0] == {}
    finally:
        s.close()


def decide(config: dict, meta: dict, state: dict):
    """after_agent.py's rule, ported: block the client's exit until the episode is completed."""
    if meta.get("status") in {"completed", "backend_error"}:
        return {}, state
    progress = [meta.get("actions_used", 0), meta.get("tool_calls", 0)]
    idle = state.get("idle", 0) + 1 if progress == state.get("progress") else 0
    state = {"progress": progress, "idle": idle, "continuations": state.get("continuations", 0) + 1}
    if idle >= 3 or state["continuations"] > 20:
        return {"continue": False, "stopReason": "MCP episode incomplete; continuation limit reached."}, state
    if (
        config.get("require_full_budget")
        and config["max_actions"] - progress[0] > 0
        and progress[1] < config.get("max_tool_calls", 400)
    ):
        reason = f"The audit is incomplete: {progress[0]}/{config['max_actions']} environment actions used."
    else:
        reason = "The MCP episode is still open. Finalize your bug reports and call world_audit done now."
    return {"decision": "block", "reason": reason}, state


# --- the reference's run-directory readers on a wac run directory ---------------------------------


def test_the_reference_readers_read_a_wac_run_directory(built, tmp_path):
    """run_batch.py's meta reads and the judge pipeline's `fetch` (evidence files by frames/index.jsonl),
    on a wac episode: simulated seconds, film_max, bugs.jsonl rows, a flag's origin kept by updates."""
    s = _episode(built, tmp_path, "final", budget=3)
    s.call("observe", {})
    sims = []
    for name, args in [("move", {"distance_m": 2, "direction": "forward"}), ("wait", {"seconds": 2}),
                       ("turn", {"degrees": 45})]:  # fmt: skip
        r = s.call(name, args)
        sims.append(float(r.text.split("| sim +")[1].split("s")[0]))
        if name == "wait":
            crop = s.call("inspect", {"refs": ["a2.f0"], "region": [0.2, 0.2, 0.8, 0.8]}).text.split()[3]
            s.call("flag_bug", {"description": "bins overlap", "category": "geometry", "status": "suspect",
                                "evidence": ["a2", crop]})  # fmt: skip
    s.call("update_bug", {"id": "b1", "status": "confirmed", "evidence": ["a3", crop]})
    s.call("done", {"summary": "two bins overlap"})
    s.close()
    ep = s.out

    m = json.loads((ep / "meta.json").read_text())  # run_batch.py and the judge pipeline's asserts
    assert m["status"] == "completed" and m["actions_used"] == 3 and m["done_summary"]
    assert m["film_dt"] == 0.5 and m["film_max"] == FILM_MAX
    assert math.isclose(m["simulated_seconds"], sum(sims), abs_tol=0.1) and m["simulated_seconds"] > 2
    idx = {r["ref"]: r for r in map(json.loads, (ep / "frames/index.jsonl").read_text().splitlines())}
    refs = list(dict.fromkeys(r for f in m.get("flags", []) for r in f.get("evidence", [])))
    assert refs == ["a3", crop] and all(r in idx for r in refs)
    refs.sort(key=lambda r: (idx[r]["action"], idx[r].get("t_sim", 0), r))
    for r in refs:
        assert (ep / "frames" / idx[r]["file"]).resolve().is_relative_to(ep.resolve())
        assert (ep / "frames" / idx[r]["file"]).read_bytes()[:3] == b"\xff\xd8\xff"
    (flag,) = m["flags"]
    assert {"pos", "note", "simT", "id", "status", "category", "evidence", "action"} <= set(flag)
    assert flag["action"] == 2 and flag["status"] == "confirmed"  # flagged after a2; the update keeps it
    rows = [json.loads(line) for line in (ep / "bugs.jsonl").read_text().splitlines()]
    keys = ["event", "id", "description", "category", "status", "evidence", "pos", "action", "simT"]
    assert [list(r) for r in rows] == [keys, keys] and [r["event"] for r in rows] == ["flag", "update"]
    assert rows[1]["action"] == rows[0]["action"] == 2 and rows[1]["simT"] == rows[0]["simT"] == flag["simT"]
    calls = [json.loads(line) for line in (ep / "mcp-calls.jsonl").read_text().splitlines()]
    assert all(list(c) == ["time", "tool", "arguments", "text", "images", "is_error"] for c in calls)
    assert idx["a1"]["file"] == "a001.jpg" and idx["a2.f0"]["file"] == "a002_f00.jpg"
    assert sum(1 for r in idx if r.startswith("a2.f")) <= FILM_MAX


# --- helpers ---------------------------------------------------------------------------------------


def _episode(built, tmp_path, observation, *, out=None, budget=2, **protocol) -> ReferenceSession:
    options = SessionOptions(
        example=False,
        width=160,
        height=96,
        observation=observation,
        budget_actions=budget,
        timing="reference",
    )
    s = AuditSession(built / TASK, out or tmp_path / "ep", options, None)
    return ReferenceSession(s, ProtocolOptions(**protocol))


def test_example_images_are_base64_images(built, tmp_path):
    """The images of every result are MCP image content (base64 JPEG), as the reference sends them."""
    from wac.audit.mcp_server import to_mcp

    s = _episode(built, tmp_path, "final")
    try:
        content = to_mcp(s.call("observe", {})).content
        (img,) = [c for c in content if c.type == "image"]
        assert img.mime_type == "image/jpeg" and base64.b64decode(img.data)[:3] == b"\xff\xd8\xff"
        assert text(to_mcp(s.call("list_bugs", {}))) == "(no bugs flagged)" + ARCHIVED
    finally:
        s.close()
