"""Pass 4a', generators: `row`, `grid`, `ring` and `scatter` expand into object declarations.

`lamps: row lamp_post from (0, 0) to (24, 0) every 8 m` becomes the objects `lamps_1` …
`lamps_4`, each an ordinary `N.Thing` with a computed `at` and `yaw` and the statement's other
clauses (material, colour, scale, prefab parameters …), so everything after this pass — layout,
the clean-scene checks, anomalies — treats them like hand-written objects.  Rows, grids and
rings are pure geometry; `scatter` draws from its own `random.Random(seed)` and keeps clear of the
objects already placed, so the same source gives the same objects whatever else the file holds.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from shapely import contains_xy
from shapely.geometry import Polygon

from wac.bundle import model as B
from wac.compiler import nodes as N
from wac.compiler import schema as T
from wac.compiler import syntax as S
from wac.compiler.diagnostics import Collector, did_you_mean
from wac.compiler.layout import Layout, local_bounds
from wac.compiler.spans import Span
from wac.compiler.values import Evaluator

FIXED = ("row", "grid", "ring")
FACE_WORDS = {
    "row": ("along", "across"),
    "grid": (),
    "ring": ("in", "out", "along"),
    "scatter": ("random",),
}
MAX_OBJECTS = 1000  # per generator statement
START_CLEARANCE_M = 1.0  # scatter keeps this free around the scene's start position


# -- synthesized words: generated clauses are ordinary syntax words pointing at the statement ---------


def quantity(value: float, unit: str | None, span: Span) -> S.Quantity:
    v = round(float(value), 6) + 0.0  # no negative zero
    return S.Quantity(v, unit, f"{v:g}{' ' + unit if unit else ''}", span)


def point(xy, span: Span) -> S.Tuple:
    return S.Tuple(tuple(quantity(c, "m", span) for c in xy), span)


def make_thing(gen: N.Generator, oid: str, at, yaw: float, passed: tuple[N.Clause, ...]) -> N.Thing:
    span = gen.span
    clauses = (
        N.Clause("at", point(at, span), span),
        N.Clause("yaw", quantity(_wrap(yaw), "deg", span), span),
    ) + passed
    return N.Thing(oid, gen.args[-1].text, clauses, span, gen.label_span, gen.args[-1].span)


def _wrap(yaw: float) -> float:
    """A heading in (-180, 180], rounded to 0.001 deg."""
    y = round((yaw + 180.0) % 360.0 - 180.0, 3)
    return 180.0 if y == -180.0 else y


# -- reading a generator's own clauses -----------------------------------------------------------


@dataclass
class Read:
    values: dict
    passed: tuple[N.Clause, ...]  # clauses for every generated object
    yaw: float  # the extra `yaw` offset
    face: str | tuple[float, float] | None
    ok: bool


def read(gen: N.Generator, diag: Collector) -> Read:
    """Evaluate the generator's own clauses; the others are passed on to each object."""
    spec = T.GENERATORS[gen.keyword]
    own = {c.key: c for c in spec.clauses}
    ev = Evaluator(diag)
    before = len(diag.items)
    values: dict = {}
    passed: list[N.Clause] = []
    yaw = 0.0
    face = None
    for cl in gen.clauses:
        if cl.key in values or (cl.key == "yaw" and yaw) or (cl.key == "face" and face is not None):
            diag.error("E109", f"`{cl.key}` is given twice for `{gen.label}`", cl.span)
            continue
        if cl.key == "face":
            face = _facing(cl, gen, ev, diag)
        elif cl.key in own:
            c = own[cl.key]
            values[cl.key] = ev.value(cl.value, c.type, f"`{cl.key}`", c.min, c.max, c.choices)
        elif cl.key == "yaw":
            yaw = ev.value(cl.value, T.ANGLE, "`yaw`", -360, 360) or 0.0
        elif cl.key == "at" or (cl.key == "on" and gen.keyword == "scatter"):
            diag.error(
                "E440",
                f"`{cl.key}` cannot be given to the objects of a `{gen.keyword}`: it places them itself",
                cl.span,
                f"the clauses of `{gen.keyword}` are {', '.join(sorted(own))}"
                + ("; a row, grid or ring may rest `on` a support" if cl.key == "on" else ""),
            )
        else:
            passed.append(cl)
    return Read(values, tuple(passed), yaw, face, len(diag.items) == before)


