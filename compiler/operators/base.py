"""The operator unit and its lowering context: what one anomaly operator is made of.

An operator unit (`Unit`) is registered by name with `@operator("remove_collision", …)`.  Its spec
(parameters, triggers, targets, rubric words) is the entry of the same name in
`taxonomy/operators.yaml`; the unit adds what only the compiler knows:

* **checks** — applicability beyond the spec's `requires` (a light that casts shadows, an upright
  object), run in order before the lowering; each reports its own diagnostic.
* **lower** — `Context -> Lowering | None`: the effects, the rubric words, the objects it adds and
  the typed plan hints (`Hints`); None after reporting a diagnostic.
* **plan / aim** — the self-check plan kind where the category's does not expose the operator, and
  where the plan aims ("ground": at the target's base, where its shadow lies).
* **alone** — the anomaly shows in every frame (a corrupted frame), so `wac derive` never adds it
  to another task: it would hide the other anomalies' evidence.

`wac.compiler.operators` imports every category module and fails at import when the unit table and
the spec table disagree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from wac.bundle import model as B
from wac.compiler import nodes as N
from wac.compiler import schema as T
from wac.compiler.assemble import Built, make_object
from wac.compiler.diagnostics import Collector, did_you_mean
from wac.compiler.layout import Layout, world_bounds
from wac.compiler.spans import Span
from wac.compiler.triggers import trigger_action, trigger_phrase  # noqa: F401 - re-exported
from wac.errors import TaxonomyError
from wac.taxonomy.registry import OperatorSpec, check_plan_kind

DIRECTIONS = {"north": (0.0, 1.0), "south": (0.0, -1.0), "east": (1.0, 0.0), "west": (-1.0, 0.0)}


@dataclass(frozen=True, slots=True)
class Requirement:
    """What the spec's `requires` names: a test of the target, why it fails, the fix, and how the
    language reference says it ("Target must be: …")."""

    test: Callable[[B.SceneObject], bool]
    fails: str
    fix: str
    docs: str


REQUIRES: dict[str, Requirement] = {
    "solid": Requirement(lambda o: o.solid, "is not solid", "pick a solid object, or make it solid", "solid"),
    "supported": Requirement(
        lambda o: o.support is not None,
        "rests on the ground, not on another object",
        "pick an object that rests `on` another one",
        "resting `on` another object",
    ),
    "dynamic": Requirement(
        lambda o: o.dynamic,
        "is static (give it a `mass` to make it dynamic)",
        "pick an object with a `mass`, or give it one",
        "dynamic (has a `mass`)",
    ),
    "door": Requirement(
        lambda o: any(p.hinge for p in o.parts),
        "is not a door (it has no hinged part)",
        "pick a door (an object with a hinged part)",
        "a door (a part with a `hinge`)",
    ),
    "lamp": Requirement(
        lambda o: o.lit is not None,
        "is not a lamp (it has no emitting part)",
        "pick a lamp (an object with an emitting part)",
        "a lamp (a part that `emits`)",
    ),
    "animated": Requirement(
        lambda o: any(p.spin for p in o.parts),
        "has no animated (spinning) part",
        "pick an object with a spinning part",
        "animated (a part that `spin`s)",
    ),
    "interactive": Requirement(
        lambda o: bool(o.interactions),
        "cannot be interacted with (add `interact …`)",
        "pick an interactive object, or add `interact …` to it",
        "interactive (has `interact …`)",
    ),
    "liquid": Requirement(
        lambda o: o.liquid_depth_m is not None,
        "is not a liquid or pit (`liquid yes`)",
        "pick a pond or pit (`liquid yes`)",
        "a liquid or pit (`liquid yes`)",
    ),
}


@dataclass(frozen=True, slots=True)
class Hints:
    """What the self-check plan needs to know beyond the effects (typed, never `_underscore` words)."""

    focus_point: tuple[float, float, float] | None = None  # where to look when there is no focus object
    respond_after_s: float | None = None  # an interaction answers this late: wait for it
    aim: Literal["object", "ground"] = "object"  # "ground": the evidence lies at the target's base


@dataclass(frozen=True, slots=True)
class Lowering:
    """What a unit's `lower` returns: effects, rubric words, added objects, plan hints, and the
    materials its effects name that the scene does not hold yet (`Context.tint`)."""

    effects: tuple[B.Effect, ...]
    words: Mapping[str, object] = field(default_factory=dict)  # rubric template words
    new_objects: tuple[B.SceneObject, ...] = ()
    hints: Hints = Hints()
    materials: tuple[B.Material, ...] = ()

    def __post_init__(self) -> None:
        hidden = [k for k in self.words if k.startswith("_")]
        if hidden:  # side channels are `Hints` fields, not words the rubric would have to filter
            raise ValueError(f"rubric words {hidden} start with '_': put plan side channels in Hints")


@dataclass(frozen=True, slots=True)
class Tint:
    """`Context.tint`'s answer: the set_material effects and the derived materials they name."""

    effects: tuple[B.Effect, ...]
    materials: tuple[B.Material, ...]


