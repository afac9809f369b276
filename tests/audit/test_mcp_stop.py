"""`wac mcp` stops promptly on SIGTERM/SIGINT in every state (before the handshake, idle, inside a
tool call) and writes the episode's report (issue 14)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

ROOT = Path(__file__).resolve().parents[2]
TASK = "city_02"

# A server whose `wait` takes 60 s of wall time: a signal sent during it arrives inside a tool call.
SLOW_SERVER = """
import sys, time
from wac.audit import session as s
s.AuditSession._t_wait = lambda self, seconds: (time.sleep(60), self._act("wait", {"seconds": seconds}))[1]
from wac.cli import main
sys.exit(main(sys.argv[1:]))
"""

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
READY = {"jsonrpc": "2.0", "method": "notifications/initialized"}
FLAG = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {
        "name": "flag_bug",
        "arguments": {"description": "bins inside each other", "category": "geometry", "status": "suspect"},
    },
}
WAIT = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "wait", "arguments": {"seconds": 1}},
}


def _start(built: Path, out: Path, tmp: Path, server: str = SLOW_SERVER) -> subprocess.Popen:
    env = {**os.environ, "WAC_CACHE_DIR": str(tmp / "cache")}
    work = tmp / "agent_cwd"  # the episode must lie outside the agent's working directory
    work.mkdir()
    cmd = [sys.executable, "-c", server, "mcp", str(built / TASK), "--out", str(out), "--no-example"]
    cmd += ["--width", "64", "--height", "48"]
    return subprocess.Popen(
        cmd, cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _close(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for f in (proc.stdin, proc.stdout, proc.stderr):
        f.close()


def _send(proc: subprocess.Popen, *messages: dict) -> None:
    for m in messages:
        proc.stdin.write((json.dumps(m) + "\n").encode())
    proc.stdin.flush()


def _reply(proc: subprocess.Popen, want_id: int) -> dict:
    while True:
        line = proc.stdout.readline()
        assert line, "the server closed stdout"
        msg = json.loads(line)
        if msg.get("id") == want_id:
            return msg


@pytest.mark.parametrize("state", ["starting", "idle", "in_tool_call"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_server_writes_the_report_and_exits_promptly(built, tmp_path, state, sig):
    out = tmp_path / "episode"
    proc = _start(built, out, tmp_path)
    try:
        if state != "starting":
            _send(proc, INIT)
            _reply(proc, 1)
            _send(proc, READY, FLAG)
            _reply(proc, 2)
        else:
            deadline = time.monotonic() + 120
            while not (out / "episode.json").is_file() and time.monotonic() < deadline:
                time.sleep(0.1)
        if state == "in_tool_call":
            _send(proc, WAIT)
            time.sleep(1.0)  # the call sleeps 60 s inside the tool
            assert proc.poll() is None
        proc.send_signal(sig)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pytest.fail(f"wac mcp did not exit within 20 s of {sig.name} ({state})")
    finally:
        _close(proc)
    assert proc.returncode == (130 if sig == signal.SIGINT else 0)
    report = json.loads((out / "report.json").read_text())
    assert report["done"] is False
    if state != "starting":
        assert [b["description"] for b in report["bugs"]] == ["bins inside each other"]


# A server whose session takes 5 s more to open once its episode directory exists: a stop sent then
# arrives before the server could serve (under load, the window the `starting` case can fall into).
SLOW_OPEN = """
import sys, time
from wac.audit import mcp_server as m
_open = m.open_session
m.open_session = lambda args: (_open(args), time.sleep(5))[0]
from wac.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_while_the_session_opens_still_writes_the_report(built, tmp_path, sig):
    out = tmp_path / "episode"
    proc = _start(built, out, tmp_path, SLOW_OPEN)
    try:
        deadline = time.monotonic() + 120
        while not (out / "episode.json").is_file() and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(sig)  # within the 5 s the session still takes to open
        proc.wait(timeout=60)
    finally:
        _close(proc)
    assert proc.returncode == (130 if sig == signal.SIGINT else 0)
    assert json.loads((out / "report.json").read_text())["done"] is False