def _facing(cl: N.Clause, gen: N.Generator, ev: Evaluator, diag: Collector):
    words = FACE_WORDS[gen.keyword]
    if isinstance(cl.value, S.Name):
        if cl.value.text in words:
            return cl.value.text
        diag.error(
            "E441",
            f"`face {cl.value.text}` is not a facing rule of `{gen.keyword}`",
            cl.value.span,
            did_you_mean(cl.value.text, words)
            or f"`{gen.keyword}` faces {', '.join(f'`{w}`' for w in words) + ' or ' if words else ''}"
            "a point `(x, y)`",
        )
        return None
    return ev.value(cl.value, T.VEC2, "`face`")


def _need(gen: N.Generator, values: dict, keys: tuple[str, ...], diag: Collector, example: str) -> bool:
    missing = [k for k in keys if values.get(k) is None]
    if missing and not any(gen.clause(k) for k in missing):
        diag.error(
            "E442",
            f"`{gen.label}: {gen.keyword}` needs {' and '.join(f'`{k}`' for k in missing)}",
            gen.head_span,
            f"e.g. `{gen.label}: {example}`",
        )
    return not missing


def _heading(face, pos, along: float, centre=None) -> float:
    """The yaw a facing rule gives an object at `pos` (`along`: the line's or tangent's heading)."""
    if face is None:
        return 0.0
    if isinstance(face, tuple):
        return math.degrees(math.atan2(face[1] - pos[1], face[0] - pos[0]))
    if face == "along":
        return along
    if face == "across":
        return along + 90.0
    if face in ("in", "out"):
        inward = math.degrees(math.atan2(centre[1] - pos[1], centre[0] - pos[0]))
        return inward if face == "in" else inward + 180.0
    return 0.0


def _too_many(gen: N.Generator, n: int, diag: Collector) -> bool:
    if n > MAX_OBJECTS:
        diag.error(
            "E443",
            f"`{gen.label}` would make {n} objects, more than {MAX_OBJECTS}",
            gen.span,
            "use a larger spacing or a smaller count, or split it into several statements",
        )
        return True
    return False


# -- row, grid, ring ------------------------------------------------------------------------------------


