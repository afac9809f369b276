"""`wac human` over HTTP (Starlette's TestClient): a whole session is an agent's episode, the page
gets the agent's context byte for byte and nothing of the ground truth, a restart replays the
session, and the clock ends it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from wac.audit.session import SessionOptions
from wac.human.app import HumanApp
from wac.human.hub import TIME_UP, SessionHub
from wac.human.store import HumanStore

from .conftest import TASK, agent_context, leaks, make_db, secrets_of

OPTS = SessionOptions(width=96, height=72)
WRITE = {"X-Wac-Human": "1"}


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Client:
    """One participant's browser: every response body is kept for the leak scan."""

    def __init__(self, http: TestClient, token: str) -> None:
        self.http, self.seen = http, []
        self.cookie = {"Cookie": f"wac_human_token={token}"}  # its own, as a browser profile has

    def get(self, url: str, status: int = 200):
        r = self.http.get(url, headers=self.cookie)
        assert r.status_code == status, r.text
        if r.headers.get("content-type", "").startswith(("text", "application/json")):
            self.seen.append(r.text)
        return r

    def post(self, url: str, body=None, status: int = 200) -> dict:
        r = self.http.post(url, json=body or {}, headers={**WRITE, **self.cookie})
        assert r.status_code == status, r.text
        self.seen.append(r.text)
        return r.json()

    def call(self, aid: int, tool: str, **args) -> dict:
        return self.post(f"/api/a/{aid}/call", {"tool": tool, "args": args})


def _serve(built: Path, tmp: Path, clock=None, minutes: float = 10.0):
    store = HumanStore(tmp / "h.sqlite")
    hub = SessionHub(
        store, built, tmp / "episodes", OPTS, minutes=minutes, **({"clock": clock} if clock else {})
    )
    return TestClient(HumanApp(store, hub).asgi({"testserver"}))


@pytest.fixture
def tokens(built, tmp_path):
    return make_db(built, tmp_path / "h.sqlite")


def test_a_session_is_an_agents_episode_and_leaks_nothing(built, tmp_path, tokens):
    with _serve(built, tmp_path) as http:
        ann = Client(http, tokens["alice"])
        (task,) = ann.get("/api/tasks").json()["tasks"]
        aid = task["assignment"]
        assert task["label"] == "Task 1" and task["status"] == "not started"
        ann.get("/")
        ann.get(f"/task/{aid}")
        first = ann.post(f"/api/a/{aid}/start")
        assert first["context"] == agent_context(built, OPTS)  # byte for byte what an agent reads
        refs = [i["ref"] for i in first["images"]]
        assert refs[-1] == "a0" and refs[:-1] and all(r.startswith("example.") for r in refs[:-1])
        assert ann.get(first["images"][0]["url"]).headers["content-type"] == "image/jpeg"
        moved = ann.call(aid, "move", distance_m=1.0, direction="forward")
        assert moved["text"].startswith("a1 move forward") and moved["state"]["used"] == 1
        ann.call(aid, "turn", degrees=30)
        ann.call(aid, "look", degrees=10)
        ann.call(aid, "wait", seconds=1)
        ann.call(aid, "interact")
        assert ann.get(moved["state"]["view"]).content[:2] == b"\xff\xd8"
        assert ann.call(aid, "inspect", refs=["a1"], region=[0, 0, 0.5, 0.5])["images"]
        assert "a2 turn" in ann.call(aid, "history", from_action=1, to_action=3)["text"]
        ann.call(aid, "write_notes", text="the bench near the start looks odd")
        flag = ann.call(aid, "flag_bug", description="a bench faces the wrong way", category="improper_configuration",
                        status="suspect", evidence=["a1"])  # fmt: skip
        assert flag["text"].startswith("Flagged b1")
        ann.call(aid, "update_bug", id="b1", status="confirmed")
        assert "confirmed" in ann.call(aid, "list_bugs")["text"]
        bad = ann.call(aid, "move", distance_m=99, direction="forward")
        assert bad["error"] and "invalid arguments" in bad["text"]
        assert "unknown tool" in ann.call(aid, "teleport", x=1)["text"]  # as an agent's mistake
        ann.post(f"/api/a/{aid}/call", {"args": {}}, status=400)  # not a call at all
        ann.call(aid, "observe")
        ann.call(aid, "read_example")
        # another participant cannot see or drive this session; writes need the header
        bob = Client(http, tokens["bob"])
        bob.post(f"/api/a/{aid}/call", {"tool": "done", "args": {"summary": "x"}}, status=404)
        bob.get(f"/task/{aid}", status=404)
        assert http.post(f"/api/a/{aid}/tick", headers=ann.cookie).status_code == 401  # no write header
        assert TestClient(http.app, base_url="http://evil.example").get("/signin").status_code == 421
        for path in (f"/static/../{TASK}/rubric.json", "/api/a/1/frame/..%2frubric.json", "/rubric.json"):
            r = http.get(path)
            assert r.status_code in (404, 400) and "target" not in r.text
        done = ann.call(aid, "done", summary="one bench is turned away")
        assert done["state"]["ended"] == "done"
        ann.post(f"/api/a/{aid}/call", {"tool": "move", "args": {}}, status=404)
        ann.get("/")
        assert ann.get("/api/tasks").json()["tasks"][0]["status"] == "finished"
    secrets = secrets_of(built / TASK)
    leaked = leaks(ann.seen + bob.seen, secrets)
    assert not leaked, leaked
    for f in ("rubric.json", "task.json", "selfcheck.json"):  # the scan finds what it looks for
        assert leaks([(built / TASK / f).read_text()], secrets), f
    ep = tmp_path / "episodes" / str(aid)
    report = json.loads((ep / "report.json").read_text())
    assert report["done"] and report["actions_used"] == 5 and report["wall_seconds"] >= 0
    assert [b["status"] for b in report["bugs"]] == ["confirmed"]
    assert (ep / "target_px.json").is_file() and (ep / "trajectory" / "trajectory.jsonl").is_file()
    tools = [json.loads(line)["tool"] for line in (ep / "tools.jsonl").read_text().splitlines()]
    assert tools[0] == "observe" and tools[-1] == "done"


