"""The taxonomy registry: 15 categories in 5 families and the operators that implant them.

Loaded once from the YAML files beside this module (`categories.yaml`, `operators.yaml`);
docs tables, rubric templates, operator checks and self-check plans all read from here.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import string
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from importlib import resources

import yaml

from wac.errors import TaxonomyError  # re-exported: raised here


class Family(StrEnum):
    static_physics = "static_physics"
    interactive_physics = "interactive_physics"
    spatial_consistency = "spatial_consistency"
    temporal_consistency = "temporal_consistency"
    semantic_consistency = "semantic_consistency"


class Category(StrEnum):
    missing_support = "missing_support"
    intersection = "intersection"
    scale = "scale"
    missing_collision = "missing_collision"
    unexpected_collision = "unexpected_collision"
    abnormal_trajectory = "abnormal_trajectory"
    visibility = "visibility"
    view_dependent = "view_dependent"
    shadow_lighting = "shadow_lighting"
    material = "material"
    existence = "existence"
    static_attribute = "static_attribute"
    operational_state = "operational_state"
    improper_configuration = "improper_configuration"
    historical = "historical"


# the self-check plan kinds a category (`plan:`) or an operator unit (wac.compiler.operators) may
# name; compiler/plan.py gives each its viewing distances and exposing actions and checks at import
# that it covers exactly these
PLAN_KINDS = (
    "view",
    "view_side",
    "walk_through",
    "walk_along",
    "push",
    "revisit",
    "watch",
    "near_far",
    "occluded_view",
    "view_through",
    "interact",
    "interact_walk",
    "interact_blocked",
    "view_sides",
)


@dataclass(frozen=True, slots=True)
class ObservableKind:
    """A self-check observable as the planner needs to know it; the self-check measures and judges it
    (`@observes(name)` in the judge modules of wac.validation, complete against this table at import)."""

    name: str
    # read from a walk into or through the target: the viewpoint needs room for that walk
    walked: bool = False
    # the evidence is the gap under the target at its own place: the view aims at its foot there
    at_foot: bool = False


# the observables a category (`observable:`) or an operator (`observable:` in operators.yaml) may name
OBSERVABLES: dict[str, ObservableKind] = {
    o.name: o
    for o in (
        ObservableKind("support_gap", at_foot=True),
        ObservableKind("penetration_depth"),
        ObservableKind("size_ratio"),
        ObservableKind("displacement_through", walked=True),
        ObservableKind("blocked_distance", walked=True),
        ObservableKind("rotation_after_contact"),
        ObservableKind("visible_pixels_behind_occluder"),
        ObservableKind("apparent_size_ratio"),
        ObservableKind("shadow_offset"),
        ObservableKind("material_at_target"),
        ObservableKind("presence_before_after"),
        ObservableKind("pose_before_after"),
        ObservableKind("lighting_continuity"),
        ObservableKind("orientation_vs_up"),
        ObservableKind("era_mismatch"),
    )
}


def _check_known(where: str, what: str, name: str, known) -> None:
    if name not in known:
        near = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise TaxonomyError(f"{where}: unknown {what} {name!r}{hint} (known: {', '.join(known)})")


def check_observable(where: str, name: str | None) -> str | None:
    """`name` if it names an observable (or is None); a misspelt one is an error naming `where`."""
    if name is not None:
        _check_known(where, "self-check observable", name, tuple(OBSERVABLES))
    return name


def check_plan_kind(where: str, kind: str | None) -> str | None:
    """`kind` if it names a plan kind (or is None); a misspelt one is an error, never a fallback."""
    if kind is not None:
        _check_known(where, "self-check plan kind", kind, PLAN_KINDS)
    return kind


@dataclass(frozen=True, slots=True)
class FamilySpec:
    id: Family
    name: str
    description: str


@dataclass(frozen=True, slots=True)
class Demo:
    """An in-context demonstration: figure captions and a reference explanation."""

    task: str  # file name under taxonomy/examples/ (`incontext/<file>` for an alternative)
    figures: tuple[str, ...]
    explanation: str
    # per figure, which frame of the demonstration's self-check run shows it: (variant, index of the
    # captioned plan step, extra actions in `wac play --actions` syntax run after that step, or "");
    # empty = the captioned frames of the perturbed run, evenly spaced (see wac.audit.examples)
    frames: tuple[tuple[str, int, str], ...] = ()
    # the quantity its C.5 description states, as tests/taxonomy/test_demonstrations.py measures it
    measure: str = ""
    id: str = ""  # the demonstration task's id (its bundle's name in a build)


@dataclass(frozen=True, slots=True)
class CategorySpec:
    id: Category
    family: Family
    name: str  # as Table 8 of the paper names it
    code: str  # short code, e.g. SP-MS
    definition: str
    evidence: tuple[str, ...]  # single_view, several_views, interaction, revisit, time
    dynamic: bool  # judged as a dynamic bug: the change and its condition must be described
    hint: str  # default anomaly-type hint given to the auditor
    observable: str  # what the self-check measures
    plan: str  # self-check plan kind
    defect_terms: tuple[str, ...]
    demo: Demo  # the principal demonstration (measured by tests/taxonomy/test_demonstrations.py)
    # every in-context demonstration, in the order an example is chosen from them (the alternatives
    # of taxonomy/examples/incontext/index.yaml, then `demo`); see wac.audit.examples.choose_demo
    demos: tuple[Demo, ...] = ()


@dataclass(frozen=True, slots=True)
class ParamType:
    """What an operator parameter's `type:` names: how the language reference writes it, the unit
    its numbers carry in the docs and the rubric, and a value for a hint."""

    docs: str  # the language reference's word for it
    unit: str = ""  # after a number, in the docs and the rubric ("m", "deg")
    example: str = ""  # a value in the language's syntax ("" for enum: its first choice)
    ranged: bool = True  # takes `min`/`max`


# the parameter types an operator may declare: exactly the compiler's value types an anomaly
# clause is evaluated as (tests/taxonomy/test_param_types.py evaluates each example)
PARAM_TYPES = {
    "length": ParamType("length", "m", "0.4 m"),
    "angle": ParamType("angle", "deg", "30 deg"),
    "duration": ParamType("duration", "s", "2 s"),
    "speed": ParamType("speed", "m/s", "1.5 m/s"),
    "mass": ParamType("mass", "kg", "0.1 kg"),
    "number": ParamType("number", "", "1.1"),
    "fraction": ParamType("fraction 0–1", "", "0.5"),
    "scale": ParamType("factor or (fx, fy, fz)", "", "2.5"),
    "vec2": ParamType("(x, y)", "", "(1, 0)"),
    "vec3": ParamType("(x, y, z)", "", "(0.2, 0, 0)"),
    "color": ParamType("colour", "", '"#c03030"', ranged=False),
    "object": ParamType("object id", "", "OBJECT_ID", ranged=False),
    "part": ParamType("part id", "", "PART_ID", ranged=False),
    "material": ParamType("material name", "", "wood", ranged=False),
    "prefab": ParamType("prefab name", "", "PREFAB", ranged=False),
    "enum": ParamType("word", "", "", ranged=False),
}
PARAM_KEYS = ("type", "required", "default", "min", "max", "choices", "doc")
OPERATOR_KEYS = (
    "category",
    "categories",
    "operand",
    "triggers",
    "requires",
    "params",
    "summary",
    "rubric",
    "defect_terms",
    "reference",
    "if_invisible",
    "observable",
    "notes",
    "example",
)
OPERANDS = ("object", "objects", "new_object", "none")
TRIGGER_CLASSES = ("static", "temporal", "distance", "contact", "interact")


def _unknown(where: str, what: str, given, known) -> None:
    """A name of `given` that `known` lacks is an error naming `where`, with a did-you-mean."""
    for name in given:
        if name not in known:
            near = difflib.get_close_matches(str(name), list(known), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise TaxonomyError(f"{where}: unknown {what} {name!r}{hint} (known: {', '.join(known)})")


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: str
    required: bool
    default: object
    min: float | None
    max: float | None
    choices: tuple[str, ...]
    doc: str


@dataclass(frozen=True, slots=True)
class OperatorSpec:
    name: str
    categories: tuple[tuple[str, Category], ...]  # trigger class -> category
    operand: str  # object | objects | new_object | none
    triggers: tuple[str, ...]
    requires: tuple[str, ...]
    params: tuple[Param, ...]
    summary: str
    rubric: tuple[tuple[str, str], ...]  # (RUBRIC_KEYS, template): see `_rubric`
    defect_terms: tuple[str, ...]
    reference: tuple[str, ...]
    # what the author should change when the self-check finds the change invisible ("" = generic)
    if_invisible: str = ""
    # the self-check observable for this operator, over its category's (None = the category's)
    observable: str | None = None
    # prose the language reference adds after the parameters (how it behaves, where it comes from)
    notes: str = ""
    example: str = ""  # an `anomaly` line for the docs when no shipped task uses the operator

    def category_for(self, trigger_class: str) -> Category | None:
        return dict(self.categories).get(trigger_class)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def template(self, key: str) -> str | None:
        """The rubric template `key` (None for an optional one the spec leaves out)."""
        return dict(self.rubric).get(key)


@dataclass(frozen=True, slots=True)
class Registry:
    families: tuple[FamilySpec, ...]
    categories: tuple[CategorySpec, ...]
    operators: tuple[OperatorSpec, ...]
    out_of_scope: tuple[tuple[str, str], ...]  # reference bug type -> why wac leaves it out

    def category(self, cid: str) -> CategorySpec:
        return next(c for c in self.categories if c.id == cid)

    def family(self, fid: str) -> FamilySpec:
        return next(f for f in self.families if f.id == fid)

    def operator(self, name: str) -> OperatorSpec | None:
        return next((o for o in self.operators if o.name == name), None)

    def operators_for(self, cid: str) -> tuple[OperatorSpec, ...]:
        return tuple(o for o in self.operators if any(c == cid for _, c in o.categories))

    def observable(self, operator: str, cid: str) -> str:
        """The self-check observable of `operator` implanting category `cid`: the operator's own
        (`observable:` in operators.yaml) over the category's."""
        op = self.operator(operator)
        return (op.observable if op is not None else None) or self.category(cid).observable


