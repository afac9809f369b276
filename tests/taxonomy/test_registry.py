"""The taxonomy registry, its demonstrations and the generated docs/taxonomy.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from wac.compiler import syntax as S
from wac.compiler.parse import decode, parse
from wac.compiler.triggers import LEADING_TRIGGERS, TRIGGER_CLASS
from wac.taxonomy.docs import (
    REFERENCE_BUG_TYPES,
    format_table,
    reference_coverage,
    render_markdown,
    uncovered_reference_types,
)
from wac.taxonomy.registry import Category, Family, registry

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "taxonomy" / "examples"
DOC = ROOT / "docs" / "taxonomy.md"

CODES = {
    "missing_support": "SP-MS",
    "intersection": "SP-IO",
    "scale": "SP-SC",
    "missing_collision": "IP-MC",
    "unexpected_collision": "IP-UC",
    "abnormal_trajectory": "IP-AT",
    "visibility": "SpC-V",
    "view_dependent": "SpC-VD",
    "shadow_lighting": "SpC-SL",
    "material": "SpC-M",
    "existence": "TC-E",
    "static_attribute": "TC-SA",
    "operational_state": "TC-OS",
    "improper_configuration": "SeC-IC",
    "historical": "SeC-HI",
}
NAMES = {
    "missing_support": "Missing support / floating",
    "intersection": "Intersection / overlap / structural misalignment",
    "scale": "Scale / proportion mismatch",
    "missing_collision": "Missing collision",
    "unexpected_collision": "Unexpected collision",
    "abnormal_trajectory": "Abnormal object trajectories after interaction",
    "visibility": "Visibility anomalies",
    "view_dependent": "View / distance-dependent appearance",
    "shadow_lighting": "Shadow / lighting anomalies",
    "material": "Material anomalies",
    "existence": "Existence changes",
    "static_attribute": "Static attribute changes",
    "operational_state": "Operational state changes",
    "improper_configuration": "Improper configuration",
    "historical": "Historical incompatibility",
}
EVIDENCE = {"single_view", "several_views", "interaction", "revisit", "time"}
PLANS = {
    "view",
    "view_side",
    "walk_through",
    "walk_along",
    "push",
    "revisit",
    "watch",
    "near_far",
    "occluded_view",
    "interact",
}
LEADING = set(LEADING_TRIGGERS)

REG = registry()
CATEGORY_IDS = [c.id for c in REG.categories]


def test_fifteen_categories_in_five_families():
    assert len(REG.families) == 5
    assert {f.id for f in REG.families} == set(Family)
    assert len(REG.categories) == 15
    assert [c.id for c in REG.categories] == list(Category)
    for c in REG.categories:
        assert c.code == CODES[c.id]
        assert c.name == NAMES[c.id]
        assert c.hint
        assert c.definition and "TODO" not in c.definition
        assert c.evidence and set(c.evidence) <= EVIDENCE
        assert c.plan in PLANS
        assert c.defect_terms
        assert c.demo.figures and c.demo.explanation
    assert len({c.code for c in REG.categories}) == 15


def test_family_order_groups_categories():
    fams = [c.family for c in REG.categories]
    assert fams == sorted(fams, key=[f.id for f in REG.families].index)


@pytest.mark.parametrize("cid", CATEGORY_IDS)
def test_every_category_has_an_operator(cid):
    assert REG.operators_for(cid), f"no operator implants {cid}"


def test_every_reference_bug_type_is_covered():
    assert uncovered_reference_types(REG) == ()
    cover = reference_coverage(REG)
    oos = dict(REG.out_of_scope)
    for ref in REFERENCE_BUG_TYPES:
        assert ref in cover or ref in oos, ref
        assert not (ref in cover and ref in oos), f"{ref} is both covered and out of scope"
    assert set(oos) == {"portal_misroute"}
    assert all(reason.strip() for reason in oos.values())


def test_operator_references_are_known_bug_types():
    unknown = set(reference_coverage(REG)) - set(REFERENCE_BUG_TYPES)
    assert not unknown, f"operators.yaml names unknown reference bug types: {sorted(unknown)}"


def test_docs_up_to_date():
    assert DOC.exists(), "docs/taxonomy.md is missing; run `python -m wac.taxonomy.docs`"
    assert DOC.read_text(encoding="utf-8") == render_markdown(REG) + "\n", (
        "docs/taxonomy.md is stale; regenerate with `python -m wac.taxonomy.docs`"
    )


def test_markdown_mentions_everything():
    md = render_markdown(REG)
    for c in REG.categories:
        assert f"### {c.code} — {c.name}" in md
    for op in REG.operators:
        assert f"`{op.name}`" in md
    for ref in REFERENCE_BUG_TYPES:
        assert f"| `{ref}` |" in md
    assert "**not covered**" not in md


def test_format_table():
    table = format_table(REG)
    for c in REG.categories:
        line = next(ln for ln in table.splitlines() if f" {c.code} " in ln)
        assert c.name in line
        for op in REG.operators_for(c.id):
            assert op.name in line


def _anomalies(path: Path) -> tuple[list[S.Statement], list[S.Statement]]:
    tree = parse(decode(path.read_bytes(), str(path), path))
    tasks = [s for s in tree.statements if isinstance(s.head, S.Name) and s.head.text == "task"]
    return tasks, [
        st
        for t in tasks
        for st in (t.block or ())
        if isinstance(st.head, S.Name) and st.head.text == "anomaly"
    ]


@pytest.mark.parametrize("cid", CATEGORY_IDS)
def test_example_exists_and_demonstrates_its_category(cid):
    c = REG.category(cid)
    assert c.demo.task == f"{cid}.wa"
    path = EXAMPLES / c.demo.task
    assert path.exists(), path
    tasks, anomalies = _anomalies(path)
    assert len(tasks) == 1
    body = tasks[0].block or ()
    flags = [st.words[1] for st in body if isinstance(st.head, S.Name) and st.head.text == "example"]
    assert [f.text for f in flags] == ["yes"], "a demonstration task must say `example yes`"
    assert len(anomalies) == 1
    words = [w.text for w in anomalies[0].words[1:] if isinstance(w, S.Name)]
    op_name = words[1] if words[0] in LEADING else words[0]
    op = REG.operator(op_name)
    assert op is not None, op_name
    if words[0] in LEADING:
        trigger = LEADING_TRIGGERS[words[0]]
    elif "when" in words:
        trigger = words[words.index("when") + 1]
    else:
        trigger = None
    klass = TRIGGER_CLASS[trigger] if trigger else "static"
    assert op.category_for(klass) == cid, f"{op_name} with a {klass} trigger does not implant {cid}"


def test_no_stray_examples():
    names = {p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*.wa")}
    assert names == {d.task for c in REG.categories for d in c.demos}
    assert all(c.demos[-1] is c.demo for c in REG.categories)  # the principal demonstration comes last


def test_the_incontext_index_is_checked_when_the_registry_loads(monkeypatch):
    """A demonstration in taxonomy/examples/incontext/index.yaml that names no category, no file or
    not the task its file declares fails when the registry loads, not when an example is shown."""
    from wac.taxonomy import registry as reg_mod

    real = reg_mod._load_yaml
    entry = {
        "id": "scale_plant_demo",
        "task": "incontext/scale_plant.wa",
        "figures": ["f"],
        "explanation": "e",
    }
    cases = [
        ({"no_such_category": [entry]}, "unknown category"),
        ({"scale": [{**entry, "task": "incontext/missing.wa"}]}, "existing `task` file"),
        ({"scale": [{**entry, "id": "scale_demo_other"}]}, "declares no task"),
    ]
    for index, message in cases:
        monkeypatch.setattr(
            reg_mod, "_load_yaml", lambda name, i=index: i if name.endswith("index.yaml") else real(name)
        )
        with pytest.raises(ValueError, match=message):
            reg_mod._alternatives({str(c.id) for c in REG.categories})


def test_examples_compile_cleanly():
    pipeline = pytest.importorskip("wac.compiler.pipeline")
    result = pipeline.compile_project([EXAMPLES], ROOT, out=None, jobs=1)
    assert not result.diagnostics, "\n".join(str(d) for d in result.diagnostics)
    assert result.compiled == sum(len(c.demos) for c in REG.categories)
