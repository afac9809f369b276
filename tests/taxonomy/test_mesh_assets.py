"""The self-made figurative meshes shipped in taxonomy/assets: rebuilt byte for byte from
wac.taxonomy.meshes, the right size and shape, and usable from a task (the lion demonstration)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trimesh

from wac.taxonomy import meshes

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(meshes.MESHES))
def test_shipped_mesh_is_rebuilt_identically(name):
    shipped = (meshes.ASSETS / f"{name}.obj").read_text(encoding="utf-8")
    assert shipped == meshes.obj_text(name), "run `python -m wac.taxonomy.meshes`"


@pytest.mark.parametrize(
    ("name", "height"), [("lion", (1.0, 1.5)), ("statue", (2.0, 2.6)), ("vase", (0.4, 0.8))]
)
def test_meshes_stand_on_their_base_at_a_plausible_height(name, height):
    m = trimesh.load(meshes.ASSETS / f"{name}.obj", force="mesh")
    lo, hi = m.bounds
    assert lo[2] == pytest.approx(0.0, abs=1e-6)
    assert height[0] <= hi[2] <= height[1]
    assert abs(lo[0] + hi[0]) < 0.2 and abs(lo[1] + hi[1]) < 0.2  # centred on its base


def test_the_lion_demonstration_uses_the_shipped_lion():
    import json

    from wac.compiler.pipeline import compile_project

    src = (ROOT / "taxonomy" / "examples" / "shadow_lighting.wa").read_text()
    assert 'file "../assets/lion.obj"' in src
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        res = compile_project([ROOT / "taxonomy" / "examples" / "shadow_lighting.wa"], ROOT, out=out)
        assert res.ok, [d.render() for d in res.diagnostics]
        task = json.loads((out / "shadow_lighting_demo" / "task.json").read_text())
    lion = next(o for o in task["scene"]["objects"] if o["id"] == "lion_1")
    assert any(p["shape"] == "mesh" for p in lion["parts"])
