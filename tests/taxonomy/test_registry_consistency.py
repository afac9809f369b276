"""Registry consistency: the names that tie taxonomy, compiler, bundle and runtime together (operator
names, plan kinds, observables, effect kinds) each name something that exists.

Every check is a small function of the tables it compares; each test runs it on the real tables
(nothing missing) and on a copy with one misspelling or omission (the check reports it), so no
assertion here holds by construction alone.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import pathlib
import re
from pathlib import Path
from typing import get_args

import pytest
import yaml
from pydantic import ValidationError

from wac.bundle import model as B
from wac.bundle.schemas import SCHEMAS, render
from wac.compiler import operators, plan, plan_kinds, plan_steps, view_why, views, walk_room
from wac.errors import TaxonomyError
from wac.runtime import effects as fx
from wac.taxonomy import registry as R
from wac.validation import checks, observables, pixelchecks

ROOT = Path(__file__).resolve().parents[2]
OPERATORS_YAML = yaml.safe_load((ROOT / "taxonomy" / "operators.yaml").read_text())


# --- operators: taxonomy/operators.yaml <-> compiler/operators/ (the units) ------------------------


def test_every_operator_has_a_unit_and_every_unit_an_operator():
    names = [o.name for o in R.registry().operators]
    assert operators.unit_mismatch(names, operators.UNITS) == ([], [])
    assert operators.unit_mismatch([*names, "levitate"], operators.UNITS) == (["levitate"], [])
    assert operators.unit_mismatch(names, [*operators.UNITS, "levitate"]) == ([], ["levitate"])


def test_a_missing_unit_fails_at_import(monkeypatch):
    """Importing wac.compiler.operators with a spec that has no unit raises, naming it."""
    import importlib
    import sys

    real = R.registry()
    doctored = dataclasses.replace(
        real, operators=(*real.operators, dataclasses.replace(real.operators[0], name="levitate"))
    )
    monkeypatch.setattr(R, "registry", lambda: doctored)
    saved = {k: v for k, v in sys.modules.items() if k.startswith("wac.compiler.operators")}
    for k in saved:
        del sys.modules[k]
    try:
        with pytest.raises(ImportError, match=r"specs without a unit \['levitate'\]"):
            importlib.import_module("wac.compiler.operators")
    finally:
        for k in [k for k in sys.modules if k.startswith("wac.compiler.operators")]:
            del sys.modules[k]
        sys.modules.update(saved)


def test_a_second_unit_for_one_operator_is_refused():
    with pytest.raises(TypeError, match="two units for operator 'float'"):
        operators.base.operator("float")(lambda cx: None)


def test_a_misspelt_unit_plan_kind_fails_when_the_unit_registers():
    with pytest.raises(ValueError, match=r"operator unit levitate: unknown self-check plan kind 'view_sid'"):
        operators.base.operator("levitate", plan="view_sid")(lambda cx: None)
    assert "levitate" not in operators.UNITS


def test_units_are_in_the_module_of_their_family():
    reg = R.registry()
    module = {
        "static_physics": "static_physics",
        "interactive_physics": "interactive_physics",
        "spatial_consistency": "spatial",
        "temporal_consistency": "temporal",
        "semantic_consistency": "semantic",
    }
    for name, u in operators.UNITS.items():
        family = reg.category(reg.operator(name).categories[0][1]).family
        assert u.module == f"wac.compiler.operators.{module[family]}", name


def test_operator_requirements_have_checks():
    used = {r for o in R.registry().operators for r in o.requires}
    assert used <= set(operators.REQUIRES), f"requires without a check: {used - set(operators.REQUIRES)}"
    assert not {*used, "hollow"} <= set(operators.REQUIRES)


def test_rubric_words_cannot_carry_side_channels():
    """What the plan needs travels in typed Hints; an `_underscore` word is refused, not filtered."""
    with pytest.raises(ValueError, match=r"rubric words \['_focus_point'\] start with '_'"):
        operators.Lowering((), {"_focus_point": (0.0, 0.0, 0.0)})
    assert operators.Lowering((), {"at_words": "(1, 2)"}).hints == operators.Hints()


def operator_names_in(source: str, names) -> list[str]:
    """Operator names written as string constants in `source`, other than plan-step actions."""
    tree = ast.parse(source)
    actions = {
        kw.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for kw in node.keywords
        if kw.arg == "action" and isinstance(kw.value, ast.Constant)
    }
    consts = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return sorted((consts & set(names)) - actions)


def test_plan_hints_live_in_the_units_not_in_plan_tables():
    """plan.py names no operator: where to aim is the unit's (`aim`), e.g. the shadow operators."""
    assert {n for n, u in operators.UNITS.items() if u.aim == "ground"} == {
        "remove_shadow",
        "displace_shadow",
    }
    names = {o.name for o in R.registry().operators}
    assert operator_names_in(inspect.getsource(plan), names) == []
    assert operator_names_in('GROUND_AIM = {"remove_shadow"}', names) == ["remove_shadow"]


