"""Semantic consistency detectors: improper configuration and historical incompatibility
(taxonomy family semantic_consistency).

A configuration is improper when the object could not hold it (it would topple, it lies upside
down or leans beyond what wear explains) or could not serve in it (it faces into a wall, stands on
a table it should stand beside, turns its back on the table it serves, faces against the row it
stands in).  A chair moved to open ground is still a usable chair: no finding.  An object is out of
its era when its kind came into use after the scene's era ended, or went out of use before it
began (`norms.yaml`'s years, never the object's own `era` clause).
"""

from __future__ import annotations

import math
import re

import numpy as np

from wac.bundle.transforms import rotation
from wac.taxonomy.norms import ERA_YEARS, head_noun
from wac.taxonomy.registry import Category

from .base import Finding, Report, Timeline, a_kind, detector
from .geometry import TOUCH_M, cross2, distance, part_vertices
from .world import Thing, World, inside_parts

LEAN_MARGIN_DEG = 3.0  # beyond the kind's lean by this much
UPSIDE_DOWN_DEG = 150.0
TOPPLE_M = 0.02  # a centre of mass this far outside what the object stands on topples it
BLOCKED_SHARE = 0.7  # this share of the room in front of it filled by a solid: it cannot be used
ROW_PEERS = 3  # an object facing against at least this many aligned twins beside it
ROW_ALIGNED_DEG = 10.0
ROW_OFF_DEG = 60.0
ROW_M = 8.0
TWIN_OFF_DEG = 150.0  # one of a pair turned this far from how its twin stands (the other way round)
SERVES_M = 1.1  # a seat this close to a table serves it
SEAT_WALL_M = 1.0  # a seat facing a wall this close faces it: no one sits so
SEATS = frozenset({"chair", "stool", "armchair", "sofa", "bench"})
TABLES = frozenset({"table", "desk", "workbench", "counter"})
LOOSE = frozenset({"furniture", "container", "goods", "appliance", "electronics", "vehicle"})  # not anchored
USED_ON_FLOORS = frozenset({"furniture", "vehicle"})  # people use them standing on the floor beside them
SERVING = frozenset({"furniture", "container", "goods", "appliance", "electronics", "vehicle"})
ROOF_M = 1.5  # furniture standing this high on something that is no floor is up on a roof
FLOORS = frozenset({"floor", "platform", "stage", "dais", "rug", "carpet", "deck", "pavement", "mat"})


def _up_tilt(t: Thing) -> float:
    up = rotation(*t.spec.rotation_deg) @ np.array([0.0, 0.0, 1.0])
    if np.prod(np.sign(t.spec.scale)) < 0 and t.spec.scale[2] < 0:
        up = -up
    return math.degrees(math.acos(max(-1.0, min(1.0, float(up[2])))))


def _facing(t: Thing) -> np.ndarray | None:
    """The world direction (x, y) of the object's front, None when it has none."""
    f = t.norm.front
    if f is None:
        return None
    axis = {"+x": (1, 0, 0), "-x": (-1, 0, 0), "+y": (0, 1, 0), "-y": (0, -1, 0)}[f]
    d = rotation(*t.spec.rotation_deg) @ (np.asarray(axis, float) * np.sign(np.asarray(t.spec.scale)))
    n = float(np.hypot(d[0], d[1]))
    return None if n < 0.5 else d[:2] / n


# the twins of its row (ROW_M), what it rests on, the room in front of it (front clearance, at most
# 1 m), the table it serves (SERVES_M)
@detector(Category.improper_configuration, reach_m=ROW_M + 1.5)
def misconfigured(tl: Timeline, ask: frozenset[str]) -> Report:
    """Upside down or leaning beyond its kind's lean; balanced where it would topple; facing into a
    solid; standing on furniture it should stand beside; its back to the table it serves; facing
    against the row of its twins; mirrored beside its twins."""
    found: dict[str, Finding] = {}
    why: dict[str, str] = {}
    for k, w in enumerate(tl.states):
        for t in tl.judged(w):
            if not t.drawn or t.blocker:
                continue
            f = _configuration(w, t)
            if f:
                refs = tuple(r for r in dict.fromkeys(re.findall(r"`([^`]+)`", f)) if r != t.id)
                found.setdefault(
                    t.id, Finding(Category.improper_configuration, (t.id,), f, "topple" in f, k, refs)
                )
    for o in ask - set(found):
        t = tl.last.things.get(o)
        if t is not None:
            why[o] = f"{t.label} stands as its kind can stand and can still be used where it is"
    return Report(tuple(found.values()), why)