def test_a_restart_replays_the_session_and_keeps_the_clock(built, tmp_path, tokens):
    clock = Clock()
    with _serve(built, tmp_path, clock) as http:
        ann = Client(http, tokens["alice"])
        aid = ann.get("/api/tasks").json()["tasks"][0]["assignment"]
        ann.post(f"/api/a/{aid}/start")
        for _ in range(3):
            clock.t += 4.0
            state = ann.call(aid, "move", distance_m=0.5, direction="forward")["state"]
        ann.call(aid, "flag_bug", description="bench", category="improper_configuration", status="suspect")
        before = ann.get(state["view"]).content
        clock.t += 5.0
        elapsed = ann.post(f"/api/a/{aid}/tick")["elapsed_s"]
        assert elapsed == pytest.approx(17.0)
    clock.t += 3600.0  # the server was down for an hour: not the participant's time
    with _serve(built, tmp_path, clock) as http:
        ann = Client(http, tokens["alice"])
        again = ann.post(f"/api/a/{aid}/start")
        assert again["state"]["used"] == 3 and again["state"]["elapsed_s"] == pytest.approx(17.0)
        assert ann.get(again["state"]["view"]).content == before  # the same world, replayed
        assert "b1 [suspect]" in ann.call(aid, "list_bugs")["text"]
        clock.t += 2.0
        assert ann.call(aid, "move", distance_m=0.5, direction="forward")["state"]["used"] == 4
    report_tools = [
        json.loads(line)["tool"]
        for line in (tmp_path / "episodes" / str(aid) / "tools.jsonl").read_text().splitlines()
    ]
    assert report_tools == ["observe", "move", "move", "move", "flag_bug", "list_bugs", "move"]


def test_the_clock_ends_the_session_with_what_was_flagged(built, tmp_path, tokens):
    clock = Clock()
    with _serve(built, tmp_path, clock, minutes=0.5) as http:
        ann = Client(http, tokens["alice"])
        aid = ann.get("/api/tasks").json()["tasks"][0]["assignment"]
        ann.post(f"/api/a/{aid}/start")
        ann.call(
            aid,
            "flag_bug",
            description="a bench faces away",
            category="improper_configuration",
            status="suspect",
        )
        for _ in range(3):
            clock.t += 10.0
            state = ann.post(f"/api/a/{aid}/tick")
        assert state["ended"] == "time" and state["elapsed_s"] == 30.0
        ann.post(f"/api/a/{aid}/call", {"tool": "move", "args": {}}, status=404)
    report = json.loads((tmp_path / "episodes" / str(aid) / "report.json").read_text())
    assert report["done"] and report["summary"] == TIME_UP and report["wall_seconds"] == 30.0
    assert [b["description"] for b in report["bugs"]] == ["a bench faces away"]


def test_an_evicted_session_is_rebuilt_and_a_tampered_one_refused(built, tmp_path, tokens):
    store = HumanStore(tmp_path / "h.sqlite")
    hub = SessionHub(store, built, tmp_path / "episodes", OPTS, max_live=1)  # room for one session
    with TestClient(HumanApp(store, hub).asgi({"testserver"})) as http:
        ann, bob = Client(http, tokens["alice"]), Client(http, tokens["bob"])
        a = ann.get("/api/tasks").json()["tasks"][0]["assignment"]
        b = bob.get("/api/tasks").json()["tasks"][0]["assignment"]
        ann.post(f"/api/a/{a}/start")
        ann.call(a, "turn", degrees=45)
        bob.post(f"/api/a/{b}/start")  # closes alice's session to make room
        assert list(hub.live) == [b]
        assert ann.call(a, "turn", degrees=45)["text"].startswith("a2 turn")  # rebuilt from its calls
        con = sqlite3.connect(tmp_path / "h.sqlite")
        con.execute("UPDATE calls SET text_sha256 = 'x' WHERE assignment_id = ? AND seq = 2", (a,))
        con.commit()
        con.close()
        bob.call(b, "turn", degrees=10)  # alice's session is closed again
        refused = ann.post(f"/api/a/{a}/call", {"tool": "turn", "args": {"degrees": 5}}, status=409)
        assert "did not replay as recorded" in refused["error"]
