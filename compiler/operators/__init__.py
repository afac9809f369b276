"""Anomaly operators as units: one registered function per operator, grouped by taxonomy family.

Each operator's spec (parameters, triggers, targets, rubric templates) is its entry in
`taxonomy/operators.yaml` (layer 1, read by docs, derive and audit without the compiler); its unit
here (layer 2) holds the rest: applicability checks, lowering to effects, plan hints.  Importing
this package fails when a spec has no unit or a unit no spec, so a misspelt name never reaches a
build.  Adding an operator: its spec entry, one `@operator` function in the family module, tests.
"""

from __future__ import annotations

import difflib

from wac.taxonomy.registry import RUBRIC_WORDS, placeholders, registry

from . import interactive_physics, semantic, spatial, static_physics, temporal  # noqa: F401  (registers)
from .base import REQUIRES, UNITS, Context, Hints, Lowering, Unit, trigger_action, trigger_phrase


def unit_mismatch(spec_names, unit_names) -> tuple[list[str], list[str]]:
    """(specs without a unit, units without a spec)."""
    specs, units = set(spec_names), set(unit_names)
    return sorted(specs - units), sorted(units - specs)


_missing, _extra = unit_mismatch((o.name for o in registry().operators), UNITS)
if _missing or _extra:
    raise ImportError(
        f"operator units and taxonomy/operators.yaml disagree: specs without a unit {_missing}, "
        f"units without a spec {_extra}"
    )


def undeclared_words(spec, unit_words) -> list[str]:
    """The placeholders of `spec`'s rubric templates that neither a parameter, `RUBRIC_WORDS` nor
    the unit's declared words fill, each with a did-you-mean."""
    known = [*RUBRIC_WORDS, *(p.name for p in spec.params), *unit_words]
    out = []
    for key, template in spec.rubric:
        for word in placeholders(template):
            if word not in known:
                near = difflib.get_close_matches(word, known, n=1)
                out.append(f"{{{word}}} in `{key}`" + (f" (did you mean {{{near[0]}}}?)" if near else ""))
    return out


for _spec in registry().operators:
    _bad = undeclared_words(_spec, UNITS[_spec.name].words)
    if _bad:
        raise ImportError(
            f"operators.yaml: {_spec.name}: the rubric names {', '.join(_bad)}, which no parameter, "
            f"no common rubric word ({', '.join(RUBRIC_WORDS)}) and no word of its unit fills"
        )


def unit(name: str) -> Unit:
    return UNITS[name]


__all__ = [
    "REQUIRES",
    "UNITS",
    "Context",
    "Hints",
    "Lowering",
    "Unit",
    "trigger_action",
    "trigger_phrase",
    "unit",
    "undeclared_words",
    "unit_mismatch",
]