@dataclass(frozen=True, slots=True)
class Context:
    """One anomaly statement being lowered: the world it lowers into and its checked inputs."""

    built: Built
    layout: Layout
    diag: Collector
    anomaly: N.Anomaly
    spec: OperatorSpec
    targets: tuple[B.SceneObject, ...]
    params: Mapping[str, object]  # evaluated parameters (defaults filled in)
    spans: Mapping[str, Span]  # parameter -> the span of its value, for those given
    trigger: B.Trigger

    @property
    def target(self) -> B.SceneObject:
        return self.targets[0]

    @property
    def scene(self) -> B.Scene:
        return self.built.scene

    def span(self, param: str, default: Span | None = None) -> Span | None:
        """The span of a parameter's value, else `default`."""
        return self.spans.get(param, default)

    def obj(self, name: str, span) -> B.SceneObject | None:
        """The scene object `name`, or None after E601."""
        return find_object(self.built, self.diag, name, span)

    def support_name(self, o: B.SceneObject) -> str:
        if o.support and o.support in self.built.objects:
            return f"the {self.built.objects[o.support].name}"
        return "the ground"

    def rest_on_same_base(self, o: B.SceneObject, rotation) -> tuple[float, float, float]:
        lo, _ = world_bounds(o.parts, (0.0, 0.0, 0.0), rotation, o.scale)
        return (o.position[0], o.position[1], round(o.aabb_min[2] - lo[2], 6))

    def tint(self, o: B.SceneObject, update: dict, suffix: str, part: str | None = None) -> Tint:
        """set_material effects giving each (or one) part a material derived from its own, and those
        materials (the lowering returns them: the pipeline adds them to the scene's table)."""
        used = self.layout.materials.used
        effects, made = [], {}
        for p in o.parts:
            if part and p.id != part:
                continue
            base = used[p.material]
            name = f"{base.name}~{suffix}"
            if name not in made:
                made[name] = base.model_copy(update={"name": name, **update})
            effects.append(B.SetMaterial(target=o.id, part=p.id, material=name))
        return Tint(tuple(effects), tuple(made.values()))

    def part(self, o: B.SceneObject) -> str | None | Literal[False]:
        """The `part` parameter: None when not given, False after E609 (no such part)."""
        part = self.params.get("part")
        if part is None:
            return None
        if part not in {p.id for p in o.parts}:
            self.diag.error(
                "E609",
                f"`{o.id}` has no part `{part}`",
                self.span("part"),
                did_you_mean(part, [p.id for p in o.parts])
                or f"its parts: {', '.join(p.id for p in o.parts)}",
            )
            return False
        return part

    def new_object(self, thing: N.Thing) -> B.SceneObject | None:
        """The object a `new_object` operand declares, built like a scene object (None after a diagnostic)."""
        if thing.id in self.built.objects:
            self.diag.error(
                "E608",
                f"`{thing.id}` already exists in the scene",
                thing.id_span,
                "pick a new id for the added object",
            )
            return None
        built = self.layout.build(thing, thing.span.source.path)
        if built is None:
            return None
        sup = None
        if built.values.get("on"):
            sup = self.obj(built.values["on"], (thing.clause("on") or thing).span)
            if sup is None:
                return None
        return make_object(thing, built, sup, set(), self.diag, self.built.scene.ground)


def find_object(built: Built, diag: Collector, name: str, span) -> B.SceneObject | None:
    o = built.objects.get(name)
    if o is None:
        diag.error(
            "E601",
            f"unknown object `{name}`",
            span,
            did_you_mean(name, built.objects) or "the target must be declared in the scene or task",
        )
    return o


Lower = Callable[[Context], Lowering | None]
Check = Callable[[Context], bool]


@dataclass(frozen=True, slots=True)
class Unit:
    """One anomaly operator on the compiler's side (its spec is `taxonomy/operators.yaml`'s entry)."""

    name: str
    lower: Lower
    checks: tuple[Check, ...] = ()
    plan: str | None = None  # self-check plan kind, when not the category's
    aim: Literal["object", "ground"] = "object"
    alone: bool = False  # it shows in every frame: never drawn as an extra of a derived multi-anomaly task
    module: str = ""
    # the rubric words its lowering adds to the parameters and `RUBRIC_WORDS` (checked against the
    # spec's templates when wac.compiler.operators is imported, and against each lowering)
    words: tuple[str, ...] = ()

    def run(self, cx: Context) -> Lowering | None:
        """The checks in order (the first that fails stops), then the lowering."""
        for check in self.checks:
            if not check(cx):
                return None
        out = self.lower(cx)
        if out is not None and not out.words.keys() <= set(self.words):
            undeclared = sorted(out.words.keys() - set(self.words))
            raise TaxonomyError(
                f"operator unit {self.name}: its lowering returns the rubric words {undeclared}, "
                f"which its `@operator(words=…)` does not declare (it declares {list(self.words)})"
            )
        if out is not None and out.hints.aim != self.aim:
            out = dataclasses.replace(out, hints=dataclasses.replace(out.hints, aim=self.aim))
        return out


UNITS: dict[str, Unit] = {}


def operator(
    name: str,
    *,
    checks: tuple[Check, ...] = (),
    plan: str | None = None,
    aim: Literal["object", "ground"] = "object",
    alone: bool = False,
    words: tuple[str, ...] = (),
) -> Callable[[Lower], Lower]:
    """Register the decorated function as the lowering of operator `name` (once; a plan kind that is
    no plan kind fails here, at import)."""

    def register(fn: Lower) -> Lower:
        if name in UNITS:
            raise TypeError(f"two units for operator {name!r} ({UNITS[name].module}, {fn.__module__})")
        check_plan_kind(f"operator unit {name}", plan)
        UNITS[name] = Unit(name, fn, tuple(checks), plan, aim, alone, fn.__module__, tuple(words))
        return fn

    return register


def one(effect: B.Effect, **words: object) -> Lowering:
    """A lowering to one effect (the common case)."""
    return Lowering((effect,), words)


def era_conflict(obj_era: str, scene_era: str) -> bool:
    if obj_era == "any" or scene_era == "any":
        return False
    a, b = T.ERA_YEARS.get(obj_era), T.ERA_YEARS.get(scene_era)
    return bool(a and b) and (a[0] >= b[1] or a[1] <= b[0])


def part_words(part: str | None) -> str:
    return f"{part.replace('_', ' ')} of the " if part else ""
