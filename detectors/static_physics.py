"""Static physics detectors: missing support, intersection, scale (taxonomy family static_physics).

Each reads the world as built: what an object's drawn underside really touches (rays cast down,
not its `on` clause), how deep solids really overlap (not whether one is `attached_to` the other),
and what size it is next to its own kind and its peers.
"""

from __future__ import annotations

import math

import numpy as np

from wac.bundle.terrain import height_range
from wac.taxonomy.registry import Category

from .base import Finding, Report, Timeline, a_kind, detector
from .geometry import TOUCH_M, distance, near_pairs, own_extents, penetration
from .world import Thing, World

OVERHEAD_M = 1.8  # a beam this high spans an opening people pass under
NATURAL = frozenset({"rock", "vegetation", "water", "liquid"})
DETACHED_M = 0.05  # a part this far from every other part of its object stands apart from it
PENETRATION_M = 0.02  # deeper overlaps between solids are defects (the clean-scene check's E502)
ATTACH_M = 0.05  # how deep a fixing may sit in what it is attached to (bolts, a sign on a post)
SINK_M = 0.05  # a standing object this far below the ground under it is sunk into it
SIZE_SLACK = 1.25  # beyond a kind's natural range by this factor: a size no instance has
PEER_RATIO = 1.4  # this much beyond every peer's scale: out of scale among its own kind
WILD_PEER_RATIO = 2.0  # rocks and plants grow to any size: twice the largest of them
PEER_M = 15.0  # peers farther apart than this are not seen together
PEERS = 2  # peers that set a size: at least two (one twin 3x bigger is two sizes of a kind)
PROPORTION_RATIO = 1.3  # one axis scaled this much more than another distorts a fixed-proportion kind


def _drawn(w: World, tl: Timeline | None = None):
    things = w.things.values() if tl is None else tl.judged(w)
    return [t for t in things if t.drawn and not t.spec.walkable]


# --- missing support --------------------------------------------------------------------------


def support_finding(w: World, t: Thing, moment: int = 0) -> Finding | None:
    """Whether `t` floats, as the auditor sees it: what its drawn underside touches, whatever its
    `on` or `attached_to` clauses say.  Held from the side or from above counts only for what is
    fixed there: a hanging or wall-mounted kind, or an object attached to what it touches."""
    o, n = t.spec, t.norm
    if n.mount == "floats" or w.gap(t) <= TOUCH_M and not _held_by_a_sliver(w, t):
        return None
    touching = [x for x in w.near(t, TOUCH_M) if x.drawn and distance(o, x.spec) <= TOUCH_M]
    host = w.things.get(o.attached_to) if o.attached_to else None
    if o.attached_to is not None:
        if host is None:
            return None  # E503 reports the unknown host
        if touching:
            return None  # fixed to its host, or to what it touches instead
        gap = distance(o, host.spec)
        return Finding(
            Category.missing_support,
            (o.id,),
            f"{t.label} is attached to `{host.id}` but hangs {gap:.2f} m away from it, touching nothing",
            physical=True,
            moment=moment,
            refs=(host.id,),
            measure=gap,
        )
    if _spans(t, touching):
        return None  # a beam, a lintel, a shelf board: borne by what it spans between
    if n.mount in ("hangs", "wall"):
        if touching:
            return None
        what = "hangs from nothing above it" if n.mount == "hangs" else "is fixed to no wall or post"
        return Finding(Category.missing_support, (o.id,), f"{t.label} {what}", physical=True, moment=moment)
    r = w.rest(t)
    gap = r.gap_m
    side = f", touching only `{touching[0].id}` at its side" if touching else ""
    if gap <= TOUCH_M:  # held only where its edge is sunk into a neighbour: the gap is under its middle
        gap = r.gap_at_com_m
        side = f", held only by its edge sunk into `{r.touching[0]}`" if r.touching else side
    if not math.isfinite(gap):
        where = "with nothing under it"
    elif r.under == "ground" or gap != r.gap_m:
        where = "above the ground" if r.under == "ground" else "above what lies under it"
    else:
        where = f"above `{r.under}` beneath it"
    gap = gap if math.isfinite(gap) else o.aabb_min[2]
    under = (r.under,) if r.under not in (None, "ground") and where.endswith("beneath it") else ()
    return Finding(
        Category.missing_support,
        (o.id,),
        f"{t.label} floats {gap:.2f} m {where}{side}",
        physical=True,
        moment=moment,
        refs=under,
        measure=gap,
    )


