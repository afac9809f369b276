"""Pass 4a', rooms: `LABEL: room …` statements expand into wall pieces, doors and windows.

A room is a floor plan (a rectangle `from … to …`, or a polygon whose sides run along x or y)
with walls of a height and thickness, and `door`, `window` and `opening` statements that cut
the walls.  All the rooms of a scene (or task) are expanded together, so rooms that share a
wall get one wall there (the first room that names it owns it) and a door written in either
room cuts it.  Where walls meet, walls along x run through the corner and walls along y stop at
their faces, so walls touch but never interpenetrate.

A room may have a ceiling (`ceiling yes`; the default in scenes of type indoor): a slab resting on
its walls' tops over the floor plan, to the middle of each wall, where a neighbour's ceiling meets
it (short of a shared wall that is taller than the room, so that it never cuts into it).  A
ceiling is `cutaway`: overview shots leave it out and look into the room; the agent sees it.

Ids (docs/language.md §6a): `LABEL_wall_SIDE` for a side in one piece, `LABEL_wall_SIDE_1` …
when doors, windows or other walls cut it (numbered from its west or south end);
`LABEL_door_K`, `LABEL_window_K`, `LABEL_opening_K` in the order of the room's block, and
`LABEL_door_K_lintel` for the wall above a door; `LABEL_ceiling` (a polygon's in rectangles,
`LABEL_ceiling_1` … from its south end).  Sides of a rectangle are `s`, `e`, `n`, `w`;
of a polygon 1, 2, … (side K runs from its K-th corner to the next).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from wac.bundle import model as B
from wac.bundle.terrain import height_range as terrain_height_range
from wac.compiler import nodes as N
from wac.compiler import schema as T
from wac.compiler import syntax as S
from wac.compiler.diagnostics import Collector, did_you_mean
from wac.compiler.layout import Layout, local_bounds
from wac.compiler.placement import point, quantity
from wac.compiler.spans import Span
from wac.compiler.values import Evaluator

DEFAULT_HEIGHT_M = 2.6
DEFAULT_THICKNESS_M = 0.15
DEFAULT_WIDTH_M = {"window": 1.2, "opening": 1.0}
CEILING_THICKNESS_M = 0.15
PASSED = ("material", "color", "tags", "era")  # room clauses given to every wall piece
CEILING_LOOK = {"ceiling_material": "material", "ceiling_color": "color"}  # room clause -> ceiling's
EPS = 1e-6
MIN_PIECE_M = 0.01


@dataclass
class Room:
    gen: N.Generator
    height: float
    thickness: float
    sides: dict[str, tuple[str, float, float, float, tuple[float, float]]]  # name -> axis, c, lo, hi, inward
    passed: tuple[N.Clause, ...]
    corners: tuple[tuple[float, float], ...] = ()
    ceiling: bool | None = None  # as written (`ceiling`, or implied by a ceiling clause); None: the default


@dataclass
class Opening:
    oid: str
    kind: str
    room: Room
    key: tuple[str, float]  # the wall line: (axis, coordinate)
    lo: float
    hi: float
    top: float | None  # z of its top (a lintel above it), None for the whole height
    span: Span
    thing: N.Thing | None = None


@dataclass
class Line:
    segments: list[tuple[float, float, Room, str]] = field(default_factory=list)  # owned, in order
    openings: list[Opening] = field(default_factory=list)


def _read_room(gen: N.Generator, diag: Collector) -> Room | None:
    spec = {c.key: c for c in T.GENERATORS["room"].clauses}
    ev = Evaluator(diag)
    before = len(diag.items)
    v: dict = {}
    passed = []
    for cl in gen.clauses:
        if cl.key in spec:
            c = spec[cl.key]
            v[cl.key] = ev.value(cl.value, c.type, f"`{cl.key}`", c.min, c.max, c.choices)
        elif cl.key in PASSED:
            passed.append(cl)
        else:
            diag.error(
                "E102",
                f"unknown clause `{cl.key}` for the room `{gen.label}`",
                cl.span,
                did_you_mean(cl.key, list(spec) + list(PASSED))
                or f"a room takes {', '.join(sorted(list(spec) + list(PASSED)))}",
            )
    if len(diag.items) > before:
        return None
    if v.get("polygon") is not None and v.get("from") is None and v.get("to") is None:
        corners = list(v["polygon"])
        names = [str(k + 1) for k in range(len(corners))]
    elif v.get("from") is not None and v.get("to") is not None and v.get("polygon") is None:
        (a, b), (c, d) = v["from"], v["to"]
        x0, x1, y0, y1 = min(a, c), max(a, c), min(b, d), max(b, d)
        corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        names = ["s", "e", "n", "w"]
    else:
        diag.error(
            "E460",
            f"the room `{gen.label}` needs a floor plan: `from (x, y) to (x, y)` or `polygon [(x, y), …]`",
            gen.head_span,
            f"e.g. `{gen.label}: room from (0, 0) to (5, 4)`",
        )
        return None
    area = sum(p[0] * q[1] - q[0] * p[1] for p, q in zip(corners, corners[1:] + corners[:1], strict=True)) / 2
    if len(corners) < 4 or abs(area) < 0.01:
        diag.error("E461", f"the floor plan of `{gen.label}` has no area", gen.span)
        return None
    ccw = 1.0 if area > 0 else -1.0
    sides = {}
    for name, p, q in zip(names, corners, corners[1:] + corners[:1], strict=True):
        if (
            abs(p[0] - q[0]) > EPS
            and abs(p[1] - q[1]) > EPS
            or (abs(p[0] - q[0]) <= EPS and abs(p[1] - q[1]) <= EPS)
        ):
            diag.error(
                "E462",
                f"side {name} of the room `{gen.label}` from ({p[0]:g}, {p[1]:g}) to ({q[0]:g}, {q[1]:g})"
                " does not run along x or y",
                (gen.clause("polygon") or gen).span,
                "a room's sides run along x or y; build slanted walls from `wall` objects",
            )
            return None
        dx, dy = q[0] - p[0], q[1] - p[1]
        inward = (-dy * ccw, dx * ccw)
        n = (abs(dx) + abs(dy)) or 1.0
        inward = (round(inward[0] / n), round(inward[1] / n))
        if abs(dy) <= EPS:  # along x
            sides[name] = ("x", round(p[1], 6), min(p[0], q[0]), max(p[0], q[0]), inward)
        else:
            sides[name] = ("y", round(p[0], 6), min(p[1], q[1]), max(p[1], q[1]), inward)
    looks = [gen.clause(k) for k in CEILING_LOOK if v.get(k) is not None]
    if v.get("ceiling") is False and looks:
        diag.error(
            "E468",
            f"the room `{gen.label}` has `ceiling no` and `{looks[0].key}`",
            looks[0].span,
            f"drop `{looks[0].key}`, or `ceiling no` to give the room a ceiling",
        )
        return None
    return Room(
        gen,
        v.get("height") or DEFAULT_HEIGHT_M,
        v.get("thickness") or DEFAULT_THICKNESS_M,
        sides,
        tuple(passed),
        tuple((round(x, 6), round(y, 6)) for x, y in corners),
        True if looks else v.get("ceiling"),
    )


def _subtract(intervals: list[tuple[float, float]], cut: tuple[float, float]) -> list[tuple[float, float]]:
    out = []
    for a, b in intervals:
        if cut[1] <= a + EPS or cut[0] >= b - EPS:
            out.append((a, b))
            continue
        if cut[0] > a + EPS:
            out.append((a, cut[0]))
        if cut[1] < b - EPS:
            out.append((cut[1], b))
    return out


def _union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1] + EPS:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def _box(oid: str, room: Room, key, lo: float, hi: float, z0: float, z1: float, span: Span) -> N.Thing:
    axis, c = key
    length, t = hi - lo, room.thickness
    mid = (lo + hi) / 2
    at = (mid, c) if axis == "x" else (c, mid)
    # like the `wall` and `door` prefabs, a piece runs along its own y axis: its x axis crosses the
    # wall (the self-check walks through a wall along it)
    clauses = (
        N.Clause("at", point((*at, z0) if z0 else at, span), span),
        N.Clause("size", point((t, length, z1 - z0), span), span),
        N.Clause("yaw", quantity(90.0 if axis == "x" else 0.0, "deg", span), span),
        N.Clause("name", S.Str("wall", span), span),
        N.Clause("kind", S.Name("structure", span), span),
    ) + room.passed
    return N.Thing(oid, "box", clauses, span, room.gen.label_span, room.gen.head_span)


def _opening(
    item: N.Setting, room: Room, count: dict, layout: Layout, file: Path, diag: Collector
) -> Opening | None:
    gen = room.gen
    word = item.args[0]
    side = (
        word.text if isinstance(word, S.Name) else (f"{word.value:g}" if isinstance(word, S.Quantity) else "")
    )
    if side not in room.sides:
        diag.error(
            "E463",
            f"the room `{gen.label}` has no side `{side}`",
            word.span,
            f"its sides are {', '.join(room.sides)}"
            + (
                " (a polygon's side K runs from its K-th corner to the next)" if "s" not in room.sides else ""
            ),
        )
        return None
    spec = {c.key: c for c in T.OPENING_CLAUSES[item.keyword]}
    ev = Evaluator(diag)
    v = {
        cl.key: ev.value(cl.value, spec[cl.key].type, f"`{cl.key}`", spec[cl.key].min, spec[cl.key].max)
        for cl in item.clauses
    }
    if any(x is None for x in v.values()):
        return None
    axis, c, lo, hi, inward = room.sides[side]
    count[item.keyword] = count.get(item.keyword, 0) + 1
    oid = f"{gen.label}_{item.keyword}_{count[item.keyword]}"
    centre = lo + (v["at"] if v.get("at") is not None else (hi - lo) / 2)
    span = item.span
    wall_yaw = 90.0 if axis == "x" else 0.0  # door and window prefabs run along their y axis
    thing = None
    top: float | None = None
    if item.keyword == "door":
        prefab = v.get("prefab") or "door"
        proto = N.Thing(oid, prefab, (), span, span, span)
        built = layout.build(proto, file)
        if built is None:
            return None
        plo, phi = local_bounds(built.parts)
        width, top = float(phi[1] - plo[1]), float(phi[2])
        if top > room.height - 0.05:
            diag.error(
                "E464",
                f"the door `{oid}` ({top:.2f} m high) does not fit under the walls of `{gen.label}`"
                f" ({room.height:g} m)",
                span,
                "raise the room's `height`",
            )
            return None
        yaw = math.degrees(math.atan2(-inward[1], -inward[0]))  # the door swings into the room
        at = (centre, c) if axis == "x" else (c, centre)
        clauses = (N.Clause("at", point(at, span), span), N.Clause("yaw", quantity(yaw, "deg", span), span))
        clauses += tuple(cl for cl in item.clauses if cl.key == "open")
        thing = N.Thing(oid, prefab, clauses, span, span, span)
    elif item.keyword == "window":
        width = v.get("width") or DEFAULT_WIDTH_M["window"]
        at = (centre, c) if axis == "x" else (c, centre)
        clauses = (
            N.Clause("at", point(at, span), span),
            N.Clause("yaw", quantity(wall_yaw, "deg", span), span),
            N.Clause("width", quantity(width, "m", span), span),
            N.Clause("wall_height", quantity(room.height, "m", span), span),
            N.Clause("thickness", quantity(room.thickness, "m", span), span),
        )
        thing = N.Thing(oid, v.get("prefab") or "window", clauses, span, span, span)
    else:
        width = v.get("width") or DEFAULT_WIDTH_M["opening"]
        h = v.get("height")
        top = h if h is not None and h < room.height - 0.05 else None
    o = Opening(oid, item.keyword, room, (axis, c), centre - width / 2, centre + width / 2, top, span, thing)
    if o.lo < lo - EPS or o.hi > hi + EPS:
        diag.error(
            "E465",
            f"`{oid}` ({width:.2f} m wide at {centre - lo:g} m) does not fit in side `{side}` of `{gen.label}`"
            f" ({hi - lo:g} m long)",
            span,
            f"give `at` between {width / 2:g} m and {hi - lo - width / 2:g} m, measured from the side's"
            " west or south end",
        )
        return None
    return o


def expand_rooms(
    gens: tuple[N.Generator, ...],
    file: Path,
    layout: Layout,
    diag: Collector,
    ceilings: bool = False,
    ground: B.Ground | None = None,
) -> list[tuple[N.Thing, Path]]:
    """The wall pieces, doors, windows and ceilings of every room of a body (`ceilings`: whether a
    room that does not say has one)."""
    rooms = [r for g in gens if g.keyword == "room" for r in [_read_room(g, diag)] if r is not None]
    lines: dict[tuple[str, float], Line] = {}
    for room in rooms:
        for name, (axis, c, lo, hi, _) in room.sides.items():
            line = lines.setdefault((axis, c), Line())
            free = [(lo, hi)]
            for a, b, _r, _s in line.segments:
                free = _subtract(free, (a, b))
            line.segments += [(a, b, room, name) for a, b in sorted(free)]
    for room in rooms:
        count: dict[str, int] = {}
        for item in room.gen.items:
            o = _opening(item, room, count, layout, file, diag)
            if o is None:
                continue
            line = lines[o.key]
            clash = next((p for p in line.openings if o.lo < p.hi - EPS and p.lo < o.hi - EPS), None)
            if clash is not None:
                diag.error(
                    "E466",
                    f"`{o.oid}` overlaps `{clash.oid}` in the same wall",
                    o.span,
                    f"the other is at {clash.span.location}; move one with `at`",
                )
                continue
            line.openings.append(o)
    runs = {key: _union([(a, b) for a, b, _r, _s in line.segments]) for key, line in lines.items()}

    def thick(key, u: float) -> float:
        """The thickest wall of line `key` at `u` along it (0 where it has none)."""
        return max(
            (r.thickness for a, b, r, _s in lines[key].segments if a - EPS <= u <= b + EPS), default=0.0
        )

    def crossing(axis: str, a: float, b: float, c: float) -> list[tuple[float, float]]:
        """Where walls of the other direction meet the run [a, b] of the line at `c`: bands as
        wide as the thickest of them there."""
        bands = []
        for k in lines:
            if k[0] != axis and a - EPS <= k[1] <= b + EPS:
                t = thick(k, c)
                if t > 0:
                    bands.append((k[1] - t / 2, k[1] + t / 2))
        return bands

    out: list[tuple[N.Thing, Path]] = []
    pieces: dict[tuple[str, str], list[tuple[float, N.Thing]]] = {}
    for key, line in sorted(lines.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        axis, c = key
        cuts: list[tuple[float, float]] = []
        junctions: list[tuple[float, float]] = []
        todo: list[tuple[float, float]] = []
        for a, b in runs[key]:
            bands = crossing(axis, a, b, c)
            if axis == "x":  # runs along x go through corners: to the far face of the walls along y
                a = min([a] + [lo for lo, hi in bands if abs((lo + hi) / 2 - a) < EPS])
                b = max([b] + [hi for lo, hi in bands if abs((lo + hi) / 2 - b) < EPS])
                todo.append((a, b))
                junctions += bands  # no opening where walls along y meet it
            else:  # runs along y stop at the faces of every wall along x they meet
                todo.append((a, b))
                cuts += bands
        for cut in cuts:
            todo = _subtract(todo, cut)
        for o in line.openings:
            if any(not (o.hi <= cut[0] + EPS or o.lo >= cut[1] - EPS) for cut in cuts + junctions):
                diag.error(
                    "E467",
                    f"`{o.oid}` runs into a wall that meets this one",
                    o.span,
                    "move it along the side with `at`, away from the corner",
                )
                continue
            todo = _subtract(todo, (o.lo, o.hi))
            owner = _owner(line, (o.lo + o.hi) / 2)
            if o.thing is not None:
                out.append((o.thing, file))
            if o.top is not None:
                out.append(
                    (_box(f"{o.oid}_lintel", owner[0], key, o.lo, o.hi, o.top, owner[0].height, o.span), file)
                )
        inner = {
            x for seg in line.segments for x in seg[:2] if any(a + EPS < x < b - EPS for a, b in runs[key])
        }
        for bound in sorted(inner):  # one owner per piece
            todo = [
                q
                for a, b in todo
                for q in ([(a, bound), (bound, b)] if a + EPS < bound < b - EPS else [(a, b)])
            ]
        for a, b in todo:
            if b - a < MIN_PIECE_M:
                continue
            room, side = _owner(line, (a + b) / 2)
            pieces.setdefault((room.gen.label, side), []).append(
                (a, _box("", room, key, a, b, 0.0, room.height, room.gen.span))
            )
    for (label, side), got in pieces.items():
        got.sort(key=lambda p: p[0])
        for k, (_, thing) in enumerate(got, start=1):
            oid = f"{label}_wall_{side}" + (f"_{k}" if len(got) > 1 else "")
            out.append(
                (N.Thing(oid, thing.kind, thing.clauses, thing.span, thing.id_span, thing.kind_span), file)
            )
    for room in rooms:
        if room.ceiling if room.ceiling is not None else ceilings:
            out += [(t, file) for t in _ceiling(room, lines, pieces, ground)]
    return out


def _ceiling(
    room: Room, lines: dict[tuple[str, float], Line], pieces: dict, ground: B.Ground | None
) -> list[N.Thing]:
    """The room's ceiling: boxes over its floor plan (one for a rectangle), resting on its walls' tops,
    each edge on a wall line reaching as far as `_reach` says."""
    gen, span = room.gen, room.gen.span
    z = room.height + _base(room, pieces, ground)
    rects = _rectangles(room.corners)
    own = _looks(room)
    clauses = tuple(cl for cl in room.passed if cl.key not in own)
    clauses += tuple(N.Clause(CEILING_LOOK[cl.key], cl.value, cl.span) for cl in _clauses(room))
    out = []
    for k, (x0, x1, y0, y1) in enumerate(rects, start=1):
        w, e = _reach(room, lines, ("y", x0), y0, y1), _reach(room, lines, ("y", x1), y0, y1)
        s, n = _reach(room, lines, ("x", y0), x0, x1), _reach(room, lines, ("x", y1), x0, x1)
        x0, x1, y0, y1 = x0 - w, x1 + e, y0 - s, y1 + n
        oid = f"{gen.label}_ceiling" + (f"_{k}" if len(rects) > 1 else "")
        at = ((x0 + x1) / 2, (y0 + y1) / 2, z)
        out.append(
            N.Thing(
                oid,
                "box",
                (
                    N.Clause("at", point(at, span), span),
                    N.Clause("size", point((x1 - x0, y1 - y0, CEILING_THICKNESS_M), span), span),
                    N.Clause("name", S.Str("ceiling", span), span),
                    N.Clause("synonyms", S.List((S.Str("roof", span),), span), span),
                    N.Clause("kind", S.Name("structure", span), span),
                    N.Clause("cutaway", S.Name("yes", span), span),
                )
                + clauses,
                span,
                gen.label_span,
                gen.head_span,
            )
        )
    return out


def _clauses(room: Room) -> list[N.Clause]:
    return [cl for cl in room.gen.clauses if cl.key in CEILING_LOOK]


def _looks(room: Room) -> set[str]:
    """The wall clauses the ceiling does not take: its own material drops the walls' colour too."""
    own = {CEILING_LOOK[cl.key] for cl in _clauses(room)}
    return own | ({"color"} if "material" in own else set())


