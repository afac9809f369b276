"""`part upper_half` / `part lower_half`: half of a surface, cut in both worlds (issue 11)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from wac.compiler.pipeline import compile_project

ROOT = Path(__file__).resolve().parents[2]
# facing the hedge from the south (the garden's own start hides the pot's table, and the hedge)
TASK = 'import "../scenes/garden.wa"\n\ntask {id} on garden {{\n    anomaly {anomaly}\n    start at (0, -5) yaw 90 deg\n}}\n'


@pytest.fixture
def garden(tmp_path):
    shutil.copytree(ROOT / "docs" / "tutorial" / "scenes", tmp_path / "scenes")
    (tmp_path / "tasks").mkdir()

    def build(**tasks):
        for tid, anomaly in tasks.items():
            (tmp_path / "tasks" / f"{tid}.wa").write_text(TASK.format(id=tid, anomaly=anomaly))
        return compile_project([tmp_path / "tasks"], tmp_path, out=tmp_path / "out")

    build.out = tmp_path / "out"
    return build


def _hedge(result, tid):
    task = json.loads(result.tasks[tid]["task.json"])
    return next(o for o in task["scene"]["objects"] if o["id"] == "hedge_1"), task


def test_upper_half_cuts_the_main_part_in_both_worlds(garden):
    res = garden(
        half="swap_material hedge_1 to glass part upper_half",
        whole="swap_material hedge_1 to glass",
    )
    assert res.ok, [d.render() for d in res.diagnostics]
    cut, task = _hedge(res, "half")
    whole, _ = _hedge(res, "whole")
    (body,) = whole["parts"]
    lower, upper = cut["parts"]
    assert (lower["id"], upper["id"]) == ("lower_half", "upper_half")
    h = body["size"][2]
    assert lower["size"] == upper["size"] == [body["size"][0], body["size"][1], h / 2]
    assert (
        upper["position"][2] == pytest.approx(h / 2)
        and lower["material"] == upper["material"] == body["material"]
    )
    effects = task["anomalies"][0]["effects"]
    assert [(e["kind"], e["part"]) for e in effects] == [("set_material", "upper_half")]
    rubric = json.loads(res.tasks["half"]["rubric.json"])
    assert "upper half of the hedge" in json.dumps(rubric)


def test_an_object_whose_body_is_not_a_box_or_cylinder_is_refused(garden):
    res = garden(t="swap_material tree_1 to glass part upper_half")
    (d,) = res.diagnostics
    assert d.code == "E614" and "`foliage` is a sphere" in d.message
    assert (d.span.line, d.span.column) == (4, 43)


def test_the_clean_world_looks_the_same_cut_or_not(garden):
    pytest.importorskip("vtk")
    from wac.runtime.env import WorldEnv

    res = garden(
        half="swap_material hedge_1 to glass part lower_half",
        whole="swap_material hedge_1 to glass",
    )
    assert res.ok
    frames = {}
    for tid in ("half", "whole"):
        for variant in ("clean", "perturbed"):
            env = WorldEnv(garden.out / tid, variant=variant, width=160, height=120, film_interval_s=None)
            try:
                frames[tid, variant] = np.asarray(env.observe().frame, dtype=float)
            finally:
                env.close()

    def changed(a, b) -> int:
        return int((np.abs(frames[a] - frames[b]).max(axis=2) > 24).sum())

    assert changed(("half", "clean"), ("whole", "clean")) <= 5  # the cut does not show
    assert changed(("half", "perturbed"), ("half", "clean")) > 100  # the glass half does
    assert changed(("whole", "perturbed"), ("half", "perturbed")) > 100  # and only half of it
