"""Interactive physics operators: missing and unexpected collision, abnormal trajectory
(taxonomy family interactive_physics)."""

from __future__ import annotations

from wac.bundle import model as B
from wac.bundle.terrain import height as terrain_height

from .base import DIRECTIONS, Context, Hints, Lowering, one, operator


@operator("remove_collision")
def remove_collision(cx: Context) -> Lowering:
    """The target is drawn as before but has no collider: the agent walks through it."""
    return one(B.SetSolid(target=cx.target.id, solid=False))


@operator("floor_hole", plan="walk_along", words=("at_words",))
def floor_hole(cx: Context) -> Lowering | None:
    """A rectangle of flat ground loses its collision (the agent falls in); aimed at by place."""
    (x, y), (w, d) = cx.params["at"], cx.params["size"]
    if cx.scene.ground.terrain is not None:
        cx.diag.error(
            "E434",
            "a hole cannot be cut into a heightfield terrain",
            cx.anomaly.span,
            "use `floor_hole` on a scene with flat ground",
        )
        return None
    return Lowering(
        (B.AddHole(position=(x, y, 0.0), size=(w, d, 4.0)),),
        {"at_words": f"({x:g}, {y:g})"},
        hints=Hints(focus_point=(x, y, 0.0)),
    )


@operator("one_way", plan="walk_through")
def one_way(cx: Context) -> Lowering:
    return one(B.SetMechanism(target=cx.target.id, mechanism="one_way", normal=DIRECTIONS[cx.params["from"]]))


@operator("interact_through", plan="interact_blocked")
def interact_through(cx: Context) -> Lowering:
    return one(B.SetMechanism(target=cx.target.id, mechanism="through_walls"))


@operator("invisible_wall", words=("at_words",))
def invisible_wall(cx: Context) -> Lowering:
    (x, y), size = cx.params["at"], cx.params["size"]
    eff = B.AddBlocker(
        position=(x, y, round(terrain_height(cx.scene.ground, x, y), 6)),
        size=size,
        rotation_deg=(cx.params.get("yaw", 0.0), 0.0, 0.0),
    )
    return Lowering((eff,), {"at_words": f"({x:g}, {y:g})"}, hints=Hints(focus_point=(x, y, 1.0)))


@operator("fake_floor", plan="walk_along")
def fake_floor(cx: Context) -> Lowering:
    """An invisible slab over the whole footprint of a pit or pond (`liquid yes`)."""
    o = cx.target
    lo, hi = o.aabb_min, o.aabb_max
    pos = ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, round(hi[2] - 0.05, 6))
    size = (round(hi[0] - lo[0], 6), round(hi[1] - lo[1], 6), 0.05)
    return one(B.AddBlocker(target=o.id, position=pos, size=size, rotation_deg=(0.0, 0.0, 0.0)))


@operator("ghost_door", plan="interact_walk")
def ghost_door(cx: Context) -> Lowering:
    return one(B.SetMechanism(target=cx.target.id, mechanism="ghost"))


@operator("phantom_door", plan="interact_walk")
def phantom_door(cx: Context) -> Lowering:
    return one(B.SetMechanism(target=cx.target.id, mechanism="phantom"))


@operator("bounce")
def bounce(cx: Context) -> Lowering:
    return one(B.SetPhysics(target=cx.target.id, restitution=cx.params["restitution"]))


@operator("launch")
def launch(cx: Context) -> Lowering:
    """An impulse (N s) that gives the object the launch speed, straight up or up and away."""
    v, m = cx.params["speed"], cx.target.mass_kg
    impulse = (
        (0.0, 0.0, round(v * m, 6))
        if cx.params["direction"] == "up"
        else (round(v * m * 0.8, 6), 0.0, round(v * m * 0.6, 6))
    )
    return one(B.SetPhysics(target=cx.target.id, impulse=impulse))


@operator("overturn")
def overturn(cx: Context) -> Lowering:
    return one(B.SetPhysics(target=cx.target.id, torque_deg=cx.params["angle"]))


@operator("set_mass", plan="push")
def set_mass(cx: Context) -> Lowering | None:
    o, mass = cx.target, cx.params["mass"]
    if mass >= o.mass_kg * 0.5:
        cx.diag.error(
            "E611",
            f"`{o.id}` already weighs {o.mass_kg:g} kg; {mass:g} kg is not implausibly light",
            cx.span("mass"),
            "use a mass well below a tenth of its real mass",
        )
        return None
    return one(B.SetPhysics(target=o.id, mass_kg=mass))


@operator("tremble", plan="watch")
def tremble(cx: Context) -> Lowering:
    return one(B.SetMotion(target=cx.target.id, motion="tremble", amplitude_m=cx.params["amplitude"]))
