"""`--closer-start` with a derived closer start (`wac derive closer-start`): the agent starts a third of
the route from the exposing view, facing as at the task's start, and the oracle still gets there."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from wac.audit.agents.oracle import OracleAgent
from wac.audit.session import AuditSession, SessionOptions
from wac.compiler.closer_start import FILE, write_closer_starts
from wac.compiler.pipeline import compile_project

ROOT = Path(__file__).resolve().parents[2]
SMALL = dict(example=False, width=96, height=72)


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("closer_eval") / "build"
    assert compile_project([ROOT / "tasks_src" / "city" / "bin_pile.wa"], ROOT, out=out, jobs=1).ok
    write_closer_starts(out)
    return out


def test_session_starts_at_the_derived_pose_and_the_oracle_reaches_the_view(build):
    import json

    derived = json.loads((build / FILE).read_text())["tasks"]["city_02"]
    with AuditSession(build / "city_02", None, SessionOptions(closer_start=True, **SMALL)) as s:
        p = s.env.pose()
        assert math.hypot(p.x - derived["pose"]["x"], p.y - derived["pose"]["y"]) < 0.05
        assert abs(p.yaw_deg - derived["pose"]["yaw_deg"]) < 0.5
        assert math.dist((p.x, p.y), s.plan.view_point) > 3.0  # not the view point itself
        OracleAgent()._replay(s)
        q = s.env.pose()
        assert math.dist((q.x, q.y), s.plan.view_point) < 0.5