def test_the_registry_reads_operator_hints_from_the_spec():
    """`if_invisible:` and `observable:` are optional fields of an operator's spec."""
    spec = R._operator(
        "levitate", {**OPERATORS_YAML["float"], "if_invisible": "raise it  more", "observable": "size_ratio"}
    )
    assert (spec.if_invisible, spec.observable) == ("raise it more", "size_ratio")
    plain = R._operator("levitate", {k: v for k, v in OPERATORS_YAML["float"].items() if k != "if_invisible"})
    assert (plain.if_invisible, plain.observable) == ("", None)
    assert (
        R.registry().operator("float").if_invisible
        == "raise it more, or pick an object the plan sees from nearer"
    )


def test_an_operator_observable_overrides_its_category():
    reg = R.registry()
    assert reg.observable("float", "missing_support") == "support_gap"
    doctored = dataclasses.replace(
        reg,
        operators=tuple(
            dataclasses.replace(o, observable="size_ratio") if o.name == "float" else o for o in reg.operators
        ),
    )
    assert doctored.observable("float", "missing_support") == "size_ratio"
    assert doctored.observable("sink", "intersection") == "penetration_depth"


def test_invisible_change_advice_is_the_operators_spec_text(monkeypatch):
    """pixelchecks words its advice from the spec's `if_invisible:`, a generic text without one."""
    reg = R.registry()
    assert pixelchecks.if_invisible("rotate") == reg.operator("rotate").if_invisible
    assert reg.operator("sink").if_invisible in pixelchecks.if_invisible("sink")
    assert pixelchecks.if_invisible("glow") == pixelchecks.DEFAULT_IF_INVISIBLE  # no `if_invisible:`
    doctored = dataclasses.replace(
        reg,
        operators=tuple(
            dataclasses.replace(o, if_invisible="tilt it by 45 deg") if o.name == "tilt" else o
            for o in reg.operators
        ),
    )
    monkeypatch.setattr(R, "registry", lambda: doctored)
    assert pixelchecks.if_invisible("tilt") == "tilt it by 45 deg"


# --- self-check plan kinds: taxonomy <-> compiler/plan.py -----------------------------------------


def test_registry_plan_kinds_are_known():
    reg = R.registry()
    used = {c.plan for c in reg.categories} | {u.plan for u in operators.UNITS.values() if u.plan}
    assert used <= set(R.PLAN_KINDS)


def test_a_misspelt_category_plan_kind_fails_too():
    with pytest.raises(ValueError, match="categories.yaml: scale: unknown self-check plan kind 'veiw'"):
        R.check_plan_kind("categories.yaml: scale", "veiw")


