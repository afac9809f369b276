"""Interactive physics detectors: missing collision, unexpected collision, abnormal response to
contact (taxonomy family interactive_physics).

What blocks is read from the built world (a drawn object of a kind a person cannot walk through
that has no collider; a collider nothing draws), not from `solid` clauses; what responds abnormally
from the physics the world gives an object (its mass against its kind's, an impulse, a bounce, a
jitter nothing causes).
"""

from __future__ import annotations

import numpy as np

from wac.taxonomy.registry import Category

from .base import Finding, Report, Timeline, a_kind, detector
from .world import Thing, World

BODY_M = (0.15, 1.7)  # heights above the ground where a walking person meets an obstacle
BLOCKING_MATERIALS = frozenset({"wood", "metal", "stone", "glass", "ceramic", "plastic", "rubber", "leather"})
MASS_RATIO = 4.0  # a loose object this many times lighter or heavier than its kind responds wrongly
BOUNCE = 0.8  # restitution from which an object bounces like a ball
TREMBLE_M = 0.01  # a jitter this large with nothing touching the object shows
SWAY_M = 0.1  # soft things (foliage) may sway this much in the wind


def blocks(w: World, t: Thing) -> bool:
    """Whether a person would expect `t` to stop them: its norm says so, or (no norm) it is a
    rigid thing at body height."""
    if t.norm.blocks is not None:
        return t.norm.blocks
    if t.norm.soft or t.spec.liquid_depth_m is not None:
        return False
    cats = set()
    for p in t.spec.parts:
        m = w.material(p.material)
        cats.add(m.category if m else "")
    e = np.asarray(t.spec.aabb_max) - np.asarray(t.spec.aabb_min)
    if min(e[0], e[1]) < 0.05 and max(e[0], e[1]) < 0.5:
        return False  # a rope, a pole: brushed past, not walked into
    return bool(cats & BLOCKING_MATERIALS) and _body_height(t, None)


def _body_height(t: Thing, ground_z: float | None) -> bool:
    lo, hi = t.spec.aabb_min[2], t.spec.aabb_max[2]
    g = 0.0 if ground_z is None else ground_z
    return hi - g >= 0.5 and lo - g <= BODY_M[1]


def _reachable(w: World, t: Thing) -> bool:
    lo, hi = np.asarray(t.spec.aabb_min), np.asarray(t.spec.aabb_max)
    c = (lo + hi) / 2
    r = float(np.linalg.norm(hi[:2] - lo[:2])) / 2
    return w.reachable_near(c, r + 1.0)


def _mechanisms(t: Thing) -> set[str]:
    return {m for m, _ in t.look.mechanism}


@detector(Category.missing_collision)
def passable(tl: Timeline, ask: frozenset[str]) -> Report:
    """A drawn object a person cannot walk through that lets them (no collider, a door that lets one
    through closed, one-way, reaching through walls), and ground with no floor under its surface."""
    found: dict[str, Finding] = {}
    for k, w in enumerate(tl.states):
        for t in tl.judged(w):
            if not t.drawn or t.blocker:
                continue
            mech = _mechanisms(t)
            f = None
            if "phantom" in mech:
                f = f"{t.label} lets the agent walk through it while it is shut"
            elif "one_way" in mech:
                f = f"{t.label} lets the agent in from one side and not out again"
            elif "through_walls" in mech:
                f = f"{t.label} can be used through the walls around it"
            elif not t.collides and blocks(w, t) and _body_height(t, None) and _reachable(w, t):
                f = f"{t.label} has no collision: the agent walks straight through it"
            elif t.collides and blocks(w, t) and _open_parts(w, t) and _reachable(w, t):
                f = f"{t.label}'s {_open_parts(w, t)} has no collision: the agent walks through it"
            if f:
                found.setdefault(t.id, Finding(Category.missing_collision, (t.id,), f, True, k))
        for i, (x0, y0, x1, y1) in enumerate(w.holes):
            found.setdefault(
                f"#hole{i + 1}",
                Finding(
                    Category.missing_collision,
                    (f"#hole{i + 1}",),
                    f"the ground around ({(x0 + x1) / 2:.1f}, {(y0 + y1) / 2:.1f}) looks whole but has no "
                    "floor: one falls through it",
                    True,
                    k,
                ),
            )
    why = {}
    for oid in ask - set(found):
        t = tl.last.things.get(oid)
        if t is not None and not blocks(tl.last, t):
            why[oid] = f"{t.label} is not something a person expects to stop them"
        elif t is not None:
            why[oid] = f"{t.label} blocks the agent"
    return Report(tuple(found.values()), why)


def _open_parts(w: World, t: Thing) -> str:
    """A large drawn part without collision in an otherwise solid object (a door's leaf)."""
    for p in t.spec.parts:
        if p.solid or p.hinge is None:
            continue
        sx, sy, sz = (abs(v) for v in np.asarray(p.size) * np.abs(np.asarray(t.spec.scale)))
        if sz >= 0.5 and max(sx, sy) >= 0.3:
            return p.id.replace("_", " ")
    return ""