def _configuration(w: World, t: Thing) -> str:
    n = t.norm
    if n.upright:
        tilt = _up_tilt(t)
        if tilt >= UPSIDE_DOWN_DEG:
            return f"{t.label} stands upside down"
        if tilt > n.lean_deg + LEAN_MARGIN_DEG:
            return f"{t.label} leans {tilt:.0f} deg; {_kind(t)} leans at most {n.lean_deg:g} deg"
    f = _topples(w, t) or _blocked_front(w, t) or _on_furniture(w, t) or _back_to_table(w, t)
    return f or _against_row(w, t) or _against_twin(w, t) or _mirrored(w, t)


def _kind(t: Thing) -> str:
    return a_kind(t.norm)


def _topples(w: World, t: Thing) -> str:
    """A loose object balanced where it would fall (posts, lamps and trees are anchored)."""
    if t.norm.mount in ("hangs", "wall") or t.spec.attached_to:
        return ""
    if not (t.spec.dynamic or t.spec.kind in LOOSE):
        return ""
    r = w.rest(t)
    if r.gap_m > TOUCH_M or len(r.contacts) == 0:
        return ""
    size = float(np.linalg.norm(np.asarray(t.spec.aabb_max[:2]) - np.asarray(t.spec.aabb_min[:2])))
    if r.com_outside_m <= max(TOPPLE_M, 0.03 * size):
        return ""
    # propped against something beside it (a plank against a wall) it holds
    if any(
        x.drawn and x.collides and x.id not in r.touching and distance(t.spec, x.spec) <= TOUCH_M
        for x in w.near(t, TOUCH_M)
    ):
        return ""
    return (
        f"{t.label} would topple: its centre of mass lies {r.com_outside_m:.2f} m outside what it stands on"
    )


def _blocked_front(w: World, t: Thing) -> str:
    d = _facing(t)
    n = t.norm
    depth = max(n.front_clearance_m, SEAT_WALL_M if n.key in SEATS else 0.0)
    if d is None or depth <= 0:
        return ""
    o = t.spec
    lo, hi = np.asarray(o.aabb_min), np.asarray(o.aabb_max)
    centre = (lo + hi) / 2
    half = _half_extent_along(t, d)
    width = _half_extent_along(t, np.array([-d[1], d[0]]))
    ground = o.aabb_min[2]
    top = min(o.aabb_max[2], ground + 1.5)
    # points in the room in front of it, where a person using it stands or sits
    us = np.linspace(0.05, depth, max(4, int(np.ceil(depth / 0.04))))  # finer than any wall is thin
    vs = np.linspace(-0.8, 0.8, 5) * max(width, 0.15)
    zs = np.linspace(ground + 0.15, max(top, ground + 0.4), 5)
    u, v, z = np.meshgrid(us, vs, zs, indexing="ij")
    side = np.array([-d[1], d[0]])
    pts = np.stack(
        [
            centre[0] + (half + u) * d[0] + v * side[0],
            centre[1] + (half + u) * d[1] + v * side[1],
            z,
        ],
        axis=-1,
    ).reshape(-1, 3)
    filled = np.zeros(len(pts), dtype=bool)
    what, most = "", 0
    box_lo, box_hi = pts.min(axis=0), pts.max(axis=0)
    seat = n.key in SEATS
    if seat and _faces_table(w, t, d):
        return ""  # a chair at a desk against a wall faces the desk it serves
    for x in w.things.values():
        if x.id == t.id or not x.drawn or not x.collides or x.norm.soft:
            continue
        if seat and x.norm.key in TABLES:
            continue  # a chair pushed in at a desk faces what it serves, however solid its drawers
        if np.any(np.asarray(x.spec.aabb_max) < box_lo) or np.any(np.asarray(x.spec.aabb_min) > box_hi):
            continue
        inside = inside_parts(x, pts)
        if int(inside.sum()) > most:
            what, most = x.id, int(inside.sum())
        filled |= inside
    # a line of sight straight ahead, at each height and side offset, that meets a solid within reach
    share = float(filled.reshape(len(us), len(vs), len(zs)).any(axis=0).mean())
    if share < BLOCKED_SHARE:
        return ""
    gap = distance(t.spec, w.things[what].spec)
    return f"{t.label} faces into `{what}` {gap:.2f} m in front of it: it cannot be used"


def _half_extent_along(t: Thing, d: np.ndarray) -> float:
    pts = np.vstack([part_vertices(p, t.spec) for p in t.spec.parts])
    c = (np.asarray(t.spec.aabb_min) + np.asarray(t.spec.aabb_max)) / 2
    return float(np.max((pts[:, :2] - c[:2]) @ d))


