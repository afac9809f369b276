"""Triggers as units (issue 29): a trigger kind is one compiler unit (`wac.compiler.triggers`: its
clauses, lowering and errors, rubric words, plan kind) and one runtime rule (`wac.runtime.triggers`,
`@fires`); everything else reads their properties or the bundle's `TriggerKind` properties."""

from __future__ import annotations

import ast
import pathlib

from wac.bundle import model as B
from wac.compiler import triggers as TR
from wac.runtime import triggers as RT
from wac.taxonomy.registry import PLAN_KINDS, TRIGGER_CLASSES

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_kind_has_a_compiler_unit_and_a_runtime_rule():
    kinds = {k.value for k in B.TriggerKind}
    assert set(TR.UNITS) == kinds - {"always"}
    assert {k.value for k in RT.FIRES} == kinds
    assert {u.trigger_class for u in TR.UNITS.values()} | {"static"} == set(TRIGGER_CLASSES)
    assert {u.plan for u in TR.UNITS.values()} - {None} <= set(PLAN_KINDS)


def test_the_syntax_tables_are_views_of_the_units():
    assert list(TR.TRIGGERS) == list(TR.UNITS)
    assert TR.LEADING_TRIGGERS == {
        "on_revisit": "revisit",
        "on_look_away": "look_away",
        "on_contact": "contact",
        "on_interact": "interact",
    }
    assert TR.TRIGGER_ARG == {
        "after": "duration",
        "every": "duration",
        "beyond": "length",
        "within": "length",
    }


def test_rubric_words_come_from_the_unit():
    trig = B.new_trigger(kind=B.TriggerKind.leave, enter_m=4.0, exit_m=9.0)
    assert TR.trigger_phrase(trig) == "after the agent leaves the area (beyond 9 m) and returns"
    assert TR.trigger_action(trig) == "walk more than 9 m away and return"
    assert TR.trigger_phrase(B.new_trigger()) == ""


def _kind_lists(path: pathlib.Path) -> list[tuple[int, list[str]]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.Set | ast.List):
            kinds = [
                e.attr
                for e in node.elts
                if isinstance(e, ast.Attribute)
                and (
                    getattr(e.value, "id", None) == "TriggerKind"
                    or getattr(e.value, "attr", None) == "TriggerKind"
                )
            ]
            if len(kinds) >= 2:
                out.append((node.lineno, kinds))
    return out


def test_no_module_keeps_its_own_list_of_trigger_kinds():
    """A list of kinds (`kind in (beyond, within)`) silently misses a new kind with the same
    behaviour; modules read `TriggerKind.unseen`, `.by_distance`, `.level`, … instead (their one
    definition is bundle/model.py)."""
    found = []
    for folder in ("compiler", "runtime", "validation", "detectors", "audit", "review", "human", "lsp"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            found += [f"{path.relative_to(ROOT)}:{line} {kinds}" for line, kinds in _kind_lists(path)]
    assert not found, found


def test_the_plan_makes_a_trigger_fire_the_way_its_unit_says():
    """A revisit plan turns away and waits as long as the trigger needs (its `away`, an `after`'s
    time); a leave walks away and back instead, needs room for it, and is armed by distance alone."""
    at = TR.Away(None, (0.0, 0.0), 90.0, (1.0, 1.0, 2.0, 2.0), 1.0, "crate")

    def waited(steps):
        return sum(s.args["seconds"] for s in steps if s.action == "wait")

    after = TR.UNITS["after"].away(B.new_trigger(kind=B.TriggerKind.after, after_s=6.0), at)
    assert [s.action for s in after][0] == "turn" and after[-1].action == "mark" and waited(after) == 6.5
    revisit = TR.UNITS["revisit"].away(B.new_trigger(kind=B.TriggerKind.revisit, away_s=3.0), at)
    assert waited(revisit) == 3.5 and "looking away and back" in revisit[-1].caption
    assert TR.UNITS["look_away"].away is None  # the plan's default: turn away for 2 s
    leave = TR.UNITS["leave"]
    assert leave.away is not None and leave.room is not None and not leave.arms_by_sight
    assert all(u.arms_by_sight for k, u in TR.UNITS.items() if k != "leave")
