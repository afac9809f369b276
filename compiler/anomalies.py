"""Pass 6, anomalies: check each anomaly statement against its operator and lower it to
the primitive effects the runtime applies (`bundle.model.Effect`).

The operator table (`taxonomy/operators.yaml`) gives parameters, trigger classes and what
the target must be; the functions here give each operator its meaning in the world.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from shapely.geometry import Polygon

from wac.bundle import model as B
from wac.bundle.terrain import height as terrain_height
from wac.bundle.terrain import height_range as terrain_height_range
from wac.compiler import nodes as N
from wac.compiler import schema as T
from wac.compiler import syntax as S
from wac.compiler.assemble import Built, make_object
from wac.compiler.diagnostics import Collector, did_you_mean
from wac.compiler.layout import Layout, world_bounds
from wac.compiler.values import Evaluator
from wac.taxonomy.registry import OperatorSpec, registry

DIRECTIONS = {"north": (0.0, 1.0), "south": (0.0, -1.0), "east": (1.0, 0.0), "west": (-1.0, 0.0)}
MISSING_TEXTURE = "missing_texture"


@dataclass
class Lowered:
    """An anomaly checked and lowered, with what rubric and plan need to know."""

    spec: OperatorSpec
    category: str
    trigger_class: str
    trigger: B.Trigger
    targets: tuple[str, ...]
    params: dict
    effects: tuple[B.Effect, ...]
    words: dict = field(default_factory=dict)  # extra rubric words
    new_objects: tuple[B.SceneObject, ...] = ()
    focus: B.SceneObject | None = None  # the object the plan looks at (or a stand-in)
    focus_point: tuple[float, float, float] | None = None
    span: object = None
    affects: tuple[str, ...] = ()  # objects the task declares the anomaly changes as a consequence


REQUIRES = {
    "solid": (lambda o: o.solid, "is not solid"),
    "supported": (lambda o: o.support is not None, "rests on the ground, not on another object"),
    "dynamic": (lambda o: o.dynamic, "is static (give it a `mass` to make it dynamic)"),
    "door": (lambda o: any(p.hinge for p in o.parts), "is not a door (it has no hinged part)"),
    "lamp": (lambda o: o.lit is not None, "is not a lamp (it has no emitting part)"),
    "animated": (lambda o: any(p.spin for p in o.parts), "has no animated (spinning) part"),
    "interactive": (lambda o: bool(o.interactions), "cannot be interacted with (add `interact …`)"),
    "liquid": (lambda o: o.liquid_depth_m is not None, "is not a liquid or pit (`liquid yes`)"),
}


def _era_conflict(obj_era: str, scene_era: str) -> bool:
    if obj_era == "any" or scene_era == "any":
        return False
    a, b = T.ERA_YEARS.get(obj_era), T.ERA_YEARS.get(scene_era)
    return bool(a and b) and (a[0] >= b[1] or a[1] <= b[0])


def _bounds_diameter(built: Built) -> float:
    p = Polygon(built.exploration.bounds)
    x0, y0, x1, y1 = p.bounds
    return math.hypot(x1 - x0, y1 - y0)


class Lowerer:
    def __init__(self, built: Built, layout: Layout, diag: Collector) -> None:
        self.built = built
        self.layout = layout
        self.diag = diag
        self.reg = registry()

    def obj(self, name: str, span) -> B.SceneObject | None:
        o = self.built.objects.get(name)
        if o is None:
            self.diag.error(
                "E601",
                f"unknown object `{name}`",
                span,
                did_you_mean(name, self.built.objects) or "the target must be declared in the scene or task",
            )
        return o

    # -- triggers -------------------------------------------------------------------------------
    def trigger(self, a: N.Anomaly, spec: OperatorSpec) -> tuple[str, B.Trigger] | None:
        if a.trigger is None:
            if "static" not in spec.triggers:
                kinds = sorted({k for k, c in T.TRIGGER_CLASS.items() if c in spec.triggers})
                self.diag.error(
                    "E602",
                    f"`{spec.name}` needs a trigger",
                    a.op_span,
                    f"add `when …` with one of: {', '.join(kinds)} (e.g. `when revisit`)",
                )
                return None
            return "static", B.Trigger()
        t = a.trigger
        tclass = T.TRIGGER_CLASS[t.kind]
        if tclass not in spec.triggers:
            allowed = ", ".join(spec.triggers)
            self.diag.error(
                "E603",
                f"`{spec.name}` cannot take the trigger `{t.kind}`",
                t.span,
                f"it takes: {allowed.replace('static', 'no trigger')}",
            )
            return None
        ev = Evaluator(self.diag)
        vals: dict = {}
        if t.arg is not None:
            vals["arg"] = ev.ranged(t.arg, T.TRIGGER_ARG[t.kind], f"`{t.kind}`", 0.1, 100000)
            if vals["arg"] is None:
                return None
        cmap = {c.key: c for c in T.TRIGGERS[t.kind]}
        for cl in t.clauses:
            c = cmap[cl.key]
            vals[cl.key] = ev.value(cl.value, c.type, f"`{cl.key}`", c.min, c.max)
        if any(v is None for v in vals.values()):
            return None
        diameter = _bounds_diameter(self.built)
        k = B.TriggerKind(t.kind)
        if t.kind == "revisit":
            trig = B.Trigger(
                kind=k,
                away_s=vals.get("away", B.TRIGGER_DEFAULTS.away_s),
                leave_m=vals.get("leave", B.TRIGGER_DEFAULTS.leave_m),
                seen_within_m=vals.get("seen_within", B.TRIGGER_DEFAULTS.seen_within_m),
                repeat=bool(vals.get("repeat", False)),
            )
        elif t.kind == "look_away":
            trig = B.Trigger(
                kind=k,
                seen_within_m=vals.get("seen_within", B.TRIGGER_DEFAULTS.seen_within_m),
                repeat=bool(vals.get("repeat", False)),
            )
        elif t.kind == "leave":
            enter = vals.get("enter", B.TRIGGER_DEFAULTS.enter_m)
            exit_ = vals.get("exit", B.TRIGGER_DEFAULTS.exit_m)
            if exit_ <= enter:
                self.diag.error(
                    "E604",
                    f"`leave` fires beyond `exit` ({exit_:g} m), which must be farther than `enter` ({enter:g} m)",
                    t.span,
                )
                return None
            if exit_ >= diameter:
                self.diag.error(
                    "E605",
                    f"the trigger can never fire: leaving {exit_:g} m is farther than the bounds allow "
                    f"(at most {diameter:.1f} m across)",
                    t.span,
                    "lower `exit` or widen the bounds",
                )
                return None
            trig = B.Trigger(kind=k, enter_m=enter, exit_m=exit_, repeat=bool(vals.get("repeat", False)))
        elif t.kind == "after":
            trig = B.Trigger(kind=k, after_s=vals["arg"])
        elif t.kind == "every":
            trig = B.Trigger(kind=k, period_s=vals["arg"])
        elif t.kind in ("beyond", "within"):
            if vals["arg"] >= diameter:
                self.diag.error(
                    "E605",
                    f"the trigger can never fire: {vals['arg']:g} m is more than the bounds span "
                    f"({diameter:.1f} m)",
                    t.span,
                    "use a shorter distance",
                )
                return None
            trig = B.Trigger(kind=k, distance_m=vals["arg"])
        else:
            trig = B.Trigger(kind=k)
        if tclass != "temporal":
            trig = trig.model_copy(update={"only_unseen": False})
        if (
            t.kind == "revisit"
            and trig.leave_m is not None
            and trig.leave_m >= diameter
            and "away" not in vals
        ):
            self.diag.error(
                "E605",
                f"the revisit trigger can never fire: moving {trig.leave_m:g} m away is more than the "
                f"bounds allow ({diameter:.1f} m across)",
                t.span,
                "lower `leave` or add `away 3 s`",
            )
            return None
        return tclass, trig

    # -- parameters ----------------------------------------------------------------------------
    def params(self, a: N.Anomaly, spec: OperatorSpec) -> dict | None:
        ev = Evaluator(self.diag)
        out: dict = {}
        before = len(self.diag.items)
        given = {c.key: c for c in a.clauses}
        for p in spec.params:
            cl = given.get(p.name)
            if cl is None:
                if p.required:
                    self.diag.error(
                        "E606",
                        f"`{spec.name}` needs `{p.name}`",
                        a.op_span,
                        f"{p.doc}; e.g. `{p.name} {_example(p)}`",
                    )
                elif p.default is not None:
                    out[p.name] = _default(p)
                continue
            t = {
                "vec2": T.VEC2,
                "vec3": T.VEC3,
                "object": T.OBJECT,
                "part": T.PART,
                "material": T.MATERIAL,
                "prefab": T.PREFAB,
                "enum": T.ENUM,
            }.get(p.type, p.type)
            lo, hi = p.min, p.max
            if t in (T.VEC2, T.VEC3) and cl.value is not None:
                out[p.name] = ev.value(cl.value, t, f"`{p.name}`", lo, hi)
            else:
                out[p.name] = ev.value(cl.value, t, f"`{p.name}`", lo, hi, p.choices)
            out[f"_{p.name}_span"] = cl.value.span
        if len(self.diag.items) > before:
            return None
        return out

    # -- the statement -------------------------------------------------------------------------
    def lower(self, a: N.Anomaly) -> Lowered | None:
        spec = self.reg.operator(a.operator)
        assert spec is not None
        tr = self.trigger(a, spec)
        params = self.params(a, spec)
        if tr is None or params is None:
            return None
        tclass, trig = tr
        category = spec.category_for(tclass)
        targets: list[B.SceneObject] = []
        for name in a.operand:
            if spec.operand == "new_object":
                continue
            o = self.obj(name.text, name.span)
            if o is None:
                return None
            targets.append(o)
        for o, name in zip(targets, a.operand, strict=False):
            for req in spec.requires:
                ok, why = REQUIRES[req]
                if not ok(o):
                    self.diag.error(
                        "E607",
                        f"`{spec.name}` does not apply to `{o.id}`: it {why}",
                        name.span,
                        _requires_hint(spec.name, req),
                    )
                    return None
        affects = self.affects(a, targets)
        if affects is None:
            return None
        fn = getattr(self, f"op_{spec.name}")
        result = fn(a, spec, targets, params, trig)
        if result is None:
            return None
        effects, words, new_objects = result
        effects = tuple(effects)
        focus = targets[0] if targets else (new_objects[0] if new_objects else None)
        tids = tuple(o.id for o in targets) + tuple(o.id for o in new_objects)
        clean_params = {k: v for k, v in params.items() if not k.startswith("_") and v is not None}
        return Lowered(
            spec,
            category,
            tclass,
            trig,
            tids,
            clean_params,
            effects,
            words,
            tuple(new_objects),
            focus,
            words.get("_focus_point"),
            a.span,
            affects,
        )

    def affects(self, a: N.Anomaly, targets: list[B.SceneObject]) -> tuple[str, ...] | None:
        """The objects of `affects OBJ | [OBJ, …]`: existing objects other than the anomaly's targets."""
        if not a.affects:
            return ()
        head, *rest = a.affects
        value = rest[0] if rest else None
        names = value.items if isinstance(value, S.List) else ([value] if value is not None else [])
        if not names or not all(isinstance(n, S.Name) for n in names):
            self.diag.error(
                "E620",
                "`affects` needs the id of an object (or a list of ids) the anomaly changes as a consequence",
                (value or head).span,
                "e.g. `anomaly floor_hole at (2, 3) radius 1 m affects barrel_2`",
            )
            return None
        out: list[str] = []
        for n in names:
            o = self.obj(n.text, n.span)
            if o is None:
                return None
            if o in targets:
                self.diag.error(
                    "E620",
                    f"`{o.id}` is the anomaly's own target; `affects` names the other objects it changes",
                    n.span,
                    f"drop `{o.id}` from `affects`",
                )
                return None
            if o.id not in out:
                out.append(o.id)
        return tuple(out)

    # -- helpers for operators ----------------------------------------------------------------
    def _new_object(self, thing: N.Thing) -> B.SceneObject | None:
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
        values, parts = built
        sup = None
        if values.get("on"):
            sup = self.obj(values["on"], (thing.clause("on") or thing).span)
            if sup is None:
                return None
        return make_object(thing, values, parts, sup, set(), self.diag, self.built.scene.ground)

    def _rest_on_same_base(self, o: B.SceneObject, rotation) -> tuple[float, float, float]:
        lo, _ = world_bounds(o.parts, (0.0, 0.0, 0.0), rotation, o.scale)
        return (o.position[0], o.position[1], round(o.aabb_min[2] - lo[2], 6))

    def _support_name(self, o: B.SceneObject) -> str:
        if o.support and o.support in self.built.objects:
            return f"the {self.built.objects[o.support].name}"
        return "the ground"

    def _tint(self, o: B.SceneObject, update: dict, suffix: str, part: str | None = None) -> list[B.Effect]:
        """set_material effects giving each (or one) part a derived material."""
        effects = []
        for p in o.parts:
            if part and p.id != part:
                continue
            base = self.layout.materials.used[p.material]
            name = f"{base.name}~{suffix}"
            if name not in self.layout.materials.used:
                self.layout.materials.used[name] = base.model_copy(update={"name": name, **update})
            effects.append(B.SetMaterial(target=o.id, part=p.id, material=name))
        return effects

    def _part(self, o: B.SceneObject, params: dict, spec: OperatorSpec) -> str | None | bool:
        part = params.get("part")
        if part is None:
            return None
        if part not in {p.id for p in o.parts}:
            self.diag.error(
                "E609",
                f"`{o.id}` has no part `{part}`",
                params.get("_part_span"),
                did_you_mean(part, [p.id for p in o.parts])
                or f"its parts: {', '.join(p.id for p in o.parts)}",
            )
            return False
        return part

    # -- operators: static physics --------------------------------------------------------------
    def op_float(self, a, spec, t, p, trig):
        o = t[0]
        if o.attached_to is not None:
            self.diag.error(
                "E607",
                f"`{o.id}` hangs from `{o.attached_to}`; it rests on nothing, so floating it is no defect",
                a.operand[0].span,
                "pick an object that stands on the ground or `on` another object",
            )
            return None
        ground = terrain_height_range(self.built.scene.ground, o.aabb_min[:2], o.aabb_max[:2])[1]
        if o.support is None and o.aabb_min[2] > ground + 0.02:
            self.diag.error(
                "E607",
                f"`{o.id}` already floats {o.aabb_min[2] - ground:.2f} m above the ground",
                a.operand[0].span,
                "pick an object that stands on the ground or `on` another object",
            )
            return None
        x, y, z = o.position
        return (
            [B.SetPose(target=o.id, position=(x, y, round(z + p["by"], 6)))],
            {"support": self._support_name(o)},
            [],
        )

    def op_remove_support(self, a, spec, t, p, trig):
        o = t[0]
        sup = self.built.objects[o.support]
        # the target stays where it was, in mid-air, instead of falling once its support is gone
        eff = B.RemoveObject(target=sup.id, keep_in_place=(o.id,))
        return [eff], {"support": f"the {sup.name}"}, []

    def op_sink(self, a, spec, t, p, trig):
        o = t[0]
        x, y, z = o.position
        yaw, pitch, roll = o.rotation_deg
        return (
            [
                B.SetPose(
                    target=o.id,
                    position=(x, y, round(z - p["by"], 6)),
                    rotation_deg=(yaw, pitch + p.get("tilt", 0.0), roll),
                )
            ],
            {"support": self._support_name(o)},
            [],
        )

    def op_push_into(self, a, spec, t, p, trig):
        o = t[0]
        other = self.obj(p["into"], p.get("_into_span"))
        if other is None:
            return None
        if other.id == o.id:
            self.diag.error("E610", "an object cannot be pushed into itself", p.get("_into_span"))
            return None
        if not other.solid:
            self.diag.error(
                "E607", f"`{other.id}` is not solid, so overlapping it is no defect", p.get("_into_span")
            )
            return None
        ca = (np.array(o.aabb_min) + np.array(o.aabb_max)) / 2
        cb = (np.array(other.aabb_min) + np.array(other.aabb_max)) / 2
        d = cb[:2] - ca[:2]
        dist = float(np.linalg.norm(d))
        if dist < 1e-6:
            d, dist = np.array([1.0, 0.0]), 0.0
        d = d / max(dist, 1e-9)
        ha = (np.array(o.aabb_max) - np.array(o.aabb_min))[:2] / 2
        hb = (np.array(other.aabb_max) - np.array(other.aabb_min))[:2] / 2
        reach = float(abs(d[0]) * (ha[0] + hb[0]) + abs(d[1]) * (ha[1] + hb[1]))
        size = 2.0 * float(abs(d[0]) * ha[0] + abs(d[1]) * ha[1])  # the target's extent along the push
        if p["depth"] >= size:
            self.diag.error(
                "E607",
                f"`push_into` depth {p['depth']:g} m is more than `{o.id}` measures along the push "
                f"({size:.2f} m): it would pass right into `{other.id}`",
                p.get("_depth_span", a.op_span),
                f"use a depth below {size:.2f} m (about a third of it reads as an overlap)",
            )
            return None
        shift = dist - reach + p["depth"]
        x, y, z = o.position
        pos = (round(x + d[0] * shift, 6), round(y + d[1] * shift, 6), z)
        into = other.name if other.name != o.name else f"other {other.name}"
        return [B.SetPose(target=o.id, position=pos)], {"into_name": into}, []

    def op_duplicate(self, a, spec, t, p, trig):
        o = t[0]
        off = p["offset"]
        pos = tuple(round(o.position[i] + off[i], 6) for i in range(3))
        lo, hi = world_bounds(o.parts, pos, o.rotation_deg, o.scale)
        copy = o.model_copy(update={"id": f"{o.id}_copy", "position": pos, "aabb_min": lo, "aabb_max": hi})
        return [B.AddObject(target=copy.id, object=copy)], {}, []

    def op_misalign(self, a, spec, t, p, trig):
        o = t[0]
        part = self._part(o, p, spec)
        if not part:
            if part is None:
                self.diag.error("E606", "`misalign` needs `part`", a.op_span)
            return None
        if p["by"] == (0.0, 0.0, 0.0) and not p.get("rotate"):
            self.diag.error(
                "E611",
                "`misalign` with no offset and no rotation changes nothing",
                a.op_span,
                "add `by (0.1, 0, 0)` or `rotate 20 deg`",
            )
            return None
        pt = next(x for x in o.parts if x.id == part)
        pos = tuple(round(pt.position[i] + p["by"][i], 6) for i in range(3))
        rot = (pt.rotation_deg[0] + p.get("rotate", 0.0), pt.rotation_deg[1], pt.rotation_deg[2])
        return (
            [B.SetPartPose(target=o.id, part=part, position=pos, rotation_deg=rot)],
            {"part": part.replace("_", " "), "by": p["by"], "rotate": p.get("rotate", 0.0)},
            [],
        )

    def op_pile(self, a, spec, t, p, trig):
        effects, news = [], []
        ax, ay = p["at"]
        for k, o in enumerate(t):
            ang = k * 2.39996  # golden angle: copies fan out without a random generator
            r = p["spread"] * (k + 1) ** 0.5 * 0.6
            tilt = p["tilt"] * (1 if k % 2 == 0 else -1)
            rot = (o.rotation_deg[0] + 37.0 * k, tilt, o.rotation_deg[2] + tilt / 2)
            lo, _ = world_bounds(o.parts, (0.0, 0.0, 0.0), rot, o.scale)
            px, py = ax + r * math.cos(ang), ay + r * math.sin(ang)
            pos = (
                round(px, 6),
                round(py, 6),
                round(terrain_height(self.built.scene.ground, px, py) - lo[2] + 0.05 * k, 6),
            )
            blo, bhi = world_bounds(o.parts, pos, rot, o.scale)
            copy = o.model_copy(
                update={
                    "id": f"{o.id}_pile{k + 1}",
                    "position": pos,
                    "rotation_deg": rot,
                    "aabb_min": blo,
                    "aabb_max": bhi,
                    "support": None,
                    "dynamic": False,
                }
            )
            effects.append(B.AddObject(target=copy.id, object=copy))
            news.append(copy)
        return effects, {"_focus_point": (ax, ay, 0.4)}, []

    def op_scale(self, a, spec, t, p, trig):
        o = t[0]
        f = p["by"]
        if all(abs(v - 1.0) < 0.05 for v in f):
            self.diag.error(
                "E611",
                "a scale within 5% of 1 is not a visible defect",
                p.get("_by_span"),
                "use a factor such as 2.5 or (0.5, 1, 1)",
            )
            return None
        scale = tuple(round(o.scale[i] * f[i], 6) for i in range(3))
        distance = trig.kind in (B.TriggerKind.beyond, B.TriggerKind.within)
        eff = (B.SetAppearance if distance else B.SetPose)(target=o.id, scale=scale)
        return [eff], {"by_words": _scale_words(f)}, []

    # -- interactive physics ------------------------------------------------------------------
    def op_remove_collision(self, a, spec, t, p, trig):
        return [B.SetSolid(target=t[0].id, solid=False)], {}, []

    def op_floor_hole(self, a, spec, t, p, trig):
        (x, y), (w, d) = p["at"], p["size"]
        if self.built.scene.ground.terrain is not None:
            self.diag.error(
                "E434",
                "a hole cannot be cut into a heightfield terrain",
                a.span,
                "use `floor_hole` on a scene with flat ground",
            )
            return None
        return (
            [B.AddHole(position=(x, y, 0.0), size=(w, d, 4.0))],
            {"at_words": f"({x:g}, {y:g})", "_focus_point": (x, y, 0.0)},
            [],
        )

    def op_one_way(self, a, spec, t, p, trig):
        return (
            [B.SetMechanism(target=t[0].id, mechanism="one_way", normal=DIRECTIONS[p["from"]])],
            {},
            [],
        )

    def op_interact_through(self, a, spec, t, p, trig):
        return [B.SetMechanism(target=t[0].id, mechanism="through_walls")], {}, []

    def op_invisible_wall(self, a, spec, t, p, trig):
        (x, y), size = p["at"], p["size"]
        return (
            [
                B.AddBlocker(
                    position=(x, y, round(terrain_height(self.built.scene.ground, x, y), 6)),
                    size=size,
                    rotation_deg=(p.get("yaw", 0.0), 0.0, 0.0),
                )
            ],
            {"at_words": f"({x:g}, {y:g})", "_focus_point": (x, y, 1.0)},
            [],
        )

    def op_fake_floor(self, a, spec, t, p, trig):
        o = t[0]
        lo, hi = o.aabb_min, o.aabb_max
        pos = ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, round(hi[2] - 0.05, 6))
        return (
            [
                B.AddBlocker(
                    target=o.id,
                    position=pos,
                    size=(round(hi[0] - lo[0], 6), round(hi[1] - lo[1], 6), 0.05),
                    rotation_deg=(0.0, 0.0, 0.0),
                )
            ],
            {},
            [],
        )

    def op_ghost_door(self, a, spec, t, p, trig):
        return [B.SetMechanism(target=t[0].id, mechanism="ghost")], {}, []

    def op_phantom_door(self, a, spec, t, p, trig):
        return [B.SetMechanism(target=t[0].id, mechanism="phantom")], {}, []

    def op_bounce(self, a, spec, t, p, trig):
        return [B.SetPhysics(target=t[0].id, restitution=p["restitution"])], {}, []

    def op_launch(self, a, spec, t, p, trig):
        v = p["speed"]
        m = t[0].mass_kg  # an impulse (N s) that gives the object the launch speed
        impulse = (
            (0.0, 0.0, round(v * m, 6))
            if p["direction"] == "up"
            else (round(v * m * 0.8, 6), 0.0, round(v * m * 0.6, 6))
        )
        return [B.SetPhysics(target=t[0].id, impulse=impulse)], {"speed": f"{v:g} m/s"}, []

    def op_overturn(self, a, spec, t, p, trig):
        return [B.SetPhysics(target=t[0].id, torque_deg=p["angle"])], {}, []

    def op_set_mass(self, a, spec, t, p, trig):
        o = t[0]
        if p["mass"] >= o.mass_kg * 0.5:
            self.diag.error(
                "E611",
                f"`{o.id}` already weighs {o.mass_kg:g} kg; {p['mass']:g} kg is not implausibly light",
                p.get("_mass_span"),
                "use a mass well below a tenth of its real mass",
            )
            return None
        return [B.SetPhysics(target=o.id, mass_kg=p["mass"])], {}, []

    def op_tremble(self, a, spec, t, p, trig):
        return (
            [B.SetMotion(target=t[0].id, motion="tremble", amplitude_m=p["amplitude"])],
            {},
            [],
        )

    # -- spatial consistency ------------------------------------------------------------------
    def op_xray(self, a, spec, t, p, trig):
        return [B.SetRender(target=t[0].id, render="xray")], {}, []

    def op_hide(self, a, spec, t, p, trig):
        o = t[0]
        if trig.kind == B.TriggerKind.always:
            return (
                [
                    B.SetVisible(
                        target=o.id,
                        visible=False,
                        casts_shadow=True,
                        keeps_collision=True,
                    )
                ],
                {
                    "hide_words": "is not drawn, yet its shadow remains and it still blocks movement when walked into",
                    "hide_expected": f"The {o.name} should be visible where its shadow and collision are.",
                    "hide_inspection": f"Look at the shadow on the ground where the {o.name} stands and walk into that spot.",
                },
                [],
            )
        if trig.kind in (B.TriggerKind.beyond, B.TriggerKind.within):
            side = "farther" if trig.kind == B.TriggerKind.beyond else "closer"
            return (
                [
                    B.SetVisible(
                        target=o.id,
                        visible=False,
                        casts_shadow=False,
                        keeps_collision=True,
                    )
                ],
                {
                    "hide_words": f"disappears when seen from {side} than {trig.distance_m:g} m and reappears otherwise",
                    "hide_expected": f"The {o.name} should stay visible at every distance.",
                    "hide_inspection": f"View the {o.name} from near and from beyond {trig.distance_m:g} m.",
                },
                [],
            )
        return (
            [B.RemoveObject(target=o.id)],
            {
                "hide_words": f"disappears {_trigger_phrase(trig)}",
                "hide_expected": f"The {o.name} should still be there.",
                "hide_inspection": f"Observe the {o.name}, {_trigger_action(trig)}, then look at the same spot again.",
            },
            [],
        )

    def op_vanish(self, a, spec, t, p, trig):
        # the reference's `vanish` (three.js `visible = false`): not drawn, no shadow, still solid
        eff = B.SetVisible(target=t[0].id, visible=False, casts_shadow=False, keeps_collision=True)
        return [eff], {}, []

    def op_cull(self, a, spec, t, p, trig):
        return (
            [B.SetRender(target=t[0].id, render="cull", normal=DIRECTIONS[p["from"]])],
            {},
            [],
        )

    def op_flip_normals(self, a, spec, t, p, trig):
        return [B.SetRender(target=t[0].id, render="flip_normals")], {}, []

    def op_lod_pop(self, a, spec, t, p, trig):
        if trig.kind != B.TriggerKind.beyond:
            self.diag.error("E603", "`lod_pop` takes `when beyond DISTANCE`", a.op_span)
            return None
        return (
            [B.SetRender(target=t[0].id, render="lod_proxy")],
            {"distance": f"{trig.distance_m:g} m"},
            [],
        )

    def op_recolor(self, a, spec, t, p, trig):
        o = t[0]
        hexcode = "".join(f"{round(c * 255):02x}" for c in p["to"])
        return self._tint(o, {"color": p["to"]}, f"recolor{hexcode}"), {}, []

    def _casts_visible_shadows(self, a) -> bool:
        """A shadow anomaly needs a light whose shadows show: the sun, or a lamp or light that is (or
        turns) on; without one no object casts a shadow, so a missing or moved one is no defect."""
        sc = self.built.scene
        lamps = [o for o in sc.objects if o.lit or (o.lit is not None and sc.day_night is not None)]
        if sc.sun is not None or lamps or any(pl.on for pl in sc.lights):
            return True
        self.diag.error(
            "E607",
            f"`{a.operator}` needs a light that casts shadows: the scene has no sun and no lit lamp",
            a.op_span,
            "add `sun …` to the scene, or a lit lamp near the target",
        )
        return False

    def op_remove_shadow(self, a, spec, t, p, trig):
        if not self._casts_visible_shadows(a):
            return None
        return [B.SetShadow(target=t[0].id, casts_shadow=False)], {}, []

    def op_displace_shadow(self, a, spec, t, p, trig):
        if not self._casts_visible_shadows(a):
            return None
        if math.hypot(*p["by"]) < 0.5:
            self.diag.error(
                "E611",
                "a shadow moved by less than 0.5 m is hard to see",
                p.get("_by_span"),
                "displace it by at least 0.5 m",
            )
            return None
        return [B.SetShadow(target=t[0].id, casts_shadow=True, shadow_offset=p["by"])], {}, []

    def op_glow(self, a, spec, t, p, trig):
        o = t[0]
        return self._tint(o, {"emissive": p["color"]}, "glow"), {"color": _color_words(p["color"])}, []

    def op_dark_lamp(self, a, spec, t, p, trig):
        o = t[0]
        if not o.lit:
            self.diag.error(
                "E607", f"`{o.id}` is switched off; a dark lamp must look lit", a.op_span, "add `lit yes`"
            )
            return None
        return [B.SetLight(target=o.id, lit=True, illuminates=False)], {}, []

    def op_swap_material(self, a, spec, t, p, trig):
        o = t[0]
        part = self._part(o, p, spec)
        if part is False:
            return None
        mat = self.layout.materials.get(p["to"], p.get("_to_span"))
        if mat is None:
            return None
        current = {
            self.layout.materials.used[x.material].category for x in o.parts if not part or x.id == part
        }
        if current == {mat.category}:
            self.diag.error(
                "E611",
                f"`{o.id}` is already made of {mat.category}; swapping to `{p['to']}` is no defect",
                p.get("_to_span"),
                "pick a material of another category",
            )
            return None
        effects = [
            B.SetMaterial(target=o.id, part=x.id, material=mat.name)
            for x in o.parts
            if not part or x.id == part
        ]
        return (
            effects,
            {
                "to_words": mat.category if mat.category != "generic" else mat.name,
                "material_words": " / ".join(sorted(current)),
                "part_words": f"{part.replace('_', ' ')} of the " if part else "",
            },
            [],
        )

    def op_missing_texture(self, a, spec, t, p, trig):
        o = t[0]
        part = self._part(o, p, spec)
        if part is False:
            return None
        if MISSING_TEXTURE not in self.layout.materials.used:
            self.layout.materials.used[MISSING_TEXTURE] = B.Material(
                name=MISSING_TEXTURE,
                color=(1.0, 0.0, 1.0),
                roughness=1.0,
                emissive=(1.0, 0.0, 1.0),
                category="placeholder",
            )
        effects = [
            B.SetMaterial(target=o.id, part=x.id, material=MISSING_TEXTURE)
            for x in o.parts
            if not part or x.id == part
        ]
        return effects, {"part_words": f"{part.replace('_', ' ')} of the " if part else ""}, []

    def op_transparent(self, a, spec, t, p, trig):
        o = t[0]
        part = self._part(o, p, spec)
        if part is False:
            return None
        return (
            self._tint(o, {"opacity": p["opacity"]}, f"alpha{round(p['opacity'] * 100)}", part or None),
            {"part_words": f"{part.replace('_', ' ')} of the " if part else ""},
            [],
        )

    # -- temporal consistency -----------------------------------------------------------------
    def op_spawn(self, a, spec, t, p, trig):
        new = self._new_object(a.new_object)
        if new is None:
            return None
        return [B.AddObject(target=new.id, object=new)], {}, [new]

    def op_move(self, a, spec, t, p, trig):
        o = t[0]
        dx, dy = p["by"]
        if math.hypot(dx, dy) < 0.3:
            self.diag.error(
                "E611",
                "a move of less than 0.3 m is hard to notice",
                p.get("_by_span"),
                "move it at least 0.3 m",
            )
            return None
        x, y, z = o.position
        return (
            [B.SetPose(target=o.id, position=(round(x + dx, 6), round(y + dy, 6), z))],
            {},
            [],
        )

    def op_rotate(self, a, spec, t, p, trig):
        o = t[0]
        if abs(p["by"]) < 10:
            self.diag.error("E611", "a turn of less than 10 deg is hard to notice", p.get("_by_span"))
            return None
        yaw, pitch, roll = o.rotation_deg
        eff = B.SetPose(target=o.id, rotation_deg=(yaw + p["by"], pitch, roll))
        if trig.kind == B.TriggerKind.always:
            words = {
                "rotate_words": f"is turned {abs(p['by']):g} deg away from the way it should face",
                "rotate_expected": f"The {o.name} should face the way its function needs, like the others.",
                "rotate_inspection": f"View the {o.name} and compare it with similar objects.",
            }
        else:
            words = {
                "rotate_words": f"turns by {abs(p['by']):g} deg by itself {_trigger_phrase(trig)}",
                "rotate_expected": f"The {o.name} should keep its orientation.",
                "rotate_inspection": f"Note which way the {o.name} faces, {_trigger_action(trig)}, and compare.",
            }
        return [eff], words, []

    def op_drift(self, a, spec, t, p, trig):
        ax, ay = p["along"]
        n = math.hypot(ax, ay)
        if n < 1e-6:
            self.diag.error("E611", "`along` must be a non-zero direction", p.get("_along_span"))
            return None
        return (
            [
                B.SetMotion(
                    target=t[0].id,
                    motion="drift",
                    axis=(ax / n, ay / n, 0.0),
                    range_m=p["range"],
                    speed_m_s=p["speed"],
                )
            ],
            {},
            [],
        )

    def op_abrupt_day_night(self, a, spec, t, p, trig):
        dn = self.built.scene.day_night
        if dn is None:
            self.diag.error(
                "E607",
                "`abrupt_day_night` needs a scene with a `day_night` cycle",
                a.op_span,
                "add `day_night period 60 s` to the scene",
            )
            return None
        if p["period"] * 4 >= dn.period_s:
            self.diag.error(
                "E611",
                f"switching every {p['period']:g} s is not much faster than the normal cycle "
                f"({dn.period_s:g} s)",
                a.op_span,
                "use a period under a quarter of the cycle",
            )
            return None
        lamps = [o for o in self.built.scene.objects if o.lit is not None]
        focus = lamps[0] if lamps else None
        return (
            # `period` is the time between switches; a day-night cycle's period is a whole day (two switches)
            [B.SetDayNight(period_s=round(2 * p["period"], 6), transition="abrupt")],
            {"_focus": focus},
            [],
        )

    def op_flicker(self, a, spec, t, p, trig):
        return [B.SetFlicker(target=t[0].id, period_s=p["period"])], {}, []

    def op_switch_off(self, a, spec, t, p, trig):
        o = t[0]
        if not o.lit:
            self.diag.error("E607", f"`{o.id}` is already off", a.op_span, "add `lit yes` to the lamp")
            return None
        return [B.SetLight(target=o.id, lit=False, illuminates=False)], {}, []

    def op_freeze_animation(self, a, spec, t, p, trig):
        return [B.SetAnimation(target=t[0].id, animation="freeze")], {}, []

    def op_speed_animation(self, a, spec, t, p, trig):
        return [B.SetAnimation(target=t[0].id, animation="speed", value=p["factor"])], {}, []

    def op_jump_animation(self, a, spec, t, p, trig):
        return (
            [B.SetAnimation(target=t[0].id, animation="jump", value=p["by"], period_s=p["every"])],
            {},
            [],
        )

    def op_autoclose(self, a, spec, t, p, trig):
        return (
            [B.SetMechanism(target=t[0].id, mechanism="autoclose", value=p["after"])],
            {},
            [],
        )

    def op_speed_door(self, a, spec, t, p, trig):
        return [B.SetMechanism(target=t[0].id, mechanism="speed", value=p["factor"])], {}, []

    def op_jam(self, a, spec, t, p, trig):
        return (
            [B.SetMechanism(target=t[0].id, mechanism="jam", value=p["at"])],
            {"at_percent": f"{round(p['at'] * 100)}% open"},
            [],
        )

    def op_delay(self, a, spec, t, p, trig):
        return [B.SetMechanism(target=t[0].id, mechanism="delay", value=p["by"])], {}, []

    def op_ignore_interaction(self, a, spec, t, p, trig):
        return [B.SetMechanism(target=t[0].id, mechanism="dead")], {}, []

    # -- semantic consistency -----------------------------------------------------------------
    def _upright(self, o: B.SceneObject, span) -> bool:
        if not o.upright:
            self.diag.error(
                "E607",
                f"`{o.id}` has no natural up side (its prefab says `upright no`), so turning it over is no defect",
                span,
            )
            return False
        return True

    def op_invert(self, a, spec, t, p, trig):
        o = t[0]
        if not self._upright(o, a.op_span):
            return None
        yaw, pitch, roll = o.rotation_deg
        rot = (yaw, pitch, roll + 180.0)
        return (
            [B.SetPose(target=o.id, position=self._rest_on_same_base(o, rot), rotation_deg=rot)],
            {},
            [],
        )

    def op_tilt(self, a, spec, t, p, trig):
        o = t[0]
        if not self._upright(o, a.op_span):
            return None
        yaw, pitch, roll = o.rotation_deg
        rot = (yaw, pitch + p["by"], roll) if p["about"] == "y" else (yaw, pitch, roll + p["by"])
        return (
            [B.SetPose(target=o.id, position=self._rest_on_same_base(o, rot), rotation_deg=rot)],
            {},
            [],
        )

    def op_mirror(self, a, spec, t, p, trig):
        o = t[0]
        sx, sy, sz = o.scale
        return [B.SetPose(target=o.id, scale=(-sx, sy, sz))], {}, []

    def op_relocate(self, a, spec, t, p, trig):
        o = t[0]
        if p.get("onto"):
            sup = self.obj(p["onto"], p.get("_onto_span"))
            if sup is None:
                return None
            x = (sup.aabb_min[0] + sup.aabb_max[0]) / 2 if not p.get("to") else p["to"][0]
            y = (sup.aabb_min[1] + sup.aabb_max[1]) / 2 if not p.get("to") else p["to"][1]
            base = sup.aabb_max[2]
            words = f"on top of the {sup.name}"
        elif p.get("to"):
            (x, y) = p["to"]
            half = (np.asarray(o.aabb_max[:2]) - np.asarray(o.aabb_min[:2])) / 2
            base = terrain_height_range(
                self.built.scene.ground, (x - half[0], y - half[1]), (x + half[0], y + half[1])
            )[0]
            words = f"at ({x:g}, {y:g})"
        else:
            self.diag.error("E606", "`relocate` needs `to (x, y)` or `onto OBJECT`", a.op_span)
            return None
        lo, _ = world_bounds(o.parts, (0.0, 0.0, 0.0), o.rotation_deg, o.scale)
        return (
            [B.SetPose(target=o.id, position=(round(x, 6), round(y, 6), round(base - lo[2], 6)))],
            {"relocate_words": words},
            [],
        )

    def op_anachronism(self, a, spec, t, p, trig):
        new = self._new_object(a.new_object)
        if new is None:
            return None
        scene_era = self.built.scene.era
        if not _era_conflict(new.era, scene_era):
            self.diag.error(
                "E612",
                f"a {new.name} (era {new.era}) does not conflict with the scene's era ({scene_era})",
                a.new_object.kind_span,
                "anachronism needs a historical scene (`era medieval`, …) and an object of a later or earlier era",
            )
            return None
        return (
            [B.AddObject(target=new.id, object=new)],
            {"era_words": f"{new.era.replace('_', ' ')} era", "scene_era": scene_era.replace("_", " ")},
            [new],
        )

    def op_extra_asset(self, a, spec, t, p, trig):
        new = self._new_object(a.new_object)
        if new is None:
            return None
        sc = self.built.scene
        suits = self._prefab_scene_types(new.prefab)
        why = []
        if _era_conflict(new.era, sc.era):  # E612's era reasoning is one way to be out of place
            why.append(f"{new.era.replace('_', ' ')} era in a {sc.era.replace('_', ' ')} scene")
        if suits and sc.scene_type.value not in suits:
            why.append(f"made for {', '.join(suits)} scenes, not {sc.scene_type.value} ones")
        if not why:
            self.diag.error(
                "E612",
                f"a {new.name} fits this {sc.scene_type.value} scene (era {sc.era}): it is not out of place",
                a.new_object.kind_span,
                "pick an object of another era, or one whose prefab's `scene_types` leave out this scene's type",
            )
            return None
        return (
            [B.AddObject(target=new.id, object=new)],
            {"out_of_place_words": "; ".join(why), "scene_type": sc.scene_type.value},
            [new],
        )

    def _prefab_scene_types(self, prefab: str | None) -> tuple[str, ...]:
        pf = self.layout.visible.prefabs.get(prefab) if prefab else None
        setting = pf.body.setting("scene_types") if pf is not None else None
        if setting is None or not setting.args:
            return ()
        arg = setting.args[0]
        items = getattr(arg, "items", (arg,))
        return tuple(getattr(i, "text", str(i)) for i in items)

    def op_replace(self, a, spec, t, p, trig):
        o = t[0]
        thing = N.Thing(f"{o.id}_replacement", p["with"], (), a.span, a.span, p.get("_with_span") or a.span)
        built = self.layout.build(thing, a.span.source.path)
        if built is None:
            return None
        values, parts = built
        lo, _ = world_bounds(parts, (0.0, 0.0, 0.0), o.rotation_deg, (1.0, 1.0, 1.0))
        values["at"] = (o.position[0], o.position[1], o.aabb_min[2])
        values["yaw"], values["pitch"], values["roll"] = o.rotation_deg
        new = make_object(thing, values, parts, None, set(), self.diag)
        if new is None:
            return None
        if not _era_conflict(new.era, self.built.scene.era):
            self.diag.error(
                "E612",
                f"a {new.name} (era {new.era}) does not conflict with the scene's era ({self.built.scene.era})",
                p.get("_with_span"),
                "pick a prefab of another era",
            )
            return None
        return (
            [
                B.RemoveObject(target=o.id),
                B.AddObject(target=new.id, object=new),
            ],
            {
                "with_name": new.name,
                "era_words": f"{new.era.replace('_', ' ')} era",
                "scene_era": self.built.scene.era.replace("_", " "),
            },
            [new],
        )


