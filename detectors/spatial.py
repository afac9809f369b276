"""Spatial consistency detectors: visibility, view/distance-dependent appearance, shadow and
lighting, material (taxonomy family spatial_consistency).

They read how each object is drawn (render mode, drawn or not, its shadow, its materials' colour,
glow and opacity) against what its kind is (a lamp gives light, a crate does not; a window pane is
glass, a barrel is not) and against the rest of the same object and its peers.
"""

from __future__ import annotations

import math

import numpy as np

from wac.bundle import model as B
from wac.taxonomy.registry import Category

from .base import Finding, Report, Timeline, a_kind, detector
from .geometry import cross2
from .world import Thing, World

GLOW = 0.15  # an emissive channel this bright makes a surface glow
LAMP_REACH_M = 2.5  # a lit lamp this close may light a surface brightly
SEE_THROUGH = 0.9  # an opacity below this shows what is behind
LIGHT_MATCH_DE = 40.0  # a glow this close in colour to a nearby lamp's light may be its light
SHADOW_SHIFT_M = 0.5  # a shadow this far from its object is detached


def _lab(rgb) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour in 0..1."""
    c = np.asarray(rgb, dtype=float)
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = m @ c / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a, b) -> float:
    return float(np.linalg.norm(_lab(a) - _lab(b)))


# --- visibility ---------------------------------------------------------------------------------


@detector(Category.visibility)
def wrongly_drawn(tl: Timeline, ask: frozenset[str]) -> Report:
    """An object drawn through what stands in front of it, vanishing from one side, drawn inside
    out, or not drawn although its shadow and collider are there."""
    found: dict[str, Finding] = {}
    for k, w in enumerate(tl.states):
        for t in tl.judged(w):
            if t.blocker:
                continue
            r = t.look.render
            f = None
            if r == "xray" and t.drawn:
                f = f"{t.label} is drawn through whatever stands in front of it"
            elif r == "cull" and t.drawn:
                f = f"{t.label} vanishes when seen from one side"
            elif r == "flip_normals" and t.drawn:
                f = f"{t.label} is drawn inside out: its far side shows through its near one"
            elif not t.spec.visible and t.look.casts_shadow:
                f = f"{t.label} is not drawn, yet its shadow is"
            elif not t.spec.visible and t.collides and not t.blocker:
                f = f"{t.label} is not drawn, yet it is there to bump into"
            if f:
                found.setdefault(t.id, Finding(Category.visibility, (t.id,), f, False, k))
        _changes(tl, found, k)
    why = {o: f"`{o}` is drawn as it should be" for o in ask if o not in found}
    return Report(tuple(found.values()), why)


def _changes(tl: Timeline, found: dict, k: int) -> None:
    """Between states told apart by distance (`beyond`/`within`): an object drawn in one, not the other."""
    if k == 0 or not tl.by_distance:
        return
    a, b = tl.states[k - 1], tl.states[k]
    for oid in tl.changed:
        ta, tb = a.things.get(oid), b.things.get(oid)
        if ta is not None and tb is not None and ta.drawn != tb.drawn:
            found.setdefault(
                oid,
                Finding(
                    Category.visibility,
                    (oid,),
                    f"{tb.label} {'vanishes' if ta.drawn else 'appears'} as the viewer's distance changes",
                    False,
                    k,
                ),
            )


# --- view/distance-dependent appearance ---------------------------------------------------------


@detector(Category.view_dependent)
def distance_dependent(tl: Timeline, ask: frozenset[str]) -> Report:
    """An object whose size, colour or detail changes with the viewer's distance."""
    found: dict[str, Finding] = {}
    if tl.by_distance:
        for k, oid, a, ta, b, tb in tl.steps():
            if ta is None or tb is None:
                continue
            what = _look_change(a, ta, b, tb)
            if what:
                found.setdefault(
                    oid,
                    Finding(Category.view_dependent, (oid,), f"{tb.label} {what} with distance", False, k),
                )
    why = {o: f"`{o}` looks the same from every distance" for o in ask if o not in found}
    return Report(tuple(found.values()), why)