def _held_by_a_sliver(w: World, t: Thing) -> bool:
    """Whether the object rests only where its edge is sunk into a neighbour, nothing under it bearing
    it (crates side by side on a cart that is taken away): it floats, whatever touches its side."""
    if t.spec.aabb_min[2] <= 0.015 and w.scene.ground.terrain is None:
        return False
    r = w.rest(t)
    return r.on_top == 0 and r.com_outside_m > 0.02 and r.gap_at_com_m > TOUCH_M


def _spans(t: Thing, touching: list[Thing]) -> bool:
    """Whether `t` is a beam held between things on opposite sides of it (a lintel borne by the walls
    either side of a door): lower than it is long, touching drawn solids at both ends."""
    lo, hi = np.asarray(t.spec.aabb_min), np.asarray(t.spec.aabb_max)
    c = (lo + hi) / 2
    overhead = lo[2] >= OVERHEAD_M  # over an opening people pass under (a lintel, a beam)
    board = hi[2] - lo[2] <= 0.3 < max(hi[0] - lo[0], hi[1] - lo[1])  # a shelf board, a plank
    if not (overhead or board):
        return False  # a wall segment or a post hovering between its neighbours is no beam
    dirs = []
    for x in touching:
        xlo, xhi = np.asarray(x.spec.aabb_min), np.asarray(x.spec.aabb_max)
        meet = (np.maximum(lo, xlo) + np.minimum(hi, xhi)) / 2
        d = meet[:2] - c[:2]
        n = float(np.linalg.norm(d))
        if n > 1e-6:
            dirs.append(d / n)
    return any(float(a @ b) < -0.5 for i, a in enumerate(dirs) for b in dirs[i + 1 :])


def _grounded(w: World, t: Thing) -> bool:
    return w.rest(t).gap_m <= TOUCH_M


def drop_finding(w: World, t: Thing, moment: int = 0) -> Finding | None:
    """A loose object that rests on nothing solid (over a hole in the ground, on something without
    collision) drops as soon as the world runs: a change nobody caused."""
    if not (t.spec.dynamic and t.collides) or w.gap(t) > TOUCH_M:
        return None
    r = w.rest(t, physical=True)
    if r.gap_m <= TOUCH_M:
        return None
    why = (
        "the ground under it has a hole"
        if any(_over(t, h) for h in w.holes)
        else "what it stands on has no collision"
    )
    return Finding(
        Category.missing_support,
        (t.id,),
        f"{t.label} rests on nothing solid ({why}): it drops as soon as the world runs",
        physical=True,
        moment=moment,
    )


def _over(t: Thing, hole) -> bool:
    x0, y0, x1, y1 = hole
    lo, hi = t.spec.aabb_min, t.spec.aabb_max
    return lo[0] < x1 and hi[0] > x0 and lo[1] < y1 and hi[1] > y0


# what holds an object up touches it (TOUCH_M); a hole under it is a changed box over its footprint
@detector(Category.missing_support, reach_m=0.5)
def floating(tl: Timeline, ask: frozenset[str]) -> Report:
    """An object with a gap under it, a hanging or wall-mounted one touching nothing, an attached
    one away from its host, a loose one over nothing solid."""
    found: dict[str, Finding] = {}
    why = {}
    for k, w in enumerate(tl.states):
        for t in _drawn(w, tl):
            f = support_finding(w, t, k) or drop_finding(w, t, k)
            if f is not None:
                found.setdefault(t.id, f)
    for oid in ask - set(found):
        t = tl.last.things.get(oid)
        if t is not None:
            r = tl.last.rest(t)
            why[oid] = (
                f"{t.label} rests on {', '.join(f'`{x}`' for x in r.touching) or 'something'} "
                f"(gap {r.gap_m:.3f} m)"
            )
    return Report(tuple(found.values()), why)


# --- intersection -------------------------------------------------------------------------------


# an overlap needs the two boxes to overlap
@detector(Category.intersection, reach_m=0.5)
def interpenetrating(tl: Timeline, ask: frozenset[str]) -> Report:
    """Solids overlapping by more than 2 cm (an attached fixing by more than 5 cm), an object that
    stands sunk into the ground, a part hanging detached from its object."""
    found: dict[tuple, Finding] = {}
    for k, w in enumerate(tl.states):
        for f in _pairs(w, k, tl.focus):
            found.setdefault(tuple(sorted(f.objects)), f)
        for t in _drawn(w, tl):
            for f in (_sunk(w, t, k), _detached(t, k)):
                if f is not None:
                    found.setdefault((t.id, f.evidence[:8]), f)
    why = {oid: f"`{oid}` overlaps nothing by more than {PENETRATION_M:g} m" for oid in ask}
    for f in found.values():
        for oid in f.objects:
            why.pop(oid, None)
    return Report(tuple(found.values()), why)


