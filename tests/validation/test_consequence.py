"""Declared consequences (`affects`) and multi-anomaly plans, from source to self-check."""

from __future__ import annotations

import json

import pytest
from validation_helpers import BROKEN, build

from wac.validation.bundlecheck import check_bundle


def _task(tmp_path, body: str, name: str = "t"):
    """A task file on the validation suite's depot scene, inside a copy of the broken suite's root."""
    import shutil

    root = tmp_path / "proj"
    shutil.copytree(BROKEN / "scenes", root / "scenes")
    (root / "tasks").mkdir()
    src = root / "tasks" / f"{name}.wa"
    src.write_text(f'import "../scenes/depot.wa"\n\ntask {name} on depot {{\n{body}\n}}\n', encoding="utf-8")
    return src, root


def test_a_declared_consequence_passes_the_one_change_check(tmp_path):
    src, root = _task(
        tmp_path, "    anomaly spawn box_9 as crate at (-2.6, 0.15) affects [barrel_1, barrel_2] when revisit"
    )
    result = build([src], root, tmp_path / "out")
    assert not result.diagnostics, [d.message for d in result.diagnostics]
    task = json.loads((tmp_path / "out" / "t" / "task.json").read_text())
    assert task["anomalies"][0]["affects"] == ["barrel_1", "barrel_2"]
    res = check_bundle(tmp_path / "out" / "t")
    assert not [r for r in res.reasons if r.startswith("one change")], res.reasons


def test_tasks_without_affects_keep_their_bundle_bytes(tmp_path):
    src, root = _task(tmp_path, "    anomaly float crate_1 by 0.4 m")
    build([src], root, tmp_path / "out")
    assert "affects" not in (tmp_path / "out" / "t" / "task.json").read_text()
    assert "others" not in (tmp_path / "out" / "t" / "selfcheck.json").read_text()


@pytest.mark.parametrize(
    ("clause", "words"),
    [
        ("affects crate_1", "`crate_1` is the anomaly's own target"),
        ("affects barel_1", "unknown object `barel_1`"),
        ("affects 3", "`affects` needs the id of an object"),
    ],
)
def test_a_bad_affects_clause_is_a_compile_error(tmp_path, clause, words):
    src, root = _task(tmp_path, f"    anomaly float crate_1 by 0.4 m {clause}")
    result = build([src], root, None)
    assert any(words in d.message for d in result.diagnostics), [d.message for d in result.diagnostics]


def test_every_anomaly_of_a_multi_anomaly_task_gets_its_own_plan(tmp_path):
    src, root = _task(
        tmp_path,
        "    multi_anomaly yes\n    anomaly float crate_1 by 0.4 m\n    anomaly hide bin_1 when revisit\n"
        '    anomaly recolor barrel_1 to "#20c020" when revisit',
    )
    result = build([src], root, tmp_path / "out")
    assert not result.diagnostics, [d.message for d in result.diagnostics]
    plan = json.loads((tmp_path / "out" / "t" / "selfcheck.json").read_text())
    assert [o["anomaly"] for o in plan["others"]] == [1, 2]
    assert plan["others"][0]["category"] == "existence"
