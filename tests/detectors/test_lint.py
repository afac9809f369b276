"""`wac lint`: the detectors as a linter for scene authors (issue 27).

A scene seeded with one clean-scene defect per line must have each one found, at its line, with its
category; every shipped scene must be found clean (a checker that rejects valid scenes is as broken
as one that misses defects).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wac.cli import main
from wac.compiler.lint import lint_paths

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
SEEDED = HERE / "seeded.wa"

# object (or scene-wide finding) -> the category the detectors must give it
EXPECTED = {
    "crate_float": "missing_support",
    "crate_a": "intersection",
    "chair_giant": "scale",
    "fence_ghost": "missing_collision",
    "drum_light": "abnormal_trajectory",
    "lamp_box": "shadow_lighting",
    "barrel_glass": "material",
    "#daylight": "operational_state",
    "chair_upside": "improper_configuration",
    "bin_1": "historical",
}


def test_every_seeded_defect_is_found_at_its_line():
    result = lint_paths([SEEDED], HERE)
    found = {f.objects[0]: f for f in result.anomalies}
    assert set(found) == set(EXPECTED), (
        f"missed {set(EXPECTED) - set(found)}, extra {set(found) - set(EXPECTED)}"
    )
    lines = SEEDED.read_text().splitlines()
    for oid, category in EXPECTED.items():
        f = found[oid]
        assert f.category == category, (oid, f.category, f.evidence)
        if not oid.startswith("#"):
            assert lines[f.line - 1].strip().startswith(f"{oid}:"), (oid, f.line)
    assert "chair_ok" not in found


def test_lint_exit_codes_and_json(capsys):
    assert main(["lint", "--root", str(HERE), str(SEEDED), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert {f["category"] for f in data["findings"]} == set(EXPECTED.values())
    assert sorted(data["scenes"]) == ["seeded_village", "seeded_yard"]


@pytest.mark.parametrize("where", ["tasks_src/scenes", "taxonomy/examples", "docs/tutorial/scenes"])
def test_shipped_scenes_are_clean(where):
    result = lint_paths([ROOT / where], ROOT)
    assert not result.diagnostics, [d.render() for d in result.diagnostics]
    assert not result.anomalies, "\n".join(f"{f.file}:{f.line}: {f.evidence}" for f in result.anomalies)
    assert result.scenes


def test_benign_oddities_are_listed_as_excused_not_as_anomalies(tmp_path):
    (tmp_path / "s.wa").write_text(
        'scene s {\n    description "A lane."\n    type urban\n    era modern\n    ground grass size (20, 20)\n'
        "    bounds from (-5, -5) to (5, 5)\n    start at (0, -4) yaw 90 deg\n"
        "    plant_1: plant at (0, 2) scale 3\n"
        '    benign plant_1 reason "a prize-winning giant plant"\n}\n'
    )
    result = lint_paths([tmp_path / "s.wa"], tmp_path)
    assert not result.anomalies
    assert [f.excused for f in result.findings] == ["a prize-winning giant plant"]
    assert main(["lint", "--root", str(tmp_path), str(tmp_path / "s.wa")]) == 0


def test_a_change_is_judged_where_its_objects_stood_in_the_clean_world_too(project):
    """The table moved 13 m away leaves the cup that stood on it in the air: a second defect (E551),
    found although the cup is far from where the table stands now (a detector's reach is measured
    from a changed object's clean place as well as its new one)."""
    from wac.compiler.pipeline import compile_project

    project("t.wa", "task t on yard {\n    anomaly relocate table_1 to (6, 6)\n}\n")
    res = compile_project([project.root / "tasks"], project.root, out=None)
    other = [d for d in res.diagnostics if d.code == "E551"]
    assert other and "`cup_1` (cup) floats" in other[0].message