def _look_change(a: World, ta: Thing, b: World, tb: Thing) -> str:
    sa = np.asarray(ta.look.appearance_scale or ta.spec.scale, dtype=float)
    sb = np.asarray(tb.look.appearance_scale or tb.spec.scale, dtype=float)
    ratio = float(np.max(np.maximum(sa, sb) / np.maximum(np.minimum(sa, sb), 1e-9)))
    if ratio >= 1.2:
        return f"changes size {ratio:.1f}x"
    if (ta.look.render == "lod_proxy") != (tb.look.render == "lod_proxy"):
        return "turns into a crude flat box"
    de = _colour_change(a, ta, b, tb)
    if de >= 15:
        return f"changes colour (dE {de:.0f})"
    return ""


def _colour_change(a: World, ta: Thing, b: World, tb: Thing) -> float:
    best = 0.0
    for pa, pb in zip(ta.spec.parts, tb.spec.parts, strict=False):
        ma, mb = a.material(pa.material), b.material(pb.material)
        if ma is not None and mb is not None:
            best = max(best, delta_e(ma.color, mb.color))
    return best


# --- shadow and lighting ------------------------------------------------------------------------


def _shadows_fall(w: World) -> bool:
    sc = w.scene
    return sc.sun is not None or any(pl.on for pl in sc.lights) or any(t.spec.lit for t in w.things.values())


def _lights(w: World) -> list[tuple[np.ndarray, float, tuple, str]]:
    """Lit light sources: (position, range, colour, the object that gives it)."""
    out = []
    for t in w.things.values():
        if not t.spec.lit or not t.look.illuminates:
            continue
        for p in t.spec.parts:
            if p.emitter is not None:
                from wac.bundle.transforms import part_corners_world

                c = part_corners_world(p, t.spec.position, t.spec.rotation_deg, t.spec.scale).mean(axis=0)
                out.append((c, p.emitter.range_m, p.emitter.color, t.id))
    for pl in w.scene.lights:
        if pl.on:
            out.append((np.asarray(pl.position), pl.range_m, pl.color, pl.id))
    return out


def glows(w: World, t: Thing) -> tuple[str, tuple] | None:
    """(the glowing part, its glow colour) of an object that gives light without being a light."""
    emitter = next((p for p in t.spec.parts if p.emitter is not None), None)
    if t.norm.emits_light:
        return None
    if emitter is not None:  # a light where its kind gives none (a crate whose lid shines)
        return (emitter.id, emitter.emitter.color) if t.norm.claims and t.spec.lit is not False else None
    for p in t.spec.parts:
        m = w.material(p.material)
        if m is not None and max(m.emissive) >= GLOW and m.category != "placeholder":
            return p.id, m.emissive
    if t.spec.lit:  # an object without emitters lit by an anomaly glows all over
        return t.spec.parts[0].id, (1.0, 1.0, 1.0)
    return None


@detector(Category.shadow_lighting)
def wrong_light(tl: Timeline, ask: frozenset[str]) -> Report:
    """An object casting no shadow where everything else does, a shadow detached from its object, an
    object glowing that is no light and that no lamp nearby explains, a lit lamp lighting nothing."""
    found: dict[str, Finding] = {}
    why: dict[str, str] = {}
    for k, w in enumerate(tl.states):
        fall = _shadows_fall(w)
        lights = _lights(w)
        for t in tl.judged(w):
            if not t.drawn:
                continue
            f = None
            if fall and not t.look.casts_shadow:
                f = f"{t.label} casts no shadow while everything around it does"
            elif fall and t.look.shadow_offset and math.hypot(*t.look.shadow_offset) >= SHADOW_SHIFT_M:
                f = f"{t.label}'s shadow lies {math.hypot(*t.look.shadow_offset):.1f} m away from it"
            elif t.spec.lit and not t.look.illuminates and any(p.emitter for p in t.spec.parts):
                f = f"{t.label} is lit but lights nothing around it"
            else:
                g = glows(w, t)
                if g is not None:
                    lamp = _explaining_lamp(t, g[1], lights)
                    if lamp is None:
                        f = f"{t.label} glows although it is no light and nothing lights it"
                    elif t.id in ask:
                        why[t.id] = f"{t.label} glows, but a lamp {lamp:.1f} m away would light it so"
            if f:
                found.setdefault(t.id, Finding(Category.shadow_lighting, (t.id,), f, False, k))
    for o in ask:
        if o not in found and o not in why:
            why[o] = f"`{o}` is lit and shadowed as it should be"
    return Report(tuple(found.values()), why)


