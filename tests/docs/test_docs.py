"""Keep the documentation honest: the reference pages must cover what the code defines.

* docs/language.md names every statement keyword, clause and trigger of `compiler/schema.py`
  and every operator (and operator parameter) of `taxonomy/operators.yaml`, and its `wa`
  code blocks parse;
* docs/errors.md has a section for every diagnostic code the compiler emits;
* the tutorial's task files build without diagnostics;
* docs/prefabs.md lists every prefab of the standard library.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wac.compiler import schema, triggers
from wac.compiler.parse import decode, parse
from wac.taxonomy.registry import registry

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LANGUAGE = DOCS / "language.md"
ERRORS = DOCS / "errors.md"
PREFABS_DOC = DOCS / "prefabs.md"
TUTORIAL = DOCS / "tutorial"
STDLIB_PREFABS = ROOT / "compiler" / "stdlib" / "prefabs.wa"


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _code_words(text: str) -> set[str]:
    """Every word written in code style (`…` spans and fenced blocks) in a markdown text."""
    spans = re.findall(r"`([^`\n]+)`", text) + re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    return {w for s in spans for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", s)}


# -- docs/language.md ------------------------------------------------------------------------


@pytest.mark.parametrize("context", sorted(schema.CONTEXTS))
def test_language_reference_names_every_statement(context: str) -> None:
    words = _code_words(_read(LANGUAGE))
    missing = sorted(k for k in schema.CONTEXTS[context] if k not in words)
    assert not missing, f"docs/language.md does not mention the {context} statements {missing}"


def test_language_reference_names_every_clause_and_trigger() -> None:
    words = _code_words(_read(LANGUAGE))
    keys = {
        c.key
        for c in schema.OBJECT_CLAUSES
        + schema.PART_CLAUSES
        + schema.LIGHT_CLAUSES
        + schema.MATERIAL_CLAUSES
        + schema.SUN_CLAUSES
        + schema.DAY_NIGHT_CLAUSES
        + schema.GROUND_CLAUSES
        + schema.START_CLAUSES
        + schema.BOUNDS_CLAUSES
    }
    for statement in [s for ctx in schema.CONTEXTS.values() for s in ctx.values()]:
        keys |= {c.key for c in statement.clauses}
    for statement in schema.GENERATOR_STATEMENTS:  # generators and the statements of a room's block
        keys |= {statement.keyword} | {c.key for c in statement.clauses}
    keys |= set(schema.OPENING_CLAUSES) | {c.key for cl in schema.OPENING_CLAUSES.values() for c in cl}
    keys |= set(triggers.TRIGGERS) | {c.key for cl in triggers.TRIGGERS.values() for c in cl}
    keys |= set(triggers.LEADING_TRIGGERS) | set(schema.SHAPES)
    missing = sorted(k for k in keys if k not in words)
    assert not missing, f"docs/language.md does not mention {missing}"


def test_language_reference_documents_every_operator() -> None:
    text = _read(LANGUAGE)
    missing = [op.name for op in registry().operators if f"#### `{op.name}`" not in text]
    assert not missing, f"docs/language.md has no operator section for {missing}"


def test_language_reference_documents_every_operator_parameter() -> None:
    text = _read(LANGUAGE)
    sections = re.split(r"^#### ", text, flags=re.M)
    by_name = {s.split("`")[1]: s for s in sections[1:] if s.startswith("`")}
    missing = []
    for op in registry().operators:
        section = by_name.get(op.name, "")
        missing += [f"{op.name}.{p.name}" for p in op.params if f"| `{p.name}` |" not in section]
    assert not missing, f"operator parameters missing from docs/language.md: {missing}"


def test_language_reference_examples_parse() -> None:
    blocks = re.findall(r"```wa\n(.*?)```", _read(LANGUAGE), flags=re.S)
    assert blocks, "docs/language.md has no ```wa examples"
    for i, block in enumerate(blocks):
        parse(
            decode(block.encode("utf-8"), f"docs/language.md block {i + 1}", None)
        )  # raises on a syntax error


def test_language_reference_complete_examples_build(tmp_path: Path, monkeypatch) -> None:
    """Examples that declare a task build: self-contained ones alone, the others with the
    scene file they import (another example of the page)."""
    from wac.compiler.pipeline import compile_project

    blocks = re.findall(r"```wa\n(.*?)```", _read(LANGUAGE), flags=re.S)
    scenes = {m.group(1): b for b in blocks for m in [re.search(r"^scene (\w+)", b, flags=re.M)] if m}
    tasks = [b for b in blocks if re.search(r"^task \w+ on \w+", b, flags=re.M)]
    assert tasks, "docs/language.md has no complete task example"
    (tmp_path / "scenes").mkdir()
    (tmp_path / "tasks").mkdir()
    for i, block in enumerate(tasks):
        imported = re.search(r'^import "\.\./scenes/(\w+)\.wa"', block, flags=re.M)
        if imported:
            scene = re.search(r"^task \w+ on (\w+)", block, flags=re.M).group(1)
            assert scene in scenes, f"no example declares the scene `{scene}` a task example uses"
            (tmp_path / "scenes" / f"{imported.group(1)}.wa").write_text(scenes[scene], encoding="utf-8")
        (tmp_path / "tasks" / f"example_{i}.wa").write_text(block, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = compile_project([Path("tasks")], tmp_path)
    assert result.ok, "\n\n".join(d.render() for d in result.diagnostics)


# -- docs/errors.md --------------------------------------------------------------------------


def _codes_in_compiler() -> set[str]:
    codes: set[str] = set()
    for path in sorted((ROOT / "compiler").rglob("*.py")):
        codes |= set(re.findall(r"[\"'](E\d{3}|W\d{3})[\"']", _read(path)))
    return codes


def test_every_error_code_is_documented() -> None:
    codes = _codes_in_compiler()
    assert codes, "found no diagnostic codes in compiler/**/*.py"
    text = _read(ERRORS)
    missing = sorted(c for c in codes if not re.search(rf"^### {c}$", text, flags=re.M))
    assert not missing, f"docs/errors.md has no section for {missing}"


def test_error_sections_are_in_order() -> None:
    listed = re.findall(r"^### ([EW]\d{3})$", _read(ERRORS), flags=re.M)
    assert listed == sorted(listed), "docs/errors.md lists its codes out of order"
    assert len(listed) == len(set(listed)), "docs/errors.md lists a code twice"


# -- the tutorial ----------------------------------------------------------------------------


def test_tutorial_sources_exist() -> None:
    assert (TUTORIAL / "scenes" / "garden.wa").is_file()
    assert (TUTORIAL / "tasks" / "floating_pot.wa").is_file()


def test_tutorial_builds(monkeypatch) -> None:
    from wac.compiler.pipeline import compile_project

    monkeypatch.chdir(ROOT)
    result = compile_project([Path("docs/tutorial/tasks")], Path(".").resolve())
    assert result.ok, "\n\n".join(d.render() for d in result.diagnostics)
    assert "garden_01" in result.tasks
    assert {"village_01", "reef_01"} <= set(result.tasks)  # generators, fog


def test_generator_example_scene_is_large_and_written_short() -> None:
    """The tutorial's village green: 150+ objects outdoors from a few generator lines."""
    import json

    from wac.compiler.pipeline import compile_project

    result = compile_project([TUTORIAL / "tasks" / "village_floating_lamp.wa"], ROOT)
    assert result.ok, "\n\n".join(d.render() for d in result.diagnostics)
    scene = json.loads(result.tasks["village_01"]["task.json"])["scene"]
    lines = [
        line
        for line in _read(TUTORIAL / "scenes" / "village_green.wa").splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    assert len(scene["objects"]) >= 150 and len(lines) <= 40


# -- docs/prefabs.md -------------------------------------------------------------------------


def test_prefab_table_lists_every_standard_prefab() -> None:
    declared = re.findall(r"^prefab\s+([A-Za-z_][A-Za-z0-9_]*)", _read(STDLIB_PREFABS), flags=re.M)
    assert declared, "found no prefabs in compiler/stdlib/prefabs.wa"
    text = _read(PREFABS_DOC)
    missing = [name for name in declared if not re.search(rf"^\| `{name}` \|", text, flags=re.M)]
    assert not missing, f"docs/prefabs.md does not list {missing}; regenerate it"


# -- links -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "page", ["language.md", "tutorial.md", "errors.md", "bundle.md", "internals.md", "prefabs.md"]
)
def test_relative_links_resolve(page: str) -> None:
    path = DOCS / page
    if not path.exists():
        pytest.fail(f"docs/{page} is missing")
    for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", _read(path)):
        assert (path.parent / target).exists(), f"docs/{page} links to missing {target}"


def test_no_merge_conflict_markers_in_docs() -> None:
    """A merge left `<<<<<<<`/`=======`/`>>>>>>>` lines in errors.md once; they render as text."""
    bad = [
        f"{p.name}:{i}"
        for p in sorted(DOCS.glob("*.md"))
        for i, line in enumerate(_read(p).splitlines(), start=1)
        if re.match(r"^(<{7}|={7}|>{7})( |$)", line)
    ]
    assert not bad, bad


def test_no_internal_work_labels_in_docs() -> None:
    """Past work is cited by commit or described, never by an internal label ("Stop 21's build",
    "(stop 24)") that no reader can look up.  `stops 1.6 m from` is a walk, not a label."""
    label = re.compile(r"\b[Ss]tops? \d+\b(?!\.\d)(?!\s*(?:m|cm|mm|s|deg)\b)")
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    bad = [
        f"{p.relative_to(ROOT)}:{i}: {m.group(0)}"
        for p in pages
        for i, line in enumerate(_read(p).splitlines(), start=1)
        for m in label.finditer(line)
    ]
    assert not bad, "cite the commit (git log --grep) or say what changed:\n" + "\n".join(bad)
