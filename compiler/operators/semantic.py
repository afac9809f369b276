"""Semantic consistency operators: improper configuration, historical and out-of-place objects
(taxonomy family semantic_consistency)."""

from __future__ import annotations

import numpy as np

from wac.bundle import model as B
from wac.bundle.terrain import height_range as terrain_height_range
from wac.compiler import nodes as N
from wac.compiler.assemble import make_object
from wac.compiler.layout import world_bounds
from wac.detectors.geometry import top_under

from .base import Context, Lowering, era_conflict, one, operator, trigger_action, trigger_phrase


def upright(cx: Context) -> bool:
    """Turning an object over is a defect only if it has a natural up side."""
    o = cx.target
    if not o.upright:
        cx.diag.error(
            "E607",
            f"`{o.id}` has no natural up side (its prefab says `upright no`), so turning it over is no defect",
            cx.anomaly.op_span,
        )
        return False
    return True


@operator("invert", checks=(upright,))
def invert(cx: Context) -> Lowering:
    o = cx.target
    yaw, pitch, roll = o.rotation_deg
    rot = (yaw, pitch, roll + 180.0)
    return one(B.SetPose(target=o.id, position=cx.rest_on_same_base(o, rot), rotation_deg=rot))


@operator("tilt", checks=(upright,))
def tilt(cx: Context) -> Lowering:
    o, by = cx.target, cx.params["by"]
    yaw, pitch, roll = o.rotation_deg
    rot = (yaw, pitch + by, roll) if cx.params["about"] == "y" else (yaw, pitch, roll + by)
    return one(B.SetPose(target=o.id, position=cx.rest_on_same_base(o, rot), rotation_deg=rot))


@operator("rotate", words=("rotate_expected", "rotate_inspection", "rotate_words"))
def rotate(cx: Context) -> Lowering | None:
    o, by, trig = cx.target, cx.params["by"], cx.trigger
    if abs(by) < 10:
        cx.diag.error("E611", "a turn of less than 10 deg is hard to notice", cx.span("by"))
        return None
    yaw, pitch, roll = o.rotation_deg
    eff = B.SetPose(target=o.id, rotation_deg=(yaw + by, pitch, roll))
    if trig.kind == B.TriggerKind.always:
        return one(
            eff,
            rotate_words=f"is turned {abs(by):g} deg away from the way it should face",
            rotate_expected=f"The {o.name} should face the way its function needs, like the others.",
            rotate_inspection=f"View the {o.name} and compare it with similar objects.",
        )
    return one(
        eff,
        rotate_words=f"turns by {abs(by):g} deg by itself {trigger_phrase(trig)}",
        rotate_expected=f"The {o.name} should keep its orientation.",
        rotate_inspection=f"Note which way the {o.name} faces, {trigger_action(trig)}, and compare.",
    )


@operator("mirror")
def mirror(cx: Context) -> Lowering:
    o = cx.target
    sx, sy, sz = o.scale
    return one(B.SetPose(target=o.id, scale=(-sx, sy, sz)))


@operator("relocate", words=("relocate_words",))
def relocate(cx: Context) -> Lowering | None:
    """Put the target `onto` another object or `to` a place, resting on what is there."""
    o, p = cx.target, cx.params
    if p.get("onto"):
        sup = cx.obj(p["onto"], cx.span("onto"))
        if sup is None:
            return None
        x = (sup.aabb_min[0] + sup.aabb_max[0]) / 2 if not p.get("to") else p["to"][0]
        y = (sup.aabb_min[1] + sup.aabb_max[1]) / 2 if not p.get("to") else p["to"][1]
        # on what is really under it there (a cart's bed, not the top of its sides)
        lo, hi = world_bounds(o.parts, (x, y, 0.0), o.rotation_deg, o.scale)
        xs = np.linspace(lo[0], hi[0], 5)
        ys = np.linspace(lo[1], hi[1], 5)
        gx, gy = np.meshgrid(xs, ys)
        base = top_under(sup, gx.ravel(), gy.ravel())
        base = base if np.isfinite(base) else sup.aabb_max[2]
        words = f"on top of the {sup.name}"
    elif p.get("to"):
        (x, y) = p["to"]
        half = (np.asarray(o.aabb_max[:2]) - np.asarray(o.aabb_min[:2])) / 2
        base = terrain_height_range(cx.scene.ground, (x - half[0], y - half[1]), (x + half[0], y + half[1]))[
            0
        ]
        words = f"at ({x:g}, {y:g})"
    else:
        cx.diag.error("E606", "`relocate` needs `to (x, y)` or `onto OBJECT`", cx.anomaly.op_span)
        return None
    lo, _ = world_bounds(o.parts, (0.0, 0.0, 0.0), o.rotation_deg, o.scale)
    pos = (round(x, 6), round(y, 6), round(base - lo[2], 6))
    return one(B.SetPose(target=o.id, position=pos), relocate_words=words)


