"""Whether a task's anomalies are evident in the perturbed world on their own, and alone there: the
judgement the compiler's pass 6c (E550, E551) and the self-check's world-alone stage share.

Each anomaly is a `Change` (its category, trigger, targets and effects, from a lowered anomaly or a
bundle's `Anomaly`).  The perturbed world is the clean one with the untriggered anomalies in effect,
and, for those a trigger switches, the state after they fire.  `judge` returns `Problem`s:

* `missing` (E550): the category's detector does not find the anomaly's objects; the message gives
  the detector's reason (a relocated chair is still a usable chair);
* `other` (E551): a detector finds something no anomaly accounts for and the clean world did not
  already hold (a loose barrel over a dug hole, a cup left in the air over an inverted table).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from wac.bundle import model as B
from wac.taxonomy.registry import Category, registry

from .base import DETECTORS, Finding, Timeline
from .world import World

# in the perturbed world, gaps and overlaps smaller than this beside the anomaly are not evident to an
# auditor who never saw the clean world (a tilted stall brushing a lantern; as the compiler's E536)
UNSEEN_M = {Category.missing_support: 0.05, Category.intersection: 0.05}
# a change can alter what is judged of the objects this near it (its peers, what rests on it or
# faces it); farther ones are judged as in the clean world
FOCUS_M = 16.0


@dataclass(frozen=True)
class Change:
    """One anomaly as the detectors read it."""

    operator: str
    category: Category
    trigger: B.Trigger
    targets: tuple[str, ...]
    effects: tuple[B.Effect, ...]
    affects: tuple[str, ...] = ()
    added: tuple[str, ...] = ()

    @classmethod
    def of(cls, an: B.Anomaly) -> Change:
        added = tuple(e.object.id for e in an.effects if isinstance(e, B.AddObject))
        return cls(an.operator, Category(an.category), an.trigger, an.targets, an.effects, an.affects, added)

    @property
    def static(self) -> bool:
        return self.trigger.kind == B.TriggerKind.always


@dataclass(frozen=True)
class Problem:
    kind: str  # "missing" (E550) or "other" (E551)
    index: int  # the anomaly it is about
    message: str


def _own(before: World, after: World, c: Change) -> set[str]:
    """The objects an anomaly accounts for: its targets, what its effects touch or add (the holes and
    colliders it makes too), what the task declares it changes, what rested on a support it removes."""
    own = set(c.targets) | {e.target for e in c.effects if e.target} | set(c.added) | set(c.affects)
    own |= set(after.things) - set(before.things)
    own |= {f"#hole{i + 1}" for i in range(len(before.holes), len(after.holes))}
    for e in c.effects:  # what rested on a removed support floats with it: the same defect
        if isinstance(e, B.RemoveObject):
            own |= {o.id for o in before.objects if o.support == e.target}
    if any(isinstance(e, B.SetFrameTint) for e in c.effects):
        own.add("#frame")
    if any(isinstance(e, B.SetDayNight) for e in c.effects):
        own.add("#daylight")
    return own


def judge(clean: World, changes: list[Change], known: Iterable[Finding]) -> list[Problem]:
    """The problems of a task whose clean world is `clean` (its findings `known`, already reported or
    excused there) and whose anomalies are `changes`."""
    static = [c for c in changes if c.static]
    base = clean.apply(e for c in static for e in c.effects)
    owns: list[set[str]] = []
    for c in changes:
        if c.static:
            before = clean.apply(e for s in static if s is not c for e in s.effects)
            owns.append(_own(before, base, c))
        else:
            owns.append(_own(base, base.apply(c.effects), c))
    problems = [
        p for i, (c, own) in enumerate(zip(changes, owns, strict=True)) if (p := _missing(base, c, own, i))
    ]
    other = _other(clean, base, changes, owns, {(f.category, f.objects) for f in known})
    return problems + ([other] if other else [])


def _missing(base: World, c: Change, own: set[str], index: int) -> Problem | None:
    states = (base,) if c.static else (base, base.apply(c.effects))
    tl = Timeline(states, frozenset(own), by_distance=c.trigger.kind.viewpoint, focus=frozenset(own))
    report = DETECTORS[c.category](tl, frozenset(own))
    if any(set(f.objects) & own for f in report.findings):
        return None
    why = "; ".join(dict.fromkeys(report.why_not[o] for o in sorted(own) if o in report.why_not))
    name = registry().category(c.category.value).name.lower()
    return Problem(
        "missing",
        index,
        f"the `{c.operator}` anomaly is not evident in the perturbed world on its own: "
        + (why or f"no {name} shows there"),
    )


def _near(
    states: tuple[World, ...], changed: frozenset[str], reach: float = FOCUS_M, peers: bool = False
) -> frozenset[str] | None:
    """The objects within `reach` of a changed object (or hole) in any state, the changed ones
    included, and with `peers` those alike to a changed one; None (everything) for a scene-wide
    change, the frame's colour or the day."""
    if changed & {"#frame", "#daylight"}:
        return None
    out = set(changed)
    for w in states:
        boxes = [
            (np.asarray(t.spec.aabb_min), np.asarray(t.spec.aabb_max))
            for i, t in w.things.items()
            if i in changed
        ]
        boxes += [
            (np.array([x0, y0, -1.0]), np.array([x1, y1, 1.0]))
            for k, (x0, y0, x1, y1) in enumerate(w.holes)
            if f"#hole{k + 1}" in changed
        ]
        if not boxes:
            continue
        if peers:
            out |= {x.id for i in changed if i in w.things for x in w.alike(w.things[i])}
        blo = np.array([b[0] for b in boxes]) - reach
        bhi = np.array([b[1] for b in boxes]) + reach
        things, lo, hi = w.boxes()
        hit = np.all((lo[:, None, :] <= bhi[None]) & (hi[:, None, :] >= blo[None]), axis=2).any(axis=1)
        out |= {things[i].id for i in np.flatnonzero(hit)}
    return frozenset(out)


