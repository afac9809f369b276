"""The review server over HTTP: who may write, play sessions, version checks, files."""

from __future__ import annotations

import json

import pytest

from wac.review.catalog import read_build

from .conftest import add_reviewer

WRITE = {"X-Wac-Review": "1"}


@pytest.fixture(scope="module")
def tokens(project, server):
    db = project / "review.sqlite"
    return {"alice": add_reviewer(db, "alice"), "bob": add_reviewer(db, "bob")}


def _cookie(token: str) -> dict:
    return {"Cookie": f"wac_review_token={token}"}


def test_no_token_no_write_and_no_read(server, project, tokens):
    task = read_build(project / "build")[0]
    body = {"version_id": task.version_id, "verdict": "accept"}
    for headers in ({}, WRITE, {**WRITE, **_cookie("forged")}, {"Authorization": "Bearer forged"}):
        status, _, data = server.request("POST", f"/api/task/{task.id}/verdict", body, headers)
        assert status == 401, data
        status, _, _ = server.request("POST", "/api/play", {"task_id": task.id}, headers)
        assert status == 401
    # a signed-in browser's cookie alone is not enough: a cross-site form cannot add the header
    status, _, data = server.request("POST", f"/api/task/{task.id}/verdict", body, _cookie(tokens["alice"]))
    assert status == 401 and b"x-wac-review" in data
    status, _, _ = server.request("GET", "/api/tasks")
    assert status == 401
    status, _, _ = server.request("GET", "/api/tasks", headers={"Authorization": f"Bearer {tokens['bob']}"})
    assert status == 200
    tasks = json.loads(server.request("GET", "/api/tasks", headers=_cookie(tokens["bob"]))[2])["tasks"]
    assert all(t["status"] == "pending" and t["accepted_by"] == [] for t in tasks)


def test_other_host_names_are_refused(server, tokens):
    status, _, _ = server.request("GET", "/signin", headers={"Host": "attacker.example:80"})
    assert status == 421


def test_sign_in_checks_name_and_token(server, tokens):
    import urllib.parse

    form = urllib.parse.urlencode({"name": "bob", "token": tokens["alice"]}).encode()
    import urllib.error
    import urllib.request

    req = urllib.request.Request(server.url + "/signin", data=form, method="POST")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req)
    assert err.value.code == 401


def test_verdict_on_an_old_version_is_refused(server, project, tokens):
    task = read_build(project / "build")[1]
    auth = {"Authorization": f"Bearer {tokens['alice']}"}
    status, _, data = server.request(
        "POST", f"/api/task/{task.id}/verdict", {"version_id": "0000000000000000", "verdict": "accept"}, auth
    )
    assert status == 409 and b"rebuilt" in data
    status, _, data = server.request(
        "POST", f"/api/task/{task.id}/verdict", {"version_id": task.version_id, "verdict": "maybe"}, auth
    )
    assert status == 400 and b"verdict must be one of" in data
    status, _, data = server.request(
        "POST",
        f"/api/task/{task.id}/verdict",
        {
            "version_id": task.version_id,
            "verdict": "needs_change",
            "comment": "hard to see",
            "seconds_spent": 42,
        },
        auth,
    )
    assert status == 200
    got = json.loads(data)
    assert got["status"] == "needs_change"
    assert [(v["reviewer"], v["comment"], v["seconds_spent"]) for v in got["current"]] == [
        ("alice", "hard to see", 42.0)
    ]


def test_play_streams_frames_and_belongs_to_its_reviewer(server, project, tokens):
    task = read_build(project / "build")[0]
    alice = {"Authorization": f"Bearer {tokens['alice']}"}
    status, headers, jpeg0 = server.request(
        "POST", "/api/play", {"task_id": task.id, "variant": "perturbed"}, alice
    )
    assert status == 200 and headers["Content-Type"] == "image/jpeg" and jpeg0[:2] == b"\xff\xd8"
    state = json.loads(headers["X-Wac-State"])
    assert (state["step"], state["variant"], state["budget_left"]) == (0, "perturbed", state["budget"])
    pid = state["play"]
    status, headers, jpeg1 = server.request(
        "POST", f"/api/play/{pid}/act", {"action": "turn", "degrees": 30}, alice
    )
    s1 = json.loads(headers["X-Wac-State"])
    assert s1["ok"] and s1["step"] == 1 and jpeg1 != jpeg0
    # out of the reference range: refused, no budget spent, the frame unchanged
    status, headers, jpeg2 = server.request("POST", f"/api/play/{pid}/act", {"text": "turn 200"}, alice)
    s2 = json.loads(headers["X-Wac-State"])
    assert status == 200 and not s2["ok"] and s2["step"] == 1 and "between -180 and 180" in s2["outcome"]
    assert jpeg2 == jpeg1
    # another reviewer cannot drive alice's world
    bob = {"Authorization": f"Bearer {tokens['bob']}"}
    status, _, _ = server.request("POST", f"/api/play/{pid}/act", {"text": "move 1"}, bob)
    assert status == 404
    # switching replays the actions in the other world: same pose, other variant
    status, headers, _ = server.request("POST", f"/api/play/{pid}/variant", {"variant": "clean"}, alice)
    s3 = json.loads(headers["X-Wac-State"])
    assert (s3["variant"], s3["step"], s3["pose"]) == ("clean", 1, s1["pose"])
    status, headers, _ = server.request("POST", f"/api/play/{pid}/reset", {}, alice)
    assert json.loads(headers["X-Wac-State"])["step"] == 0
    status, _, _ = server.request("POST", f"/api/play/{pid}/close", {}, alice)
    assert status == 200


def test_artifact_files_stay_inside_the_cache(server, project, tokens):
    task = read_build(project / "build")[0]
    auth = {"Authorization": f"Bearer {tokens['alice']}"}
    for name in ("../../../review.sqlite", "..%2F..%2Freview.sqlite", ".hidden.png", "context.json"):
        status, _, _ = server.request(
            "GET", f"/api/task/{task.id}/file/{task.version_id}/{name}", headers=auth
        )
        assert status == 404
