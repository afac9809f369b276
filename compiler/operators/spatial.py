"""Spatial consistency operators: visibility, view-dependent rendering, shadow and lighting,
material (taxonomy family spatial_consistency)."""

from __future__ import annotations

import colorsys
import math

from wac.bundle import model as B

from .base import DIRECTIONS, Context, Lowering, one, operator, part_words, trigger_action, trigger_phrase

MISSING_TEXTURE = "missing_texture"


@operator("xray", plan="view_through")
def xray(cx: Context) -> Lowering:
    return one(B.SetRender(target=cx.target.id, render="xray"))


@operator("hide", words=("hide_expected", "hide_inspection", "hide_words"))
def hide(cx: Context) -> Lowering:
    """Static: not drawn, its shadow and collider stay; by distance: not drawn from one side of the
    distance; otherwise (temporal): removed from the world."""
    o, trig = cx.target, cx.trigger
    if trig.kind == B.TriggerKind.always:
        return one(
            B.SetVisible(target=o.id, visible=False, casts_shadow=True, keeps_collision=True),
            hide_words="is not drawn, yet its shadow remains and it still blocks movement when walked into",
            hide_expected=f"The {o.name} should be visible where its shadow and collision are.",
            hide_inspection=f"Look at the shadow on the ground where the {o.name} stands and walk into that spot.",
        )
    if trig.kind.viewpoint:
        side = "farther" if trig.kind == B.TriggerKind.beyond else "closer"
        return one(
            B.SetVisible(target=o.id, visible=False, casts_shadow=False, keeps_collision=True),
            hide_words=f"disappears when seen from {side} than {trig.distance_m:g} m and reappears otherwise",
            hide_expected=f"The {o.name} should stay visible at every distance.",
            hide_inspection=f"View the {o.name} from near and from beyond {trig.distance_m:g} m.",
        )
    return one(
        B.RemoveObject(target=o.id),
        hide_words=f"disappears {trigger_phrase(trig)}",
        hide_expected=f"The {o.name} should still be there.",
        hide_inspection=f"Observe the {o.name}, {trigger_action(trig)}, then look at the same spot again.",
    )


@operator("vanish", plan="view")
def vanish(cx: Context) -> Lowering:
    """The reference's `vanish` (three.js `visible = false`): not drawn, no shadow, still solid."""
    return one(B.SetVisible(target=cx.target.id, visible=False, casts_shadow=False, keeps_collision=True))


@operator("cull", plan="view_sides")
def cull(cx: Context) -> Lowering:
    return one(B.SetRender(target=cx.target.id, render="cull", normal=DIRECTIONS[cx.params["from"]]))


@operator("flip_normals")
def flip_normals(cx: Context) -> Lowering:
    return one(B.SetRender(target=cx.target.id, render="flip_normals"))


@operator("lod_pop", plan="near_far", words=("distance",))
def lod_pop(cx: Context) -> Lowering | None:
    if cx.trigger.kind != B.TriggerKind.beyond:
        cx.diag.error("E603", "`lod_pop` takes `when beyond DISTANCE`", cx.anomaly.op_span)
        return None
    return one(B.SetRender(target=cx.target.id, render="lod_proxy"), distance=f"{cx.trigger.distance_m:g} m")


@operator("recolor")
def recolor(cx: Context) -> Lowering:
    to = cx.params["to"]
    hexcode = "".join(f"{round(c * 255):02x}" for c in to)
    tint = cx.tint(cx.target, {"color": to}, f"recolor{hexcode}")
    return Lowering(tint.effects, materials=tint.materials)


def casts_visible_shadows(cx: Context) -> bool:
    """A shadow anomaly needs a light whose shadows show: the sun, or a lamp or light that is (or
    turns) on; without one no object casts a shadow, so a missing or moved one is no defect."""
    sc = cx.scene
    lamps = [o for o in sc.objects if o.lit or (o.lit is not None and sc.day_night is not None)]
    if sc.sun is not None or lamps or any(pl.on for pl in sc.lights):
        return True
    cx.diag.error(
        "E607",
        f"`{cx.anomaly.operator}` needs a light that casts shadows: the scene has no sun and no lit lamp",
        cx.anomaly.op_span,
        "add `sun …` to the scene, or a lit lamp near the target",
    )
    return False


@operator("remove_shadow", checks=(casts_visible_shadows,), plan="view", aim="ground")
def remove_shadow(cx: Context) -> Lowering:
    return one(B.SetShadow(target=cx.target.id, casts_shadow=False))


