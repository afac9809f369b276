"""The JSON Schemas in schemas/ are generated from the bundle models and must stay current."""

from __future__ import annotations

from pathlib import Path

import pytest

from wac.bundle.schemas import SCHEMAS, render

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_file_is_current(name):
    assert (REPO / "schemas" / name).read_text() == render(SCHEMAS[name]), "run `wac schema -o schemas`"


def test_taxonomy_command_lists_every_category(capsys):
    from wac.cli import main

    assert main(["taxonomy"]) == 0
    out = capsys.readouterr().out
    from wac.taxonomy.registry import registry

    for c in registry().categories:
        assert c.name in out


def test_objects_validated_by_shape_still_reject_a_wrong_value(tmp_path):
    """Objects alike but for unconstrained values are validated once; a wrong type is still caught."""
    import json

    import jsonschema

    from wac.compiler.emit import validate_task
    from wac.compiler.pipeline import compile_project

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "out"
    assert compile_project([root / "taxonomy" / "examples" / "scale.wa"], root, out=out).ok
    doc = json.loads((out / "scale_demo" / "task.json").read_text())
    validate_task(doc)
    first = doc["scene"]["objects"][0]
    twin = {**first, "id": first["id"] + "_twin", "position": [9.5, 9.5, 0.0]}
    validate_task({**doc, "scene": {**doc["scene"], "objects": [*doc["scene"]["objects"], twin]}})
    bad = {**first, "id": first["id"] + "_bad", "position": ["9.5", 9.5, 0.0]}
    with pytest.raises(jsonschema.ValidationError):
        validate_task({**doc, "scene": {**doc["scene"], "objects": [*doc["scene"]["objects"], bad]}})
    worse = {**first, "id": first["id"] + "_worse", "parts": [{**first["parts"][0], "shape": "blob"}]}
    with pytest.raises(jsonschema.ValidationError):
        validate_task({**doc, "scene": {**doc["scene"], "objects": [*doc["scene"]["objects"], worse]}})


def test_sections_validated_by_shape_still_reject_a_wrong_value_or_key(tmp_path):
    """A task's sections alike but for unconstrained values are validated once; a wrong type, an
    out-of-range value, a missing or an unknown key in a later task is still caught."""
    import json

    import jsonschema

    from wac.compiler.emit import validate_task
    from wac.compiler.pipeline import compile_project

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "out"
    assert compile_project([root / "taxonomy" / "examples" / "scale.wa"], root, out=out).ok
    doc = json.loads((out / "scale_demo" / "task.json").read_text())
    validate_task(doc)
    validate_task({**doc, "id": "another_task"})  # alike: accepted
    with pytest.raises(jsonschema.ValidationError):
        validate_task({**doc, "id": 7})
    with pytest.raises(jsonschema.ValidationError):
        validate_task({**doc, "anomalies": [{**doc["anomalies"][0], "trigger": {"kind": "sometimes"}}]})
    with pytest.raises(jsonschema.ValidationError):
        validate_task({k: v for k, v in doc.items() if k != "meta"})
    with pytest.raises(jsonschema.ValidationError):
        validate_task({**doc, "unexpected": 1})