def _load_yaml(name: str):
    text = resources.files("wac.taxonomy").joinpath(name).read_text(encoding="utf-8")
    return yaml.load(
        text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    )  # libyaml's safe loader when present


def _param(op: str, name: str, spec: dict) -> Param:
    where = f"operators.yaml: {op}: parameter `{name}`"
    if not isinstance(spec, dict) or "type" not in spec:
        raise TaxonomyError(f"{where}: needs a mapping with a `type` (one of {', '.join(PARAM_TYPES)})")
    _unknown(where, "key", spec, PARAM_KEYS)
    _unknown(where, "type", [spec["type"]], PARAM_TYPES)
    kind = PARAM_TYPES[spec["type"]]
    if not kind.ranged and ("min" in spec or "max" in spec):
        raise TaxonomyError(f"{where}: a {spec['type']} takes no `min`/`max`")
    if (spec["type"] == "enum") != bool(spec.get("choices")):
        raise TaxonomyError(f"{where}: `choices` go with `type: enum`, and an enum needs them")
    default = spec.get("default")
    if isinstance(default, list):
        default = tuple(default)
    return Param(
        name=name,
        type=spec["type"],
        required=bool(spec.get("required", False)),
        default=default,
        min=spec.get("min"),
        max=spec.get("max"),
        choices=tuple(spec.get("choices", ())),
        doc=spec.get("doc", ""),
    )


