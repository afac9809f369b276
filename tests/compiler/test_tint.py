"""Derived materials (`recolor`, `glow`, `transparent`): a lowering returns them with its effects and
the pipeline adds them to the task's scene; lowering itself changes no shared table (issue 29)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

from wac.bundle import model as B
from wac.compiler.operators.base import Context
from wac.compiler.pipeline import compile_project

ROOT = Path(__file__).resolve().parents[2]
TASK = 'import "../scenes/garden.wa"\n\ntask {id} on garden {{\n    anomaly {anomaly}\n    start at (0, -5) yaw 90 deg\n}}\n'


def test_tint_returns_its_materials_and_changes_no_table():
    wood = B.Material(name="wood", color=(0.5, 0.3, 0.2))
    used = {"wood": wood}
    parts = tuple(
        B.Part(id=i, shape="box", size=(1.0, 1.0, 1.0), position=(0.0, 0.0, z), material="wood")
        for i, z in (("seat", 0.0), ("back", 1.0))
    )
    o = B.SceneObject(
        id="bench_1", name="bench", position=(0, 0, 0), parts=parts, aabb_min=(0, 0, 0), aabb_max=(1, 1, 2)
    )
    layout = SimpleNamespace(materials=SimpleNamespace(used=used))
    cx = Context(None, layout, None, None, None, (o,), {}, {}, B.new_trigger())
    tint = cx.tint(o, {"color": (1.0, 0.0, 0.0)}, "recolorff0000")
    assert used == {"wood": wood}  # the layout's table is as it was
    assert tint.materials == (
        wood.model_copy(update={"name": "wood~recolorff0000", "color": (1.0, 0.0, 0.0)}),
    )
    assert [(e.part, e.material) for e in tint.effects] == [
        ("seat", "wood~recolorff0000"),
        ("back", "wood~recolorff0000"),
    ]
    only = cx.tint(o, {"opacity": 0.4}, "alpha40", part="back")
    assert [e.part for e in only.effects] == ["back"] and [m.name for m in only.materials] == ["wood~alpha40"]


def test_the_bundle_holds_the_derived_material_of_its_own_anomaly_only(tmp_path):
    shutil.copytree(ROOT / "docs" / "tutorial" / "scenes", tmp_path / "scenes")
    (tmp_path / "tasks").mkdir()
    for tid, anomaly in {
        "red": 'recolor bench_1 to "#ff0000" when revisit',
        "lit": 'glow bench_1 color "#ffcc00"',
        "see": "transparent bench_1 opacity 0.3",
    }.items():
        (tmp_path / "tasks" / f"{tid}.wa").write_text(TASK.format(id=tid, anomaly=anomaly))
    res = compile_project([tmp_path / "tasks"], tmp_path, out=tmp_path / "out")
    derived = {}
    for tid in ("red", "lit", "see"):
        task = json.loads(res.tasks[tid]["task.json"])
        derived[tid] = {n for n in task["scene"]["materials"] if "~" in n}
        named = {e["material"] for a in task["anomalies"] for e in a["effects"] if e.get("material")}
        assert named == derived[tid]
    assert all("recolorff0000" in n for n in derived["red"]) and derived["red"]
    assert all(n.endswith("~glow") for n in derived["lit"]) and derived["lit"]
    assert all(n.endswith("~alpha30") for n in derived["see"]) and derived["see"]
