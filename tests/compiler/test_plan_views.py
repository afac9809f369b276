"""Where the self-check plan stands to expose an anomaly does not depend on where the task starts:
a leave trigger is armed at the viewpoint, an invisible wall is walked into face on (moving the
starts of 57 corpus tasks broke both: meadow_12, market_05)."""

from __future__ import annotations

import json
import math

import pytest

from wac.compiler.pipeline import compile_project


def _plan(project, tmp_path, body: str) -> dict:
    project("t.wa", body)
    res = compile_project([project.root / "tasks"], project.root, out=tmp_path / "b")
    assert res.ok, [d.render() for d in res.diagnostics]
    return json.loads((tmp_path / "b" / "t" / "selfcheck.json").read_text())


def _edge(point, lo, hi) -> float:
    dx = max(lo[0] - point[0], 0.0, point[0] - hi[0])
    dy = max(lo[1] - point[1], 0.0, point[1] - hi[1])
    return math.hypot(dx, dy)


@pytest.mark.parametrize("start", ["(6, -6) yaw 90 deg", "(-6, -6) yaw 90 deg", "(6, 6) yaw 180 deg"])
def test_a_leave_trigger_is_armed_at_the_viewpoint(project, tmp_path, start):
    # the plan views from 2-4.5 m by default; a 2 m enter distance needs the viewpoint inside it
    plan = _plan(
        project,
        tmp_path,
        f"task t on yard {{\n    start at {start}\n    anomaly hide crate_2 when leave enter 2 m exit 5 m\n}}\n",
    )
    assert _edge(plan["view_point"], (-3.3, 2.7), (-2.7, 3.3)) < 2.0, plan["view_point"]


@pytest.mark.parametrize("start", ["(5, 6) yaw -90 deg", "(-6, -7) yaw 0 deg", "(7, -7) yaw 90 deg"])
def test_an_invisible_wall_is_walked_into_face_on(project, tmp_path, start):
    # a wall 3 m long in y and 0.3 m thin in x: the walk must cross it, not slip past an end
    plan = _plan(
        project,
        tmp_path,
        f"task t on yard {{\n    start at {start}\n    anomaly invisible_wall at (3, -4) size (0.3, 3, 2)\n}}\n",
    )
    vx, vy = plan["view_point"]
    assert -5.5 < vy < -2.5 and abs(vx - 3) > 0.5, plan["view_point"]


ROOMS = """
scene rooms {
    description "Two rooms and a doorway, a cabinet in the north room."
    type indoor
    era modern
    ground wood size (20, 20)
    bounds from (-8, -8) to (8, 8)
    start at (0, -6) yaw 90 deg
    wall_w: box size (7, 0.2, 2.6) at (-4.5, 0) material plaster { name "wall" }
    wall_e: box size (7, 0.2, 2.6) at (4.5, 0) material plaster { name "wall" }
    lintel: box size (2, 0.2, 0.4) at (0, 0, 2.2) material plaster { name "lintel" }
    cabinet: box size (0.6, 0.6, 1.8) at (0, 3) material wood { name "cabinet" }
}
"""


@pytest.mark.parametrize("start", ["(0, -6) yaw 90 deg", "(-2, -6) yaw 0 deg", "(2.5, -7) yaw 180 deg"])
def test_a_view_through_a_wall_is_taken_through_the_wall_not_the_doorway(project, tmp_path, start):
    # xray draws the cabinet through solids: the nearest view, through the doorway, shows nothing.
    # The lintel above the doorway stands on nothing, so the sight line under it is clear.
    (project.root / "scenes" / "rooms.wa").write_text(ROOMS)
    project(
        "t.wa",
        f"task t on rooms {{\n    start at {start}\n    anomaly xray cabinet\n}}\n",
        header='import "../scenes/rooms.wa"\n',
    )
    res = compile_project([project.root / "tasks"], project.root, out=tmp_path / "b")
    assert res.ok, [d.render() for d in res.diagnostics]
    plan = json.loads((tmp_path / "b" / "t" / "selfcheck.json").read_text())
    vx, vy = plan["view_point"]
    assert vy < -0.3, plan["view_point"]  # south of the wall
    x_at_wall = vx + (0 - vx) * (0 - vy) / (3 - vy)  # where the sight line to the cabinet crosses y = 0
    # the cabinet's whole width behind the wall: its sides' sight lines cross the wall too
    assert abs(x_at_wall) > 1.0 + 0.3 * -vy / (3 - vy), plan["view_point"]
