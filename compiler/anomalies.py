"""Pass 6, anomalies: check each anomaly statement against its operator's spec and lower it through
the operator's unit to the primitive effects the runtime applies (`bundle.model.Effect`).

This pass does what every operator shares: the trigger, the parameters (`taxonomy/operators.yaml`),
the targets and the spec's `requires`, `affects`; then it hands a typed `Context` to the operator's
unit (`wac.compiler.operators`), which checks what is particular to it and lowers it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from shapely.geometry import Point, Polygon

from wac.bundle import model as B
from wac.compiler import nodes as N
from wac.compiler import schema as T
from wac.compiler import syntax as S
from wac.compiler import triggers as TR
from wac.compiler.assemble import Built
from wac.compiler.diagnostics import Collector
from wac.compiler.layout import Layout
from wac.compiler.operators import REQUIRES, Context, Hints, Unit, unit
from wac.compiler.operators.base import find_object
from wac.compiler.values import Evaluator
from wac.taxonomy.registry import PARAM_TYPES, OperatorSpec, registry


@dataclass(frozen=True)
class Lowered:
    """An anomaly checked and lowered, with what rubric and plan need to know."""

    spec: OperatorSpec
    unit: Unit
    category: str
    trigger_class: str
    trigger: B.Trigger
    targets: tuple[str, ...]
    params: dict
    effects: tuple[B.Effect, ...]
    words: dict = field(default_factory=dict)  # rubric words the unit adds
    new_objects: tuple[B.SceneObject, ...] = ()
    focus: B.SceneObject | None = None  # the object the plan looks at (or a stand-in)
    hints: Hints = Hints()  # where the plan aims and waits (focus point, ground, response delay)
    span: object = None
    affects: tuple[str, ...] = ()  # objects the task declares the anomaly changes as a consequence
    materials: tuple[B.Material, ...] = ()  # derived materials its effects name (`Lowering.materials`)


def lower_anomalies(anomalies, built: Built, layout: Layout, diag: Collector) -> list[Lowered | None]:
    """Each anomaly statement lowered (None where a diagnostic was reported)."""
    return [lower(a, built, layout, diag) for a in anomalies]


def lower(a: N.Anomaly, built: Built, layout: Layout, diag: Collector) -> Lowered | None:
    """One anomaly statement: the shared checks, then its operator's unit."""
    spec = registry().operator(a.operator)
    assert spec is not None
    tr = _trigger(a, spec, built, diag)
    checked = _params(a, spec, diag)
    if tr is None or checked is None:
        return None
    params, spans = checked
    tclass, trig = tr
    category = spec.category_for(tclass)
    targets: list[B.SceneObject] = []
    for name in a.operand:
        if spec.operand == "new_object":
            continue
        o = find_object(built, diag, name.text, name.span)
        if o is None:
            return None
        targets.append(o)
    for o, name in zip(targets, a.operand, strict=False):
        for req in spec.requires:
            need = REQUIRES[req]
            if not need.test(o):
                diag.error(
                    "E607", f"`{spec.name}` does not apply to `{o.id}`: it {need.fails}", name.span, need.fix
                )
                return None
    affects = _affects(a, targets, built, diag)
    if affects is None:
        return None
    u = unit(spec.name)
    cx = Context(built, layout, diag, a, spec, tuple(targets), params, spans, trig)
    out = u.run(cx)
    if out is None:
        return None
    new_objects = tuple(out.new_objects)
    focus = targets[0] if targets else (new_objects[0] if new_objects else None)
    if (
        focus is not None
        and a.trigger is not None
        and not _distance_switches(trig, focus, built, diag, a.trigger.span)
    ):
        return None
    tids = tuple(o.id for o in targets) + tuple(o.id for o in new_objects)
    return Lowered(
        spec=spec,
        unit=u,
        category=category,
        trigger_class=tclass,
        trigger=trig,
        targets=tids,
        params={k: v for k, v in params.items() if v is not None},
        effects=tuple(out.effects),
        words=dict(out.words),
        new_objects=new_objects,
        focus=focus,
        hints=out.hints,
        span=a.span,
        affects=affects,
        materials=tuple(out.materials),
    )


def _bounds_diameter(built: Built) -> float:
    p = Polygon(built.exploration.bounds)
    x0, y0, x1, y1 = p.bounds
    return math.hypot(x1 - x0, y1 - y0)


