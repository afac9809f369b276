"""Static physics operators: missing support, intersection, scale (taxonomy family static_physics)."""

from __future__ import annotations

import math

import numpy as np

from wac.bundle import model as B
from wac.bundle.terrain import height as terrain_height
from wac.bundle.terrain import height_range as terrain_height_range
from wac.compiler.layout import world_bounds

from .base import Context, Hints, Lowering, one, operator


@operator("float", words=("support",))
def float_(cx: Context) -> Lowering | None:
    """Raise the target by `by`; it must stand on something (the ground or an object) to begin with."""
    o, a = cx.target, cx.anomaly
    if o.attached_to is not None:
        cx.diag.error(
            "E607",
            f"`{o.id}` hangs from `{o.attached_to}`; it rests on nothing, so floating it is no defect",
            a.operand[0].span,
            "pick an object that stands on the ground or `on` another object",
        )
        return None
    ground = terrain_height_range(cx.scene.ground, o.aabb_min[:2], o.aabb_max[:2])[1]
    if o.support is None and o.aabb_min[2] > ground + 0.02:
        cx.diag.error(
            "E607",
            f"`{o.id}` already floats {o.aabb_min[2] - ground:.2f} m above the ground",
            a.operand[0].span,
            "pick an object that stands on the ground or `on` another object",
        )
        return None
    x, y, z = o.position
    return one(
        B.SetPose(target=o.id, position=(x, y, round(z + cx.params["by"], 6))), support=cx.support_name(o)
    )


@operator("remove_support", words=("support",))
def remove_support(cx: Context) -> Lowering:
    """Delete the supporting object; the target stays where it was, in mid-air, instead of falling."""
    o = cx.target
    sup = cx.built.objects[o.support]
    return one(B.RemoveObject(target=sup.id, keep_in_place=(o.id,)), support=f"the {sup.name}")


@operator("sink", words=("support",))
def sink(cx: Context) -> Lowering:
    o, p = cx.target, cx.params
    x, y, z = o.position
    yaw, pitch, roll = o.rotation_deg
    eff = B.SetPose(
        target=o.id,
        position=(x, y, round(z - p["by"], 6)),
        rotation_deg=(yaw, pitch + p.get("tilt", 0.0), roll),
    )
    return one(eff, support=cx.support_name(o))


@operator("push_into", words=("into_name",))
def push_into(cx: Context) -> Lowering | None:
    """Move the target towards `into` until their boxes overlap by `depth` along the push."""
    o, p = cx.target, cx.params
    other = cx.obj(p["into"], cx.span("into"))
    if other is None:
        return None
    if other.id == o.id:
        cx.diag.error("E610", "an object cannot be pushed into itself", cx.span("into"))
        return None
    if not other.solid:
        cx.diag.error("E607", f"`{other.id}` is not solid, so overlapping it is no defect", cx.span("into"))
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
        cx.diag.error(
            "E607",
            f"`push_into` depth {p['depth']:g} m is more than `{o.id}` measures along the push "
            f"({size:.2f} m): it would pass right into `{other.id}`",
            cx.span("depth", cx.anomaly.op_span),
            f"use a depth below {size:.2f} m (about a third of it reads as an overlap)",
        )
        return None
    shift = dist - reach + p["depth"]
    x, y, z = o.position
    pos = (round(x + d[0] * shift, 6), round(y + d[1] * shift, 6), z)
    into = other.name if other.name != o.name else f"other {other.name}"
    return one(B.SetPose(target=o.id, position=pos), into_name=into)


@operator("duplicate")
def duplicate(cx: Context) -> Lowering:
    o, off = cx.target, cx.params["offset"]
    pos = tuple(round(o.position[i] + off[i], 6) for i in range(3))
    lo, hi = world_bounds(o.parts, pos, o.rotation_deg, o.scale)
    copy = o.model_copy(update={"id": f"{o.id}_copy", "position": pos, "aabb_min": lo, "aabb_max": hi})
    return one(B.AddObject(target=copy.id, object=copy))


