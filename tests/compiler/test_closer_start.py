"""`wac derive closer-start`: a start one third of the route from the exposing view, orientation kept."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from wac.bundle import model as B
from wac.cli import main
from wac.compiler.closer_start import FILE, closer_start, read_closer_start
from wac.compiler.pipeline import compile_project

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("closer") / "build"
    res = compile_project([ROOT / "tasks_src" / "city" / "bin_pile.wa"], ROOT, out=out, jobs=1)
    assert res.ok
    return out


def _load(build: Path):
    task = B.CompiledTask.model_validate_json((build / "city_02" / "task.json").read_text())
    plan = B.SelfCheckPlan.model_validate_json((build / "city_02" / "selfcheck.json").read_text())
    return task, plan


def _walk(x, y, yaw, steps):
    """Where turn/move-forward steps lead (the plan's kinematics)."""
    for s in steps:
        if s.action == "turn":
            yaw -= s.args["degrees"]  # positive = right
        elif s.action == "move" and s.args.get("direction") == "forward":
            x += s.args["distance_m"] * math.cos(math.radians(yaw))
            y += s.args["distance_m"] * math.sin(math.radians(yaw))
        else:
            break
    return x, y


def _route_steps(plan):
    out = []
    for s in plan.steps:
        if s.caption or s.action not in ("turn", "move"):
            break
        out.append(s)
    return out


def test_the_shipped_plan_start_is_a_third_of_the_route_away(build):
    task, plan = _load(build)
    c = closer_start(task, plan)
    assert c["route_m"] > 5  # this task walks to its view point
    assert c["remaining_m"] == pytest.approx(c["route_m"] / 3, abs=0.01)
    p = c["pose"]
    assert p["yaw_deg"] == task.exploration.start.yaw_deg  # the orientation is unchanged
    steps = [B.PlanStep.model_validate(s) for s in c["steps"]]
    end = _walk(p["x"], p["y"], p["yaw_deg"], steps)
    assert math.dist(end, plan.view_point) < 0.35  # the rest of the plan still reaches the view
    assert steps[-len(plan.steps) + len(_route_steps(plan)) :] == list(plan.steps[len(_route_steps(plan)) :])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(-170, 170), st.floats(0.3, 4.0)),
        min_size=1,
        max_size=6,
    )
)
def test_any_route_leaves_a_third_and_resumes_on_it(build, legs):
    task, plan = _load(build)
    steps = []
    for turn, dist in legs:
        steps += [
            B.PlanStep(action="turn", args={"degrees": round(turn, 2)}),
            B.PlanStep(action="move", args={"distance_m": round(dist, 2), "direction": "forward"}),
        ]
    s = task.exploration.start
    end = _walk(*s.position, s.yaw_deg, steps)
    for k in range(0, len(steps) - 1, 2):  # the route reaches its view point only at its end
        assume(math.dist(_walk(*s.position, s.yaw_deg, steps[:k]), end) > 0.5)
    tail = [B.PlanStep(action="mark", caption="View it.")]
    plan = plan.model_copy(update={"steps": tuple(steps + tail), "view_point": end})
    c = closer_start(task, plan)
    total = sum(round(d, 2) for _, d in legs)
    assert c["route_m"] == pytest.approx(total, abs=1e-3)
    assert c["remaining_m"] == pytest.approx(total / 3, abs=1e-3)
    p = c["pose"]
    resumed = [B.PlanStep.model_validate(x) for x in c["steps"]]
    assert math.dist(_walk(p["x"], p["y"], p["yaw_deg"], resumed), end) < 0.3
    assert resumed[-1] == tail[0]


def test_command_writes_the_build_file_reproducibly(build, capsys):
    assert main(["derive", "closer-start", str(build)]) == 0
    first = (build / FILE).read_bytes()
    assert main(["derive", "closer-start", str(build)]) == 0
    assert (build / FILE).read_bytes() == first
    data = json.loads(first)
    assert set(data["tasks"]) == {"city_02"}
    assert read_closer_start(build / "city_02", "city_02") == data["tasks"]["city_02"]


def test_not_a_build_is_a_usage_error(tmp_path, capsys):
    assert main(["derive", "closer-start", str(tmp_path)]) == 2
    assert "not a wac build directory" in capsys.readouterr().err