@detector(Category.unexpected_collision)
def invisible_obstacle(tl: Timeline, ask: frozenset[str]) -> Report:
    """Something stops the agent where nothing is drawn: an invisible collider, an undrawn solid, a
    door drawn open that still blocks, water or a pit that bears weight."""
    found: dict[str, Finding] = {}
    for k, w in enumerate(tl.states):
        for t in tl.judged(w):
            f = None
            if t.collides and not t.drawn and _reachable(w, t):
                lo, hi = t.spec.aabb_min, t.spec.aabb_max
                water = _water_under(w, t)
                if water is not None:
                    f = f"{water.label} bears the agent: an unseen floor holds it up on the water"
                elif hi[2] - lo[2] >= 0.1 and lo[2] <= BODY_M[1]:
                    f = f"{t.label} is not drawn but stops the agent"
            elif "ghost" in _mechanisms(t):
                f = f"{t.label} is drawn open but still blocks the doorway"
            elif t.drawn and t.collides and t.spec.liquid_depth_m is not None:
                f = f"{t.label} is water (or a pit) that the agent walks on"
            elif t.drawn and t.collides and _liquid(w, t) and t.spec.aabb_max[2] <= 0.3 and _reachable(w, t):
                f = f"{t.label} looks like water but bears the agent"
            if f:
                found.setdefault(t.id, Finding(Category.unexpected_collision, (t.id,), f, True, k))
    return Report(tuple(found.values()), {o: f"`{o}` stops nothing unseen" for o in ask if o not in found})


def _water_under(w: World, t: Thing) -> Thing | None:
    """The water (or pit) an unseen flat collider lies over: the agent walks on it."""
    lo, hi = t.spec.aabb_min, t.spec.aabb_max
    if hi[2] - lo[2] >= 0.1:
        return None
    for x in w.things.values():
        if x.drawn and (x.spec.liquid_depth_m is not None or _liquid(w, x)):
            xl, xh = x.spec.aabb_min, x.spec.aabb_max
            if lo[0] < xh[0] and hi[0] > xl[0] and lo[1] < xh[1] and hi[1] > xl[1]:
                return x
    return None


def _liquid(w: World, t: Thing) -> bool:
    cats = {(w.material(p.material).category if w.material(p.material) else "") for p in t.spec.parts}
    return cats == {"liquid"}


@detector(Category.abnormal_trajectory)
def abnormal_response(tl: Timeline, ask: frozenset[str]) -> Report:
    """A loose object whose mass is far from its kind's, one given an impulse, an overturn or a
    ball's bounce by contact, one that jitters with nothing touching it."""
    found: dict[str, Finding] = {}
    why: dict[str, str] = {}
    for k, w in enumerate(tl.states):
        for t in tl.judged(w):
            if not t.drawn:
                continue
            f, note = _response(t)
            if f:
                found.setdefault(t.id, Finding(Category.abnormal_trajectory, (t.id,), f, True, k))
            elif t.id in ask:
                why[t.id] = note
    return Report(tuple(found.values()), {o: n for o, n in why.items() if o not in found})


def _response(t: Thing) -> tuple[str, str]:
    n, o, ph = t.norm, t.spec, t.look.physics
    if t.look.motion is not None and t.look.motion.motion == "tremble":
        amp = t.look.motion.amplitude_m or 0.03
        if amp >= (SWAY_M if n.soft else TREMBLE_M):
            return f"{t.label} jitters by {amp:.2f} m with nothing touching it", ""
        return "", f"{t.label} sways by {amp:.2f} m, as foliage does in the wind"
    if ph is not None:
        if ph.impulse is not None and np.linalg.norm(ph.impulse) > 0:
            return f"{t.label} is flung away when touched", ""
        if ph.torque_deg:
            return f"{t.label} overturns by {abs(ph.torque_deg):.0f} deg at a touch", ""
        if ph.restitution is not None and ph.restitution >= BOUNCE:
            return f"{t.label} bounces like a ball (restitution {ph.restitution:g})", ""
    if o.dynamic and n.claims and n.mass_kg != (0.0, 1e9):
        lo, hi = n.mass_kg
        if o.mass_kg < lo / MASS_RATIO:
            return (
                f"{t.label} weighs {o.mass_kg:g} kg; {a_kind(n)} weighs {lo:g}-{hi:g} kg, so a "
                "touch sends it flying",
                "",
            )
        if o.mass_kg > hi * MASS_RATIO:
            return (
                f"{t.label} weighs {o.mass_kg:g} kg; {a_kind(n)} weighs {lo:g}-{hi:g} kg, so it "
                "does not budge when pushed",
                "",
            )
        return "", f"{t.label} weighs {o.mass_kg:g} kg, within what {a_kind(n)} weighs ({lo:g}-{hi:g} kg)"
    return "", f"{t.label} responds to contact as its kind does"