@operator("misalign", words=("misalign_words", "part"))
def misalign(cx: Context) -> Lowering | None:
    o, p, a = cx.target, cx.params, cx.anomaly
    part = cx.part(o)
    if not part:
        if part is None:
            cx.diag.error("E606", "`misalign` needs `part`", a.op_span)
        return None
    if p["by"] == (0.0, 0.0, 0.0) and not p.get("rotate"):
        cx.diag.error(
            "E611",
            "`misalign` with no offset and no rotation changes nothing",
            a.op_span,
            "add `by (0.1, 0, 0)` or `rotate 20 deg`",
        )
        return None
    pt = next(x for x in o.parts if x.id == part)
    pos = tuple(round(pt.position[i] + p["by"][i], 6) for i in range(3))
    rot = (pt.rotation_deg[0] + p.get("rotate", 0.0), pt.rotation_deg[1], pt.rotation_deg[2])
    return one(
        B.SetPartPose(target=o.id, part=part, position=pos, rotation_deg=rot),
        part=part.replace("_", " "),
        misalign_words=_misalign_words(p["by"], p.get("rotate", 0.0)),
    )


def _misalign_words(by, rotate: float) -> str:
    """How the part is out of line: only the offset and the turn it really has, with their units."""
    words = []
    if any(by):
        words.append("offset by (" + ", ".join(f"{v:g}" for v in by) + ") m")
    if rotate:
        words.append(f"turned {rotate:g} deg")
    return " and ".join(words)


@operator("pile")
def pile(cx: Context) -> Lowering:
    """Copies of the targets heaped at `at`, fanned out on the golden angle (no random generator)."""
    p = cx.params
    effects = []
    ax, ay = p["at"]
    for k, o in enumerate(cx.targets):
        ang = k * 2.39996
        r = p["spread"] * (k + 1) ** 0.5 * 0.6
        tilt = p["tilt"] * (1 if k % 2 == 0 else -1)
        rot = (o.rotation_deg[0] + 37.0 * k, tilt, o.rotation_deg[2] + tilt / 2)
        lo, _ = world_bounds(o.parts, (0.0, 0.0, 0.0), rot, o.scale)
        px, py = ax + r * math.cos(ang), ay + r * math.sin(ang)
        pos = (
            round(px, 6),
            round(py, 6),
            round(terrain_height(cx.scene.ground, px, py) - lo[2] + 0.05 * k, 6),
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
    return Lowering(tuple(effects), hints=Hints(focus_point=(ax, ay, 0.4)))


@operator("scale", words=("by_words",))
def scale(cx: Context) -> Lowering | None:
    """Scale the target; seen only from some distances (beyond/within) it is a visual-only scale."""
    o, f = cx.target, cx.params["by"]
    if all(abs(v - 1.0) < 0.05 for v in f):
        cx.diag.error(
            "E611",
            "a scale within 5% of 1 is not a visible defect",
            cx.span("by"),
            "use a factor such as 2.5 or (0.5, 1, 1)",
        )
        return None
    factor = tuple(round(o.scale[i] * f[i], 6) for i in range(3))
    distance = cx.trigger.kind.viewpoint
    eff = (B.SetAppearance if distance else B.SetPose)(target=o.id, scale=factor)
    return one(eff, by_words=_scale_words(f))


def _scale_words(f) -> str:
    fx, fy, fz = f
    if abs(fx - fy) < 1e-9 and abs(fy - fz) < 1e-9:
        # "0.35 times smaller" says nothing exact: a shrunk object is so many times its normal size
        return f"{fx:g} times larger" if fx > 1 else f"shrunk to {fx:g} times its normal size"
    axes = [("length", fx), ("width", fy), ("height", fz)]
    parts = [f"{n} x{v:g}" for n, v in axes if abs(v - 1) > 1e-9]
    return "distorted (" + ", ".join(parts) + ")"