def _explaining_lamp(t: Thing, colour, lights) -> float | None:
    lo, hi = np.asarray(t.spec.aabb_min), np.asarray(t.spec.aabb_max)
    for pos, rng, light, source in lights:
        if source == t.id:
            continue
        d = float(np.linalg.norm(np.maximum(np.maximum(lo - pos, 0), pos - hi)))
        if d <= min(rng, LAMP_REACH_M) and delta_e(_norm(colour), _norm(light)) <= LIGHT_MATCH_DE:
            return d
    return None


def _norm(c) -> np.ndarray:
    c = np.asarray(c, dtype=float)
    return c / max(float(c.max()), 1e-9)


# --- material -----------------------------------------------------------------------------------

SET_M = 5.0  # like objects this close form a set (stools round a table, the walls of a room)


# its set (SET_M, walls between) and the like objects in a line with it, however far
@detector(Category.material, reach_m=SET_M + 1.0, peers=True)
def wrong_material(tl: Timeline, ask: frozenset[str]) -> Report:
    """A surface of a material its kind is never made of, a placeholder texture, a solid part one can
    see through, a part unlike its twin parts, a colour cast over the whole frame."""
    found: dict[str, Finding] = {}
    why: dict[str, str] = {}
    for k, w in enumerate(tl.states):
        if w.frame_tint is not None:
            found.setdefault(
                "#frame",
                Finding(Category.material, ("#frame",), "every frame is washed with a colour cast", False, k),
            )
        for t in tl.judged(w):
            if not t.drawn:
                continue
            f, note = _material_of(w, t)
            if f:
                found.setdefault(t.id, Finding(Category.material, (t.id,), f, False, k))
            elif t.id in ask:
                why[t.id] = note
    return Report(tuple(found.values()), {o: n for o, n in why.items() if o not in found})


def _material_of(w: World, t: Thing) -> tuple[str, str]:
    n = t.norm
    mats = {p.id: w.material(p.material) for p in t.spec.parts}
    for pid, m in mats.items():
        if m is not None and m.category == "placeholder":
            return f"{t.label}'s {pid.replace('_', ' ')} shows the placeholder of a missing texture", ""
    for pid, m in mats.items():
        if m is None or m.category in ("glass", "liquid"):
            continue
        if m.opacity < SEE_THROUGH:
            return (
                f"{t.label}'s {pid.replace('_', ' ')} is see-through ({m.category}, opacity {m.opacity:g})",
                "",
            )
    if n.materials:
        odd = [
            (pid, m.category) for pid, m in mats.items() if m is not None and m.category not in n.materials
        ]
        if odd:
            pid, cat = odd[0]
            return (
                f"{t.label}'s {pid.replace('_', ' ')} is {cat}; {a_kind(n)} is made of {', '.join(n.materials)}",
                "",
            )
    twin = _odd_twin(t, mats) or _odd_peer(w, t, mats)
    if twin:
        return twin, ""
    made = ", ".join(sorted({m.category for m in mats.values() if m}))
    if not n.materials:
        return "", f"{t.label} is made of {made}, and no norm says what such a thing is made of"
    return "", f"{t.label} is made of {made}, as {a_kind(n)} can be"


CONVENTION = 3  # this many like objects in a line with it (a row of stalls) agreeing set a convention
VIEW_M = 60.0