def _on_furniture(w: World, t: Thing) -> str:
    """Furniture or a vehicle standing on top of furniture, a container or a vehicle, or up on a roof:
    where no one can use it."""
    if tuple(t.norm.rests_on) != ("ground",) or t.spec.kind not in USED_ON_FLOORS:
        return ""
    r = w.rest(t)
    if r.gap_m > TOUCH_M:
        return ""
    for s in r.touching:
        if s == "ground":
            return ""
    for s in r.touching:
        x = w.things.get(s)
        if x is None or x.spec.walkable or x.norm.key in FLOORS or head_noun(x.spec.name) in FLOORS:
            continue
        raised = t.spec.aabb_min[2] - _ground_z(w, t)
        if x.spec.kind in SERVING or x.norm.key in TABLES | SEATS:
            return f"{t.label} stands on top of `{x.id}` ({x.spec.name}): {_kind(t)} cannot be used there"
        if raised >= ROOF_M:
            return f"{t.label} stands up on `{x.id}` ({x.spec.name}), {raised:.1f} m above the ground: no one can use it there"
    return ""


def _ground_z(w: World, t: Thing) -> float:
    g = w.scene.ground
    if g.terrain is None:
        return 0.0
    from wac.bundle.terrain import height_range

    return height_range(g, t.spec.aabb_min[:2], t.spec.aabb_max[:2])[0]


def _faces_table(w: World, t: Thing, d: np.ndarray) -> bool:
    c = (np.asarray(t.spec.aabb_min) + np.asarray(t.spec.aabb_max)) / 2
    for x in w.near(t, SERVES_M):
        if x.norm.key in TABLES and x.drawn and distance(t.spec, x.spec) <= SERVES_M:
            near = np.clip(c[:2], x.spec.aabb_min[:2], x.spec.aabb_max[:2]) - c[:2]
            if float(np.dot(near, d) / max(np.linalg.norm(near), 1e-9)) > 0.5:
                return True
    return False


def _back_to_table(w: World, t: Thing) -> str:
    if t.norm.key not in SEATS:
        return ""
    d = _facing(t)
    if d is None:
        return ""
    c = (np.asarray(t.spec.aabb_min) + np.asarray(t.spec.aabb_max)) / 2
    tables = [
        x
        for x in w.near(t, SERVES_M)
        if x.norm.key in TABLES and x.drawn and distance(t.spec, x.spec) <= SERVES_M
    ]
    if _faces_table(w, t, d):
        return ""  # it faces a table it serves (a café chair backing onto the next table)
    for x in tables:
        if w.wall_between(t, x):
            continue
        xc = (np.asarray(x.spec.aabb_min) + np.asarray(x.spec.aabb_max)) / 2
        to = xc[:2] - c[:2]
        # the nearest point of the table's footprint, not its centre: a long table beside a chair
        near = np.clip(c[:2], x.spec.aabb_min[:2], x.spec.aabb_max[:2]) - c[:2]
        to = near if np.linalg.norm(near) > 1e-6 else to
        cos = float(np.dot(to, d) / max(np.linalg.norm(to), 1e-9))
        if cos < -0.7:
            return f"{t.label} turns its back on `{x.id}` ({x.spec.name}) right behind it"
    return ""


def _peers(w: World, t: Thing, within: float) -> list[Thing]:
    """The drawn things built as `t` is (`World.built_as`) within `within` of it in plan."""
    here = t.spec.position[:2]
    return [p for p in w.built_alike(t) if p.id != t.id and math.dist(p.spec.position[:2], here) <= within]


def _yaw(d: np.ndarray) -> float:
    return math.degrees(math.atan2(d[1], d[0]))


def _wrap(a: float) -> float:
    return (a + 180.0) % 360.0 - 180.0


def _against_row(w: World, t: Thing) -> str:
    d = _facing(t)
    if d is None:
        return ""
    peers = [(p, f) for p in _row(w, t) if (f := _facing(p)) is not None]
    if len(peers) < ROW_PEERS:
        return ""
    yaws = [_yaw(f) for _, f in peers]
    ref = yaws[0]
    if any(abs(_wrap(y - ref)) > ROW_ALIGNED_DEG for y in yaws):
        return ""
    off = abs(_wrap(_yaw(d) - ref))
    if off < ROW_OFF_DEG:
        return ""
    return (
        f"{t.label} faces {off:.0f} deg away from the {len(peers)} like it beside it, which all face one way"
    )


def _row(w: World, t: Thing) -> list[Thing]:
    """The twins in a line with `t` (a row of benches, chairs along a table), within ROW_M of it."""
    near = sorted(_peers(w, t, ROW_M), key=lambda p: math.dist(p.spec.position[:2], t.spec.position[:2]))
    if not near:
        return []
    a = np.asarray(t.spec.position[:2])
    d = np.asarray(near[0].spec.position[:2]) - a
    n = float(np.linalg.norm(d))
    if n < 1e-6:
        return []
    d /= n
    return [p for p in near if abs(cross2(d, np.asarray(p.spec.position[:2]) - a)) <= 0.3]