@operator("anachronism", words=("era_words", "scene_era"))
def anachronism(cx: Context) -> Lowering | None:
    a = cx.anomaly
    new = cx.new_object(a.new_object)
    if new is None:
        return None
    words = _era_words(
        cx,
        new,
        a.new_object.kind_span,
        "anachronism needs a historical scene (`era medieval`, …) and an object of a later or earlier era",
    )
    if words is None:
        return None
    return Lowering((B.AddObject(target=new.id, object=new),), words, (new,))


def _era_words(cx: Context, new: B.SceneObject, span, hint: str) -> dict | None:
    """The rubric's era words for an object out of the scene's era, or None (E612) when its era
    does not conflict with the scene's."""
    scene_era = cx.scene.era
    if not era_conflict(new.era, scene_era):
        cx.diag.error(
            "E612",
            f"a {new.name} (era {new.era}) does not conflict with the scene's era ({scene_era})",
            span,
            hint,
        )
        return None
    return {"era_words": f"{new.era.replace('_', ' ')} era", "scene_era": scene_era.replace("_", " ")}


@operator("extra_asset", words=("out_of_place_words", "scene_type"))
def extra_asset(cx: Context) -> Lowering | None:
    """An object out of place by era (E612's reasoning) or by the scene types its prefab is made for."""
    a = cx.anomaly
    new = cx.new_object(a.new_object)
    if new is None:
        return None
    sc = cx.scene
    suits = _prefab_scene_types(cx, new.prefab)
    why = []
    if era_conflict(new.era, sc.era):
        why.append(f"{new.era.replace('_', ' ')} era in a {sc.era.replace('_', ' ')} scene")
    if suits and sc.scene_type.value not in suits:
        why.append(f"made for {', '.join(suits)} scenes, not {sc.scene_type.value} ones")
    if not why:
        cx.diag.error(
            "E612",
            f"a {new.name} fits this {sc.scene_type.value} scene (era {sc.era}): it is not out of place",
            a.new_object.kind_span,
            "pick an object of another era, or one whose prefab's `scene_types` leave out this scene's type",
        )
        return None
    words = {"out_of_place_words": "; ".join(why), "scene_type": sc.scene_type.value}
    return Lowering((B.AddObject(target=new.id, object=new),), words, (new,))


def _prefab_scene_types(cx: Context, prefab: str | None) -> tuple[str, ...]:
    pf = cx.layout.visible.prefabs.get(prefab) if prefab else None
    setting = pf.body.setting("scene_types") if pf is not None else None
    if setting is None or not setting.args:
        return ()
    arg = setting.args[0]
    items = getattr(arg, "items", (arg,))
    return tuple(getattr(i, "text", str(i)) for i in items)


@operator("replace", words=("era_words", "scene_era", "with_name"))
def replace(cx: Context) -> Lowering | None:
    """The target gives way to a prefab of another era, standing where it stood."""
    o, a = cx.target, cx.anomaly
    thing = N.Thing(f"{o.id}_replacement", cx.params["with"], (), a.span, a.span, cx.span("with") or a.span)
    built = cx.layout.build(thing, a.span.source.path)
    if built is None:
        return None
    yaw, pitch, roll = o.rotation_deg
    built = built.with_values(
        at=(o.position[0], o.position[1], o.aabb_min[2]), yaw=yaw, pitch=pitch, roll=roll
    )
    new = make_object(thing, built, None, set(), cx.diag)
    if new is None:
        return None
    era = _era_words(cx, new, cx.span("with"), "pick a prefab of another era")
    if era is None:
        return None
    words = {"with_name": new.name, **era}
    return Lowering((B.RemoveObject(target=o.id), B.AddObject(target=new.id, object=new)), words, (new,))