# the words every rubric template may name besides the operator's parameters and its unit's words
# (wac.compiler.rubric fills exactly these)
RUBRIC_WORDS = (
    "name",  # the focus object's display name
    "names",  # the targets' names, listed ("crate and barrel")
    "trigger_words",  # " after the agent looks away and comes back" (empty without a trigger)
    "trigger_words_bare",  # the same without the leading space
    "expected_trigger_words",  # " whatever the agent does" (empty without a trigger)
    "inspection_trigger_words",  # ", turn away and come back" (empty without a trigger)
)


def placeholders(template: str) -> tuple[str, ...]:
    """The `{word}` placeholders of a rubric template, in order."""
    return tuple(f for _, f, _, _ in string.Formatter().parse(template) if f is not None)


# the rubric templates an operator spec holds: the three the paper's rubric has, then `condition`
# (the operator's change and what produces it, for an operator that is dynamic without a trigger:
# a movement, a contact, an interaction, a viewpoint, the passing of time) and `place` (for an
# operator with no object operand: what a finding must locate instead of naming an object)
RUBRIC_KEYS = ("target", "expected", "inspection", "condition", "place")


def _rubric(name: str, spec: dict) -> tuple[tuple[str, str], ...]:
    rubric = spec.get("rubric") or {}
    unknown = sorted(set(rubric) - set(RUBRIC_KEYS))
    missing = [k for k in RUBRIC_KEYS[:3] if not str(rubric.get(k) or "").strip()]
    if spec.get("operand") == "none" and not str(rubric.get("place") or "").strip():
        missing.append("place")
    if unknown or missing:
        raise TaxonomyError(
            f"operators.yaml: {name}: rubric templates {unknown} are unknown, {missing} are missing "
            f"(known: {', '.join(RUBRIC_KEYS)}; `place` is required for an operand `none`)"
        )
    return tuple((k, " ".join(str(rubric[k]).split())) for k in RUBRIC_KEYS if k in rubric)