def _against_twin(w: World, t: Thing) -> str:
    """One of a pair (guardian lions, two chairs at a table, twin armchairs) turned at least 90 deg
    from how its twin stands: neither the twin's facing (a pair side by side, one behind the other)
    nor its mirror image across the line between them (a pair facing each other or turned to a
    common centre)."""
    d = _facing(t)
    if d is None or _backed(w, t, d):
        return ""
    twins = [(p, f) for p in _peers(w, t, ROW_M) if (f := _facing(p)) is not None]
    if len(twins) != 1:
        return ""
    p, f = twins[0]
    between = np.asarray(p.spec.position[:2]) - np.asarray(t.spec.position[:2])
    n = float(np.linalg.norm(between))
    if n < 1e-6:
        return ""
    u = between / n
    mirrored = f - 2 * float(f @ u) * u
    off = min(abs(_wrap(_yaw(d) - _yaw(f))), abs(_wrap(_yaw(d) - _yaw(mirrored))))
    if off < TWIN_OFF_DEG:
        return ""
    return f"{t.label} is turned {off:.0f} deg from how its twin `{p.id}` beside it stands"


def _backed(w: World, t: Thing, d: np.ndarray) -> bool:
    """Whether a solid stands right behind `t` (a bookshelf against its wall): its facing is the wall's."""
    c = (np.asarray(t.spec.aabb_min) + np.asarray(t.spec.aabb_max)) / 2
    half = _half_extent_along(t, -d)
    probe = np.array(
        [
            [c[0] - d[0] * (half + 0.15), c[1] - d[1] * (half + 0.15), z]
            for z in np.linspace(t.spec.aabb_min[2] + 0.2, t.spec.aabb_max[2] - 0.05, 3)
        ]
    )
    return any(
        x.id != t.id and x.drawn and x.collides and inside_parts(x, probe).any() for x in w.near(t, 0.3)
    )


def _mirrored(w: World, t: Thing) -> str:
    if np.prod(np.sign(t.spec.scale)) > 0:
        return ""
    twins = [p for p in _peers(w, t, ROW_M) if np.prod(np.sign(p.spec.scale)) > 0]
    if not twins:
        return ""
    return f"{t.label} is a mirror image of `{twins[0].id}` beside it"


@detector(Category.historical)
def out_of_era(tl: Timeline, ask: frozenset[str]) -> Report:
    """An object whose kind came into use after the scene's era, or went out of use before it.  A kind
    of scene its prefab is made for is a hint, not a norm (a bench indoors, a table in a forest hut),
    so an object out of place only by scene type is no evidence."""
    found: dict[str, Finding] = {}
    why: dict[str, str] = {}
    for k, w in enumerate(tl.states):
        era = w.scene.era
        start, end = ERA_YEARS.get(era, (None, None))
        for t in tl.judged(w):
            if not t.drawn:
                continue
            f, note = (
                _era_of(t, era, start, end)
                if start is not None
                else ("", f"the scene declares no era ({era})")
            )

            if f:
                found.setdefault(t.id, Finding(Category.historical, (t.id,), f, False, k))
            elif t.id in ask:
                why[t.id] = note
    return Report(tuple(found.values()), {o: n for o, n in why.items() if o not in found})


def _year(y: int) -> str:
    return f"{-y} BCE" if y < 0 else str(y)


def _era_of(t: Thing, era: str, start: int, end: int) -> tuple[str, str]:
    return era_verdict(t.norm, t.spec.era, t.label, era)


def era_verdict(n, declared: str, label: str, era: str) -> tuple[str, str]:
    """Whether an object of norm `n` (its prefab declaring `declared`) is out of the scene's `era`:
    (the finding in words, "") or ("", why not).  The one rule of the historical detector and of the
    self-check's era observable: the kind's years of use, not the object's `era` clause."""
    start, end = ERA_YEARS[era]
    intro, until = n.introduced, n.in_use_until
    if intro is None and not n.claims and declared in ERA_YEARS:
        intro = ERA_YEARS[declared][0]  # no norm: what its prefab says of itself
    scene = era.replace("_", " ")
    if intro is not None and intro > end:
        return (
            f"{label} came into use in {_year(intro)}, after the {scene} era ({_year(start)}-{_year(end)})",
            "",
        )
    if until is not None and until < start:
        return f"{label} went out of use by {_year(until)}, before the {scene} era", ""
    if intro is None:
        return "", f"{label} has been in use since long before the {scene} era"
    return "", f"{label} was in use in the {scene} era (from {_year(intro)})"