def _pairs(w: World, moment: int, focus: frozenset[str] | None = None):
    things = [t for t in w.things.values() if t.drawn and t.collides and not t.norm.soft]
    objs = [t.spec for t in things]
    for i, j in near_pairs(objs, TOUCH_M):
        a, b = things[i], things[j]
        if focus is not None and a.id not in focus and b.id not in focus:
            continue
        attached = b.id == a.spec.attached_to or a.id == b.spec.attached_to
        limit = ATTACH_M if attached else PENETRATION_M
        if not all(
            a.spec.aabb_min[k] < b.spec.aabb_max[k] - limit
            and b.spec.aabb_min[k] < a.spec.aabb_max[k] - limit
            for k in range(3)
        ):
            continue
        depth = penetration(a.spec, b.spec)
        if depth > limit:
            fixed, host = (a, b) if a.spec.attached_to == b.id else (b, a)
            how = f" although `{fixed.id}` is attached to `{host.id}`" if attached else ""
            yield Finding(
                Category.intersection,
                (a.id, b.id),
                f"{a.label} and {b.label} interpenetrate by {depth:.2f} m{how}",
                physical=True,
                moment=moment,
                measure=depth,
            )


def _sunk(w: World, t: Thing, moment: int) -> Finding | None:
    """A made object whose base lies below the lowest ground under it (a rock or a log half buried,
    a post set into the ground, are how they lie)."""
    if t.norm.mount not in ("stands", "any") or t.norm.soft or t.spec.attached_to:
        return None
    if t.spec.kind in NATURAL or t.spec.walkable or t.spec.liquid_depth_m is not None:
        return None  # a boulder or a log half buried is how they lie
    o = t.spec
    g = w.scene.ground
    low = height_range(g, o.aabb_min[:2], o.aabb_max[:2])[0] if g.terrain is not None else 0.0
    depth = low - o.aabb_min[2]
    if depth <= SINK_M:
        return None
    return Finding(
        Category.intersection,
        (o.id,),
        f"{t.label} is sunk {depth:.2f} m into the ground",
        True,
        moment,
        measure=depth,
    )


def _detached(t: Thing, moment: int) -> Finding | None:
    """A part that touches no other part of its object and rests on nothing: it hangs beside it."""
    o = t.spec
    if len(o.parts) < 2 or t.norm.soft:
        return None
    from .geometry import part_vertices

    boxes = []
    for p in o.parts:
        v = part_vertices(p, o)
        boxes.append((v.min(axis=0), v.max(axis=0)))
    for i, (lo, hi) in enumerate(boxes):
        gaps = [
            max(0.0, *(max(lo[k] - h2[k], l2[k] - hi[k]) for k in range(3)))
            for j, (l2, h2) in enumerate(boxes)
            if j != i
        ]
        gap = min(gaps)
        if gap > DETACHED_M:
            p = o.parts[i]
            return Finding(
                Category.intersection,
                (o.id,),
                f"{t.label}'s {p.id.replace('_', ' ')} stands {gap:.2f} m apart from the rest of it",
                True,
                moment,
                measure=gap,
            )
    return None


# --- scale --------------------------------------------------------------------------------------


def _size(t: Thing) -> np.ndarray:
    """(height, long, short) as drawn: its own extents, scaled, and drawn at another size if so."""
    e = own_extents(t.spec)
    if t.look.appearance_scale is not None:
        e = (
            e
            * np.abs(np.asarray(t.look.appearance_scale))
            / np.maximum(np.abs(np.asarray(t.spec.scale)), 1e-9)
        )
    return np.array([e[2], max(e[0], e[1]), min(e[0], e[1])])


def _factor(t: Thing) -> np.ndarray:
    s = np.abs(np.asarray(t.look.appearance_scale or t.spec.scale, dtype=float))
    return s


def _uniform(t: Thing) -> bool:
    f = _factor(t)
    return float(f.max() / max(f.min(), 1e-9)) < 1.05


