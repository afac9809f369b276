"""The built-in agents: random, sweep, replay and the oracle pipeline check."""

from __future__ import annotations

import json
import math

import pytest

from wac.audit.agents import AgentError, make_agent
from wac.audit.agents.oracle import OracleAgent
from wac.audit.agents.random_agent import RandomAgent
from wac.audit.agents.replay import ReplayAgent, parse_script
from wac.audit.agents.sweep import SweepAgent
from wac.audit.judge import keyword_match
from wac.audit.session import AuditSession, ReviewSession, SessionOptions, load_recording
from wac.bundle.model import Rubric

SMALL = dict(example=False, width=160, height=120)
SEALED = ("env", "plan", "task", "bundle", "examples")


class Sealed:
    """A session as an auditor sees it: reading ground truth (env, plan, task...) fails the test."""

    def __init__(self, session) -> None:
        object.__setattr__(self, "_s", session)

    def __getattr__(self, name):
        if name in SEALED:
            raise AssertionError(f"the agent read session.{name} (ground truth)")
        return getattr(object.__getattribute__(self, "_s"), name)


def episode(built, tmp_path, task: str, agent, name: str = "ep", sealed: bool = True, **options) -> dict:
    out = tmp_path / name
    s = AuditSession(built / task, out, SessionOptions(**{**SMALL, **options}))
    try:
        agent.run(Sealed(s) if sealed else s)
        assert s.done
        return s.report()
    finally:
        s.close()


def actions(out) -> list[tuple[str, str]]:
    lines = [json.loads(x) for x in (out / "tools.jsonl").read_text().splitlines()]
    return [(d["tool"], json.dumps(d["args"], sort_keys=True)) for d in lines]


def test_the_registry_makes_every_agent(tmp_path):
    script = tmp_path / "s.txt"
    script.write_text("turn 30\n")
    made = {n: make_agent(n, seed=1, model="m", api_key="k") for n in ("random", "sweep", "oracle", "openai")}
    made["replay"] = make_agent(f"replay:{script}", seed=1)
    assert {n: type(a).__name__ for n, a in made.items()} == {
        "random": "RandomAgent",
        "sweep": "SweepAgent",
        "oracle": "OracleAgent",
        "openai": "OpenAIAgent",
        "replay": "ReplayAgent",
    }
    assert [n for n, a in made.items() if a.pipeline_check] == ["oracle"]
    assert all(a.name == n for n, a in made.items())


def test_random_is_seeded_uses_the_budget_and_flags_nothing(built, tmp_path):
    reports = [
        episode(built, tmp_path, "city_02", RandomAgent(seed=s), f"r{i}", budget_multiplier=0.25)
        for i, s in enumerate((7, 7, 8))
    ]
    assert all(r["actions_used"] == r["budget"] == 10 and r["bugs"] == [] and r["done"] for r in reports)
    a, b, c = (actions(tmp_path / f"r{i}") for i in range(3))
    assert a == b and a != c
    assert {t for t, _ in a} <= {"observe", "move", "turn", "look", "interact", "wait", "done"}
    assert "no bug" in reports[0]["summary"].lower()


def _inside(poly, x, y) -> bool:
    inside, j = False, len(poly) - 1
    for i in range(len(poly)):
        (xi, yi), (xj, yj) = poly[i], poly[j]
        if (yi > y) != (yj > y) and x < (xj - xi) * (y - yi) / (yj - yi) + xi:
            inside = not inside
        j = i
    return inside


def seen_fraction(bundle, trajectory, range_m: float = 7.0, half_fov_deg: float = 45.0) -> float:
    """Share of the bounds (0.5 m cells) within `range_m` and the horizontal view of some frame."""
    poly = json.loads((bundle / "task.json").read_text())["exploration"]["bounds"]
    xs, ys = [p[0] for p in poly], [p[1] for p in poly]
    cells = [
        (min(xs) + 0.25 + 0.5 * i, min(ys) + 0.25 + 0.5 * j)
        for i in range(int((max(xs) - min(xs)) / 0.5))
        for j in range(int((max(ys) - min(ys)) / 0.5))
    ]
    cells = [c for c in cells if _inside(poly, *c)]
    poses = []
    for line in (trajectory / "trajectory.jsonl").read_text().splitlines():
        step = json.loads(line)
        poses += [step["pose"]] + [f["pose"] for f in step.get("film", ()) if f.get("pose")]

    def seen(cx, cy):
        for p in poses:
            dx, dy = cx - p["x"], cy - p["y"]
            d = math.hypot(dx, dy)
            off = abs((math.degrees(math.atan2(dy, dx)) - p["yaw_deg"] + 180) % 360 - 180)
            if d <= range_m and (d < 0.5 or off <= half_fov_deg):
                return True
        return False

    return sum(seen(*c) for c in cells) / len(cells)