def test_every_plan_kind_is_a_unit_with_distances_and_exposing_actions():
    assert set(plan_kinds.KINDS) == set(R.PLAN_KINDS)
    for name, kind in plan_kinds.KINDS.items():
        assert kind.name == name and 0 < kind.near_m < kind.far_m and callable(kind.expose)
    with pytest.raises(KeyError):
        plan_kinds.KINDS["zigzag"]  # a kind that passed check_plan_kind is always a unit: no fallback


def test_no_planner_module_tests_a_plan_kind_by_name():
    """The planner reads a kind's properties; a `kind == "walk_through"` in it would silently miss a
    new kind with the same needs (issue 29)."""
    for mod in (plan, walk_room, views, view_why, plan_steps):
        for node in ast.walk(ast.parse(inspect.getsource(mod))):
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "kind":
                names = [
                    c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and c.value in R.PLAN_KINDS
                ]
                assert not names, f"{mod.__name__} tests the plan kind {names} by name"


# --- observables: taxonomy (categories.yaml, operators.yaml, registry.OBSERVABLES) <-> judges -------


def test_every_observable_named_in_the_taxonomy_is_declared_and_judged():
    reg = R.registry()
    named = {c.observable for c in reg.categories} | {o.observable for o in reg.operators if o.observable}
    assert named <= set(R.OBSERVABLES)
    # the judges register exactly the declared observables (importing observables checks it)
    assert set(observables.OBSERVABLES) == set(R.OBSERVABLES)
    with pytest.raises(KeyError, match="unknown observable 'suport_gap'"):
        observables.observable("suport_gap")


def test_a_misspelt_observable_in_the_taxonomy_is_an_error_naming_where():
    with pytest.raises(
        TaxonomyError, match=r"categories.yaml: floating: .*'suport_gap'; did you mean 'support_gap'"
    ):
        R.check_observable("categories.yaml: floating", "suport_gap")
    spec = dict(R._load_yaml("operators.yaml")["float"], observable="era_mismach")
    with pytest.raises(
        TaxonomyError, match=r"operators.yaml: float: .*'era_mismach'; did you mean 'era_mismatch'"
    ):
        R._operator("float", spec)


def test_a_second_judge_for_one_observable_fails_at_import():
    from wac.validation.readings import observes

    with pytest.raises(TypeError, match="two judges registered for observable 'support_gap'"):
        observes("support_gap")(lambda run, task: None)


def test_the_planners_observable_traits_are_the_judges_walks():
    # the planner asks for room beyond the target only for observables read from a walk through it
    # (`walked`); each of them is judged from the walk alone too, the world-alone stage's half
    walked = {n for n, o in R.OBSERVABLES.items() if o.walked}
    assert walked == {"displacement_through", "blocked_distance"}
    assert all(observables.observable(n).alone is not None for n in walked)


# --- effects: bundle/model.py <-> runtime/effects.py <-> schemas/ <-> docs/bundle.md -----------------


def test_effect_variants_are_the_union_and_their_kinds_unique():
    members = get_args(get_args(B.Effect)[0])
    assert set(members) == set(B.EFFECT_TYPES) and len(B.EFFECT_KINDS) == len(members)
    for kind, variant in B.EFFECT_KINDS.items():
        assert get_args(variant.model_fields["kind"].annotation) == (kind,)


def test_every_effect_kind_has_an_apply():
    assert fx.unapplied() == []
    assert set(fx.APPLY) == set(B.EFFECT_TYPES)
    assert fx.unapplied({k: v for k, v in fx.APPLY.items() if k is not B.SetPose}) == ["set_pose"]


def test_a_second_apply_for_one_kind_is_refused():
    with pytest.raises(TypeError, match="two apply functions for effect kind 'set_pose'"):
        fx.applies(B.SetPose)(lambda eff, ctx: lambda: None)


def schema_effect_kinds(schema: dict) -> set[str]:
    return set(schema["$defs"]["Anomaly"]["properties"]["effects"]["items"]["discriminator"]["mapping"])


