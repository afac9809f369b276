"""Bounded agent input (issue 14): `wac mcp` reads each JSON-RPC message through a bounded reader
(one 20 MB line is dropped as it arrives and answered with error -32600, and the session goes on),
and the tools enforce the documented agent text limits of `wac.audit.limits`."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wac.audit.limits import (
    LOG_TEXT_CHARS,
    MAX_BUGS,
    MAX_DESCRIPTION_CHARS,
    MAX_MESSAGE_BYTES,
    MAX_NOTE_CHARS,
    MAX_NOTES,
    MAX_SUMMARY_CHARS,
    MAX_TOOL_NAME,
)
from wac.audit.mcp_stdio import INVALID_REQUEST, BoundedLines, rejection

TASK = "city_02"


# --- the bounded reader -------------------------------------------------------------------------


class _Huge(io.RawIOBase):
    """A stream of `parts` (bytes, or (byte, count) runs) produced chunk by chunk, never whole;
    records the most the reader held at any read."""

    def __init__(self, parts, reader_box) -> None:
        self.parts = [p if isinstance(p, tuple) else (p, 1) for p in parts]
        self.box = reader_box
        self.most_held = 0

    def readable(self) -> bool:
        return True

    def read1(self, n: int = -1) -> bytes:
        if self.box:
            self.most_held = max(self.most_held, len(self.box[0]._buf))
        while self.parts:
            piece, count = self.parts[0]
            if count == 0:
                self.parts.pop(0)
                continue
            if len(piece) == 1:  # a run of one byte
                k = min(count, n)
                self.parts[0] = (piece, count - k)
                return piece * k
            self.parts.pop(0)
            return piece
        return b""


def test_a_line_over_the_limit_is_dropped_as_it_arrives_and_the_next_one_is_read():
    box: list = []
    size = 20 * 1024 * 1024
    stream = _Huge(
        [
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","x":"',
            (b"a", size),
            b'"}\n',
            b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n',
        ],
        box,
    )
    lines = BoundedLines(stream, limit=4096, chunk=65536)
    box.append(lines)
    assert json.loads(lines.next_line())["id"] == 1
    rejected = lines.next_line()
    assert not isinstance(rejected, str) and rejected.id == 7 and rejected.size > size
    assert json.loads(lines.next_line())["id"] == 2
    assert lines.next_line() is None and lines.rejected == 1
    assert stream.most_held <= 4096 + 65536  # never the whole line
    err = rejection(rejected, 4096)
    assert err["id"] == 7 and err["error"]["code"] == INVALID_REQUEST == -32600
    assert str(4096) in err["error"]["message"] and "aaaa" not in err["error"]["message"]


def test_a_long_line_with_its_newline_in_the_buffer_and_a_last_line_without_one():
    lines = BoundedLines(
        io.BytesIO(b"x" * 50 + b'\n{"id": "r-1"' + b"y" * 60 + b"\nshort\ntail"), limit=40, chunk=7
    )
    first, second = lines.next_line(), lines.next_line()
    assert first.id is None and first.size == 50
    assert second.id == "r-1"  # a string id is read from the first bytes
    assert lines.next_line() == "short" and lines.next_line() == "tail" and lines.next_line() is None


def test_lines_within_the_limit_pass_unchanged():
    msgs = [json.dumps({"jsonrpc": "2.0", "id": i, "params": {"t": "é" * i}}) for i in range(50)]
    lines = BoundedLines(io.BytesIO(("\n".join(msgs) + "\n").encode()), limit=MAX_MESSAGE_BYTES, chunk=13)
    assert [lines.next_line() for _ in msgs] == msgs and lines.next_line() is None


# --- the server -----------------------------------------------------------------------------------

from test_mcp_stop import INIT, READY  # noqa: E402  (the raw JSON-RPC handshake)


def _flag(i: int, description: str) -> dict:
    args = {"description": description, "category": "geometry", "status": "suspect"}
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": "flag_bug", "arguments": args},
    }


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads peak memory from /proc")
def test_the_server_rejects_a_20_mb_message_with_32600_and_goes_on(built, tmp_path):
    pytest.importorskip("mcp")
    out, work = tmp_path / "episode", tmp_path / "cwd"
    work.mkdir()
    cmd = [sys.executable, "-c", "import sys; from wac.cli import main; sys.exit(main(sys.argv[1:]))"]
    cmd += ["mcp", str(built / TASK), "--out", str(out), "--no-example", "--width", "64", "--height", "48"]
    env = {**os.environ, "WAC_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        cmd, cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )

    def send(*messages) -> None:
        for m in messages:
            proc.stdin.write(m if isinstance(m, bytes) else (json.dumps(m) + "\n").encode())
        proc.stdin.flush()

    def reply(want: int) -> dict:
        while True:
            line = proc.stdout.readline()
            assert line, "the server closed stdout: " + proc.stderr.read().decode()[-2000:]
            msg = json.loads(line)
            if msg.get("id") == want:
                return msg

    try:
        send(INIT)
        assert "result" in reply(1)
        send(READY, _flag(2, "the bins stand inside each other"))
        assert not reply(2)["result"].get("isError")
        time.sleep(0.5)
        before = _peak_rss_kb(proc.pid)
        huge = json.dumps(_flag(7, "x" * (20 * 1024 * 1024))).encode() + b"\n"
        for i in range(0, len(huge), 1 << 20):  # as a client would write it, in pieces
            proc.stdin.write(huge[i : i + (1 << 20)])
        proc.stdin.flush()
        err = reply(7)
        assert err["error"]["code"] == -32600 and str(MAX_MESSAGE_BYTES) in err["error"]["message"]
        grown_kb = _peak_rss_kb(proc.pid) - before
        assert grown_kb < 12 * 1024, f"peak memory grew {grown_kb} kB for a 20 MB line"  # not held whole
        send(_flag(8, "a second real finding"))  # the session goes on
        assert not reply(8)["result"].get("isError")
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    report = json.loads((out / "report.json").read_text())
    assert [b["description"] for b in report["bugs"]] == [
        "the bins stand inside each other",
        "a second real finding",
    ]
    assert (out / "tools.jsonl").stat().st_size < 100_000  # the rejected message never reached the log


# --- the tools' text limits ----------------------------------------------------------------------


@pytest.fixture
def session(built, tmp_path):
    from wac.audit.session import AuditSession, SessionOptions

    s = AuditSession(built / TASK, tmp_path / "ep", SessionOptions(example=False, width=48, height=36))
    yield s
    s.close()


def _flag_args(description: str) -> dict:
    return {"description": description, "category": "geometry", "status": "suspect"}


@pytest.mark.parametrize(
    ("tool", "field", "limit"),
    [
        ("flag_bug", "description", MAX_DESCRIPTION_CHARS),
        ("write_notes", "text", MAX_NOTE_CHARS),
        ("done", "summary", MAX_SUMMARY_CHARS),
        ("update_bug", "description", MAX_DESCRIPTION_CHARS),
    ],
)
def test_agent_texts_over_their_limit_are_refused_without_echo(session, tool, field, limit):
    ok = session.call("flag_bug", _flag_args("the bins overlap"))
    assert not ok.error
    base = {"flag_bug": _flag_args(""), "write_notes": {}, "done": {}, "update_bug": {"id": "b1"}}[tool]
    at_limit = session.call(tool, {**base, field: "y" * limit})
    assert not at_limit.error, at_limit.text
    if tool == "done":
        return  # finished: an over-long summary is checked on a fresh call below
    res = session.call(tool, {**base, field: "z" * (limit + 1)})
    assert res.error and f"{limit + 1} characters" in res.text and str(limit) in res.text
    assert "zzzz" not in res.text


def test_an_over_long_summary_is_refused_and_done_can_follow(session):
    res = session.call("done", {"summary": "s" * (MAX_SUMMARY_CHARS + 1)})
    assert res.error and not session.done and "ssss" not in res.text
    assert not session.call("done", {"summary": "finished"}).error and session.done


def test_a_20_mb_description_is_refused_and_logged_cut(session, tmp_path):
    res = session.call("flag_bug", _flag_args("q" * (20 * 1024 * 1024)))
    assert res.error and len(res.text) < 500 and session.ledger.all() == []
    session.close()
    log = (tmp_path / "ep" / "tools.jsonl").read_text()
    assert len(log) < LOG_TEXT_CHARS + 2000 and "chars)" in log


def test_bug_and_note_counts_are_bounded_and_repeated_large_results_are_logged_once(session, tmp_path):
    for i in range(MAX_BUGS):
        assert not session.call(
            "flag_bug", _flag_args(f"bug {i} " + "d" * (MAX_DESCRIPTION_CHARS - 10))
        ).error
    over = session.call("flag_bug", _flag_args("one more"))
    assert over.error and str(MAX_BUGS) in over.text and len(session.ledger.all()) == MAX_BUGS
    for i in range(MAX_NOTES):
        assert not session.call("write_notes", {"text": f"note {i}"}).error
    assert session.call("write_notes", {"text": "one more"}).error and len(session.notes) == MAX_NOTES
    listing = session.call("list_bugs")
    assert len(listing.text) > LOG_TEXT_CHARS
    size = (tmp_path / "ep" / "tools.jsonl").stat().st_size
    for _ in range(20):
        assert session.call("list_bugs").text == listing.text
    grown = (tmp_path / "ep" / "tools.jsonl").stat().st_size - size
    assert grown < 20 * 1000  # 20 references, not 20 copies of a ~100 kB listing
    name = session.call("x" * 10_000)
    assert name.error and len(name.text) < 1000 and max(len(k) for k in session.tool_counts) <= MAX_TOOL_NAME