def positions(gen: N.Generator, r: Read, diag: Collector) -> list[tuple[tuple[float, float], float]] | None:
    """The (position, yaw) of each object of a row, grid or ring, in id order."""
    v = r.values
    out: list[tuple[tuple[float, float], float]] = []
    if gen.keyword == "row":
        if not _need(gen, v, ("from", "to"), diag, "row PREFAB from (x, y) to (x, y) every 4 m"):
            return None
        (x0, y0), (x1, y1) = v["from"], v["to"]
        length = math.hypot(x1 - x0, y1 - y0)
        every, count = v.get("every"), v.get("count")
        if (every is None) == (count is None):
            diag.error(
                "E444",
                f"`{gen.label}: row` needs exactly one of `every` and `count`",
                gen.head_span,
                "`every 4 m` spaces the objects; `count 5` puts five from `from` to `to`",
            )
            return None
        if length < 1e-9 and (every is not None or count > 1):
            diag.error(
                "E445", f"the row `{gen.label}` has no length: `from` and `to` are the same point", gen.span
            )
            return None
        n = int(math.floor(length / every + 1e-9)) + 1 if every is not None else int(count)
        if _too_many(gen, n, diag):
            return None
        along = math.degrees(math.atan2(y1 - y0, x1 - x0))
        for k in range(n):
            f = (
                (k * every / length if length else 0.0)
                if every is not None
                else (k / (n - 1) if n > 1 else 0.0)
            )
            p = (x0 + f * (x1 - x0), y0 + f * (y1 - y0))
            out.append((p, _heading(r.face, p, along)))
    elif gen.keyword == "grid":
        if not _need(
            gen, v, ("at", "count", "spacing"), diag, "grid PREFAB at (x, y) count (4, 3) spacing (2 m, 2 m)"
        ):
            return None
        nx, ny = v["count"]
        if nx != int(nx) or ny != int(ny) or nx < 1 or ny < 1:
            diag.error(
                "E446",
                "a grid's `count` is two whole numbers of at least 1: `(nx, ny)`",
                gen.clause("count").value.span,
            )
            return None
        if _too_many(gen, int(nx) * int(ny), diag):
            return None
        (x0, y0), (dx, dy) = v["at"], v["spacing"]
        for j in range(int(ny)):
            for i in range(int(nx)):
                p = (x0 + i * dx, y0 + j * dy)
                out.append((p, _heading(r.face, p, 0.0)))
    else:  # ring
        if not _need(
            gen, v, ("around", "radius", "count"), diag, "ring PREFAB around (x, y) radius 5 m count 8"
        ):
            return None
        n = int(v["count"])
        if _too_many(gen, n, diag):
            return None
        c, rad, start = v["around"], v["radius"], v.get("start") or 0.0
        for k in range(n):
            a = math.radians(start + 360.0 * k / n)
            p = (c[0] + rad * math.cos(a), c[1] + rad * math.sin(a))
            out.append((p, _heading(r.face, p, math.degrees(a) + 90.0, c)))
    return [((round(p[0], 6), round(p[1], 6)), yaw + r.yaw) for p, yaw in out]


def expand_fixed(gens: tuple[N.Generator, ...], file: Path, diag: Collector) -> list[tuple[N.Thing, Path]]:
    """The objects of the rows, grids and rings of a body, in statement order."""
    out: list[tuple[N.Thing, Path]] = []
    for gen in gens:
        if gen.keyword not in FIXED:
            continue
        r = read(gen, diag)
        if not r.ok:
            continue
        placed = positions(gen, r, diag)
        for k, (p, yaw) in enumerate(placed or (), start=1):
            out.append((make_thing(gen, f"{gen.label}_{k}", p, yaw, r.passed), file))
    return out


# -- scatter ------------------------------------------------------------------------------------------


