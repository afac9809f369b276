"""Temporal consistency detectors: existence, static attribute and operational state changes
(taxonomy family temporal_consistency).

A change over time is read between the states of one world (before and after a trigger fires);
a state that changes on its own all the time (an object sliding back and forth, a lamp flickering, a
day that snaps to night, a fan whose blades jump) is read from one state.  A state that merely
differs from what the clean scene had is no evidence: a fan that never turns looks switched off, a
door that never opens looks locked, unless a twin beside it shows how it should work.
"""

from __future__ import annotations

import math

import numpy as np

from wac.bundle.transforms import rotation
from wac.taxonomy.registry import Category

from .base import Finding, Report, Timeline, detector
from .spatial import delta_e
from .world import Thing, World

MOVE_M = 0.15  # a move this far (or a fifth of the object's size) shows
TURN_DEG = 15.0
SCALE_RATIO = 1.2
COLOUR_DE = 15.0
DRIFT_M = 0.2  # sliding this far on its own shows
DELAY_S = 1.5  # a mechanism answering this late has not answered
DOOR_SPEED = (0.25, 4.0)  # a door opening this much slower or faster than doors do
PEER_M = 15.0


def _peers(w: World, t: Thing) -> list[Thing]:
    """Like objects built alike (same prefab, or same name for primitives, same parts) within PEER_M:
    the twins that show how it should work, whatever each is called (a house door and a door)."""
    here = t.spec.position[:2]
    return [p for p in w.near_alike(t, PEER_M) if math.dist(p.spec.position[:2], here) <= PEER_M]


# --- existence ---------------------------------------------------------------------------------


@detector(Category.existence)
def appears_or_vanishes(tl: Timeline, ask: frozenset[str]) -> Report:
    """An object that is there in one state and gone in the next (or the reverse)."""
    found: dict[str, Finding] = {}
    if not tl.by_distance:
        for k, oid, _, ta, _, tb in tl.steps():
            was, now = ta is not None and ta.drawn, tb is not None and tb.drawn
            if was != now:
                t = tb or ta
                found.setdefault(
                    oid,
                    Finding(
                        Category.existence,
                        (oid,),
                        f"{t.label} {'appears' if now else 'disappears'} with no one there to cause it",
                        False,
                        k,
                    ),
                )
    why = {o: f"`{o}` stays where it is" for o in ask if o not in found}
    return Report(tuple(found.values()), why)


# --- static attributes -------------------------------------------------------------------------


def _turn_deg(ra, rb) -> float:
    m = rotation(*ra).T @ rotation(*rb)
    return math.degrees(math.acos(max(-1.0, min(1.0, (np.trace(m) - 1) / 2))))


def attribute_change(a: World, ta: Thing, b: World, tb: Thing) -> str:
    """What changed about an object between two states, in words ('' if nothing that shows)."""
    oa, ob = ta.spec, tb.spec
    size = float(np.linalg.norm(np.asarray(oa.aabb_max) - np.asarray(oa.aabb_min)))
    moved = math.dist(oa.position, ob.position)
    if moved >= max(MOVE_M, 0.2 * size):
        return f"moves {moved:.2f} m"
    turn = _turn_deg(oa.rotation_deg, ob.rotation_deg)
    if turn >= TURN_DEG:
        return f"turns {turn:.0f} deg"
    sa, sb = np.abs(np.asarray(oa.scale)), np.abs(np.asarray(ob.scale))
    ratio = float(np.max(np.maximum(sa, sb) / np.maximum(np.minimum(sa, sb), 1e-9)))
    if ratio >= SCALE_RATIO:
        return f"changes size {ratio:.1f}x"
    for pa, pb in zip(oa.parts, ob.parts, strict=False):
        ma, mb = a.material(pa.material), b.material(pb.material)
        if ma is None or mb is None or pa.material == pb.material:
            continue
        if ma.category != mb.category:
            return f"turns from {ma.category} to {mb.category}"
        if delta_e(ma.color, mb.color) >= COLOUR_DE:
            return "changes colour"
    return ""


@detector(Category.static_attribute)
def changes_by_itself(tl: Timeline, ask: frozenset[str]) -> Report:
    """An object that moves, turns, grows or changes its material between two states, or that slides
    back and forth on its own."""
    found: dict[str, Finding] = {}
    if not tl.by_distance:
        for k, oid, a, ta, b, tb in tl.steps():
            if ta is None or tb is None or not (ta.drawn and tb.drawn):
                continue
            what = attribute_change(a, ta, b, tb)
            if what:
                found.setdefault(
                    oid, Finding(Category.static_attribute, (oid,), f"{tb.label} {what} by itself", False, k)
                )
    for k, w in enumerate(tl.states):
        for t in tl.judged(w):
            m = t.look.motion
            if t.drawn and m is not None and m.motion == "drift":
                rng = m.range_m or 1.2
                if rng >= DRIFT_M:
                    found.setdefault(
                        t.id,
                        Finding(
                            Category.static_attribute,
                            (t.id,),
                            f"{t.label} slides {rng:.1f} m back and forth by itself",
                            False,
                            k,
                        ),
                    )
    why = {o: f"`{o}` keeps its place, size and look" for o in ask if o not in found}
    return Report(tuple(found.values()), why)