def _odd_peer(w: World, t: Thing, mats: dict[str, B.Material | None]) -> str:
    """A part made of another material than the same part of the like objects it is seen with (same
    prefab, same name): two of its set (within a few metres with no wall between, or touching it: the
    walls of one room, the stools round a table) that agree, or every one of three or more built alike
    standing in a line with it (one stall's canopy of metal in a row of canvas ones)."""
    alike = w.alike(t)
    if len(alike) < 2:
        return ""

    def category(p: Thing, pid: str) -> str | None:
        return w.part_categories(p).get(pid)

    # a finding needs two like objects whose same part is of another material: where fewer differ,
    # the sets and lines (walls between, alignment) need not be worked out
    own = {pid: m.category for pid, m in mats.items() if m is not None}
    differ = [
        p for p in alike if any((c := category(p, pid)) is not None and c != k for pid, k in own.items())
    ]
    if len(differ) < 2:
        return ""
    near = {p.id for p in w.near(t, 0.05)}
    lined = {p.id for p in _in_line(t, alike)}

    def close(p) -> bool:
        if p.id in near:
            return True
        # in a line with it (the walls of one façade between its windows), or close with no wall
        # between (the stools round a table, not the one in the next room)
        d = math.dist(p.spec.position[:2], t.spec.position[:2])
        return d <= SET_M and (p.id in lined or not w.wall_between(t, p))

    sets = [p for p in alike if close(p)]
    sig = tuple((q.shape, tuple(q.size)) for q in t.spec.parts)
    twins = [
        p
        for p in alike
        if math.dist(p.spec.position[:2], t.spec.position[:2]) <= VIEW_M
        and tuple((q.shape, tuple(q.size)) for q in p.spec.parts) == sig
    ]
    seen = _in_line(t, twins)
    for peers, least in ((sets, 2), (seen, CONVENTION)):
        if len(peers) < least:
            continue
        for pid, m in mats.items():
            if m is None:
                continue
            cats = [c for p in peers if (c := category(p, pid)) is not None]
            if len(cats) >= least and len(set(cats)) == 1 and cats[0] != m.category:
                return (
                    f"{t.label}'s {pid.replace('_', ' ')} is {m.category} while the same part of the "
                    f"{len(cats)} like it {'beside it' if peers is sets else 'in a line with it'} is {cats[0]}"
                )
    return ""


def _in_line(t: Thing, alike: list[Thing]) -> list[Thing]:
    """The like objects standing in one line with `t` (the line through it and the nearest of them)."""
    if not alike:
        return []
    a = np.asarray(t.spec.position[:2])
    nearest = min(alike, key=lambda p: math.dist(p.spec.position[:2], a))
    d = np.asarray(nearest.spec.position[:2]) - a
    n = float(np.linalg.norm(d))
    if n < 1e-6:
        return []
    d /= n
    return [p for p in alike if abs(cross2(d, np.asarray(p.spec.position[:2]) - a)) <= 0.5]


def _odd_twin(t: Thing, mats: dict[str, B.Material | None]) -> str:
    """A part unlike the parts of the same shape and size beside it (one pane of wood among glass)."""
    groups: dict[tuple, list[str]] = {}
    for p in t.spec.parts:
        groups.setdefault((p.shape, tuple(round(v, 3) for v in p.size)), []).append(p.id)
    for ids in groups.values():
        if len(ids) < 2:
            continue
        cats = {i: mats[i].category if mats[i] else "" for i in ids}
        counts: dict[str, int] = {}
        for c in cats.values():
            counts[c] = counts.get(c, 0) + 1
        if len(counts) > 1:
            major = max(counts, key=lambda c: (counts[c], c))
            odd = next(i for i in ids if cats[i] != major)
            if counts[major] > counts[cats[odd]] or len(ids) == 2:
                return f"{t.label}'s {odd.replace('_', ' ')} is {cats[odd]} while its twin parts are {major}"
    return ""
