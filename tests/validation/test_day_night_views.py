"""Under a day-night cycle the light changes while the plan walks: a colour compared between two
views of the target is compared at one light (meadow_08, a boulder that turns into a box past 5 m,
failed its self-check once its start moved away: the clean boulder "changed colour" as dusk fell)."""

from __future__ import annotations

import json
from pathlib import Path

from wac.compiler.pipeline import compile_project
from wac.validation.bundlecheck import check_bundle

ROOT = Path(__file__).resolve().parents[2]


def test_a_distance_colour_check_at_dusk_compares_at_one_light(tmp_path):
    src = ROOT / "tasks_src" / "meadow" / "lod_boulder.wa"
    res = compile_project([src], ROOT, out=tmp_path / "b")
    assert res.ok, [d.render() for d in res.diagnostics]
    bundle = tmp_path / "b" / "meadow_08"
    assert json.loads((bundle / "task.json").read_text())["scene"]["day_night"]
    result = check_bundle(bundle)
    assert result.passed, result.reasons
    assert result.clean.anomalous is False and result.perturbed.anomalous is True
