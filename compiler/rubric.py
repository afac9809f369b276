"""Rubric generation: the withheld evaluation rubric, from the taxonomy's templates.

Each entry follows the paper's form (B.2, C.4): Target, Expected behaviour, Inspection
condition, plus what the offline keyword judge matches (object names, defect terms).
"""

from __future__ import annotations

import string

from wac.bundle import model as B
from wac.compiler.anomalies import Lowered
from wac.compiler.operators import trigger_action, trigger_phrase
from wac.taxonomy.registry import registry


class _Words(dict):
    def __missing__(self, key: str) -> str:
        return ""


def _quantity(spec, name: str, value) -> str:
    p = spec.param(name)
    unit = {"length": " m", "angle": " deg", "duration": " s", "speed": " m/s", "mass": " kg"}.get(
        p.type if p else "", ""
    )
    if isinstance(value, float):
        return f"{value:g}{unit}"
    if isinstance(value, tuple) and len(value) in (2, 3) and all(isinstance(v, float) for v in value):
        return "(" + ", ".join(f"{v:g}" for v in value) + ") m"
    return str(value)


SHAPES = frozenset({"box", "cylinder", "sphere", "capsule", "cone", "wedge", "mesh"})


def _plain_names(o: B.SceneObject) -> tuple[str, ...]:
    """What an observer may also call it: the head noun of its name ("red car" -> "car") and the
    prefab it is built from ("car"), which is what it looks like whatever the author named it."""
    words = o.name.lower().split()
    out = []
    if len(words) > 1 and len(words[-1]) >= 3 and "of" not in words:
        out.append(words[-1])
    if o.prefab and o.prefab not in SHAPES:
        out.append(o.prefab.replace("_", " "))
    return tuple(out)


def entry(low: Lowered, objects: dict[str, B.SceneObject], anchor: bool = True) -> B.RubricEntry:
    reg = registry()
    cat = reg.category(low.category)
    focus = low.focus
    names = []
    for tid in low.targets:
        o = objects.get(tid) or next((n for n in low.new_objects if n.id == tid), None)
        if o is not None:
            names.extend([o.name, *o.synonyms, *_plain_names(o)])
    words = _Words({k: _quantity(low.spec, k, v) for k, v in low.params.items()})
    words.update(low.words)
    if focus is not None:
        words["name"] = focus.name
    words["names"] = ", ".join(dict.fromkeys(objects[t].name for t in low.targets if t in objects))
    dynamic_trigger = low.trigger.kind not in (B.TriggerKind.always,)
    if dynamic_trigger:
        words["trigger_words"] = " " + trigger_phrase(low.trigger)
        words["trigger_words_bare"] = trigger_phrase(low.trigger)
        words["expected_trigger_words"] = " whatever the agent does"
        words["inspection_trigger_words"] = ", " + trigger_action(low.trigger)
    text = {
        k: string.Formatter().vformat(low.spec.template(k), (), words).replace("  ", " ").strip()
        for k in ("target", "expected", "inspection")
    }
    terms = tuple(dict.fromkeys(low.spec.defect_terms + cat.defect_terms))
    return B.RubricEntry(
        target=text["target"],
        expected=text["expected"],
        inspection=text["inspection"],
        category=cat.id.value,
        category_name=cat.name,
        family=cat.family.value,
        object_names=tuple(dict.fromkeys(n for n in names if n)),
        defect_terms=terms,
        dynamic=cat.dynamic or dynamic_trigger,
        anchor=anchor,
    )


def markdown(rubric: B.Rubric) -> str:
    lines = [f"# Evaluation rubric: {rubric.task_id}", "", "Withheld from the auditor.", ""]
    for i, e in enumerate(rubric.entries, 1):
        if len(rubric.entries) > 1:
            lines += [f"## Anomaly {i}{' (anchor)' if e.anchor else ''}", ""]
        lines += [
            f"**Category.** {e.category_name} ({e.family.replace('_', ' ')})",
            "",
            f"**Target.** {e.target}",
            "",
            f"**Expected behaviour.** {e.expected}",
            "",
            f"**Inspection condition.** {e.inspection}",
            "",
            f"**Object names.** {', '.join(e.object_names)}",
            "",
            f"**Dynamic.** {'yes: the report must describe the change and its condition' if e.dynamic else 'no'}",
            "",
        ]
    return "\n".join(lines)