def _reach(room: Room, lines: dict, key: tuple[str, float], lo: float, hi: float) -> float:
    """How far a ceiling edge over [lo, hi] of wall line `key` reaches past the line, outwards: 0 (to
    the middle of the wall, where a neighbour's ceiling meets it), or back to the wall's inner face
    where the wall there is taller than the room (a taller neighbour's)."""
    line = lines.get((key[0], round(key[1], 6)))
    owners = [r for a, b, r, _s in line.segments if a < hi - EPS and lo + EPS < b] if line else []
    if any(r.height > room.height + EPS for r in owners):
        return -max(r.thickness for r in owners) / 2
    return 0.0


def _rectangles(corners: tuple[tuple[float, float], ...]) -> list[tuple[float, float, float, float]]:
    """A floor plan whose sides run along x or y, cut into rectangles (x0, x1, y0, y1): strips
    between its corners' y, each split where the outline crosses it, a rectangle going on upwards
    while the strips above keep its x span."""
    ys = sorted({y for _, y in corners})
    sides = [
        (p, q) for p, q in zip(corners, corners[1:] + corners[:1], strict=True) if abs(p[0] - q[0]) <= EPS
    ]
    out: list[tuple[float, float, float, float]] = []
    growing: dict[tuple[float, float], float] = {}  # x span -> where its rectangle starts
    for y0, y1 in zip(ys, ys[1:], strict=False):
        mid = (y0 + y1) / 2
        xs = sorted(p[0] for p, q in sides if min(p[1], q[1]) < mid < max(p[1], q[1]))
        spans = set(zip(xs[0::2], xs[1::2], strict=True))
        for span in [s for s in growing if s not in spans]:
            out.append((*span, growing.pop(span), y0))
        for span in spans - growing.keys():
            growing[span] = y0
    out += [(*span, y, ys[-1]) for span, y in growing.items()]
    return sorted(out, key=lambda r: (r[2], r[0]))


def _base(room: Room, pieces: dict, ground: B.Ground | None) -> float:
    """Where the room's walls stand: 0 on flat ground; on a heightfield the highest of the grounds its
    wall pieces stand on (each piece stands on the lowest ground under it), so that the ceiling
    cuts into none of them."""
    if ground is None or ground.terrain is None:
        return 0.0
    bases = [0.0]
    for (label, _side), got in pieces.items():
        if label != room.gen.label:
            continue
        for _, thing in got:
            at, size, yaw = (thing.clause(k).value for k in ("at", "size", "yaw"))
            x, y = at.items[0].value, at.items[1].value
            half = (size.items[1].value / 2, size.items[0].value / 2)
            if yaw.value == 0.0:  # the piece runs along y
                half = half[::-1]
            bases.append(
                terrain_height_range(ground, (x - half[0], y - half[1]), (x + half[0], y + half[1]))[0]
            )
    return max(bases[1:] or bases)


def _owner(line: Line, u: float) -> tuple[Room, str]:
    best = min(
        line.segments,
        key=lambda s: 0.0 if s[0] - EPS <= u <= s[1] + EPS else min(abs(u - s[0]), abs(u - s[1])),
    )
    return best[2], best[3]
