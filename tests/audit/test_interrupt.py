"""A runner that survives interruption (issue 14): `wac eval -j 2` killed (SIGKILL) or interrupted
(Ctrl-C) at random points, then resumed, finishes every task exactly once and leaves no orphan;
one writer per run; an episode counts as finished only when it is complete."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wac.audit.procs import RunLock
from wac.audit.runner import RunConfig, finished, run_eval
from wac.audit.session import SessionOptions
from wac.errors import UsageError

TASKS = ["city_02", "meadow_04", "market_03", "city_05"]
SMALL = SessionOptions(example=False, width=64, height=48, budget_multiplier=0.1)
ROUNDS = 10


def _eval_cmd(built: Path, run: Path) -> list[str]:
    cmd = [sys.executable, "-m", "wac.cli", "eval", str(built), "--out", str(run), "-j", "2"]
    cmd += [
        "--agent",
        "random",
        "--no-example",
        "--budget-multiplier",
        "0.1",
        "--width",
        "64",
        "--height",
        "48",
    ]
    cmd += ["--judge", "none"]
    for t in TASKS:
        cmd += ["--task", t]
    return cmd


def _foreground() -> None:
    """In the child: Ctrl-C as in a terminal's foreground job (a test suite started in the background
    by a non-interactive shell ignores SIGINT, and a child would inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover
        return True
    return True


def _wait_group_gone(pgid: int, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _group_alive(pgid):
            return True
        time.sleep(0.1)
    return False


def _snapshot(run: Path) -> dict[str, tuple[int, int]]:
    tasks = run / "tasks"
    out = {}
    for d in sorted(tasks.iterdir()) if tasks.is_dir() else ():
        rep = d / "report.json"
        out[d.name] = (rep.stat().st_ino, rep.stat().st_mtime_ns) if rep.is_file() else (0, 0)
    return out


def _done(run: Path) -> dict[str, tuple[int, int]]:
    tasks = run / "tasks"
    if not tasks.is_dir():
        return {}
    return {
        d.name: (d.joinpath("report.json").stat().st_ino, d.joinpath("report.json").stat().st_mtime_ns)
        for d in tasks.iterdir()
        if not d.name.endswith(".partial") and finished(d)
    }


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups and PR_SET_PDEATHSIG")
def test_kill_and_resume_finishes_every_task_exactly_once_without_orphans(built, tmp_path):
    rng = random.Random(14)
    run = tmp_path / "run"
    first_seen: dict[str, tuple[int, int]] = {}
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for rnd in range(ROUNDS):
        proc = subprocess.Popen(
            _eval_cmd(built, run),
            start_new_session=True,
            preexec_fn=_foreground,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(rng.uniform(0.5, 6.0))
        if rnd % 2 == 0:
            os.kill(proc.pid, signal.SIGKILL)  # the parent alone dies: its workers must not live on
        else:
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # pragma: no cover - the failure this test exists for
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"round {rnd}: wac eval did not stop after the signal")
        assert b"Traceback" not in err, err.decode()[-2000:]
        assert _wait_group_gone(proc.pid), f"round {rnd}: orphan processes outlived `wac eval`"
        before = _snapshot(run)
        time.sleep(0.3)
        assert _snapshot(run) == before, f"round {rnd}: something still writes into the run"
        for tid, ident in _done(run).items():  # a finished episode is never redone
            assert first_seen.setdefault(tid, ident) == ident, f"{tid} was run again after it finished"
    proc = subprocess.run(_eval_cmd(built, run), capture_output=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    final = _done(run)
    assert sorted(final) == sorted(TASKS)
    for tid, ident in first_seen.items():
        assert final[tid] == ident, f"{tid} was run again after it finished"
    assert not list((run / "tasks").glob("*.partial"))
    for tid in TASKS:  # exactly one episode: one done call in its tool log
        calls = [json.loads(x) for x in (run / "tasks" / tid / "tools.jsonl").read_text().splitlines()]
        assert sum(1 for c in calls if c["tool"] == "done" and not c["error"]) == 1


def test_a_second_eval_into_the_same_run_fails_clearly(built, tmp_path):
    run = tmp_path / "run"
    config = RunConfig(agent="random", options=SMALL)
    with RunLock(run), pytest.raises(UsageError, match="in use by another `wac eval`"):
        run_eval(built, run, config, only=TASKS[:1])
    run_eval(built, run, config, only=TASKS[:1])  # the lock goes with its holder


def test_an_incomplete_episode_is_not_finished_and_is_redone(built, tmp_path):
    run = tmp_path / "run"
    config = RunConfig(agent="random", options=SMALL)
    run_eval(built, run, config, only=TASKS[:1])
    d = run / "tasks" / TASKS[0]
    assert finished(d)
    (d / "tools.jsonl").unlink()
    assert not finished(d)
    (d / "report.json").write_text("[1, 2]")
    assert not finished(d)
    st = run_eval(built, run, config, only=TASKS[:1])
    assert not st[0].get("skipped") and finished(d) and (d / "tools.jsonl").is_file()
    (d / "trajectory" / "trajectory.jsonl").unlink()
    assert not finished(d)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups")
def test_ctrl_c_cancels_queued_work_at_once(built, tmp_path):
    """Ctrl-C with hundreds of tasks queued stops within seconds (it used to wait for every queued
    episode), leaves no process behind, and leaves unfinished episodes only as `.partial`."""
    run = tmp_path / "run"
    cmd = _eval_cmd(built, run)
    cmd = cmd[: cmd.index("--task")]  # every shipped task: far more than two workers finish in seconds
    total = len([e for e in json.loads((built / "index.json").read_text())["tasks"] if not e.get("example")])
    proc = subprocess.Popen(
        cmd,
        start_new_session=True,
        preexec_fn=_foreground,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((run / "tasks").glob("*"))) < 2:
        time.sleep(0.1)
    assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # pragma: no cover - the failure this test exists for
        alive = proc.poll() is None
        group = subprocess.run(
            ["ps", "-o", "pid,stat,etime,args", "-g", str(proc.pid)], capture_output=True, text=True
        )
        if alive:
            os.kill(proc.pid, signal.SIGABRT)  # PYTHONFAULTHANDLER: every thread's stack to stderr
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            err = b""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(
            f"wac eval did not stop within 60 s of Ctrl-C (parent alive: {alive}); its process group:\n"
            f"{group.stdout}\n{err.decode(errors='replace')[-6000:]}"
        )
    took = time.monotonic() - t0
    assert took < 20, f"Ctrl-C took {took:.1f} s: queued work was not cancelled"
    assert b"Traceback" not in err, err.decode()[-2000:]
    assert _wait_group_gone(proc.pid), "processes outlived `wac eval` after Ctrl-C"
    dirs = list((run / "tasks").iterdir())
    done = [d for d in dirs if not d.name.endswith(".partial") and finished(d)]
    assert len(done) < total // 2  # the queue was dropped, not worked through
    assert all(d.name.endswith(".partial") or finished(d) for d in dirs), sorted(d.name for d in dirs)
