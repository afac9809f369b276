"""Auditor sessions: the Table 6 tools, their errors, the ablations and the sealed ground truth."""

from __future__ import annotations

import json
import math

import pytest

from wac.audit.session import AuditSession, ReviewSession, SessionOptions, load_recording
from wac.audit.tools import live_tools, review_tools

SMALL = dict(example=False, width=160, height=120)


@pytest.fixture
def session(built, tmp_path):
    s = AuditSession(built / "city_02", tmp_path / "ep", SessionOptions(**SMALL))
    yield s
    s.close()


def test_tools_match_the_reference_harness_names():
    names = [t.name for t in live_tools()]
    assert names == [
        "observe",
        "read_example",
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
    ]
    move = next(t for t in live_tools() if t.name == "move").parameters
    assert (
        move["properties"]["distance_m"]["minimum"] == 0.3
        and move["properties"]["distance_m"]["maximum"] == 4
    )
    assert {"move", "turn", "look", "interact", "wait"}.isdisjoint(t.name for t in review_tools())


def test_first_observe_is_the_initial_input(session):
    r = session.call("observe")
    assert not r.error and "Anomaly-type hint" in r.text and "40 environment actions" in r.text
    assert [i.ref for i in r.images] == ["a0"] and r.images[0].png.startswith(b"\x89PNG")
    assert r.images[0].caption.startswith("a0 start view | pos (")
    again = session.call("observe")
    assert "40 of 40 environment actions left" in again.text and "(no bugs flagged)" in again.text


def test_actions_archive_frames_and_cost_budget(session):
    r = session.call("move", {"distance_m": 1.5, "direction": "forward"})
    assert not r.error and r.text.startswith("a1 move forward 1.50 m -> moved 1.50 m")
    assert "a1.f1..a1.f2 (film), a1 (final)" in r.text and "39 actions left" in r.text
    assert [i.ref for i in r.images] == ["a1"]
    r = session.call("inspect", {"refs": ["a1.f1", "a0"], "region": [0.25, 0.25, 0.75, 0.75]})
    assert not r.error and [i.ref for i in r.images] == ["a1.f1", "a0"] and "zoom" in r.images[0].caption
    assert session.actions_used == 1  # free tools cost nothing
    r = session.call("history", {"from_action": 0, "to_action": 3})
    assert r.text.splitlines()[0].startswith("a0 start") and r.text.splitlines()[1].startswith("a1 move")


@pytest.mark.parametrize(
    "name,args,message",
    [
        ("move", {"distance_m": 9, "direction": "forward"}, "greater than the maximum of 4"),
        ("move", {"distance_m": 1}, "'direction' is a required property"),
        ("turn", {"degrees": "left"}, "is not of type 'number'"),
        ("inspect", {"refs": ["a7"]}, "no frame a7: there is no action 7 yet"),
        ("inspect", {"refs": ["frame1"]}, "does not match"),
        ("inspect", {"refs": ["a0", "a0", "a0", "a0", "a0"]}, "is too long"),
        ("update_bug", {"id": "b9", "status": "retracted"}, "no bug 'b9'"),
        ("flag_bug", {"description": "x", "category": "weird", "status": "suspect"}, "is not one of"),
        ("history", {"from_action": 0, "to_action": 60}, "at most 40 actions"),
        ("teleport", {}, "unknown tool 'teleport'"),
        ("wait", {"seconds": 1, "extra": 2}, "Additional properties are not allowed"),
    ],
)
def test_agent_mistakes_are_clear_error_results(session, name, args, message):
    r = session.call(name, args)
    assert r.error and r.text.startswith("ERROR: ") and message in r.text


def test_budget_is_enforced_and_done_ends_the_episode(built, tmp_path):
    with AuditSession(
        built / "city_02", tmp_path / "ep", SessionOptions(budget_multiplier=0.05, **SMALL)
    ) as s:
        assert s.budget == 2
        assert not s.call("wait", {"seconds": 0.5}).error
        assert not s.call("wait", {"seconds": 0.5}).error
        r = s.call("wait", {"seconds": 0.5})
        assert r.error and "action budget exhausted (2 of 2" in r.text
        assert not s.call(
            "flag_bug",
            {
                "description": "two bins overlap",
                "category": "intersection",
                "status": "confirmed",
                "evidence": ["a2"],
            },
        ).error
        assert not s.call("done", {"summary": "one bug"}).error
        assert "already" in s.call("done", {"summary": "again"}).text
        assert (
            "already finished"
            in s.call("flag_bug", {"description": "x", "category": "other", "status": "suspect"}).text
        )
    rep = json.loads((tmp_path / "ep" / "report.json").read_text())
    assert rep["done"] and rep["actions_used"] == 2 and rep["bugs"][0]["evidence"] == ["a2"]
    assert [json.loads(x)["event"] for x in (tmp_path / "ep" / "bugs.jsonl").read_text().splitlines()] == [
        "flag"
    ]


