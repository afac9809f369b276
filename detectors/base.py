"""What a detector is: a unit per taxonomy category that reads a world over time and reports the
anomalies of its category it finds there, with the object, the evidence in words and whether the
defect is physical (no `benign` may excuse it).

A detector is a function registered with `@detector(category)`; `wac.detectors` imports the family
modules and fails at import when a category has no detector, or one has two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from wac.errors import TaxonomyError
from wac.taxonomy.registry import Category

from .world import World

# categories whose findings are defects of physics, which no `benign` declaration can excuse: a
# floating crate marked benign still floats
PHYSICAL = frozenset(
    {
        Category.missing_support,
        Category.intersection,
        Category.missing_collision,
        Category.unexpected_collision,
        Category.abnormal_trajectory,
    }
)


@dataclass(frozen=True)
class Finding:
    """One anomaly a detector sees: its category, the anomalous objects (both of an interpenetrating
    pair), the evidence in words, whether it is a defect of physics, and what it is seen against."""

    category: Category
    objects: tuple[str, ...]
    evidence: str
    physical: bool = False
    moment: int = 0  # which state of the timeline shows it
    refs: tuple[str, ...] = ()  # what it is seen against (its twins, the host it should touch)
    measure: float = 0.0  # the size of the defect where it has one (a gap, a depth, in m)

    @property
    def object(self) -> str:
        return self.objects[0] if self.objects else ""


@dataclass(frozen=True)
class Timeline:
    """The states of one world an auditor can see, in order: one for a world that does not change,
    before and after for a world whose anomaly switches on (a trigger), alternating for one that
    switches back and forth.  `changes` names the objects whose change between states an anomaly
    causes (what temporal detectors compare); `by_distance` when the states alternate with the viewer's
    distance (`beyond`, `within`) rather than over time; `focus` limits the objects judged to those a
    change can affect (what lies near it), the rest being as in a world already judged."""

    states: tuple[World, ...]
    changed: frozenset[str] = frozenset()
    by_distance: bool = False  # the states are told apart by the viewer's distance, not by time
    focus: frozenset[str] | None = None  # judge only these objects (None: every one)

    def judged(self, w: World):
        """The things of `w` to judge: all, or those in focus (what an anomaly's change can affect)."""
        if self.focus is None:
            return list(w.things.values())
        return [t for t in w.things.values() if t.id in self.focus]

    def steps(self):
        """Each changed object across each pair of consecutive states: (the later state's index,
        its id, the earlier world, the thing there or None, the later world, the thing there or None)."""
        for k in range(1, len(self.states)):
            a, b = self.states[k - 1], self.states[k]
            for oid in sorted(self.changed):
                yield k, oid, a, a.things.get(oid), b, b.things.get(oid)

    @property
    def last(self) -> World:
        return self.states[-1]


@dataclass(frozen=True)
class Report:
    """A detector's answer: what it found, and for the objects it was asked about and did not find
    anomalous, why not (the words a diagnostic shows)."""

    findings: tuple[Finding, ...] = ()
    why_not: dict[str, str] = field(default_factory=dict)


def a_kind(norm) -> str:
    """The kind a norm describes with its article: 'a chair', 'an oil drum'."""
    k = norm.names[0] if norm.names else norm.key.replace("_", " ")
    return ("an " if k[:1] in "aeiou" else "a ") + k


DetectFn = Callable[[Timeline, frozenset[str]], Iterable[Finding] | Report]


@dataclass(frozen=True)
class Detector:
    """A registered detector.  `reach_m`: how far (box to box) from a changed object another object's
    verdict can change (what it rests on or touches, the twins of its row); None: as far as any
    (`evident.FOCUS_M`); `peers`: also the objects alike to a changed one (same prefab and name), at any
    distance.  Objects beyond the reach of every change are judged as in the clean world."""

    category: Category
    fn: DetectFn
    doc: str
    reach_m: float | None = None
    peers: bool = False

    def __call__(self, tl: Timeline, ask: frozenset[str] = frozenset()) -> Report:
        out = self.fn(tl, ask)
        if isinstance(out, Report):
            return out
        return Report(tuple(out))


DETECTORS: dict[Category, Detector] = {}


def detector(
    category: Category, reach_m: float | None = None, peers: bool = False
) -> Callable[[DetectFn], DetectFn]:
    def register(fn: DetectFn) -> DetectFn:
        if category in DETECTORS:
            raise TaxonomyError(f"two detectors for category {category.value!r}")
        DETECTORS[category] = Detector(
            category, fn, (fn.__doc__ or "").strip().splitlines()[0], reach_m, peers
        )
        return fn

    return register
