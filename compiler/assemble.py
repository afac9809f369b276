"""Pass 4b, assemble: place a scene's objects (supports first) and build the clean scene.

Turns the scene's and task's declarations into the bundle's `Scene` and `Exploration`:
objects with world positions and bounds, lights, sun, day-night cycle, bounds and start.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wac.bundle import model as B
from wac.bundle.terrain import height_range as terrain_height_range
from wac.compiler import nodes as N
from wac.compiler import schema as T
from wac.compiler.diagnostics import Collector, did_you_mean
from wac.compiler.generate import fixed_objects, scattered_objects
from wac.compiler.layout import Instance, Layout, world_bounds
from wac.compiler.settings import Settings, evaluate
from wac.compiler.values import Evaluator

FOOTPRINT_SLACK_M = 0.05


@dataclass
class Built:
    """The clean world of one task, with the declarations it came from."""

    scene: B.Scene
    exploration: B.Exploration
    objects: dict[str, B.SceneObject]
    things: dict[str, N.Thing]
    interactions: dict[str, set[str]]
    task_local: frozenset[str] = frozenset()  # ids of objects the task itself declares
    task_settings: Settings | None = None  # the task's evaluated statements (`settings.evaluate`)
    scene_key: int = 0  # identifies the scene declaration, for per-scene caches


def place_objects(
    things: list[tuple[N.Thing, Path]],
    layout: Layout,
    diag: Collector,
    interact: dict[str, set[str]],
    existing: dict[str, B.SceneObject] | None = None,
    ground: B.Ground | None = None,
) -> dict[str, B.SceneObject]:
    """Place declared objects, supports before what rests on them (on a heightfield `ground`,
    objects at (x, y) stand on it)."""
    placed: dict[str, B.SceneObject] = dict(existing or {})
    pending: dict[str, tuple[N.Thing, Path, dict, tuple[B.Part, ...]]] = {}
    first_seen: dict[str, N.Thing] = {}
    for thing, file in things:
        if thing.id in placed or thing.id in pending:
            prev = first_seen.get(thing.id)
            where = f"the first is at {prev.span.location}" if prev else "it is already declared by the scene"
            diag.error(
                "E409", f"object `{thing.id}` is declared twice", thing.id_span, f"{where}; rename one"
            )
            continue
        first_seen[thing.id] = thing
        built = layout.build(thing, file)
        if built is None:
            continue
        pending[thing.id] = (thing, file, built)
    visiting: set[str] = set()

    def place(oid: str) -> B.SceneObject | None:
        if oid in placed:
            return placed[oid]
        if oid not in pending:
            return None
        if oid in visiting:
            thing = pending[oid][0]
            diag.error(
                "E410",
                f"`{oid}` rests on itself through a chain of `on` clauses",
                thing.span,
                "one object in the chain must stand on the ground",
            )
            return None
        visiting.add(oid)
        thing, _file, inst = pending[oid]
        support = None
        sup_name = inst.values.get("on")
        if sup_name is not None:
            support = place(sup_name)
            if support is None and sup_name not in pending:
                clause = thing.clause("on")
                diag.error(
                    "E411",
                    f"`{oid}` is `on` unknown object `{sup_name}`",
                    clause.value.span if clause else thing.span,
                    did_you_mean(sup_name, list(placed) + list(pending)),
                )
            if support is None:
                visiting.discard(oid)
                return None
        obj = make_object(thing, inst, support, interact.get(oid, set()), diag, ground)
        visiting.discard(oid)
        if obj is not None:
            placed[oid] = obj
        return obj

    for oid in pending:
        place(oid)
    return placed


def _position(thing: N.Thing, at, parts, rotation, scale, support, diag: Collector, ground) -> tuple | None:
    """Where an object's base stands: on its support (centred, or at `at` within its footprint), or
    at `at` on the ground (on a heightfield, its lowest point on the lowest ground under it)."""
    # base of the object's bounds in its own frame (prefab parts may start below or above 0)
    lo, _ = world_bounds(parts, (0.0, 0.0, 0.0), rotation, scale)
    if support is not None:
        if at is None:
            x = (support.aabb_min[0] + support.aabb_max[0]) / 2
            y = (support.aabb_min[1] + support.aabb_max[1]) / 2
        else:
            x, y = at[0], at[1]
            s = FOOTPRINT_SLACK_M
            if not (
                support.aabb_min[0] - s <= x <= support.aabb_max[0] + s
                and support.aabb_min[1] - s <= y <= support.aabb_max[1] + s
            ):
                clause = thing.clause("at")
                diag.error(
                    "E412",
                    f"`{thing.id}` is `on {support.id}` but ({x:g}, {y:g}) is outside {support.id}'s footprint",
                    clause.value.span if clause else thing.span,
                    f"{support.id} spans x {support.aabb_min[0]:.2f}..{support.aabb_max[0]:.2f}, "
                    f"y {support.aabb_min[1]:.2f}..{support.aabb_max[1]:.2f}; or drop `at` to centre it",
                )
                return None
            if len(at) == 3:
                clause = thing.clause("at")
                diag.error(
                    "E413",
                    f"`{thing.id}` gives both a height and `on {support.id}`",
                    clause.value.span if clause else thing.span,
                    "drop the z coordinate; `on` computes it",
                )
                return None
        z = support.aabb_max[2] - lo[2]
    else:
        if at is None:
            diag.error(
                "E414",
                f"object `{thing.id}` needs a position",
                thing.id_span,
                "add `at (x, y)` or `on OTHER_OBJECT`",
            )
            return None
        x, y = at[0], at[1]
        base = 0.0
        if len(at) < 3 and ground is not None and ground.terrain is not None:
            # on a heightfield: its lowest point on the lowest ground under it (none of it floats)
            flo, fhi = world_bounds(parts, (x, y, 0.0), rotation, scale)
            base = terrain_height_range(ground, flo[:2], fhi[:2])[0]
        z = (at[2] if len(at) == 3 else base) - lo[2]
    return (round(x, 6), round(y, 6), round(z, 6))


def make_object(
    thing: N.Thing,
    inst: Instance,
    support: B.SceneObject | None,
    extra_interactions: set[str],
    diag: Collector,
    ground: B.Ground | None = None,
) -> B.SceneObject | None:
    values, parts, defaults = inst.values, inst.parts, inst.defaults
    yaw, pitch, roll = values.get("yaw", 0.0), values.get("pitch", 0.0), values.get("roll", 0.0)
    scale = values.get("scale", (1.0, 1.0, 1.0))
    position = _position(thing, values.get("at"), parts, (yaw, pitch, roll), scale, support, diag, ground)
    if position is None:
        return None
    aabb_min, aabb_max = world_bounds(parts, position, (yaw, pitch, roll), scale)
    mass = values.get("mass", defaults.get("mass"))
    interactions = set(extra_interactions)
    if values.get("interact") or defaults.get("interact"):
        interactions.add(values.get("interact") or defaults.get("interact"))
    has_light = any(p.emitter for p in parts)
    has_hinge = any(p.hinge for p in parts)
    lit = None
    if has_light:
        lit = values.get("lit", defaults.get("lit", True))
        lit = True if lit is None else lit
    opened = values.get("open", False) if has_hinge else None
    liquid = values.get("liquid", defaults.get("liquid", False))
    solid = values.get("solid", defaults.get("solid", True))
    if liquid:
        solid = False
    synonyms = values.get("synonyms", defaults.get("synonyms", ()))
    tags = tuple(values.get("tags", defaults.get("tags", ()))) + (("liquid",) if liquid else ())
    name = values.get("name") or defaults.get("name") or (inst.prefab or thing.id).replace("_", " ")
    if not solid:
        parts = tuple(p.model_copy(update={"solid": False}) for p in parts)
    walkable = bool(values.get("walkable", False))
    if walkable and mass is not None:
        clause = thing.clause("walkable") or thing.clause("mass")
        diag.error(
            "E472",
            f"`{thing.id}` is walkable and has a mass: the agent walks only on static objects",
            clause.span if clause else thing.span,
            "drop `mass` (ramps and stairs stay put) or `walkable`",
        )
        return None
    return B.SceneObject(
        id=thing.id,
        name=name,
        synonyms=tuple(synonyms or ()),
        prefab=inst.prefab,
        kind=values.get("kind") or defaults.get("kind") or ("liquid" if liquid else "object"),
        era=values.get("era") or defaults.get("era") or "any",
        tags=tags,
        position=position,
        rotation_deg=(yaw, pitch, roll),
        scale=tuple(scale),
        parts=parts,
        solid=bool(solid) and any(p.solid for p in parts),
        dynamic=mass is not None,
        mass_kg=float(mass or 0.0),
        support=support.id if support else None,
        attached_to=values.get("attached_to"),
        interactions=tuple(sorted(B.Interaction(i) for i in interactions)),
        lit=lit,
        open=opened,
        open_time_s=values.get("open_time", defaults.get("open_time", 1.0)) or 1.0,
        liquid_depth_m=(values.get("depth", 0.8) if liquid else None),
        upright=bool(defaults.get("upright", True) if defaults.get("upright") is not None else True),
        walkable=walkable,
        cutaway=bool(values.get("cutaway", False)),
        aabb_min=aabb_min,
        aabb_max=aabb_max,
    )


def _ground(sc: dict, diag: Collector, span) -> B.Ground | None:
    """The scene's ground (material checked later); a heightfield's clauses are checked here."""
    g = sc.get("ground", {})
    size = g.get("size") or (60.0, 60.0)
    terrain = None
    if g.get("terrain") == "heightfield":
        if g.get("amplitude") is None:
            diag.error(
                "E432",
                "a heightfield terrain needs an `amplitude`",
                getattr(g, "span", None) or span,
                "e.g. `ground grass size (60, 60) terrain heightfield seed 3 amplitude 1.5 m scale 12 m`",
            )
            return None
        seed = g.get("seed")
        terrain = B.Terrain(
            seed=1 if seed is None else int(seed), amplitude_m=g["amplitude"], scale_m=g.get("scale") or 10.0
        )
    else:
        given = [k for k in ("seed", "amplitude", "scale") if g.get(k) is not None]
        if given:
            diag.error(
                "E433",
                f"{', '.join(f'`{k}`' for k in given)} shape a heightfield, but the ground is flat",
                getattr(g, "span", None) or span,
                "add `terrain heightfield` to the `ground` statement, or drop them",
            )
            return None
    return B.Ground(material=g.get("material") or "grass", size=size, terrain=terrain)


def _light(vals: dict) -> B.PointLight | None:
    if vals.get("id") is None or vals.get("at") is None:
        return None
    return B.PointLight(
        id=vals["id"],
        position=vals["at"],
        color=vals.get("color") or (1.0, 0.9, 0.7),
        intensity=vals.get("intensity", 1.0) if vals.get("intensity") is not None else 1.0,
        range_m=vals.get("range") or 8.0,
        on=vals.get("on", True) is not False,
    )


def _or(value, default):
    return default if value is None else value


def _fog(vals: dict | None, diag: Collector) -> B.Fog | None:
    """`fog`: exponential with `density`, or linear from `start` to `end`."""
    if vals is None:
        return None
    density, end = vals.get("density"), vals.get("end")
    start = _or(vals.get("start"), 0.0)
    if (density is None) == (end is None):
        diag.error(
            "E430",
            "`fog` needs either `density` (exponential fog) or `end` (linear fog from `start` to `end`)",
            vals.span,
            'e.g. `fog color "#1d4e6b" start 4 m end 30 m` or `fog density 0.05`',
        )
        return None
    if end is not None and end <= start:
        diag.error("E431", f"the fog ends ({end:g} m) before it starts ({start:g} m)", vals.span)
        return None
    return B.Fog(color=vals.get("color"), density=density, start_m=start, end_m=end)


def exploration(sc: dict, tk: dict, diag: Collector, at_span) -> B.Exploration | None:
    bounds = tk.get("bounds") or sc.get("bounds")
    start = tk.get("start") or sc.get("start")
    if bounds is None:
        diag.error(
            "E420",
            "no exploration bounds",
            at_span,
            "add `bounds from (x0, y0) to (x1, y1)` to the scene or task",
        )
        return None
    if start is None or start.get("at") is None:
        diag.error("E421", "no start pose", at_span, "add `start at (x, y) yaw 90 deg` to the scene or task")
        return None
    if bounds.get("polygon"):
        poly = bounds["polygon"]
    elif bounds.get("from") and bounds.get("to"):
        (x0, y0), (x1, y1) = bounds["from"], bounds["to"]
        if x0 == x1 or y0 == y1:
            diag.error("E422", "the bounds rectangle has no area", bounds.span)
            return None
        x0, x1 = sorted((x0, x1))
        y0, y1 = sorted((y0, y1))
        poly = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    else:
        diag.error("E423", "`bounds` needs `from (x, y) to (x, y)` or `polygon [...]`", bounds.span)
        return None
    # counter-clockwise, as the bundle promises
    area = sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(poly, poly[1:] + poly[:1], strict=True))
    if area < 0:
        poly = tuple(reversed(poly))
    budget = tk.get("budget", {}).get("actions", 40)
    if budget is not None and not 1 <= budget <= 1000:
        diag.error("E424", f"budget {budget} is out of range", tk["budget"].span, "use 1 to 1000 actions")
        return None
    return B.Exploration(
        bounds=tuple(tuple(p) for p in poly),
        start=B.Pose(
            position=start["at"], yaw_deg=start.get("yaw") or 0.0, pitch_deg=start.get("pitch") or 0.0
        ),
        budget_actions=budget or 40,
    )


def _scene_objects(scene_decl: N.SceneDecl, layout: Layout):
    """The scene's own settings and placed objects, computed once per build and reused by its tasks."""
    key = ("scene", id(scene_decl))
    memo = layout.loader.memo
    if key not in memo:
        sdiag = Collector()
        sc = evaluate(scene_decl.body, "scene", Evaluator(sdiag))
        ground = _ground(sc, sdiag, scene_decl.span)
        interact: dict[str, set[str]] = {}
        for vals in sc.all("interact"):
            if vals.get("object") and vals.get("action"):
                interact.setdefault(vals["object"], set()).add(vals["action"])
        path = scene_decl.span.source.path
        things = [(t, path) for t in scene_decl.body.things]
        indoor = (sc.get("type") or {}).get("type") == "indoor"  # rooms get ceilings by default
        things += fixed_objects(scene_decl.body, path, layout, sdiag, ground, indoor)  # rows, grids, rooms, …
        objects = place_objects(things, layout, sdiag, interact, ground=ground)
        objects, scattered = scattered_objects(
            scene_decl.body,
            path,
            layout,
            sdiag,
            objects,
            (sc.get("start") or {}).get("at"),
            lambda new, old: place_objects(new, layout, sdiag, interact, existing=old, ground=ground),
        )
        things += scattered
        for vals in sc.all("interact"):
            oid = vals.get("object")
            if oid and oid not in objects and not any(t.id == oid for t, _ in things):
                sdiag.error(
                    "E425",
                    f"`interact` names unknown object `{oid}`",
                    vals.span,
                    did_you_mean(oid, objects),
                )
        for vals in sc.all("benign"):
            if vals.get("object") and vals["object"] not in objects:
                sdiag.error(
                    "E426",
                    f"`benign` names unknown object `{vals['object']}`",
                    vals.span,
                    did_you_mean(vals["object"], objects),
                )
        _lights_under_ceilings(sc, objects, sdiag)
        memo[key] = (
            sc,
            ground,
            objects,
            dict(layout.materials.used),
            dict(layout.assets),
            tuple(sdiag.items),
            tuple(things),
        )
    sc, ground, objects, materials, assets, diags, things = memo[key]
    layout.materials.used.update(materials)
    layout.assets.update(assets)
    return sc, ground, dict(objects), diags, list(things)


