"""Rubric generation: the withheld evaluation rubric, from the taxonomy's templates.

Each entry follows the paper's form (B.2, C.4): Target, Expected behaviour, Inspection
condition, plus what the offline keyword judge matches (object names, defect terms).
"""

from __future__ import annotations

import string

from wac.bundle import model as B
from wac.compiler.anomalies import Lowered
from wac.compiler.operators import trigger_action, trigger_phrase
from wac.compiler.operators.spatial import color_name
from wac.errors import TaxonomyError
from wac.taxonomy.registry import PARAM_TYPES, RUBRIC_WORDS, registry


class _Words(dict):
    """The words a rubric template is filled with; a placeholder none of them fills is a mistake in
    taxonomy/operators.yaml or in the operator's unit, reported as such, never rendered as ""."""

    def __init__(self, operator: str, words: dict) -> None:
        super().__init__(words)
        self.operator = operator

    def __missing__(self, key: str) -> str:
        raise TaxonomyError(
            f"operators.yaml: {self.operator}: a rubric template names {{{key}}}, which neither the "
            f"operator's parameters nor its unit's words fill (it has: {', '.join(sorted(self))})"
        )


def _quantity(spec, name: str, value, objects: dict[str, B.SceneObject]) -> str:
    """A parameter's value in the rubric's words: a number with its unit, a point or offset in metres,
    a colour by its name, an object by its display name."""
    p = spec.param(name)
    kind = p.type if p else ""
    unit = PARAM_TYPES[kind].unit if kind else ""
    if kind == "color" and isinstance(value, tuple):
        return color_name(value)
    if kind == "object" and isinstance(value, str) and value in objects:
        return objects[value].name
    if isinstance(value, float):
        return f"{value:g} {unit}" if unit else f"{value:g}"
    if isinstance(value, tuple) and all(isinstance(v, float) for v in value):
        inner = ", ".join(f"{v:g}" for v in value)
        return f"({inner}) m" if kind in ("vec2", "vec3") else f"({inner})"
    return str(value)


def _fill(template: str | None, words: _Words) -> str | None:
    if template is None:
        return None
    return string.Formatter().vformat(template, (), words).strip()


def _listed(names: list[str]) -> str:
    """English list: "crate", "crate and barrel", "crate, barrel and cart"."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


SHAPES = frozenset({"box", "cylinder", "sphere", "capsule", "cone", "wedge", "mesh"})


# words that place an object rather than say what it is: "wall mid centre" is a wall, not a centre
QUALIFIERS = frozenset(
    "left right centre center middle mid north south east west front rear top bottom upper lower "
    "inner outer near far".split()
)


def _plain_names(o: B.SceneObject) -> tuple[str, ...]:
    """What an observer may also call it: the head noun of its name ("red car" -> "car"; trailing
    words that only place it left out: "wall mid centre" -> "wall") and the prefab it is built from
    ("car"), which is what it looks like whatever the author named it."""
    words = o.name.lower().split()
    core = list(words)
    while len(core) > 1 and (core[-1] in QUALIFIERS or core[-1].isdigit() or len(core[-1]) == 1):
        core.pop()
    out = []
    if len(core) < len(words):
        out.append(" ".join(core))
    if len(core) > 1 and len(core[-1]) >= 3 and "of" not in core:
        out.append(core[-1])
    if o.prefab and o.prefab not in SHAPES:
        out.append(o.prefab.replace("_", " "))
    return tuple(out)


def _involved(low: Lowered, objects: dict[str, B.SceneObject]) -> list[B.SceneObject]:
    """The objects the anomaly is about: its targets (added ones included) and the objects its
    parameters name (what the target is pushed into, put onto)."""
    added = {n.id: n for n in low.new_objects}
    ids = list(low.targets)
    ids += [v for k, v in low.params.items() if (p := low.spec.param(k)) and p.type == "object"]
    out = [objects.get(i) or added.get(i) for i in dict.fromkeys(ids)]
    return [o for o in out if o is not None]


def _words(low: Lowered, objects: dict[str, B.SceneObject]) -> _Words:
    """Every word a template may name: parameters, the focus's name, the targets' names, the
    trigger's words (empty without a trigger, so that "{name}{trigger_words}" reads either way), then
    the unit's own words."""
    words = {k: _quantity(low.spec, k, v, objects) for k, v in low.params.items()}
    if low.focus is not None:
        words["name"] = low.focus.name
    targets = list(dict.fromkeys(objects[t].name for t in low.targets if t in objects))
    if targets:
        words["names"] = _listed(targets)
    triggered = low.trigger.kind != B.TriggerKind.always
    phrase = trigger_phrase(low.trigger) if triggered else ""
    words["trigger_words"] = f" {phrase}" if triggered else ""
    words["trigger_words_bare"] = phrase
    words["expected_trigger_words"] = " whatever the agent does" if triggered else ""
    words["inspection_trigger_words"] = f", {trigger_action(low.trigger)}" if triggered else ""
    assert set(words) - set(low.params) <= set(RUBRIC_WORDS), "RUBRIC_WORDS names every common word"
    words.update({k: str(v) for k, v in low.words.items()})
    return _Words(low.spec.name, words)


def entry(low: Lowered, objects: dict[str, B.SceneObject], anchor: bool = True) -> B.RubricEntry:
    """One rubric entry.  Dynamic exactly when the anomaly is a change that one still image cannot
    show: its operator states a condition (a movement, contact, interaction, viewpoint or time), or a
    trigger produces it; the entry then spells that condition out.  An anomaly of no object (an
    invisible wall, a hole in the ground, the whole scene's lighting) says where it is instead."""
    cat = registry().category(low.category)
    words = _words(low, objects)
    text = {k: _fill(low.spec.template(k), words) for k in ("target", "expected", "inspection")}
    condition = _fill(low.spec.template("condition"), words)
    if condition is None and low.trigger.kind != B.TriggerKind.always:
        condition = f"the change happens {trigger_phrase(low.trigger)}"
    names = [n for o in _involved(low, objects) for n in (o.name, *o.synonyms, *_plain_names(o))]
    names = list(dict.fromkeys(n for n in names if n))
    place = None if names else _fill(low.spec.template("place"), words)
    if not names and not place:
        raise TaxonomyError(
            f"operators.yaml: {low.spec.name}: the anomaly names no object, and the operator has no "
            "`place` template to say where it is"
        )
    terms = tuple(dict.fromkeys(low.spec.defect_terms + cat.defect_terms))
    return B.RubricEntry(
        target=text["target"],
        expected=text["expected"],
        inspection=text["inspection"],
        category=cat.id.value,
        category_name=cat.name,
        family=cat.family.value,
        object_names=tuple(names),
        defect_terms=terms,
        dynamic=condition is not None,
        anchor=anchor,
        condition=condition,
        place=place,
    )


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


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
        ]
        if e.object_names:
            lines += [f"**Object names.** {', '.join(e.object_names)}", ""]
        else:
            lines += ["**Object names.** none: the anomaly is not an object", ""]
            lines += [f"**Where.** {_sentence(e.place or 'the target says where')}", ""]
        if e.dynamic:
            lines += [
                "**Dynamic.** yes: the report must describe the change and the condition that produces it",
                "",
                f"**Condition.** {_sentence(e.condition or 'as the target and inspection condition say')}",
                "",
            ]
        else:
            lines += [
                "**Dynamic.** no: a still view shows the defect; there is no change to describe",
                "",
            ]
    return "\n".join(lines)