def _requires_hint(op: str, req: str) -> str:
    return {
        "solid": "pick a solid object, or make it solid",
        "supported": "pick an object that rests `on` another one",
        "dynamic": "pick an object with a `mass`, or give it one",
        "door": "pick a door (an object with a hinged part)",
        "lamp": "pick a lamp (an object with an emitting part)",
        "animated": "pick an object with a spinning part",
        "interactive": "pick an interactive object, or add `interact …` to it",
        "liquid": "pick a pond or pit (`liquid yes`)",
    }[req]


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
    return {
        "length": "0.4 m",
        "angle": "30 deg",
        "duration": "2 s",
        "speed": "5 m/s",
        "mass": "0.1 kg",
        "vec2": "(1, 0)",
        "vec3": "(0.2, 0, 0)",
        "scale": "2.5",
        "color": '"#c03030"',
        "object": "OBJECT_ID",
        "part": "PART_ID",
        "material": "wood",
        "prefab": "PREFAB",
        "number": "1.1",
        "fraction": "0.5",
    }.get(p.type, p.choices[0] if p.choices else "VALUE")


def _scale_words(f) -> str:
    fx, fy, fz = f
    if abs(fx - fy) < 1e-9 and abs(fy - fz) < 1e-9:
        return f"{fx:g} times {'larger' if fx > 1 else 'smaller'}"
    axes = [("length", fx), ("width", fy), ("height", fz)]
    parts = [f"{n} x{v:g}" for n, v in axes if abs(v - 1) > 1e-9]
    return "distorted (" + ", ".join(parts) + ")"