def _lights_under_ceilings(sc: dict, objects: dict[str, B.SceneObject], diag: Collector) -> None:
    """E469: a scene light at or above the underside of a ceiling or roof over it (a `cutaway`
    object) lights the roof, not the room under it."""
    for vals in sc.all("light"):
        at = vals.get("at")
        if at is None or len(at) < 3:
            continue
        for o in objects.values():
            lo, hi = o.aabb_min, o.aabb_max
            if o.cutaway and lo[0] < at[0] < hi[0] and lo[1] < at[1] < hi[1] and at[2] > lo[2] - 0.05:
                diag.error(
                    "E469",
                    f"the light `{vals.get('id')}` ({at[2]:g} m high) is not under `{o.id}` over it"
                    f" (its underside at {lo[2]:g} m): it lights nothing in the room",
                    vals.span,
                    f"lower it below {lo[2] - 0.05:g} m, or raise the room's `height`",
                )
                break


def _task_interactions(tk: dict, objects: dict) -> tuple[dict[str, set[str]], dict]:
    """The task's `interact OBJECT ACTION` statements by object, and the scene objects with them."""
    interact: dict[str, set[str]] = {}
    for vals in tk.all("interact"):
        if vals.get("object") and vals.get("action"):
            interact.setdefault(vals["object"], set()).add(vals["action"])
    objects = dict(objects)
    for oid, actions in interact.items():  # task-level interactions on scene objects
        if oid in objects:
            o = objects[oid]
            objects[oid] = o.model_copy(
                update={
                    "interactions": tuple(sorted(set(o.interactions) | {B.Interaction(a) for a in actions}))
                }
            )
    return interact, objects