def test_every_effect_kind_has_a_schema_entry_with_its_fields():
    on_disk = json.loads((ROOT / "schemas" / "task.schema.json").read_text())
    assert on_disk == json.loads(render(SCHEMAS["task.schema.json"]))
    assert schema_effect_kinds(on_disk) == set(B.EFFECT_KINDS)
    mapping = on_disk["$defs"]["Anomaly"]["properties"]["effects"]["items"]["discriminator"]["mapping"]
    for kind, variant in B.EFFECT_KINDS.items():
        entry = on_disk["$defs"][mapping[kind].rsplit("/", 1)[1]]
        assert entry["properties"]["kind"]["const"] == kind and "kind" in entry["required"]
        assert set(entry["properties"]) == set(variant.model_fields)
    doctored = json.loads(json.dumps(on_disk))
    del doctored["$defs"]["Anomaly"]["properties"]["effects"]["items"]["discriminator"]["mapping"]["add_hole"]
    assert schema_effect_kinds(doctored) != set(B.EFFECT_KINDS)


def documented_effects(markdown: str) -> dict[str, set[str]]:
    """kind -> fields of the effects table in docs/bundle.md (§5)."""
    section = markdown.split("## 5. Effects", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in section.splitlines():
        m = re.match(r"\| `(\w+)` \| ([^|]*) \|", line)
        if m:
            out[m.group(1)] = set(re.findall(r"`(\w+)`", m.group(2)))
    return out


def test_every_effect_kind_is_documented_with_its_fields():
    doc = documented_effects((ROOT / "docs" / "bundle.md").read_text())
    fields = {kind: set(v.model_fields) - {"kind"} for kind, v in B.EFFECT_KINDS.items()}
    assert doc == fields
    assert documented_effects("## 5. Effects\n\n| `set_pose` | `target` | x |\n") != fields


def unknown_kinds(*tables: set[str]) -> list[str]:
    return sorted(set().union(*tables) - set(B.EFFECT_KINDS))


def test_effect_kind_tables_name_real_kinds():
    from wac.bundle import coverage

    tables = (checks.CONTINUOUS, checks.PHYSICAL, pixelchecks.LIGHT_EFFECTS, coverage.SCENE_WIDE)
    assert unknown_kinds(*tables) == []
    assert unknown_kinds(*tables, {"set_flickr"}) == ["set_flickr"]


@pytest.mark.parametrize(
    ("effect", "message"),
    [
        ({"kind": "set_pos", "target": "crate"}, "does not match any of the expected tags"),
        ({"kind": "set_pose", "target": "crate", "material": "red"}, "Extra inputs are not permitted"),
        ({"kind": "set_render", "target": "crate", "render": "wireframe"}, "set_render.render"),
        ({"kind": "add_hole", "position": [0, 0, 0]}, "add_hole.size"),
    ],
)
def test_a_bad_effect_is_rejected_when_the_bundle_is_read(effect, message):
    anomaly = {
        "operator": "float",
        "category": "missing_support",
        "family": "static_physics",
        "targets": ["crate"],
        "params": {},
        "trigger": {},
        "effects": [effect],
    }
    with pytest.raises(ValidationError, match=message):
        B.Anomaly.model_validate(anomaly)


def test_no_judge_tests_an_operator_by_name():
    """A judge reads its observable and the bundle's effects, never the operator that made them: a new
    operator with the same observable is judged alike (issue 29; judge_era once special-cased
    `extra_asset`)."""
    root = pathlib.Path(__file__).resolve().parents[2]
    names = {o.name for o in R.registry().operators}
    found = []
    for path in sorted((root / "validation").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                consts = [c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and c.value in names]
                attrs = [a.attr for a in ast.walk(node) if isinstance(a, ast.Attribute)]
                if consts and "operator" in attrs:
                    found.append(f"{path.name}:{node.lineno} {consts}")
    assert not found, found