def test_sweep_covers_the_bounds_from_pose_and_outcomes_only(built, tmp_path):
    """On a small open scene (14 x 9.5 m) the 40-action sweep sees most of the bounds; the corpus's
    scenes are made large enough that it does not (docs/corpus.md)."""
    report = episode(built, tmp_path, "material_demo", SweepAgent(seed=0))
    assert report["actions_used"] == report["budget"] == 40 and report["bugs"] == []
    counts = report["tool_counts"]
    assert counts.get("turn", 0) >= 8 and counts.get("move", 0) >= 10  # look-arounds and lanes
    cover = seen_fraction(built / "material_demo", tmp_path / "ep" / "trajectory")
    assert cover >= 0.7, cover
    steps = [
        json.loads(x) for x in (tmp_path / "ep" / "trajectory" / "trajectory.jsonl").read_text().splitlines()
    ]
    xs = [s["pose"]["x"] for s in steps]
    assert max(xs) - min(xs) >= 8.0  # it walked across the area, not around the start


def test_sweep_is_deterministic(built, tmp_path):
    for name in ("s1", "s2"):
        episode(built, tmp_path, "living_giant_chair", SweepAgent(seed=5), name, budget_multiplier=0.4)
    assert actions(tmp_path / "s1") == actions(tmp_path / "s2")


def test_replay_runs_a_script_file(built, tmp_path):
    script = tmp_path / "actions.txt"
    script.write_text(
        "# a scripted inspection\nmove 2 forward; turn -30\nlook 20\nwait 1\n"
        "flag intersection suspect the crate looks odd\nnote checked the crates\n"
        "done finished the script\nturn 10\n"
    )
    report = episode(built, tmp_path, "city_02", make_agent(f"replay:{script}"))
    assert report["actions_used"] == 4 and report["summary"] == "finished the script"
    (bug,) = report["bugs"]
    assert bug["category"] == "intersection" and bug["status"] == "suspect" and bug["evidence"] == ["a4"]
    assert bug["description"] == "the crate looks odd" and report["notes"] == ["checked the crates"]


@pytest.mark.parametrize(
    "text,message",
    [
        ("move 9", "between 0.3 and 4"),
        ("turn 10\nfly 3", ":2: unknown action 'fly'"),
        ("flag nonsense it floats", "unknown category 'nonsense'"),
        ("flag scale", "flag needs a description"),
    ],
)
def test_replay_rejects_bad_scripts_before_running(text, message):
    with pytest.raises(AgentError, match=message):
        parse_script(text, "s.txt")


def test_replay_needs_a_readable_script(tmp_path):
    with pytest.raises(AgentError, match="needs a script"):
        ReplayAgent()
    with pytest.raises(AgentError, match="cannot read the script"):
        make_agent(f"replay:{tmp_path / 'missing.txt'}")
    assert [i.tool for i in ReplayAgent(actions="interact; wait 2; done ok").items] == [
        "interact",
        "wait",
        "done",
    ]


@pytest.mark.parametrize("task", ["market_03", "city_05"])
def test_oracle_files_the_rubric_finding_and_passes_the_keyword_judge(built, tmp_path, task):
    report = episode(built, tmp_path, task, OracleAgent(), sealed=False)
    rubric = Rubric.model_validate_json((built / task / "rubric.json").read_text())
    anchor = next(e for e in rubric.entries if e.anchor)
    bug = report["bugs"][0]
    assert bug["category"] == anchor.category and bug["status"] == "confirmed" and bug["evidence"]
    frames = {
        f"a{json.loads(x)['step']}"
        for x in (tmp_path / "ep" / "trajectory" / "trajectory.jsonl").read_text().splitlines()
    }
    assert set(bug["evidence"]) <= frames
    assert keyword_match(anchor, report["bugs"]).score == 1
    assert "PIPELINE CHECK" in report["summary"]


def test_oracle_in_review_cites_recorded_frames(built, tmp_path):
    task = "market_03"
    episode(built, tmp_path, task, OracleAgent(), "explore", sealed=False)
    rec = load_recording(tmp_path / "explore" / "trajectory")
    review = ReviewSession(built / task, rec, tmp_path / "review", SessionOptions(**SMALL))
    try:
        OracleAgent().run(review)
        report = review.report()
    finally:
        review.close()
    refs = {f.ref for f in rec.frames}
    (bug,) = report["bugs"]
    assert bug["evidence"] and set(bug["evidence"]) <= refs and report["done"]
    rubric = Rubric.model_validate_json((built / task / "rubric.json").read_text())
    assert keyword_match(rubric.entries[0], report["bugs"]).score == 1