@operator("displace_shadow", checks=(casts_visible_shadows,), plan="view", aim="ground")
def displace_shadow(cx: Context) -> Lowering | None:
    """The shadow lies `by` away from its object; the plan aims between where it is and should be."""
    if math.hypot(*cx.params["by"]) < 0.5:
        cx.diag.error(
            "E611",
            "a shadow moved by less than 0.5 m is hard to see",
            cx.span("by"),
            "displace it by at least 0.5 m",
        )
        return None
    return one(B.SetShadow(target=cx.target.id, casts_shadow=True, shadow_offset=cx.params["by"]))


@operator("glow")
def glow(cx: Context) -> Lowering:
    c = cx.params["color"]
    tint = cx.tint(cx.target, {"emissive": c}, "glow")
    return Lowering(tint.effects, materials=tint.materials)


@operator("dark_lamp")
def dark_lamp(cx: Context) -> Lowering | None:
    o = cx.target
    if not o.lit:
        cx.diag.error(
            "E607",
            f"`{o.id}` is switched off; a dark lamp must look lit",
            cx.anomaly.op_span,
            "add `lit yes`",
        )
        return None
    return one(B.SetLight(target=o.id, lit=True, illuminates=False))


@operator("swap_material", words=("material_words", "part_words", "to_words"))
def swap_material(cx: Context) -> Lowering | None:
    o, to = cx.target, cx.params["to"]
    part = cx.part(o)
    if part is False:
        return None
    mat = cx.layout.materials.get(to, cx.span("to"))
    if mat is None:
        return None
    used = cx.layout.materials.used
    current = {used[x.material].category for x in o.parts if not part or x.id == part}
    if current == {mat.category}:
        cx.diag.error(
            "E611",
            f"`{o.id}` is already made of {mat.category}; swapping to `{to}` is no defect",
            cx.span("to"),
            "pick a material of another category",
        )
        return None
    effects = tuple(
        B.SetMaterial(target=o.id, part=x.id, material=mat.name) for x in o.parts if not part or x.id == part
    )
    words = {
        "to_words": mat.category if mat.category != "generic" else mat.name,
        "material_words": " or ".join(sorted(current)),
        "part_words": part_words(part),
    }
    return Lowering(effects, words)


@operator("missing_texture", words=("part_words",))
def missing_texture(cx: Context) -> Lowering | None:
    """The placeholder look of a missing texture: flat magenta, glowing so that no light shades it."""
    o = cx.target
    part = cx.part(o)
    if part is False:
        return None
    used = cx.layout.materials.used
    if MISSING_TEXTURE not in used:
        used[MISSING_TEXTURE] = B.Material(
            name=MISSING_TEXTURE,
            color=(1.0, 0.0, 1.0),
            roughness=1.0,
            emissive=(1.0, 0.0, 1.0),
            category="placeholder",
        )
    effects = tuple(
        B.SetMaterial(target=o.id, part=x.id, material=MISSING_TEXTURE)
        for x in o.parts
        if not part or x.id == part
    )
    return Lowering(effects, {"part_words": part_words(part)})


@operator("transparent", words=("part_words",))
def transparent(cx: Context) -> Lowering | None:
    o, opacity = cx.target, cx.params["opacity"]
    part = cx.part(o)
    if part is False:
        return None
    tint = cx.tint(o, {"opacity": opacity}, f"alpha{round(opacity * 100)}", part or None)
    return Lowering(tint.effects, {"part_words": part_words(part)}, materials=tint.materials)


@operator("corrupted_frame", alone=True, words=("color_words",))
def corrupted_frame(cx: Context) -> Lowering:
    """The reference's corrupted frame: a translucent colour over every rendered frame (the whole
    image, sky included).  It changes no object; the target is where the rubric and plan look."""
    color, opacity = cx.params["color"], cx.params["opacity"]
    return one(B.SetFrameTint(color=color, strength=opacity), color_words=color_name(color))


def color_name(rgb) -> str:
    """A plain name for a colour (the rubric's words; the judge matches names, not hex codes)."""
    r, g, b = rgb
    hi, lo = max(rgb), min(rgb)
    if hi - lo < 0.15:
        return "white" if hi > 0.8 else ("black" if hi < 0.2 else "grey")
    h = colorsys.rgb_to_hsv(r, g, b)[0] * 360.0
    names = ((15, "red"), (45, "orange"), (70, "yellow"), (160, "green"), (200, "cyan"), (260, "blue"))
    names += ((290, "purple"), (335, "magenta"), (360, "red"))
    return next(n for edge, n in names if h < edge)
