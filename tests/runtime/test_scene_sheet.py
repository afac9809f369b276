"""The scene contact sheet: one overview | start-view pair per scene of a build."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pybullet")
pytest.importorskip("vtk")

from wac.compiler.pipeline import compile_project  # noqa: E402
from wac.runtime.scene_sheet import main, scene_bundles  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_one_pair_per_scene(tmp_path):
    build = tmp_path / "build"
    files = [ROOT / "tasks_src" / "city" / f for f in ("bin_pile.wa", "ghost_car.wa")]
    files.append(ROOT / "tasks_src" / "market" / "floating_sacks.wa")
    files.append(ROOT / "taxonomy" / "examples" / "scale.wa")  # a demonstration: its scene is not shown
    assert compile_project(files, ROOT, out=build, jobs=1).ok
    rows = scene_bundles(build)
    assert [b.name for _, b in rows] == [
        "market_03",
        "city_02",
    ]  # by environment: medieval_village, utopian_city
    out = tmp_path / "sheet.png"
    assert main([str(build), "-o", str(out), "--width", "64", "--height", "48", "--columns", "1"]) == 0
    from PIL import Image

    w, h = Image.open(out).size
    assert w == 2 * 64 + 8 + 8 and h == 2 * (48 + 18 + 8)


def test_not_a_build(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert "not a wac build directory" in capsys.readouterr().err
