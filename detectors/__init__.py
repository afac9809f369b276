"""World-alone anomaly detectors (issue 27): what one world shows an auditor who never sees its
clean twin, category by category.

One detector per taxonomy category, registered with `@detector` in the module of its family
(`static_physics`, `interactive_physics`, `spatial`, `temporal`, `semantic`); importing this package
fails when a category has none.  Each reads a `Timeline` (the states of one world an auditor can see)
built from `World`s, and rests on the object norms of `wac.taxonomy.norms`.

    from wac.detectors import World, Timeline, detect
    findings = detect(Timeline((World.of(task),)))  # the clean world: should find nothing
"""

from __future__ import annotations

from wac.errors import TaxonomyError
from wac.taxonomy.registry import Category

from . import interactive_physics, semantic, spatial, static_physics, temporal  # noqa: F401  (registers)
from .base import DETECTORS, PHYSICAL, Detector, Finding, Report, Timeline
from .world import Look, Thing, World

_missing = [c.value for c in Category if c not in DETECTORS]
if _missing:
    raise TaxonomyError(f"no detector for categories {_missing}")

__all__ = [
    "DETECTORS",
    "PHYSICAL",
    "Detector",
    "Finding",
    "Look",
    "Report",
    "Thing",
    "Timeline",
    "World",
    "detect",
]


def detect(tl: Timeline, categories=None) -> list[Finding]:
    """Every finding of the detectors of `categories` (all by default) on the timeline, in category
    order, then by object."""
    out: list[Finding] = []
    for c in Category:
        if categories is not None and c not in categories:
            continue
        out += sorted(DETECTORS[c](tl).findings, key=lambda f: (f.objects, f.evidence))
    return out
