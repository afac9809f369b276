"""Primitive anomaly effects applied to the perturbed world: one function per Effect variant.

Each function is registered for its variant of `wac.bundle.model.Effect` with `@applies(...)`;
importing this module fails if a variant has none (`unapplied`).  `apply(effect, ctx)` changes
the live `World` and returns an undo callable, so that triggers that switch off (every,
beyond/within, repeat) restore the clean state.  Runtime readings of the variants' docstrings
where they leave room:

- remove_object: the objects in `keep_in_place` that physics would move are frozen where they are.
- set_pose / set_part_pose: absolute values (world frame for objects, object frame for parts);
  missing fields keep their current value.
- set_visible: `casts_shadow` and `keeps_collision` default to False when hiding.
- set_render: xray = drawn over occluders; cull = not drawn while the camera is on the side the
  horizontal `normal` points to (default +x); flip_normals = front faces culled; lod_proxy =
  drawn as a flat-coloured bounding box.
- set_light: `lit` sets whether its emitters glow (for an object without emitters every part
  glows); `illuminates` whether its light reaches the scene.
- set_physics: `impulse` (N s) is world-frame, except under a contact trigger where x points
  from the agent to the target, y to its left and z up; `torque_deg` overturns the object away
  from the push: it rolls over its far base edge (and the next, every 90 deg) by torque_deg in
  all, smoothly over about torque_deg / 150 s, and rests there (kinematic from then on).
  A restitution >= 0.8 without an impulse also gets a 2.5 m/s upward kick so the bouncing shows.
- set_mechanism values: autoclose delay s (2), delay s (3), speed factor (8), jam open fraction
  (0.25: the panel stops there and the collider stays shut); ghost = panel opens but the collider
  stays shut; phantom = collider opens but the panel
  stays shut; dead = interaction does nothing; through_walls = reachable through obstacles;
  one_way = the solid lets the agent in from the side its world-frame `normal` points to (the
  agent passes the face whose outward normal that is), after which it cannot leave the footprint.
- set_animation: freeze | speed (x value, default 8) | jump (value deg every period_s), on the
  effect's `part` or every spinning part.
- set_appearance: a visual-only scale about the base centre (scale[0] used when uniform) and an
  optional colour override.
- add_hole: `size` x/y rectangle centred on `position` loses ground collision.
- add_blocker: invisible solid box, `position` is its base centre.
- set_frame_tint: drawn over every frame after the scene's own tint (the two compose into one
  `Scene.tint`, which the renderer mixes into each frame).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from wac.bundle import model as B
from wac.bundle.model import DayNight, Effect, Tint
from wac.errors import BundleError

from .geometry import rotation_matrix
from .world import ObjectState, World

Undo = Callable[[], None]
ApplyFn = Callable[[Any, "EffectContext"], Undo]

# variant -> its apply function, filled by @applies below
APPLY: dict[type[B.EffectBase], ApplyFn] = {}


def applies(variant: type[B.EffectBase]) -> Callable[[ApplyFn], ApplyFn]:
    """Register the decorated function as the runtime meaning of one Effect variant."""

    def register(fn: ApplyFn) -> ApplyFn:
        if variant in APPLY:
            raise TypeError(f"two apply functions for effect kind {variant.model_fields['kind'].default!r}")
        APPLY[variant] = fn
        return fn

    return register


def unapplied(table: dict[type[B.EffectBase], ApplyFn] | None = None) -> list[str]:
    """The effect kinds of the bundle model that `table` (default: APPLY) gives no apply function."""
    table = APPLY if table is None else table
    return sorted(kind for kind, variant in B.EFFECT_KINDS.items() if variant not in table)


@dataclass(frozen=True)
class EffectContext:
    """What an effect may touch: the world, the physics (for kicks) and the push direction."""

    world: World
    physics: object
    push_dir: tuple[float, float] | None = None  # unit xy from agent to target on contact
    time: float = 0.0


def _target(ctx: EffectContext, eff: B.EffectBase) -> ObjectState:
    if eff.target is None:
        raise BundleError(f"effect {eff.kind} needs a target")
    return ctx.world.get(eff.target)


def _snapshot(st: ObjectState, *names: str) -> Undo:
    saved = {n: _copy(getattr(st, n)) for n in names}

    def undo() -> None:
        for n, v in saved.items():
            setattr(st, n, _copy(v))
        st.bump()

    return undo


def _copy(v):
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, dict):
        return dict(v)
    return v


def posed(st: ObjectState, eff: B.SetPose) -> None:
    """Give `st` the pose fields `eff` sets (also how a trigger's probe draws it before the change)."""
    if eff.position is not None:
        st.position = np.array(eff.position, dtype=float)
    if eff.rotation_deg is not None:
        st.rotation_deg = np.array(eff.rotation_deg, dtype=float)
    if eff.scale is not None:
        st.scale = np.array(eff.scale, dtype=float)


@applies(B.SetPose)
def set_pose(eff: B.SetPose, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    undo = _snapshot(st, "position", "rotation_deg", "scale")
    posed(st, eff)
    st.bump()
    return undo


@applies(B.SetPartPose)
def set_part_pose(eff: B.SetPartPose, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    ps = _part(st, eff.part)
    old = (ps.position, ps.rotation_deg)
    if eff.position is not None:
        ps.position = tuple(eff.position)
    if eff.rotation_deg is not None:
        ps.rotation_deg = tuple(eff.rotation_deg)
    st.bump()

    def undo() -> None:
        ps.position, ps.rotation_deg = old
        st.bump()

    return undo


def _part(st: ObjectState, pid: str | None):
    if pid is None:
        raise BundleError(f"effect on {st.id!r} needs a part")
    try:
        return st.parts[pid]
    except KeyError:
        raise BundleError(f"object {st.id!r} has no part {pid!r}") from None


@applies(B.SetSolid)
def set_solid(eff: B.SetSolid, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    solid = bool(eff.solid)
    if eff.part is not None:
        ps = _part(st, eff.part)
        old = ps.solid
        ps.solid = solid
        st.bump()

        def undo_part() -> None:
            ps.solid = old
            st.bump()

        return undo_part
    old_parts = {k: p.solid for k, p in st.parts.items()}
    old = st.solid
    st.solid = solid
    if solid:
        for p in st.parts.values():
            p.solid = True
    st.bump()
    ctx.world.version += 1  # liquids change the ground

    def undo() -> None:
        st.solid = old
        for k, v in old_parts.items():
            st.parts[k].solid = v
        st.bump()
        ctx.world.version += 1

    return undo


@applies(B.AddObject)
def add_object(eff: B.AddObject, ctx: EffectContext) -> Undo:
    w = ctx.world
    st = w.objects.get(eff.object.id)
    if st is None:
        st = w.add(eff.object)
    old = st.present
    st.present = True
    st.bump()
    w.version += 1

    def undo() -> None:
        st.present = old
        st.bump()
        w.version += 1

    return undo


@applies(B.RemoveObject)
def remove_object(eff: B.RemoveObject, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    st.present = False
    st.bump()
    ctx.world.version += 1
    # what it held up stays where it was instead of falling (physics would drop it)
    kept = [k for k in map(ctx.world.objects.get, eff.keep_in_place) if k is not None and k.simulated]
    for k in kept:
        k.frozen = True
        k.bump()

    def undo() -> None:
        for k in kept:
            k.frozen = False
            k.bump()
        st.present = True
        st.bump()
        ctx.world.version += 1

    return undo


@applies(B.SetVisible)
def set_visible(eff: B.SetVisible, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    undo = _snapshot(st, "visible", "casts_shadow", "keeps_collision")
    st.visible = bool(eff.visible) if eff.visible is not None else False
    if not st.visible:
        st.casts_shadow = bool(eff.casts_shadow) if eff.casts_shadow is not None else False
        st.keeps_collision = bool(eff.keeps_collision) if eff.keeps_collision is not None else False
    st.bump()
    return undo


@applies(B.SetRender)
def set_render(eff: B.SetRender, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    undo = _snapshot(st, "render", "render_normal")
    st.render = eff.render
    st.render_normal = tuple(eff.normal) if eff.normal is not None else None
    return undo


@applies(B.SetMaterial)
def set_material(eff: B.SetMaterial, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    ctx.world.material(eff.material)
    parts = [_part(st, eff.part)] if eff.part else list(st.parts.values())
    old = [(p, p.material) for p in parts]
    for p in parts:
        p.material = eff.material

    def undo() -> None:
        for p, m in old:
            p.material = m

    return undo


@applies(B.SetShadow)
def set_shadow(eff: B.SetShadow, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    undo = _snapshot(st, "casts_shadow", "shadow_offset")
    if eff.casts_shadow is not None:
        st.casts_shadow = bool(eff.casts_shadow)
    if eff.shadow_offset is not None:
        st.shadow_offset = tuple(eff.shadow_offset)
        st.casts_shadow = True if eff.casts_shadow is None else st.casts_shadow
    return undo


@applies(B.SetLight)
def set_light(eff: B.SetLight, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    undo = _snapshot(st, "lit", "lit_override", "glow", "illuminates")
    if eff.lit is not None:
        if st.has_emitter:
            if st.lit is None:
                st.lit = bool(eff.lit)
            st.lit_override = bool(eff.lit)
        else:
            st.glow = bool(eff.lit)
    if eff.illuminates is not None:
        st.illuminates = bool(eff.illuminates)
    return undo


@applies(B.SetPhysics)
def set_physics(eff: B.SetPhysics, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    undo = _snapshot(st, "mass_kg", "restitution", "friction")
    if eff.mass_kg is not None:
        st.mass_kg = float(eff.mass_kg)
    if eff.restitution is not None:
        st.restitution = float(eff.restitution)
    if eff.friction is not None:
        st.friction = float(eff.friction)
    phys = ctx.physics
    phys.set_dynamics(st)
    ux, uy = ctx.push_dir if ctx.push_dir is not None else (1.0, 0.0)
    mass = max(st.mass_kg, 1e-3)
    if eff.impulse is not None:
        ix, iy, iz = eff.impulse
        if ctx.push_dir is not None:
            ix, iy = ix * ux - iy * uy, ix * uy + iy * ux
        phys.kick(st, linear=(ix / mass, iy / mass, iz / mass))
    elif (eff.restitution or 0.0) >= 0.8:
        phys.kick(st, linear=(0.0, 0.0, 2.5))
    if eff.torque_deg:
        return _chain(undo, _tip_over(st, float(eff.torque_deg), (ux, uy), ctx))
    return undo


TIP_DEG_S = 150.0  # mean turning rate of an overturn (a 180 deg roll takes 1.2 s)


def _tip_over(st: ObjectState, angle_deg: float, u: tuple[float, float], ctx: EffectContext) -> Undo:
    """Overturn: the object rolls over its far base edge (then the next edge, every 90 deg) away from
    the push, turning `angle_deg` in all, and rests where the roll ends.  The roll is kinematic, so
    it is continuous, stays on the ground and lands next to where the object stood."""
    undo = _snapshot(st, "position", "rotation_deg", "motion", "frozen")
    lo, hi = ctx.world.aabb(st)
    ux, uy = u
    half = abs(ux) * (hi[0] - lo[0]) / 2 + abs(uy) * (hi[1] - lo[1]) / 2
    centre = (lo[:2] + hi[:2]) / 2
    start = np.eye(4)
    start[:3, :3] = rotation_matrix(st.rotation_deg)
    start[:3, 3] = st.position
    st.motion = {
        "motion": "tip",
        "dir": (ux, uy),
        "pivot": (centre[0] + ux * half, centre[1] + uy * half, float(lo[2])),
        "depth": float(2 * half),
        "height": float(hi[2] - lo[2]),
        "angle_deg": angle_deg,
        "duration_s": max(0.6, angle_deg / TIP_DEG_S),
        "t0": ctx.time,
        "start": start,
    }
    st.frozen = True  # moved by the roll, not by the solver, from now on
    st.bump()
    return undo


def _chain(*undos: Undo) -> Undo:
    def undo() -> None:
        for u in reversed(undos):
            u()

    return undo


@applies(B.SetMotion)
def set_motion(eff: B.SetMotion, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    undo0 = _snapshot(st, "motion", "motion_offset")
    st.motion = {
        "motion": eff.motion,
        "axis": eff.axis,
        "range_m": eff.range_m,
        "speed_m_s": eff.speed_m_s,
        "amplitude_m": eff.amplitude_m,
        "t0": ctx.time,
    }
    st.bump()
    return undo0


@applies(B.SetMechanism)
def set_mechanism(eff: B.SetMechanism, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    undo0 = _snapshot(st, "mechanism", "mechanism_state", "collider_frac", "open_frac")
    st.mechanism = dict(st.mechanism)
    st.mechanism[eff.mechanism] = eff.value
    if eff.mechanism == "one_way":
        n = np.asarray(eff.normal or (1.0, 0.0), dtype=float)
        st.update_mechanism_state(one_way_normal=tuple(n / max(float(np.linalg.norm(n)), 1e-9)))
    if eff.mechanism in ("ghost", "jam"):  # a jammed door still blocks, as the reference's
        st.collider_frac = 0.0
    elif eff.mechanism == "phantom":  # the collider takes over the swing; the panel shows shut
        st.collider_frac, st.open_frac = st.open_frac, 0.0
        for ps in st.parts.values():
            if ps.part.hinge:
                ps.hinge_deg = 0.0
    st.bump()
    return undo0


@applies(B.SetAnimation)
def set_animation(eff: B.SetAnimation, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    undo = _snapshot(st, "animation")
    st.animation = {
        "animation": eff.animation,
        "value": eff.value,
        "period_s": eff.period_s,
        "part": eff.part,
    }
    return undo


@applies(B.SetDayNight)
def set_day_night(eff: B.SetDayNight, ctx: EffectContext) -> Undo:
    w = ctx.world
    old = w.day_night
    base = old or DayNight(period_s=eff.period_s or 60.0)
    w.day_night = DayNight(
        period_s=eff.period_s or base.period_s, transition=eff.transition or base.transition, phase=base.phase
    )

    def undo() -> None:
        w.day_night = old

    return undo


@applies(B.SetFlicker)
def set_flicker(eff: B.SetFlicker, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    undo = _snapshot(st, "mechanism", "mechanism_state", "lit_override")
    st.mechanism = dict(st.mechanism)
    st.mechanism["flicker"] = eff.period_s or 0.5
    if st.lit is None:
        st.lit = True
    return undo


def _add_to_world(items: list, item, ctx: EffectContext) -> Undo:
    """Append a hole or blocker to the world (bumping its version), with the undo."""
    w = ctx.world
    items.append(item)
    w.version += 1

    def undo() -> None:
        items.remove(item)
        w.version += 1

    return undo


@applies(B.AddHole)
def add_hole(eff: B.AddHole, ctx: EffectContext) -> Undo:
    item = (np.asarray(eff.position, dtype=float), np.asarray(eff.size, dtype=float))
    return _add_to_world(ctx.world.holes, item, ctx)


@applies(B.AddBlocker)
def add_blocker(eff: B.AddBlocker, ctx: EffectContext) -> Undo:
    item = (tuple(eff.position), tuple(eff.size), tuple(eff.rotation_deg or (0.0, 0.0, 0.0)))
    return _add_to_world(ctx.world.blockers, item, ctx)


@applies(B.SetAppearance)
def set_appearance(eff: B.SetAppearance, ctx: EffectContext) -> Undo:
    st = _target(ctx, eff)
    undo = _snapshot(st, "appearance_scale", "appearance_color")
    if eff.scale is not None:
        st.appearance_scale = np.asarray(eff.scale, dtype=float)
    if eff.color is not None:
        st.appearance_color = tuple(eff.color)
    return undo


@applies(B.SetFrameTint)
def set_frame_tint(eff: B.SetFrameTint, ctx: EffectContext) -> Undo:
    w = ctx.world
    old = w.scene
    w.scene = old.model_copy(update={"tint": over(old.tint, eff.color, eff.strength)})

    def undo() -> None:
        w.scene = old

    return undo


def over(tint: Tint | None, color, strength: float) -> Tint:
    """One tint that draws `color` at `strength` over what `tint` already drew (two linear blends are one)."""
    if tint is None or tint.strength <= 0:
        return Tint(color=tuple(color), strength=strength)
    s1, s2 = tint.strength, strength
    s = 1.0 - (1.0 - s1) * (1.0 - s2)
    mixed = tuple((c1 * s1 * (1.0 - s2) + c2 * s2) / s for c1, c2 in zip(tint.color, color, strict=True))
    return Tint(color=mixed, strength=s)


_missing = unapplied()
if _missing:  # a variant without runtime meaning is a programming error: fail at import
    raise ImportError(f"effect kinds without an apply function: {', '.join(_missing)}")


def apply(eff: Effect, ctx: EffectContext) -> Undo:
    """Apply one effect; returns its undo."""
    fn = APPLY.get(type(eff))
    if fn is None:
        raise BundleError(f"unknown effect {eff!r} (known kinds: {', '.join(B.EFFECT_KINDS)})")
    return fn(eff, ctx)
