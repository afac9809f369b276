"""One exit-code contract for every subcommand (wac/exits.py): 0 ok, 1 the user's sources or actions
are wrong or a check failed, 2 usage (a bad option, a path that does not exist or is not what the
command takes, an unknown task id or agent), 3 internal error, 130 interrupted.

One table: each subcommand run with representative inputs (ok / bad source or actions / usage /
missing path), in-process through `wac.cli.main` (a subprocess only for `wac mcp`, which serves on
stdin), checking the code, a word of the message and that no traceback or internal error shows.
Everything runs on a tiny build made once: two evaluation tasks (copies of the scale demonstration
without `example yes`) and the demonstration itself.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wac.bundle.integrity import write_manifest
from wac.bundle.model import CompiledTask
from wac.cli import main

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--width", "64", "--height", "48"]
EPISODE = ["--no-example", *SMALL]  # a cheap auditor episode
REPLAY = ["--agent", "replay", "--agent-option", "actions=move 1; turn 30"]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, str]:
    """The paths the table's rows name: sources, a build, a damaged and a failing bundle, a run,
    a dataset, a review database."""
    tmp = tmp_path_factory.mktemp("exits")
    src = tmp / "src"
    src.mkdir()
    demo = (ROOT / "taxonomy" / "examples" / "scale.wa").read_text(encoding="utf-8")
    shutil.copy(ROOT / "taxonomy" / "examples" / "scale.wa", src / "demo.wa")
    eval_task = "\n".join(line for line in demo.splitlines() if line.strip() != "example yes") + "\n"
    eval_task = eval_task.replace("scene demo_patio ", "scene eval_patio ").replace(
        "task scale_demo on demo_patio", "task patio_07 on eval_patio"
    )
    (src / "patio.wa").write_text(eval_task, encoding="utf-8")
    second = eval_task.replace("eval_patio", "eval_patio_b").replace("patio_07", "patio_08")
    (src / "patio_b.wa").write_text(second, encoding="utf-8")
    (tmp / "ugly.wa").write_text(
        demo.replace("    difficulty medium", "  difficulty   medium"), encoding="utf-8"
    )
    (tmp / "bad").mkdir()
    (tmp / "bad" / "t.wa").write_text("task t on {\n", encoding="utf-8")
    build = tmp / "build"
    assert main(["build", str(src), "--root", str(src), "-o", str(build), "-j", "1"]) == 0

    damaged = tmp / "damaged" / "patio_07"  # a file edited after the build: the manifest disagrees
    shutil.copytree(build / "patio_07", damaged)
    (damaged / "agent" / "context.md").write_text("edited\n", encoding="utf-8")

    failing = tmp / "failing" / "patio_07"  # the anomaly stripped: the self-check must fail
    shutil.copytree(build / "patio_07", failing)
    task = CompiledTask.model_validate_json((failing / "task.json").read_text(encoding="utf-8"))
    stripped = task.model_copy(
        update={"anomalies": tuple(a.model_copy(update={"effects": ()}) for a in task.anomalies)}
    )
    (failing / "task.json").write_text(stripped.model_dump_json(), encoding="utf-8")
    write_manifest(failing)

    run = tmp / "runs" / "replay"
    assert main(["eval", str(build), "--out", str(run), *REPLAY, *EPISODE]) == 0
    dataset = tmp / "dataset"
    assert main(["export", "hf", str(build), "-o", str(dataset)]) == 0
    db = tmp / "review.sqlite"
    assert main(["review", "add-reviewer", "alice", "--db", str(db)]) == 0
    a_file = tmp / "a_file"
    a_file.write_text("not a directory\n", encoding="utf-8")
    return {
        "tmp": str(tmp),
        "src": str(src),
        "bad": str(tmp / "bad"),
        "build": str(build),
        "bundle": str(build / "patio_07"),
        "demo": str(build / "scale_demo"),
        "damaged": str(damaged),
        "failing": str(failing),
        "run": str(run),
        "dataset": str(dataset),
        "db": str(db),
        "file": str(a_file),
    }


# (command, case, argv, exit code, words the output must hold); "{new}" is a fresh path per row
CASES = [
    ("build", "ok", ["build", "{src}", "--root", "{src}", "-o", "{new}", "-j", "1"], 0, "built 3"),
    ("build", "bad source", ["build", "{bad}", "--root", "{bad}", "-o", "{new}"], 1, "error[E"),
    ("build", "usage", ["build"], 2, "usage:"),
    ("build", "missing path", ["build", "{tmp}/nope.wa"], 2, "no such file"),
    ("check", "ok", ["check", "{src}", "--root", "{src}", "-j", "1"], 0, "checked 3"),
    ("check", "bad source", ["check", "{bad}", "--root", "{bad}"], 1, "error[E"),
    ("check", "usage", ["check", "{src}", "--dump", "nothing"], 2, "invalid choice"),
    ("check", "missing path", ["check", "{tmp}/nope.wa"], 2, "no such file"),
    ("lint", "ok", ["lint", "{src}/demo.wa", "--root", "{src}"], 0, "clean"),
    ("lint", "bad source", ["lint", "{bad}", "--root", "{bad}"], 1, "error[E"),
    ("lint", "usage", ["lint"], 2, "usage:"),
    ("lint", "missing path", ["lint", "{tmp}/nope.wa"], 2, "no such file"),
    ("fmt", "ok", ["fmt", "--check", "{src}/demo.wa"], 0, ""),
    ("fmt", "check fails", ["fmt", "--check", "{tmp}/ugly.wa"], 1, "would reformat"),
    ("fmt", "bad source", ["fmt", "--check", "{bad}"], 1, "error[E"),
    ("fmt", "missing path", ["fmt", "{tmp}/nope.wa"], 2, "no such file"),
    ("taxonomy", "ok", ["taxonomy", "--json"], 0, "missing_support"),
    ("taxonomy", "usage", ["taxonomy", "--bogus"], 2, "unrecognized arguments"),
    ("schema", "ok", ["schema", "-o", "{new}"], 0, ".json"),
    ("schema", "usage", ["schema", "-o"], 2, "expected one argument"),
    ("schema", "unusable path", ["schema", "-o", "{file}/schemas"], 2, "cannot use"),
    ("derive", "ok", ["derive", "closer-start", "{copy}"], 0, "closer starts written"),
    ("derive", "bad source", ["derive", "multi", "{bad}", "--root", "{bad}", "-o", "{bad}/d"], 1, "error[E"),
    ("derive", "usage", ["derive"], 2, "usage:"),
    ("derive", "missing path", ["derive", "closer-start", "{tmp}/buidl"], 2, "did you mean `{tmp}/build`?"),
    (
        "play",
        "ok",
        ["play", "{bundle}", "--actions", "move 1", "--out", "{new}", *SMALL],
        0,
        "trajectory written",
    ),
    (
        "play",
        "no --out",
        ["play", "{bundle}", "--actions", "move 1", *SMALL],
        0,
        "written to play-patio_07-1",
    ),
    ("play", "bad action", ["play", "{bundle}", "--actions", "move 99", *SMALL], 1, "must be between"),
    (
        "play",
        "unknown action",
        ["play", "{bundle}", "--actions", "mvoe 1", *SMALL],
        1,
        "did you mean `move`?",
    ),
    ("play", "damaged bundle", ["play", "{damaged}", "--actions", "move 1", *SMALL], 1, "manifest"),
    ("play", "usage", ["play", "{bundle}"], 2, "--actions"),
    (
        "play",
        "missing path",
        ["play", "{build}/patio_7", "--actions", "move 1"],
        2,
        "did you mean `{build}/patio_07`",
    ),
    (
        "play",
        "a build, not a bundle",
        ["play", "{build}", "--actions", "move 1"],
        2,
        "a build directory, not a bundle",
    ),
    ("render", "ok", ["render", "{bundle}", "--out", "{new}", *SMALL], 0, "start.png"),
    ("render", "usage", ["render", "{bundle}", "--out", "{new}", "--width", "0"], 2, "at least 16"),
    ("render", "missing path", ["render", "{build}/patio_7", "--out", "{new}"], 2, "did you mean"),
    ("selfcheck", "ok", ["selfcheck", "{demo}", "-j", "1"], 0, "1 of 1 task(s) pass"),
    ("selfcheck", "check fails", ["selfcheck", "{failing}", "-j", "1"], 1, "FAIL patio_07"),
    ("selfcheck", "usage", ["selfcheck", "{demo}", "-j", "0"], 2, "--jobs"),
    (
        "selfcheck",
        "missing path",
        ["selfcheck", "{build}/scale_dmo"],
        2,
        "did you mean `{build}/scale_demo`?",
    ),
    ("validate", "ok", ["validate", "{demo}", "--examples", "1", "-j", "1"], 0, "scale_demo: ok"),
    ("validate", "usage", ["validate", "{demo}", "--examples", "0"], 2, "--examples"),
    ("validate", "missing path", ["validate", "{build}/scale_dmo"], 2, "did you mean"),
    ("audit", "ok", ["audit", "{bundle}", "--out", "{new}", *REPLAY, *EPISODE], 0, "2/"),
    (
        "audit",
        "bad recording",
        ["audit", "{bundle}", "--out", "{new}", *REPLAY, "--paradigm", "two-stage", "--recording", "{new}"],
        2,
        "neither a VLA recording",
    ),
    (
        "audit",
        "bad actions",
        [
            "audit",
            "{bundle}",
            "--out",
            "{new}",
            "--agent",
            "replay",
            "--agent-option",
            "actions=mvoe 1",
            *EPISODE,
        ],
        1,
        "did you mean `move`?",
    ),
    (
        "audit",
        "usage",
        ["audit", "{bundle}", "--out", "{new}", "--agent", "rnadom"],
        2,
        "did you mean 'random'?",
    ),
    (
        "audit",
        "missing path",
        ["audit", "{build}/patio_7", "--out", "{new}", "--agent", "random"],
        2,
        "did you mean",
    ),
    (
        "eval",
        "ok (resumed)",
        ["eval", "{build}", "--out", "{run}", *REPLAY, *EPISODE],
        0,
        "2 already finished",
    ),
    (
        "eval",
        "bad actions",
        [
            "eval",
            "{build}",
            "--out",
            "{new}",
            "--agent",
            "replay",
            "--agent-option",
            "actions=mvoe 1",
            *EPISODE,
        ],
        1,
        "did you mean `move`?",
    ),
    (
        "eval",
        "unknown task",
        ["eval", "{build}", "--task", "patio_7", "--agent", "random"],
        2,
        "did you mean `patio_07`",
    ),
    (
        "eval",
        "a demonstration",
        ["eval", "{build}", "--task", "scale_demo", "--agent", "random"],
        2,
        "demonstration",
    ),
    ("eval", "missing path", ["eval", "{tmp}/buidl", "--agent", "random"], 2, "did you mean `{tmp}/build`?"),
    ("mcp", "usage", ["mcp", "{bundle}", "--width", "1"], 2, "at least 16"),
    ("mcp", "missing path", ["mcp", "{build}/patio_7"], 2, "did you mean"),
    ("lsp", "usage", ["lsp", "--tcp"], 2, "unrecognized arguments"),
    ("judge", "ok", ["judge", "{run}", "--force"], 0, ""),
    ("judge", "usage", ["judge", "{run}", "--backend", "bogus"], 2, "invalid choice"),
    ("judge", "missing path", ["judge", "{tmp}/runs/replya"], 2, "did you mean `{tmp}/runs/replay`?"),
    ("report", "ok", ["report", "{run}", "--out", "{new}"], 0, "replay"),
    ("report", "usage", ["report"], 2, "usage:"),
    ("report", "missing path", ["report", "{tmp}/runs/replya"], 2, "did you mean"),
    ("video", "ok", ["video", "{run}", "--width", "64"], 0, "video(s) written"),
    ("video", "usage", ["video", "{run}", "--task", "patio_7"], 2, "did you mean `patio_07`?"),
    ("video", "missing path", ["video", "{tmp}/runs/replya"], 2, "did you mean `{tmp}/runs/replay`?"),
    ("export", "ok", ["export", "hf", "{build}", "-o", "{new}"], 0, ""),
    ("export", "usage", ["export"], 2, "usage:"),
    ("export", "missing path", ["export", "hf", "{tmp}/buidl", "-o", "{new}"], 2, "did you mean"),
    ("import", "ok", ["import", "hf", "{dataset}", "-o", "{new}"], 0, ""),
    ("import", "usage", ["import", "hf"], 2, "usage:"),
    ("import", "missing path", ["import", "hf", "{tmp}/nope", "-o", "{new}"], 2, "export hf"),
    ("review", "reviewers", ["review", "reviewers", "--db", "{db}"], 0, "alice"),
    ("review", "export", ["review", "export", "{build}", "--db", "{db}", "--out", "{new}.json"], 0, ""),
    (
        "review",
        "unknown reviewer",
        ["review", "add-reviewer", "alcie", "--rotate", "--db", "{db}"],
        2,
        "did you mean `alice`?",
    ),
    (
        "review",
        "misspelt action",
        ["review", "reviewrs", "--db", "{db}"],
        2,
        "did you mean `wac review reviewers`?",
    ),
    ("review", "usage", ["review", "export", "--db", "{db}"], 2, "usage:"),
    ("review", "missing path", ["review", "export", "{tmp}/buidl", "--db", "{db}"], 2, "did you mean"),
    (
        "human",
        "add-participant",
        ["human", "add-participant", "ann", "--db", "{new}.sqlite"],
        0,
        "added participant",
    ),
    (
        "human",
        "no database",
        ["human", "assign", "{build}", "--db", "{tmp}/nope.sqlite"],
        2,
        "add-participant",
    ),
    ("human", "misspelt action", ["human", "asign", "--db", "{db}"], 2, "did you mean `wac human assign`?"),
    ("human", "usage", ["human", "export", "{build}", "--db", "{db}"], 2, "usage:"),
    (
        "human",
        "missing path",
        ["human", "export", "{tmp}/buidl", "--db", "{db}", "-o", "{new}"],
        2,
        "did you mean",
    ),
    ("(none)", "usage", ["nonsense"], 2, "invalid choice"),
]


@pytest.mark.parametrize(
    ("command", "case", "argv", "code", "says"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES]
)
def test_exit_code(world, tmp_path, monkeypatch, capsys, command, case, argv, code, says):
    monkeypatch.chdir(tmp_path)  # `play` without --out writes into the current directory
    paths = {**world, "new": str(tmp_path / "new")}
    if "{copy}" in " ".join(argv):
        paths["copy"] = str(tmp_path / "copy")
        shutil.copytree(world["build"], paths["copy"])
    args = [a.format(**paths) for a in argv]
    got = main(args)
    out, err = capsys.readouterr()
    assert got == code, f"wac {' '.join(args)} exited {got}, not {code}:\n{out}\n{err}"
    assert "Traceback" not in out + err and "internal error" not in err
    assert says.format(**paths) in out + err
    if command == "play" and code:  # a wrong play writes nothing, not even its default folder
        assert not list(tmp_path.glob("play-*"))
    if code:  # every failure says why in one `wac: error:` line, a diagnostic or argparse's usage
        assert any(w in out + err for w in ("error", "FAIL", "would reformat"))


def test_every_subcommand_is_in_the_table():
    from wac.cli import parser

    sub = next(a for a in parser()._actions if a.dest == "command")
    assert set(sub.choices) <= {c[0] for c in CASES}


def test_mcp_serves_and_ends_with_0_when_the_client_leaves(world, tmp_path):
    (tmp_path / "cwd").mkdir()  # the episode directory must lie outside the working directory
    proc = subprocess.run(
        [sys.executable, "-m", "wac.cli", "mcp", world["bundle"], "--out", str(tmp_path / "ep")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path / "cwd",
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


def test_lsp_serves_and_ends_with_0_when_the_client_leaves(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "wac.cli", "lsp"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_standalone_play_entry_keeps_the_contract(world, capsys):
    from wac.runtime.commands import main as play_main

    assert play_main(["play", world["build"] + "/patio_7", "--actions", "move 1"]) == 2
    assert play_main(["play", world["bundle"], "--actions", "mvoe 1"]) == 1
    err = capsys.readouterr().err
    assert "did you mean `move`?" in err and "Traceback" not in err


def test_an_interrupted_eval_says_what_it_kept_and_how_to_resume(world, tmp_path, monkeypatch, capsys):
    from wac.audit import runner

    real, calls = runner._episode_job, []

    def second_interrupted(*a):
        calls.append(a)
        if len(calls) == 2:  # Ctrl-C while the second episode runs
            raise KeyboardInterrupt
        return real(*a)

    monkeypatch.setattr(runner, "_episode_job", second_interrupted)
    run = tmp_path / "run"
    argv = ["eval", world["build"], "--out", str(run), *REPLAY, *EPISODE]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert f"wac: interrupted: 1 episode(s) finished and kept in {run}, 0 failed, 1 not run" in err
    assert "run the same command again to resume" in err and "Traceback" not in err
    monkeypatch.setattr(runner, "_episode_job", real)
    assert main(argv) == 0
    assert "1 episode(s) run, 1 already finished, 0 failed" in capsys.readouterr().out


def test_an_interrupted_validate_says_what_finished(world, monkeypatch, capsys):
    from wac.validation import validate

    real = validate._results

    def first_then_interrupted(*a):
        yield next(real(*a))
        raise KeyboardInterrupt

    monkeypatch.setattr(validate, "_results", first_then_interrupted)
    assert main(["validate", world["demo"], world["bundle"], "--examples", "1", "-j", "1"]) == 130
    out, err = capsys.readouterr()
    assert "scale_demo: ok" in out or "patio_07: ok" in out
    assert "wac: interrupted: 1 passed, 0 failed, 1 not validated" in err and "Traceback" not in err
