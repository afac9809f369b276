"""An operator's spec (taxonomy/operators.yaml) and its unit cannot silently drift apart (issue 29).

Each case is a mistake made while adding an operator the way docs/internals.md describes it: a
misspelt parameter type, key, trigger class or rubric placeholder, or a unit whose lowering
returns a word it does not declare.  Each must fail where it is made, naming the operator, never
render as an empty string in a rubric or crash a build with exit 3.
"""

from __future__ import annotations

import copy

import pytest

from wac.bundle import model as B
from wac.compiler import syntax as S
from wac.compiler.diagnostics import Collector
from wac.compiler.operators import UNITS, undeclared_words
from wac.compiler.operators.base import Lowering, Unit
from wac.compiler.parse import decode, parse
from wac.compiler.values import Evaluator
from wac.errors import TaxonomyError
from wac.taxonomy import registry as R

# a new operator written as docs/internals.md suggests
DARKEN = {
    "category": "material",
    "operand": "object",
    "triggers": ["static"],
    "requires": [],
    "params": {"by": {"type": "fraction", "min": 0.1, "max": 0.9, "required": True, "doc": "how much"}},
    "summary": "An object turns darker.",
    "rubric": {
        "target": "The {name} is darker than matching objects by {by}.",
        "expected": "It should look like matching objects.",
        "inspection": "Compare the {name} with matching objects.",
    },
}


def _with(change) -> dict:
    spec = copy.deepcopy(DARKEN)
    change(spec)
    return spec


def test_the_example_operator_loads():
    op = R._operator("darken", DARKEN)
    assert op.param("by").type == "fraction" and undeclared_words(op, ()) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda s: s["params"]["by"].update(type="fractoin"),
            "operators.yaml: darken: parameter `by`: unknown type 'fractoin'; did you mean 'fraction'?",
        ),
        (
            lambda s: s["params"]["by"].update(requried=True),
            "operators.yaml: darken: parameter `by`: unknown key 'requried'; did you mean 'required'?",
        ),
        (
            lambda s: s["params"]["by"].update(type="color"),
            "operators.yaml: darken: parameter `by`: a color takes no `min`/`max`",
        ),
        (
            lambda s: s.update(triggers=["static", "temporl"]),
            "operators.yaml: darken: unknown trigger class 'temporl'; did you mean 'temporal'?",
        ),
        (
            lambda s: s.update(category="materail"),
            "operators.yaml: darken: unknown category 'materail'; did you mean 'material'?",
        ),
        (
            lambda s: s.update(sumary="typo"),
            "operators.yaml: darken: unknown key 'sumary'; did you mean 'summary'?",
        ),
    ],
)
def test_a_misspelt_spec_fails_at_load_naming_the_operator(change, message):
    with pytest.raises(TaxonomyError) as err:
        R._operator("darken", _with(change))
    assert str(err.value).startswith(message)


def test_a_misspelt_rubric_placeholder_is_named_with_its_fix():
    spec = R._operator("darken", _with(lambda s: s["rubric"].update(target="The {nmae} turns darker.")))
    assert undeclared_words(spec, ()) == ["{nmae} in `target` (did you mean {name}?)"]
    # a word the unit declares fills it
    spec = R._operator("darken", _with(lambda s: s["rubric"].update(target="The {name} is {shade_words}.")))
    assert undeclared_words(spec, ()) == ["{shade_words} in `target`"]
    assert undeclared_words(spec, ("shade_words",)) == []


def test_every_shipped_spec_is_filled_by_its_unit():
    for op in R.registry().operators:
        assert undeclared_words(op, UNITS[op.name].words) == [], op.name


def test_a_unit_returning_a_word_it_does_not_declare_fails_naming_it():
    effect = B.SetSolid(target="crate_1", solid=False)
    unit = Unit("darken", lambda cx: Lowering((effect,), {"shade": "dark"}), words=("shade_words",))
    with pytest.raises(
        TaxonomyError, match=r"operator unit darken: .*\['shade'\].*declares \['shade_words'\]"
    ):
        unit.run(None)


@pytest.mark.parametrize("name", sorted(R.PARAM_TYPES))
def test_every_parameter_type_is_a_value_type_the_compiler_evaluates(name):
    """The hint of E606 (`e.g. by 0.4 m`) is the type's example: it must evaluate cleanly."""
    kind = R.PARAM_TYPES[name]
    example = kind.example or "north"
    source = decode(f"probe {example}\n".encode(), "probe.wa", None)
    word = parse(source).statements[0].words[1]
    diag = Collector()
    choices = ("north", "south") if name == "enum" else ()
    value = Evaluator(diag).value(word, name, "`probe`", choices=choices)
    assert not diag.items and value is not None, (name, example, diag.items)
    assert isinstance(word, S.Word.__args__)