def _operator(name: str, spec: dict) -> OperatorSpec:
    where = f"operators.yaml: {name}"
    _unknown(where, "key", spec, OPERATOR_KEYS)
    _unknown(where, "operand", [spec.get("operand")], OPERANDS)
    _unknown(where, "trigger class", spec.get("triggers", ()), TRIGGER_CLASSES)
    _unknown(where, "trigger class", (spec.get("categories") or {}), TRIGGER_CLASSES)
    _unknown(
        where,
        "category",
        [*(spec.get("categories") or {}).values()] or [spec.get("category")],
        [str(c) for c in Category],
    )
    if "categories" in spec:
        cats = tuple((k, Category(v)) for k, v in spec["categories"].items())
    else:
        cats = tuple((t, Category(spec["category"])) for t in spec["triggers"])
    return OperatorSpec(
        name=name,
        categories=cats,
        operand=spec["operand"],
        triggers=tuple(spec["triggers"]),
        requires=tuple(spec.get("requires", ())),
        params=tuple(_param(name, k, v) for k, v in (spec.get("params") or {}).items()),
        summary=spec["summary"],
        rubric=_rubric(name, spec),
        defect_terms=tuple(str(t) for t in spec.get("defect_terms", ())),
        reference=tuple(spec.get("reference", ())),
        if_invisible=" ".join(str(spec.get("if_invisible", "")).split()),
        observable=check_observable(where, spec.get("observable")),
        notes=" ".join(str(spec.get("notes", "")).split()),
        example=str(spec.get("example", "")),
    )


def _demo(cid: str, spec: dict, demo_id: str = "") -> Demo:
    figures = tuple(spec["figures"])
    frames = tuple(
        (str(f[0]), int(f[1]), str(f[2]) if len(f) > 2 else "") for f in spec.get("figure_frames", ())
    )
    if frames and len(frames) != len(figures):
        raise TaxonomyError(
            f"{cid}: demo figure_frames needs one entry per figure ({len(figures)}), got {len(frames)}"
        )
    if any(v not in ("clean", "perturbed") for v, _, _ in frames):
        raise TaxonomyError(f"{cid}: demo figure_frames variants must be 'clean' or 'perturbed'")
    return Demo(
        task=spec["task"],
        figures=figures,
        explanation=spec["explanation"].strip(),
        frames=frames,
        measure=" ".join(str(spec.get("measure", "")).split()),
        id=demo_id or f"{cid}_demo",
    )


INCONTEXT_INDEX = "examples/incontext/index.yaml"


def _alternatives(cids: set[str]) -> dict[str, tuple[Demo, ...]]:
    """The alternative demonstrations of taxonomy/examples/incontext/index.yaml, checked against the
    categories and their task files (a name that names no category or task fails here, not later)."""
    index = _load_yaml(INCONTEXT_INDEX) or {}
    root = resources.files("wac.taxonomy").joinpath("examples")
    out: dict[str, tuple[Demo, ...]] = {}
    for cid, entries in index.items():
        if cid not in cids:
            raise TaxonomyError(f"{INCONTEXT_INDEX}: unknown category {cid!r}")
        demos = []
        for e in entries:
            demo_id = str(e.get("id", ""))
            source = root.joinpath(*str(e["task"]).split("/"))
            if not demo_id or not source.is_file():
                raise TaxonomyError(f"{INCONTEXT_INDEX}: {cid}: needs an `id` and an existing `task` file")
            if not re.search(rf"^task\s+{re.escape(demo_id)}\s", source.read_text(encoding="utf-8"), re.M):
                raise TaxonomyError(f"{INCONTEXT_INDEX}: {cid}: {e['task']} declares no task {demo_id!r}")
            demos.append(_demo(cid, e, demo_id))
        out[cid] = tuple(demos)
    return out


@lru_cache(maxsize=1)
def registry() -> Registry:
    cats = _load_yaml("categories.yaml")
    ops = _load_yaml("operators.yaml")
    families = tuple(
        FamilySpec(Family(f["id"]), f["name"], f["description"].strip()) for f in cats["families"]
    )
    categories = tuple(
        CategorySpec(
            id=Category(c["id"]),
            family=Family(c["family"]),
            name=c["name"],
            code=c["code"],
            definition=c["definition"].strip(),
            evidence=tuple(c["evidence"]),
            dynamic=bool(c["dynamic"]),
            hint=c.get("hint", c["name"]),
            observable=check_observable(f"categories.yaml: {c['id']}", c["observable"]),
            plan=check_plan_kind(f"categories.yaml: {c['id']}", c["plan"]),
            defect_terms=tuple(str(t) for t in c.get("defect_terms", ())),
            demo=_demo(c["id"], c["demo"]),
        )
        for c in cats["categories"]
    )
    alternatives = _alternatives({str(c.id) for c in categories})
    categories = tuple(
        dataclasses.replace(c, demos=(*alternatives.get(str(c.id), ()), c.demo)) for c in categories
    )
    operators = tuple(_operator(k, v) for k, v in ops.items())
    oos = tuple((k, v) for k, v in (cats.get("out_of_scope") or {}).items())
    return Registry(families, categories, operators, oos)
