"""Fixtures for `wac human`: the shipped build, a database with two participants assigned one small
task (two per task), and the words a page must never show (the task's ground truth)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wac.cli import main as wac

pytest.importorskip("pybullet")
pytest.importorskip("vtk")

TASK = "city_bench_faces_away"  # a small world whose id names its anomaly (a page must not show it)
SMALL = ("--width", "96", "--height", "72")


def make_db(built: Path, db: Path, names=("alice", "bob")) -> dict[str, str]:
    """A database with `names` as participants, each assigned TASK (two per task); their tokens."""
    from wac.human.store import HumanStore

    store = HumanStore(db)
    tokens = {n: store.add_participant(n) for n in names}
    assert wac(["human", "assign", str(built), "--db", str(db), "--tasks", TASK]) == 0
    return tokens


def agent_context(built: Path, options) -> str:
    """What an agent reads first: the opening observe of an AuditSession over the same bundle, with
    the in-context example a run gives (`wac eval` renders it from the build's demonstrations)."""
    from wac.audit.examples import ExampleLibrary
    from wac.audit.session import AuditSession

    lib = ExampleLibrary(build_dir=built, width=options.width, height=options.height)
    with AuditSession(built / TASK, None, options, lib) as s:
        first = s.call("observe").text
        assert first == s.initial_input().text
        return first


def secrets_of(bundle: Path) -> list[re.Pattern]:
    """What of the ground truth a participant must never see: the rubric's sentences, the target's
    object ids, the operator, the task id, and words that name the harness's machinery."""
    rubric = json.loads((bundle / "rubric.json").read_text())
    task = json.loads((bundle / "task.json").read_text())
    words = [task["id"], "perturb", "clean", "rubric", "selfcheck", "task.json", str(bundle)]
    for e in rubric["entries"]:
        words += [e["target"], e["expected"], e["inspection"]]
    for a in task["anomalies"]:
        words += list(a["targets"])
        words.append(a["operator"])
    return [re.compile(rf"(?<![A-Za-z_]){re.escape(w)}(?![A-Za-z_])", re.I) for w in words if w]


def leaks(texts: list[str], patterns: list[re.Pattern]) -> list[str]:
    return [
        f"{p.pattern!r} in …{t[max(0, m.start() - 60) : m.end() + 60]}…"
        for t in texts
        for p in patterns
        if (m := p.search(t))
    ]
