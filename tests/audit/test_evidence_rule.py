"""The judge's evidence rule (audit/evidence.py): a correct text is not enough, a frame it rests on
must show the target, and a change must have been observed as its category needs.  Real episodes in
the real simulator: the oracle (explores, cites the exposing frames) against the same findings filed
from the start view without acting (`--agent-option explore=false`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from wac.audit.evidence import EVIDENCE_PX, SIGHTINGS, EvidenceRule, ViewFrame
from wac.audit.judge import judge_run
from wac.audit.runner import RunConfig, run_eval
from wac.audit.session import AuditSession, SessionOptions

SMALL = SessionOptions(example=False, width=96, height=72)
UNSEEN = "living_02"  # a chair that moves: not in the start view
CHANGE = "factory_01"  # a wheelie bin that disappears: in the start view


@pytest.fixture(scope="module")
def runs(built, tmp_path_factory):
    """Oracle and blind-claim runs of both tasks, keyword-judged."""
    for tid in (UNSEEN, CHANGE):
        assert (built / tid).is_dir(), "the shipped corpus lost a task this test uses"
    out = {}
    for name, options in (("oracle", ()), ("blind", (("explore", "false"),))):
        run = tmp_path_factory.mktemp(name)
        config = RunConfig(agent="oracle", options=SMALL, agent_options=options)
        statuses = run_eval(built, run, config, jobs=1, only=[UNSEEN, CHANGE])
        assert all(s["ok"] for s in statuses), statuses
        judge_run(run, backend="keyword")
        out[name] = run
    return out


def judgment(run: Path, tid: str) -> dict:
    return json.loads((run / "tasks" / tid / "judgment.json").read_text())


def test_the_oracle_passes_with_pixel_evidence(runs):
    for tid in (UNSEEN, CHANGE):
        j = judgment(runs["oracle"], tid)
        assert j["success"] is True, j["entries"]
        assert j["entries"][0]["evidence_test"] == "pixels"


def test_a_correct_text_citing_a_frame_without_the_target_fails(runs):
    j = judgment(runs["blind"], UNSEEN)
    (e,) = j["entries"]
    assert j["success"] is False and e["score"] == 0
    assert "names the chair" in e["reason"]  # the text itself is right...
    assert "cites a0, none of which shows the target (at least 150 px of it on screen" in e["reason"]


def test_a_change_claimed_from_one_view_was_never_observed(runs):
    j = judgment(runs["blind"], CHANGE)
    (e,) = j["entries"]
    assert j["success"] is False
    assert (
        "describes a change the episode never observed (it saw the target at one moment only" in e["reason"]
    )


def test_without_recorded_pixels_the_rule_falls_back_to_geometric_coverage(runs, tmp_path):
    import shutil

    for name, expected in (("oracle", True), ("blind", False)):
        run = tmp_path / name
        shutil.copytree(runs[name], run)
        for tid in (UNSEEN, CHANGE):
            (run / "tasks" / tid / SIGHTINGS).unlink()
            (run / "tasks" / tid / "judgment.json").unlink()
        judge_run(run, backend="keyword")
        j = judgment(run, UNSEEN)
        assert j["entries"][0]["evidence_test"] == "geometric"
        assert j["success"] is expected, j["entries"]


def test_no_model_is_asked_when_no_finding_has_evidence(runs, tmp_path):
    import shutil

    run = tmp_path / "blind"
    shutil.copytree(runs["blind"], run)
    (run / "tasks" / UNSEEN / "judgment.json").unlink()
    with FakeOpenAI(lambda req: 500) as fake:  # any call would be a judge error
        judge_run(run, backend="openai", model="fake-vlm", base_url=fake.base_url, api_key="k")
    assert all(UNSEEN not in json.dumps(r) for r in fake.requests)
    j = judgment(run, UNSEEN)
    assert j["error"] is None and j["success"] is False and j["usage"]["calls"] == 0
    assert "No finding's evidence shows the target" in j["entries"][0]["reason"]


def test_sightings_are_written_only_when_the_session_closes(built, tmp_path):
    out = tmp_path / "ep"
    s = AuditSession(built / UNSEEN, out=out, options=SMALL)
    s.call("move", {"distance_m": 1.0, "direction": "forward"})
    s.call("turn", {"degrees": 30})
    assert not (out / SIGHTINGS).exists()  # ground truth: never on disk while the auditor acts
    s.call("done", {"summary": "finished"})
    assert not (out / SIGHTINGS).exists()
    s.close()
    data = json.loads((out / SIGHTINGS).read_text())
    steps = [json.loads(line) for line in (out / "trajectory" / "trajectory.jsonl").read_text().splitlines()]
    refs = {f"a{st['step']}" for st in steps} | {
        f"a{st['step']}.f{k}" for st in steps for k in range(1, len(st.get("film") or ()) + 1)
    }
    assert set(data["frames"]) == refs  # every frame the auditor was shown, film frames included
    assert data["threshold_px"] == EVIDENCE_PX


def test_the_evidence_floor_is_the_self_checks_floor_of_a_visible_change():
    from wac.validation.visual import CHANGE_PX

    assert EVIDENCE_PX == CHANGE_PX


def _frame(ref, t, x, y, yaw, action="move"):
    return ViewFrame(ref, t, {"x": x, "y": y, "z": 0.0, "yaw_deg": yaw, "pitch_deg": 0.0}, action)


def test_an_interaction_is_shown_by_where_it_was_done():
    """A lamp switched through a wall: no frame shows it, the frame taken within reach facing it counts."""
    frames = (_frame("a0", 0.0, -8, 0, 0, "start"), _frame("a1", 2.0, -1.5, 0, 0, "interact"))
    rule = EvidenceRule({"a0": [0.0], "a1": [0.0]}, frames, ((0.0, 0.0, 1.0),), (0.3,), 1.6, 7.0, True)
    bug = {"id": "b1"}
    assert rule.why_not(0, bug, ["a1"], interaction=True, dynamic=True) is None  # acted on within reach
    assert "none of which shows the target" in rule.why_not(0, bug, ["a0"], interaction=True, dynamic=True)
    assert "none of which shows" in rule.why_not(0, bug, ["a1"], interaction=False, dynamic=False)
    wide = EvidenceRule({"a0": [None], "a1": [None]}, frames, (None,), (0.0,), 1.6, 7.0, True)
    assert wide.test(0) == "scene-wide" and wide.why_not(0, bug, ["a0"], False, True) is None
    one = EvidenceRule({"a0": [None]}, frames[:1], (None,), (0.0,), 1.6, 7.0, True)
    assert "one moment only" in one.why_not(0, bug, ["a0"], False, True)  # a change needs two moments