def _no_liquid_on_terrain(things, objects: dict, diag: Collector) -> None:
    """E434: a pond or pit cannot be cut into a heightfield terrain."""
    for t, _ in things:
        o = objects.get(t.id)
        if o is not None and o.liquid_depth_m is not None:
            diag.error(
                "E434",
                f"`{o.id}` is a liquid: a pond or pit cannot be cut into a heightfield terrain",
                t.span,
                "on a heightfield, drop the liquid or use a flat ground",
            )


def _sun(s: dict) -> B.Sun:
    return B.Sun(
        azimuth_deg=s.get("azimuth", 135.0) if s.get("azimuth") is not None else 135.0,
        elevation_deg=s.get("elevation") or 50.0,
        intensity=s.get("intensity", 1.0) if s.get("intensity") is not None else 1.0,
        color=s.get("color") or (1.0, 0.97, 0.92),
    )


def _day_night(dn: dict) -> B.DayNight:
    return B.DayNight(
        period_s=dn["period"],
        transition=dn.get("transition") or "gradual",
        phase=dn.get("phase", 0.25) if dn.get("phase") is not None else 0.25,
    )


def build_world(task: N.TaskDecl, scene_decl: N.SceneDecl, layout: Layout, diag: Collector) -> Built | None:
    sc, gr, objects, scene_diags, scene_things = _scene_objects(scene_decl, layout)
    diag.items.extend(scene_diags)
    tk = evaluate(task.body, "task", Evaluator(diag))
    interact, objects = _task_interactions(tk, objects)
    tpath = task.span.source.path
    indoor = (sc.get("type") or {}).get("type") == "indoor"
    task_things = [(t, tpath) for t in task.body.things]
    task_things += fixed_objects(task.body, tpath, layout, diag, gr, indoor)
    objects = place_objects(task_things, layout, diag, interact, existing=objects, ground=gr)
    objects, scattered = scattered_objects(
        task.body,
        tpath,
        layout,
        diag,
        objects,
        ((tk.get("start") or sc.get("start")) or {}).get("at"),
        lambda new, old: place_objects(new, layout, diag, interact, existing=old, ground=gr),
    )
    task_things += scattered
    for vals in tk.all("interact"):
        oid = vals.get("object")
        if oid and oid not in objects and not any(t.id == oid for t, _ in task_things):
            diag.error(
                "E425", f"`interact` names unknown object `{oid}`", vals.span, did_you_mean(oid, objects)
            )
    things = scene_things + task_things
    if gr is not None and gr.terrain is not None:
        _no_liquid_on_terrain(things, objects, diag)
    expl = exploration(sc, tk, diag, task.span)
    ground = sc.get("ground", {})
    ground_mat = ground.get("material") or "grass"
    if layout.materials.get(ground_mat, getattr(ground, "span", None) or scene_decl.span) is None:
        return None
    if expl is None or diag:
        return None
    sun = None if "no_sun" in sc else _sun(sc.get("sun", {}))
    dn = sc.get("day_night")
    if dn is not None and dn.get("period") is None:
        diag.error("E427", "`day_night` needs a `period`", dn.span, "e.g. `day_night period 60 s`")
        return None
    day_night = None if dn is None else _day_night(dn)
    desc = (tk.get("description") or sc.get("description") or {}).get("text")
    if not desc:
        diag.error(
            "E428",
            f"scene `{scene_decl.name}` has no description",
            scene_decl.span,
            'add `description "…"`: it is what the auditor is told about the scene',
        )
        return None
    stype = sc.get("type", {}).get("type")
    if stype is None:
        diag.error(
            "E429",
            f"scene `{scene_decl.name}` has no type",
            scene_decl.span,
            f"add `type` with one of: {', '.join(T.SCENE_TYPES)}",
        )
        return None
    era = sc.get("era", {}).get("era") or "any"
    gsize = ground.get("size") or (60.0, 60.0)
    lights = tuple(x for x in (_light(v) for v in sc.all("light")) if x)
    benign = tuple(
        B.Benign(object=v["object"], reason=v.get("reason") or "")
        for v in sc.all("benign")
        if v.get("object") in objects
    )
    ordered = tuple(objects[o] for o in sorted(objects))
    scene = B.Scene(
        name=scene_decl.name,
        description=desc,
        scene_type=B.SceneType(stype),
        era=era,
        ground=B.Ground(material=ground_mat, size=gsize, terrain=gr.terrain if gr else None),
        sky_color=(sc.get("sky") or {}).get("color") or (0.62, 0.74, 0.88),
        ambient=(sc.get("ambient") or {}).get("level")
        if (sc.get("ambient") or {}).get("level") is not None
        else 0.35,
        sun=sun,
        day_night=day_night,
        lights=lights,
        materials=dict(sorted(layout.materials.used.items())),
        objects=ordered,
        benign=benign,
        fog=_fog(sc.get("fog"), diag),
        tint=B.Tint(color=sc["tint"]["color"], strength=_or(sc["tint"].get("strength"), 0.3))
        if (sc.get("tint") or {}).get("color")
        else None,
        environment=B.Environment(name=env["name"], coverage_m=env.get("coverage"))
        if (env := sc.get("environment") or {}).get("name")
        else None,
    )
    if diag:
        return None
    things_by_id = {t.id: t for t, _ in things}
    return Built(
        scene,
        expl,
        objects,
        things_by_id,
        interact,
        task_local=frozenset(t.id for t, _ in task_things),
        scene_key=id(scene_decl),
        task_settings=tk,
    )