def _other(
    clean: World, base: World, changes: list[Change], owns: list[set[str]], known: set
) -> Problem | None:
    dynamic = [c for c in changes if not c.static]
    states = (base,) if not dynamic else (base, base.apply(e for c in dynamic for e in c.effects))
    changed = frozenset().union(*owns) if owns else frozenset()
    by_distance = any(c.trigger.kind.viewpoint for c in dynamic)
    # where the changed objects were stand in the clean world too: a crate moved from under a cup
    seen = (clean, *states)
    focus: dict[tuple, frozenset[str] | None] = {}
    findings = []
    for cat in Category:
        d = DETECTORS[cat]
        key = (d.reach_m or FOCUS_M, d.peers)
        if key not in focus:
            focus[key] = _near(seen, changed, *key)
        tl = Timeline(states, changed, by_distance=by_distance, focus=focus[key])
        findings += sorted(d(tl).findings, key=lambda f: (f.objects, f.evidence))
    allowed = set().union(*owns) if owns else set()
    for f in findings:
        if (f.category, f.objects) in known or f.measure and f.measure < UNSEEN_M.get(f.category, 0.0):
            continue
        if set(f.objects) <= allowed:
            continue
        if any(
            (f.category == c.category or not f.physical) and (set(f.objects) | set(f.refs)) & own
            for c, own in zip(changes, owns, strict=True)
        ):
            # the anomaly seen from the other side: the object it is pushed into, its twin, the bench
            # now facing the giant well; a second object it leaves floating is another defect
            continue
        i = next((k for k, o in enumerate(owns) if set(f.objects) & o), 0)
        name = registry().category(f.category.value).name.lower()
        return Problem(
            "other",
            i,
            f"the perturbed world holds another anomaly beside the `{changes[i].operator}` one: "
            f"{f.evidence} ({name})",
        )
    return None