def _trigger(a: N.Anomaly, spec: OperatorSpec, built: Built, diag: Collector) -> tuple[str, B.Trigger] | None:
    if a.trigger is None:
        if "static" not in spec.triggers:
            kinds = sorted({k for k, c in TR.TRIGGER_CLASS.items() if c in spec.triggers})
            diag.error(
                "E602",
                f"`{spec.name}` needs a trigger",
                a.op_span,
                f"add `when …` with one of: {', '.join(kinds)} (e.g. `when revisit`)",
            )
            return None
        return "static", B.ALWAYS
    t = a.trigger
    tclass = TR.TRIGGER_CLASS[t.kind]
    if tclass not in spec.triggers:
        allowed = ", ".join(spec.triggers)
        diag.error(
            "E603",
            f"`{spec.name}` cannot take the trigger `{t.kind}`",
            t.span,
            f"it takes: {allowed.replace('static', 'no trigger')}",
        )
        return None
    ev = Evaluator(diag)
    vals: dict = {}
    if t.arg is not None:
        vals["arg"] = ev.ranged(t.arg, TR.TRIGGER_ARG[t.kind], f"`{t.kind}`", 0.1, 100000)
        if vals["arg"] is None:
            return None
    cmap = {c.key: c for c in TR.TRIGGERS[t.kind]}
    for cl in t.clauses:
        c = cmap[cl.key]
        vals[cl.key] = ev.value(cl.value, c.type, f"`{cl.key}`", c.min, c.max)
    if any(v is None for v in vals.values()):
        return None
    trig = TR.lower_trigger(t.kind, TR.Args(vals, _bounds_diameter(built), t.span, diag))
    if trig is None:
        return None
    return tclass, trig


def distance_range(built: Built, o: B.SceneObject) -> tuple[float, float]:
    """The least and greatest horizontal distance from `o`'s bounds (what distance triggers measure)
    to a point of the exploration area."""
    poly = Polygon(built.exploration.bounds)
    box = Polygon.from_bounds(o.aabb_min[0], o.aabb_min[1], o.aabb_max[0], o.aabb_max[1])
    far = max(box.distance(Point(x, y)) for x, y in built.exploration.bounds)  # convex: at a corner
    return poly.distance(box), far


def _distance_switches(trig: B.Trigger, o: B.SceneObject, built: Built, diag: Collector, span) -> bool:
    """A distance trigger (`beyond`, `within`, `leave`) must switch somewhere inside the bounds: its
    unit's `switches` says why not (E605), with the range of distances the bounds allow."""
    switches = TR.UNITS[trig.kind.value].switches
    if switches is None:
        return True
    fault = switches(trig, TR.Reach(o.id, *distance_range(built, o)))
    if fault is None:
        return True
    diag.error("E605", fault[0], span, fault[1])
    return False


def _params(a: N.Anomaly, spec: OperatorSpec, diag: Collector) -> tuple[dict, dict] | None:
    ev = Evaluator(diag)
    out: dict = {}
    spans: dict = {}
    before = len(diag.items)
    given = {c.key: c for c in a.clauses}
    for p in spec.params:
        cl = given.get(p.name)
        if cl is None:
            if p.required:
                diag.error(
                    "E606",
                    f"`{spec.name}` needs `{p.name}`",
                    a.op_span,
                    f"{p.doc}; e.g. `{p.name} {_example(p)}`",
                )
            elif p.default is not None:
                out[p.name] = _default(p)
            continue
        t = p.type  # registry.PARAM_TYPES: exactly the value types of compiler/schema.py
        lo, hi = p.min, p.max
        if t in (T.VEC2, T.VEC3) and cl.value is not None:
            out[p.name] = ev.value(cl.value, t, f"`{p.name}`", lo, hi)
        else:
            out[p.name] = ev.value(cl.value, t, f"`{p.name}`", lo, hi, p.choices)
        spans[p.name] = cl.value.span
    if len(diag.items) > before:
        return None
    return out, spans


def _affects(
    a: N.Anomaly, targets: list[B.SceneObject], built: Built, diag: Collector
) -> tuple[str, ...] | None:
    """The objects of `affects OBJ | [OBJ, …]`: existing objects other than the anomaly's targets."""
    if not a.affects:
        return ()
    head, *rest = a.affects
    value = rest[0] if rest else None
    names = value.items if isinstance(value, S.List) else ([value] if value is not None else [])
    if not names or not all(isinstance(n, S.Name) for n in names):
        diag.error(
            "E620",
            "`affects` needs the id of an object (or a list of ids) the anomaly changes as a consequence",
            (value or head).span,
            "e.g. `anomaly floor_hole at (2, 3) radius 1 m affects barrel_2`",
        )
        return None
    out: list[str] = []
    for n in names:
        o = find_object(built, diag, n.text, n.span)
        if o is None:
            return None
        if o in targets:
            diag.error(
                "E620",
                f"`{o.id}` is the anomaly's own target; `affects` names the other objects it changes",
                n.span,
                f"drop `{o.id}` from `affects`",
            )
            return None
        if o.id not in out:
            out.append(o.id)
    return tuple(out)


def _default(p):
    """A parameter's default from operators.yaml, in the same form an evaluated value has."""
    d = p.default
    if p.type == "color" and isinstance(d, str):
        return tuple(round(int(d[i : i + 2], 16) / 255.0, 4) for i in (1, 3, 5))
    if isinstance(d, (list, tuple)):
        return tuple(float(v) for v in d)
    if isinstance(d, int) and not isinstance(d, bool) and p.type not in ("int",):
        return float(d)
    return d


def _example(p) -> str:
    return PARAM_TYPES[p.type].example or (p.choices[0] if p.choices else "VALUE")
