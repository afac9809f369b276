"""docs/language.md §11 is generated from the operator spec (`wac.compiler.operator_docs`), so a
parameter, category, trigger or requirement that changes in `taxonomy/operators.yaml` or the
compiler's tables cannot leave the language reference behind (issue 29)."""

from __future__ import annotations

import re

from wac.compiler import operator_docs as D
from wac.taxonomy.registry import Param, registry


def test_the_operator_reference_is_the_generated_one():
    text = D.DOC_PATH.read_text(encoding="utf-8")
    a, b = text.index(D.BEGIN), text.index(D.END) + len(D.END)
    assert text[a:b] == D.render(), "regenerate it: python -m wac.compiler.operator_docs"


def test_every_operator_has_a_section_and_an_example_from_a_shipped_file():
    block = D.render()
    found = D.examples()
    for op in registry().operators:
        assert f"#### `{op.name}`" in block
        assert op.name in found or op.example, (
            f"{op.name}: no shipped task uses it and the spec has no example"
        )
        if op.name in found:
            line, rel = found[op.name]
            assert line.split()[:2] == ["anomaly", op.name]
            assert line in " ".join((D.ROOT / rel).read_text(encoding="utf-8").split())
        else:
            assert op.example.split()[:2] == ["anomaly", op.name]


def test_a_parameter_row_keeps_every_word_of_its_doc():
    """A doc with commas and a `|` stays whole (the hand-made table had cut `(x, y, z)` at a comma)."""
    p = Param("by", "scale", True, None, 0.1, 10.0, (), "a factor or per-axis (x, y, z) factors | or one")
    row = D.param_row(p)
    assert row == (
        "  | `by` | factor or (fx, fy, fz), 0.1–10, **required** | a factor or per-axis (x, y, z) factors \\| or one |"
    )
    assert len(re.split(r"(?<!\\)\|", row)) == 5


def test_trigger_forms_follow_the_compilers_trigger_table():
    assert D.trigger_forms("static") == "no trigger"
    assert D.trigger_forms("contact") == "`when contact` / `on_contact`"
    assert D.trigger_forms("distance") == "`when beyond`, `when within`"