def _color_words(c) -> str:
    return "#" + "".join(f"{round(v * 255):02x}" for v in c)


def _trigger_phrase(trig: B.Trigger) -> str:
    k = trig.kind
    if k == B.TriggerKind.revisit:
        return "after the agent looks away and comes back"
    if k == B.TriggerKind.look_away:
        return "as soon as the agent looks away"
    if k == B.TriggerKind.leave:
        return f"after the agent leaves the area (beyond {trig.exit_m:g} m) and returns"
    if k == B.TriggerKind.after:
        return f"after about {trig.after_s:g} s, while unobserved"
    if k == B.TriggerKind.every:
        return f"every {trig.period_s:g} s"
    if k == B.TriggerKind.beyond:
        return f"when seen from farther than {trig.distance_m:g} m"
    if k == B.TriggerKind.within:
        return f"when seen from closer than {trig.distance_m:g} m"
    if k == B.TriggerKind.contact:
        return "on contact"
    if k == B.TriggerKind.interact:
        return "when interacted with"
    return ""


def _trigger_action(trig: B.Trigger) -> str:
    k = trig.kind
    if k in (B.TriggerKind.revisit, B.TriggerKind.look_away):
        return "turn away and come back"
    if k == B.TriggerKind.leave:
        return f"walk more than {trig.exit_m:g} m away and return"
    if k in (B.TriggerKind.after, B.TriggerKind.every):
        return "wait while looking elsewhere"
    if k in (B.TriggerKind.beyond, B.TriggerKind.within):
        return f"compare views nearer and farther than {trig.distance_m:g} m"
    return "interact"