def scatter(
    gen: N.Generator,
    file: Path,
    layout: Layout,
    diag: Collector,
    objects: dict[str, B.SceneObject],
    start: tuple[float, float] | None,
) -> list[tuple[N.Thing, Path]]:
    """Seeded random places for `count` objects inside the region, `min_gap` apart from each
    other and from the solid (and the `avoid`ed) objects already placed."""
    r = read(gen, diag)
    count = Evaluator(diag).value(gen.args[0], T.INT, "the count of `scatter`", 1, MAX_OBJECTS)
    if not r.ok or count is None:
        return []
    v = r.values
    region = _region(gen, v, diag)
    if region is None:
        return []
    proto = N.Thing(f"{gen.label}_1", gen.args[1].text, r.passed, gen.span, gen.label_span, gen.args[1].span)
    built = layout.build(proto, file)
    if built is None:
        return []
    values, parts = built.values, built.parts
    lo, hi = local_bounds(parts, values.get("scale", (1.0, 1.0, 1.0)))
    corners = np.array([[lo[0], lo[1]], [lo[0], hi[1]], [hi[0], lo[1]], [hi[0], hi[1]]])
    radius = float(np.hypot(corners[:, 0], corners[:, 1]).max())  # any yaw fits in this circle
    gap = v.get("min_gap") or 0.0
    avoid = set(v.get("avoid") or ())
    for oid in sorted(avoid - set(objects)):
        diag.error(
            "E447",
            f"`avoid` names unknown object `{oid}`",
            gen.clause("avoid").value.span,
            did_you_mean(oid, objects)
            or "a scatter avoids objects placed before it (not other scatters' later ones)",
        )
        return []
    top = float(hi[2] - lo[2])  # a ceiling or roof higher than this is over the objects, not in their way
    boxes = np.array(
        [
            (o.aabb_min[0], o.aabb_min[1], o.aabb_max[0], o.aabb_max[1])
            for oid, o in sorted(objects.items())
            if (o.solid and not (o.cutaway and o.aabb_min[2] >= top)) or oid in avoid
        ]
        or np.zeros((0, 4))
    ).reshape(-1, 4)
    inner = region.buffer(-radius)
    rng = random.Random(v.get("seed") if v.get("seed") is not None else 1)
    x0, y0, x1, y1 = region.bounds
    got: list[tuple[float, float]] = []
    yaws: list[float] = []
    for _ in range(200 * count + 2000):
        if len(got) == count:
            break
        p = (round(rng.uniform(x0, x1), 3), round(rng.uniform(y0, y1), 3))
        yaw = round(rng.uniform(-180.0, 180.0), 1) if r.face == "random" else None
        if inner.is_empty or not contains_xy(inner, *p):
            continue
        if start is not None and math.dist(p, start) < radius + START_CLEARANCE_M:
            continue
        if got and (np.hypot(*(np.array(got) - p).T).min() < 2 * radius + gap):
            continue
        if len(boxes):
            dx = np.maximum.reduce([boxes[:, 0] - p[0], np.zeros(len(boxes)), p[0] - boxes[:, 2]])
            dy = np.maximum.reduce([boxes[:, 1] - p[1], np.zeros(len(boxes)), p[1] - boxes[:, 3]])
            if np.hypot(dx, dy).min() < radius + gap:
                continue
        got.append(p)
        yaws.append(yaw if yaw is not None else _heading(r.face, p, 0.0))
    if len(got) < count:
        diag.error(
            "E448",
            f"`{gen.label}` placed only {len(got)} of {count} `{gen.args[1].text}` with a gap of {gap:g} m"
            f" (each needs a circle of radius {radius:.2f} m inside the region, clear of the objects there)",
            gen.span,
            "lower the count or `min_gap`, widen the region, move what is in the way, or try another `seed`",
        )
        return []
    return [
        (make_thing(gen, f"{gen.label}_{k}", p, yaw + r.yaw, r.passed), file)
        for k, (p, yaw) in enumerate(zip(got, yaws, strict=True), start=1)
    ]


def _region(gen: N.Generator, v: dict, diag: Collector) -> Polygon | None:
    if v.get("in") is not None and v.get("from") is None:
        poly = Polygon(v["in"])
        if not poly.is_valid or poly.area <= 0:
            diag.error(
                "E449",
                f"the region of `{gen.label}` is not a simple polygon with an area",
                gen.clause("in").value.span,
                "list its corners in order around the area",
            )
            return None
        return poly
    if v.get("from") is not None and v.get("to") is not None and v.get("in") is None:
        (a, b), (c, d) = v["from"], v["to"]
        if a == c or b == d:
            diag.error("E449", f"the region of `{gen.label}` has no area", gen.clause("from").span)
            return None
        return Polygon(
            [(min(a, c), min(b, d)), (max(a, c), min(b, d)), (max(a, c), max(b, d)), (min(a, c), max(b, d))]
        )
    diag.error(  # neither form complete, or both given
        "E442",
        f"`{gen.label}: scatter` needs a region: `from (x, y) to (x, y)` or `in [(x, y), …]`, not both",
        gen.head_span,
        f"e.g. `{gen.label}: scatter 20 {gen.args[1].text} from (-10, -10) to (10, 10) seed 1 min_gap 1 m`",
    )
    return None