def _signature(t: Thing) -> tuple:
    """Objects built alike and called alike (same prefab, same parts, same name): their scales
    compare directly.  The same prefab under another name is another kind of thing to an observer
    (a bowl made from the basket prefab)."""
    return (t.spec.prefab, t.spec.name, tuple((p.shape, tuple(p.size)) for p in t.spec.parts))


@detector(Category.scale)
def out_of_scale(tl: Timeline, ask: frozenset[str]) -> Report:
    """A size no instance of its kind has (beyond its natural range by 25%), a scale 40% beyond
    every peer built alike within 15 m, or a fixed-proportion object stretched 30% along one axis."""
    found: dict[str, Finding] = {}
    why: dict[str, str] = {}
    for k, w in enumerate(tl.states):
        groups: dict[tuple, list[Thing]] = {}
        for t in _drawn(w):  # peers anywhere, though only the judged objects are judged
            groups.setdefault(_signature(t), []).append(t)
        for t in _drawn(w, tl):
            f, note = _scale_of(t, groups[_signature(t)], k)
            if f is not None:
                found.setdefault(t.id, f)
            elif t.id in ask:
                why[t.id] = note
    return Report(tuple(found.values()), {k: v for k, v in why.items() if k not in found})


def _scale_of(t: Thing, group: list[Thing], moment: int) -> tuple[Finding | None, str]:
    n = t.norm
    size = _size(t)
    notes = []
    if n.claims:
        for name, value, (lo, hi) in zip(
            ("tall", "long", "wide"), size, (n.height_m, n.long_m, n.short_m), strict=True
        ):
            if value > hi * SIZE_SLACK or value < lo / SIZE_SLACK:
                return (
                    Finding(
                        Category.scale,
                        (t.id,),
                        f"{t.label} is {value:.2f} m {name}; {a_kind(n)} is {lo:g}-{hi:g} m {name}",
                        moment=moment,
                    ),
                    "",
                )
        notes.append(f"its size ({size[0]:.2f} m tall) is within the natural range of {a_kind(n)}")
    else:
        notes.append("no norm says how big it should be")
    f = _factor(t)
    peers = [
        p for p in group if p.id != t.id and math.dist(p.spec.position[:2], t.spec.position[:2]) <= PEER_M
    ]
    g = float(np.prod(f) ** (1 / 3))
    pg = [float(np.prod(_factor(p)) ** (1 / 3)) for p in peers]
    if len(peers) >= PEERS:
        lo, hi = min(pg), max(pg)
        ratio_limit = WILD_PEER_RATIO if t.spec.kind in NATURAL else PEER_RATIO
        if g > hi * ratio_limit or g < lo / ratio_limit:
            ratio = g / hi if g > hi else lo / g
            return (
                Finding(
                    Category.scale,
                    (t.id,),
                    f"{t.label} is {ratio:.1f}x {'larger' if g > hi else 'smaller'} than the "
                    f"{len(peers)} {t.spec.name}s like it nearby (`{peers[0].id}`…)",
                    moment=moment,
                    refs=tuple(p.id for p in peers),
                ),
                "",
            )
        notes.append(f"its {len(peers)} peers nearby are {lo:.2f}x-{hi:.2f}x and it is {g:.2f}x")
    elif peers:  # one twin 3x bigger is two sizes of a kind, not an odd one
        notes.append(
            f"the {len(peers) + 1} like it nearby already vary from {min(pg + [g]):.2f}x to {max(pg + [g]):.2f}x"
        )
    else:
        notes.append("nothing like it stands within 15 m to compare it with")
    prop = f / max(g, 1e-9)
    if len(peers) >= PEERS:
        others = [_factor(p) / max(q, 1e-9) for p, q in zip(peers, pg, strict=True)]
        worst = min(float(np.max(np.maximum(prop / o, o / prop))) for o in others)
    elif (n.fixed_proportions and n.key == (t.spec.prefab or "")) or any(_uniform(p) for p in peers):
        # its prefab's proportions are its kind's, or a twin shows them undistorted
        worst = float(prop.max() / max(prop.min(), 1e-9))
    else:
        worst = 0.0
    if worst >= PROPORTION_RATIO:
        return (
            Finding(
                Category.scale,
                (t.id,),
                f"{t.label} is stretched: {worst:.1f}x along one axis against its proportions",
                moment=moment,
            ),
            "",
        )
    return None, f"{t.label}: " + "; ".join(notes)