def test_retracted_bugs_leave_the_active_set(session):
    session.call(
        "flag_bug", {"description": "lamp floats", "category": "missing_support", "status": "suspect"}
    )
    session.call("update_bug", {"id": "b1", "status": "retracted"})
    assert session.call("list_bugs").text == "(no bugs flagged)"
    assert "retracted" in session.call("update_bug", {"id": "b1", "status": "confirmed"}).text
    assert session.report()["bugs"] == [] and len(session.report()["retracted"]) == 1


def test_hint_ablation_and_budget_multiplier(built):
    with AuditSession(built / "city_02", None, SessionOptions(hint=False, budget_multiplier=2, **SMALL)) as s:
        text = s.call("observe").text
        assert "Anomaly-type hint" not in text and "Intersection" not in text
        assert "80 environment actions" in text and "80-action budget" in text
        assert "read_example" not in [t.name for t in s.tools]


def test_closer_start_faces_the_exposing_view(built):
    with AuditSession(built / "city_02", None, SessionOptions(closer_start=True, **SMALL)) as s:
        p = s.env.pose()
        vx, vy = s.plan.view_point
        assert math.hypot(p.x - vx, p.y - vy) < 0.05
        tx, ty, _ = s.plan.target_point
        want = math.degrees(math.atan2(ty - vy, tx - vx))
        assert abs((p.yaw_deg - want + 180) % 360 - 180) < 1.0


def test_film_observation_shows_film_frames_inline(built):
    with AuditSession(built / "city_02", None, SessionOptions(observation="film", **SMALL)) as s:
        r = s.call("move", {"distance_m": 2, "direction": "forward"})
        assert [i.ref for i in r.images] == [
            "a1.f1",
            "a1.f2",
            "a1",
        ]  # 1.43 s of walking: film at 0.5 s, 1.0 s


def _rubric_strings(bundle) -> list[str]:
    rubric = json.loads((bundle / "rubric.json").read_text())
    task = json.loads((bundle / "task.json").read_text())
    out = [x for e in rubric["entries"] for x in (e["target"], e["expected"], e["inspection"])]
    out += [t for a in task["anomalies"] for t in a["targets"]]
    return out


@pytest.mark.parametrize("task", ["city_02", "meadow_04", "meadow_12"])
def test_no_tool_reveals_the_ground_truth(built, tmp_path, task):
    """Every text any tool returns, errors included, is free of the rubric sentences and the target ids."""
    texts = []
    with AuditSession(built / task, tmp_path / "ep", SessionOptions(**SMALL)) as s:
        script = [
            ("observe", {}),
            ("move", {"distance_m": 3, "direction": "forward"}),
            ("turn", {"degrees": 90}),
            ("look", {"degrees": 20}),
            ("interact", {}),
            ("wait", {"seconds": 2}),
            ("inspect", {"refs": ["a1", "a1.f1"]}),
            ("history", {"from_action": 0, "to_action": 9}),
            ("write_notes", {"text": "checked the area"}),
            ("list_bugs", {}),
            ("flag_bug", {"description": "something odd", "category": "other", "status": "suspect"}),
            ("update_bug", {"id": "b1", "status": "confirmed"}),
            ("inspect", {"refs": ["a99"]}),
            ("move", {"distance_m": 99, "direction": "up"}),
            ("read_example", {"code": "scale"}),
            ("observe", {}),
            ("done", {"summary": "done"}),
        ]
        for name, args in script:
            r = s.call(name, args)
            texts.append(r.text)
            texts += [i.caption for i in r.images]
        texts += [json.dumps(t.openai()) for t in s.tools]
    blob = "\n".join(texts).lower()
    for secret in _rubric_strings(built / task):
        assert secret.lower() not in blob, f"tool output reveals {secret!r}"


def test_review_session_serves_a_recording(built, tmp_path):
    with AuditSession(built / "city_02", tmp_path / "explore", SessionOptions(**SMALL)) as s:
        for _ in range(3):
            s.call("move", {"distance_m": 2, "direction": "forward"})
        s.call("wait", {"seconds": 3})
    rec = load_recording(tmp_path / "explore" / "trajectory", interval_s=0.5)
    times = [f.t_sim for f in rec.frames]
    assert times[0] == 0.0 and all(b - a >= 0.5 - 1e-6 for a, b in zip(times, times[1:], strict=False))
    with ReviewSession(built / "city_02", rec, tmp_path / "review", SessionOptions(**SMALL)) as r:
        first = r.call("observe")
        assert "RECORDING" in first.text and len(first.images) == len(rec.frames)
        assert r.call("move", {"distance_m": 1, "direction": "forward"}).error
        ref = rec.frames[-1].ref
        assert not r.call(
            "flag_bug",
            {"description": "x moves", "category": "other", "status": "suspect", "evidence": [ref]},
        ).error
        assert not r.call("inspect", {"refs": [ref]}).error
