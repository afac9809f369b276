"""Golden files: one bundle per category (the taxonomy's demonstration tasks) and the exact
rendering of common diagnostics.  Refresh with `pytest --update-goldens` after a deliberate change."""

from __future__ import annotations

from pathlib import Path

import pytest

from wac.compiler.pipeline import compile_project
from wac.taxonomy.registry import Category, registry

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
ERRORS = sorted(p for p in (GOLDEN / "errors").glob("*.wa") if not p.name.startswith("_"))


@pytest.fixture(scope="module")
def example_bundles():
    first = compile_project([REPO / "taxonomy" / "examples"], REPO)
    second = compile_project([REPO / "taxonomy" / "examples"], REPO)
    assert first.ok, "\n".join(d.render() for d in first.diagnostics)
    assert first.tasks == second.tasks, "compiling twice must give identical bytes"
    # one golden per category: its principal demonstration (the in-context alternatives of
    # taxonomy/examples/incontext/ are compiled too, and held by tests/audit/test_examples.py)
    principal = {c.demo.id for c in registry().categories}
    return {entry["category"]: first.tasks[entry["id"]] for entry in first.index if entry["id"] in principal}


@pytest.mark.parametrize("category", [c.value for c in Category])
def test_category_golden_bundle(example_bundles, category, update_goldens):
    files = example_bundles[category]
    folder = GOLDEN / "bundles" / category
    if update_goldens:
        for old in folder.rglob("*"):
            if old.is_file():
                old.unlink()
        for rel, data in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
    expected = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert sorted(expected) == sorted(files)
    for rel, data in files.items():
        assert data == expected[rel], (
            f"{category}/{rel} differs from the golden (refresh with --update-goldens)"
        )


@pytest.mark.parametrize("source", ERRORS, ids=lambda p: p.stem)
def test_error_golden(source, monkeypatch, update_goldens):
    monkeypatch.chdir(REPO)
    result = compile_project([source.relative_to(REPO)], REPO)
    assert not result.ok
    rendered = "\n\n".join(d.render() for d in result.diagnostics) + "\n"
    expected_file = source.with_suffix(".err")
    if update_goldens:
        expected_file.write_text(rendered)
    assert rendered == expected_file.read_text()