# --- operational state -------------------------------------------------------------------------


@detector(Category.operational_state)
def broken_process(tl: Timeline, ask: frozenset[str]) -> Report:
    """A process that jumps or switches abruptly: a day that snaps to night, a flickering lamp, a
    turning part that jumps, a lamp or mechanism that switches by itself, a door that shuts itself,
    answers late, moves at an absurd speed or stops part-way; a fan standing still or spinning fast,
    or a door that does not open, only beside a twin that works."""
    found: dict[str, Finding] = {}
    why: dict[str, str] = {}
    for k, w in enumerate(tl.states):
        if w.day_night is not None and w.day_night.transition == "abrupt":
            found.setdefault(
                "#daylight",
                Finding(
                    Category.operational_state,
                    ("#daylight",),
                    f"day and night switch abruptly (a whole cycle every {w.day_night.period_s:g} s)",
                    False,
                    k,
                ),
            )
        for t in tl.judged(w):
            if not t.drawn:
                continue
            f, note = _process(w, t)
            if f:
                found.setdefault(t.id, Finding(Category.operational_state, (t.id,), f, False, k))
            elif note and t.id in ask:
                why[t.id] = note
    if not tl.by_distance:
        for k, oid, _, ta, _, tb in tl.steps():
            if ta is None or tb is None:
                continue
            what = _switch(ta, tb)
            if what:
                found.setdefault(
                    oid, Finding(Category.operational_state, (oid,), f"{tb.label} {what} by itself", False, k)
                )
    for o in ask:
        if o not in found:
            why.setdefault(o, f"`{o}` works as its kind does")
    return Report(tuple(found.values()), {o: n for o, n in why.items() if o not in found})


def _process(w: World, t: Thing) -> tuple[str, str]:
    look = t.look
    if look.flicker_s is not None:
        return f"{t.label} flickers on and off every {look.flicker_s:g} s", ""
    mech = dict(look.mechanism)
    if "autoclose" in mech:
        return f"{t.label} shuts itself {mech['autoclose'] or 2:g} s after it is opened", ""
    if "delay" in mech and (mech["delay"] or 3.0) >= DELAY_S:
        return f"{t.label} answers {mech['delay'] or 3:g} s after it is used", ""
    if "speed" in mech:
        v = mech["speed"] or 8.0
        if not DOOR_SPEED[0] <= v <= DOOR_SPEED[1]:
            return f"{t.label} moves {v:g}x {'faster' if v > 1 else 'slower'} than its kind", ""
    if "jam" in mech:
        return (
            f"{t.label} stops part-way ({round((mech['jam'] or 0.25) * 100)}% open) with nothing in its way",
            "",
        )
    anim = look.animation
    if anim is not None and anim[0] == "jump":
        return f"{t.label}'s turning parts jump {anim[1] or 90:g} deg at a time", ""
    working = [p for p in _peers(w, t) if _works(p)]
    if anim is not None and anim[0] == "freeze":
        if working:
            return f"{t.label} stands still while `{working[0].id}`, just like it, turns", ""
        return (
            "",
            f"{t.label} stands still, as a switched-off one does: nothing beside it shows it should turn",
        )
    if anim is not None and anim[0] == "speed":
        if working:
            return f"{t.label} turns {anim[1] or 8:g}x as fast as `{working[0].id}` beside it", ""
        return "", f"{t.label} turns faster, but nothing beside it shows how fast it should"
    if "dead" in mech:
        doors = [p for p in _peers(w, t) if "dead" not in dict(p.look.mechanism) and p.spec.interactions]
        if doors:
            return f"{t.label} does nothing when used while `{doors[0].id}`, just like it, works", ""
        return (
            "",
            f"{t.label} does nothing when used, as a locked or broken one does: nothing shows it should",
        )
    return "", ""


def _works(t: Thing) -> bool:
    return any(p.spin is not None for p in t.spec.parts) and (t.look.animation is None)


def _switch(ta: Thing, tb: Thing) -> str:
    if (ta.spec.lit, ta.look.illuminates) != (tb.spec.lit, tb.look.illuminates) and ta.spec.lit is not None:
        return "switches " + ("on" if tb.spec.lit and tb.look.illuminates else "off")
    if ta.look.animation != tb.look.animation:
        return "changes how it turns"
    if ta.look.mechanism != tb.look.mechanism:
        return "changes how it works"
    return ""
