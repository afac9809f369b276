"""`wac build --sealed`: opaque ids and directories, the mapping withheld, sessions, eval and judge unchanged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wac.cli import main
from wac.compiler.pipeline import compile_project
from wac.compiler.seal import SEAL_FILE, agent_visible, original_id

from .conftest import ROOT, SOURCES

OPAQUE = re.compile(r"task_[0-9a-f]{12}")


def _bundles(build: Path) -> list[Path]:
    return sorted(p for p in build.iterdir() if (p / "task.json").is_file())


def _secrets(original: str, source: str) -> list[str]:
    """What would name the task: its id and its source file.  (The file's stem is left out: with
    neutral ids it often names the place, `fuel_farm`, which the scene description may name too;
    W541/E540 keep a defect out of every text the agent reads.)"""
    return [original, source, Path(source).name]


def test_evaluation_tasks_get_opaque_ids_and_demonstrations_keep_theirs(built, sealed):
    plain = {p.name for p in _bundles(built)}
    bundles = _bundles(sealed)
    assert len(bundles) == len(plain)
    mapped = set()
    for b in bundles:
        task = json.loads((b / "task.json").read_text())
        if task["meta"].get("example"):
            assert b.name.endswith("_demo") and not (b / SEAL_FILE).exists()
            continue
        assert OPAQUE.fullmatch(b.name) and task["id"] == b.name
        seal = json.loads((b / SEAL_FILE).read_text())
        assert seal["sealed_id"] == b.name and original_id(b) == seal["task_id"]
        assert json.loads((b / "manifest.json").read_text())["files"][SEAL_FILE]  # covered by the manifest
        mapped.add(seal["task_id"])
    assert mapped == {n for n in plain if not n.endswith("_demo")}
    index = json.loads((sealed / "index.json").read_text())["tasks"]
    assert {e["id"] for e in index} == {b.name for b in bundles}


def test_no_agent_visible_file_names_the_task(sealed):
    checked = 0
    for b in _bundles(sealed):
        if not (b / SEAL_FILE).exists():
            continue
        seal = json.loads((b / SEAL_FILE).read_text())
        visible = agent_visible(b)
        assert "agent/context.json" in visible and "<directory name>" in visible
        text = b"\n".join(visible.values()).decode("utf-8").lower()
        for secret in _secrets(seal["task_id"], seal["source"]):
            assert secret.lower() not in text, (b.name, secret)
        checked += 1
    assert checked >= 50


def test_a_sealed_build_is_deterministic_and_incremental(sealed, tmp_path):
    again = tmp_path / "again"
    assert compile_project(SOURCES, ROOT, out=again, jobs=1, sealed=True).ok
    for b in _bundles(sealed):
        for f in sorted(p for p in b.rglob("*") if p.is_file()):
            assert (again / b.name / f.relative_to(b)).read_bytes() == f.read_bytes(), f
    # a directory rebuilt plain, then sealed again: no stale bundle survives either switch (one
    # environment of the corpus and the demonstrations: the switch does not depend on the tasks)
    part = [ROOT / "tasks_src" / "market", ROOT / "taxonomy" / "examples"]
    switch = tmp_path / "switch"
    first = compile_project(part, ROOT, out=switch, jobs=1, sealed=True)
    assert first.ok
    sealed_names = {p.name for p in _bundles(switch)}
    assert any(OPAQUE.fullmatch(n) for n in sealed_names)
    assert compile_project(part, ROOT, out=switch, jobs=1).ok
    assert not any(OPAQUE.fullmatch(p.name) for p in switch.iterdir())
    res = compile_project(part, ROOT, out=switch, jobs=1, sealed=True)
    assert res.ok and res.compiled > 0
    assert {p.name for p in _bundles(switch)} == sealed_names <= {p.name for p in _bundles(sealed)}
    assert compile_project(part, ROOT, out=switch, jobs=1, sealed=True).up_to_date


def test_the_command_line_builds_sealed(tmp_path, capsys):
    out = tmp_path / "b"
    assert (
        main(
            [
                "build",
                str(ROOT / "taxonomy" / "examples" / "scale.wa"),
                "-o",
                str(out),
                "--sealed",
                "--root",
                str(ROOT),
                "-j",
                "1",
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["tasks"] == ["scale_demo"]  # a demonstration keeps its name


pytest.importorskip("pybullet")
pytest.importorskip("mcp")


def test_sessions_tools_eval_and_judge_work_on_a_sealed_build(built, sealed, tmp_path, capsys):
    """The same scripted episode on the plain and the sealed bundle: same judgment; nothing leaks."""
    from wac.audit.judge import judge_run
    from wac.audit.runner import RunConfig, run_eval
    from wac.audit.session import SessionOptions

    sealed_id = next(b.name for b in _bundles(sealed) if original_id(b) == "city_02")
    script = tmp_path / "actions.txt"
    script.write_text("move 1 forward\nturn 45\nflag intersection bins inside each other\ndone looked\n")
    config = RunConfig(agent=f"replay:{script}", options=SessionOptions(example=True, width=160, height=120))
    results = {}
    for name, build, tid in (("plain", built, "city_02"), ("sealed", sealed, sealed_id)):
        run = tmp_path / name
        assert all(s["ok"] for s in run_eval(build, run, config, only=[tid]))
        (status,) = judge_run(run, backend="keyword")
        judgment = json.loads((run / "tasks" / tid / "judgment.json").read_text())
        results[name] = (status["success"], judgment["success"])
        tools = (run / "tasks" / tid / "tools.jsonl").read_text()
        if name == "sealed":
            for secret in _secrets("city_02", "tasks_src/city/bin_pile.wa"):
                assert secret not in tools, secret
    assert results["plain"] == results["sealed"]
    capsys.readouterr()
    assert main(["report", str(tmp_path / "sealed"), "--json"]) == 0  # the report JSON on stdout
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((tmp_path / "sealed" / "report" / "report.json").read_text())
    assert printed["summary"]["tasks"] == 1


@pytest.mark.parametrize("protocol", ["wac", "reference"])
def test_the_mcp_leak_check_passes_on_a_sealed_bundle(sealed, tmp_path, monkeypatch, protocol):
    """The MCP leak test of tests/audit, on a sealed bundle, in both protocols: no rubric sentence,
    target id, original task id or source file name in anything the agent reads."""
    import anyio
    from mcp.client import Client

    from wac.audit.mcp_server import build_server, load_examples
    from wac.audit.protocol import ProtocolOptions, ReferenceSession
    from wac.audit.session import AuditSession, SessionOptions

    monkeypatch.setenv("WAC_CACHE_DIR", str(tmp_path / "cache"))
    bundle = next(b for b in _bundles(sealed) if original_id(b) == "city_07")
    options = SessionOptions(width=160, height=120)
    ctx = json.loads((bundle / "agent" / "context.json").read_text())
    s = AuditSession(bundle, tmp_path / "ep", options, load_examples(sealed, options, ctx["example"]))
    if protocol == "reference":
        s = ReferenceSession(s, ProtocolOptions(image_format="png"))
    calls = [
        ("read_example", {}),
        ("observe", {}),
        ("turn", {"degrees": 30}),
        ("interact", {}),
        ("move", {"distance_m": 2, "direction": "forward"}),
        ("wait", {"seconds": 2}),
        ("inspect", {"refs": ["a1", "a3"], "region": [0.2, 0.2, 0.8, 0.8]}),
        ("history", {"from_action": 0, "to_action": 10}),
        ("flag_bug", {"description": "something odd", "category": "other", "status": "suspect"}),
        ("list_bugs", {}),
        ("observe", {}),
        ("done", {"summary": "finished"}),
    ]

    async def go():
        async with Client(build_server(s)) as c:
            listed = await c.list_tools()
            seen = [c.instructions or ""] + [t.description + json.dumps(t.input_schema) for t in listed.tools]
            for name, args in calls:
                res = await c.call_tool(name, args)
                seen += [b.text for b in res.content if b.type == "text"]
            return "\n".join(seen)

    seen = anyio.run(go)
    s.close()
    rubric = json.loads((bundle / "rubric.json").read_text())
    task = json.loads((bundle / "task.json").read_text())
    seal = json.loads((bundle / SEAL_FILE).read_text())
    secrets = [e[k] for e in rubric["entries"] for k in ("target", "expected", "inspection")]
    secrets += [t for a in task["anomalies"] for t in a["targets"]]
    secrets += _secrets(seal["task_id"], seal["source"])
    assert "a0 start view" in seen and ("Flagged b1" in seen or "Recorded b1" in seen)
    for secret in secrets:
        assert secret not in seen, f"tool text leaks {secret!r}"
