"""Temporal consistency operators: existence, static attributes, operational state
(taxonomy family temporal_consistency)."""

from __future__ import annotations

import math

from wac.bundle import model as B
from wac.bundle.terrain import height_range as terrain_height_range

from .base import Context, Hints, Lowering, one, operator


@operator("spawn")
def spawn(cx: Context) -> Lowering | None:
    new = cx.new_object(cx.anomaly.new_object)
    if new is None:
        return None
    return Lowering((B.AddObject(target=new.id, object=new),), new_objects=(new,))


@operator("move")
def move(cx: Context) -> Lowering | None:
    o = cx.target
    dx, dy = cx.params["by"]
    if math.hypot(dx, dy) < 0.3:
        cx.diag.error(
            "E611", "a move of less than 0.3 m is hard to notice", cx.span("by"), "move it at least 0.3 m"
        )
        return None
    x, y, z = o.position
    if o.support is None and cx.scene.ground.terrain is not None:
        # standing on a heightfield, it stands on the ground at its new place too
        g = cx.scene.ground
        lo, hi = o.aabb_min[:2], o.aabb_max[:2]
        here = terrain_height_range(g, lo, hi)[0]
        there = terrain_height_range(g, (lo[0] + dx, lo[1] + dy), (hi[0] + dx, hi[1] + dy))[0]
        z += there - here
    return one(B.SetPose(target=o.id, position=(round(x + dx, 6), round(y + dy, 6), round(z, 6))))


@operator("drift", plan="watch")
def drift(cx: Context) -> Lowering | None:
    ax, ay = cx.params["along"]
    n = math.hypot(ax, ay)
    if n < 1e-6:
        cx.diag.error("E611", "`along` must be a non-zero direction", cx.span("along"))
        return None
    return one(
        B.SetMotion(
            target=cx.target.id,
            motion="drift",
            axis=(ax / n, ay / n, 0.0),
            range_m=cx.params["range"],
            speed_m_s=cx.params["speed"],
        )
    )


@operator("abrupt_day_night", plan="watch", words=("lamps_place", "lamps_words"))
def abrupt_day_night(cx: Context) -> Lowering | None:
    """A scene-wide change with no target: the plan watches from where the agent stands."""
    dn, period = cx.scene.day_night, cx.params["period"]
    if dn is None:
        cx.diag.error(
            "E607",
            "`abrupt_day_night` needs a scene with a `day_night` cycle",
            cx.anomaly.op_span,
            "add `day_night period 60 s` to the scene",
        )
        return None
    if period * 4 >= dn.period_s:
        cx.diag.error(
            "E611",
            f"switching every {period:g} s is not much faster than the normal cycle ({dn.period_s:g} s)",
            cx.anomaly.op_span,
            "use a period under a quarter of the cycle",
        )
        return None
    # `period` is the time between switches; a day-night cycle's period is a whole day (two switches)
    return one(B.SetDayNight(period_s=round(2 * period, 6), transition="abrupt"), **_lamp_words(cx.scene))


def _lamp_words(sc: B.Scene) -> dict[str, str]:
    """The lamps the cycle switches (those off by day: a lamp that is `lit` stays lit), for the rubric."""
    names = list(dict.fromkeys(o.name for o in sc.objects if o.lit is False))
    if not names:
        return {"lamps_words": "", "lamps_place": ""}
    many = len(names) > 1 or sum(o.name == names[0] for o in sc.objects if o.lit is False) > 1
    lamps = "the lamps" if many else f"the {names[0]}"
    return {"lamps_words": f", with {lamps} switching on and off", "lamps_place": f" and {lamps}"}


@operator("flicker", plan="watch")
def flicker(cx: Context) -> Lowering:
    return one(B.SetFlicker(target=cx.target.id, period_s=cx.params["period"]))


@operator("switch_off")
def switch_off(cx: Context) -> Lowering | None:
    o = cx.target
    if not o.lit:
        cx.diag.error("E607", f"`{o.id}` is already off", cx.anomaly.op_span, "add `lit yes` to the lamp")
        return None
    return one(B.SetLight(target=o.id, lit=False, illuminates=False))


@operator("freeze_animation", plan="watch")
def freeze_animation(cx: Context) -> Lowering:
    return one(B.SetAnimation(target=cx.target.id, animation="freeze"))


@operator("speed_animation", plan="watch")
def speed_animation(cx: Context) -> Lowering:
    return one(B.SetAnimation(target=cx.target.id, animation="speed", value=cx.params["factor"]))


@operator("jump_animation", plan="watch")
def jump_animation(cx: Context) -> Lowering:
    p = cx.params
    return one(B.SetAnimation(target=cx.target.id, animation="jump", value=p["by"], period_s=p["every"]))


@operator("autoclose", plan="interact")
def autoclose(cx: Context) -> Lowering:
    """The door closes by itself `after` s: the plan waits that long after interacting."""
    after = cx.params["after"]
    eff = B.SetMechanism(target=cx.target.id, mechanism="autoclose", value=after)
    return Lowering((eff,), hints=Hints(respond_after_s=after))


@operator("speed_door", plan="interact")
def speed_door(cx: Context) -> Lowering:
    return one(B.SetMechanism(target=cx.target.id, mechanism="speed", value=cx.params["factor"]))


@operator("jam", plan="interact_walk", words=("at_percent",))
def jam(cx: Context) -> Lowering:
    at = cx.params["at"]
    return one(
        B.SetMechanism(target=cx.target.id, mechanism="jam", value=at), at_percent=f"{round(at * 100)}% open"
    )


@operator("delay", plan="interact")
def delay(cx: Context) -> Lowering:
    """The mechanism answers `by` s late: the plan waits that long after interacting."""
    by = cx.params["by"]
    eff = B.SetMechanism(target=cx.target.id, mechanism="delay", value=by)
    return Lowering((eff,), hints=Hints(respond_after_s=by))


@operator("ignore_interaction", plan="interact")
def ignore_interaction(cx: Context) -> Lowering:
    return one(B.SetMechanism(target=cx.target.id, mechanism="dead"))
