"""Pass 4a', ramps and stairs: `LABEL: stairs …` and `LABEL: ramp …` expand into walkable objects.

A flight of stairs is `steps` solid blocks, step K a box `run` deep and K × `rise` high, ids
`LABEL_1` … `LABEL_N` from the bottom; a ramp is one wedge, id `LABEL`.  Both start at `at` (the
middle of their low edge) and climb towards `yaw`; they are `walkable`, so the agent steps onto
them and walks up (docs/language.md §6a).  A step higher than the agent can climb or a ramp
steeper than it can walk up is an error here, not a surprise in the self-check.
"""

from __future__ import annotations

import math
from pathlib import Path

from wac.bundle import model as B
from wac.bundle.model import AGENT_SLOPE_DEG, AGENT_STEP_M
from wac.bundle.terrain import height_range
from wac.compiler import nodes as N
from wac.compiler import schema as T
from wac.compiler import syntax as S
from wac.compiler.diagnostics import Collector, did_you_mean
from wac.compiler.placement import point, quantity
from wac.compiler.values import Evaluator

KEYWORDS = ("stairs", "ramp")
DEFAULTS = {"rise": 0.17, "run": 0.3, "width": 1.2}  # stairs; a ramp's width defaults to 1.2 m too
PASSED = ("material", "color", "tags", "era", "name", "synonyms", "kind")


def _read(gen: N.Generator, diag: Collector) -> tuple[dict, float, tuple[N.Clause, ...]] | None:
    spec = {c.key: c for c in T.GENERATORS[gen.keyword].clauses}
    ev = Evaluator(diag)
    before = len(diag.items)
    v: dict = {}
    passed: list[N.Clause] = []
    yaw = 0.0
    for cl in gen.clauses:
        if cl.key in v or (cl.key == "yaw" and yaw):
            diag.error("E109", f"`{cl.key}` is given twice for `{gen.label}`", cl.span)
        elif cl.key in spec:
            c = spec[cl.key]
            v[cl.key] = ev.value(cl.value, c.type, f"`{cl.key}`", c.min, c.max, c.choices)
        elif cl.key == "yaw":
            yaw = ev.value(cl.value, T.ANGLE, "`yaw`", -360, 360) or 0.0
        elif cl.key in PASSED:
            passed.append(cl)
        else:
            allowed = [*spec, "yaw", *PASSED]
            diag.error(
                "E102",
                f"unknown clause `{cl.key}` for the {gen.keyword} `{gen.label}`",
                cl.span,
                did_you_mean(cl.key, allowed) or f"{gen.keyword} takes {', '.join(sorted(allowed))}",
            )
    need = ("at", "steps") if gen.keyword == "stairs" else ("at", "length", "rise")
    missing = [k for k in need if k not in v]
    if missing and len(diag.items) == before:
        example = T.GENERATORS[gen.keyword].example.split(": ", 1)[1]
        diag.error(
            "E442",
            f"`{gen.label}: {gen.keyword}` needs {' and '.join(f'`{k}`' for k in missing)}",
            gen.head_span,
            f"e.g. `{gen.label}: {example}`",
        )
    if len(diag.items) > before:
        return None
    return v, yaw, tuple(passed)


def _base(ground: B.Ground | None, at, heading: float, length: float, width: float) -> float | None:
    """On a heightfield, the height all pieces of a flight or ramp stand at: the lowest ground
    under it (so no piece floats and the treads stay level); None on flat ground."""
    if ground is None or ground.terrain is None:
        return None
    c, s = math.cos(math.radians(heading)), math.sin(math.radians(heading))
    xs = [at[0] + c * u - s * v for u in (0.0, length) for v in (-width / 2, width / 2)]
    ys = [at[1] + s * u + c * v for u in (0.0, length) for v in (-width / 2, width / 2)]
    return height_range(ground, (min(xs), min(ys)), (max(xs), max(ys)))[0]


def _thing(gen: N.Generator, oid: str, shape: str, at, size, yaw: float, name: str, passed) -> N.Thing:
    span = gen.span
    clauses = (
        N.Clause("at", point(at, span), span),
        N.Clause("size", point(size, span), span),
        N.Clause("yaw", quantity(yaw, "deg", span), span),
        N.Clause("walkable", S.Name("yes", span), span),
    )
    own = {c.key for c in passed}
    if "name" not in own:
        clauses += (N.Clause("name", S.Str(name, span), span),)
    if "kind" not in own:
        clauses += (N.Clause("kind", S.Name("structure", span), span),)
    return N.Thing(oid, shape, clauses + passed, span, gen.label_span, gen.head_span)


def _stairs(gen: N.Generator, v: dict, yaw: float, passed, diag: Collector, ground) -> list[N.Thing]:
    n, rise = int(v["steps"]), v.get("rise") or DEFAULTS["rise"]
    run, width = v.get("run") or DEFAULTS["run"], v.get("width") or DEFAULTS["width"]
    if rise > AGENT_STEP_M + 1e-9:
        k = math.ceil(n * rise / AGENT_STEP_M - 1e-9)
        cl = gen.clause("rise")
        diag.error(
            "E470",
            f"the steps of `{gen.label}` rise {rise:g} m: the agent climbs steps of at most {AGENT_STEP_M:g} m",
            cl.span if cl else gen.head_span,
            f"for a flight of {n * rise:g} m use at least {k} steps, e.g. `steps {k} rise {n * rise / k:.3g} m`",
        )
        return []
    x, y = v["at"]
    c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    z = _base(ground, (x, y), yaw, n * run, width)
    out = []
    for k in range(1, n + 1):
        d = (k - 0.5) * run
        at = (round(x + c * d, 6), round(y + s * d, 6)) + (() if z is None else (round(z, 6),))
        out.append(_thing(gen, f"{gen.label}_{k}", "box", at, (run, width, k * rise), yaw, "stairs", passed))
    return out


def _ramp(gen: N.Generator, v: dict, yaw: float, passed, diag: Collector, ground) -> list[N.Thing]:
    length, rise, width = v["length"], v["rise"], v.get("width") or DEFAULTS["width"]
    slope = math.degrees(math.atan2(rise, length))
    if slope > AGENT_SLOPE_DEG + 1e-9:
        need = rise / math.tan(math.radians(AGENT_SLOPE_DEG))
        cl = gen.clause("length")
        diag.error(
            "E471",
            f"the ramp `{gen.label}` slopes at {slope:.1f} deg: the agent walks up slopes of at most "
            f"{AGENT_SLOPE_DEG:g} deg",
            cl.span if cl else gen.head_span,
            f"make it at least {math.ceil(need * 100) / 100:g} m long for a rise of {rise:g} m, or build `stairs`",
        )
        return []
    x, y = v["at"]
    c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    at = (round(x + c * length / 2, 6), round(y + s * length / 2, 6))
    z = _base(ground, (x, y), yaw, length, width)
    at += () if z is None else (round(z, 6),)
    return [_thing(gen, gen.label, "wedge", at, (length, width, rise), yaw, "ramp", passed)]


def expand_slopes(
    gens: tuple[N.Generator, ...], file: Path, diag: Collector, ground: B.Ground | None = None
) -> list[tuple[N.Thing, Path]]:
    """The step blocks and ramp wedges of a body's `stairs` and `ramp` statements, in order (on a
    heightfield `ground`, standing at the lowest ground under them)."""
    out: list[tuple[N.Thing, Path]] = []
    for gen in gens:
        if gen.keyword not in KEYWORDS:
            continue
        read = _read(gen, diag)
        if read is None:
            continue
        v, yaw, passed = read
        things = (_stairs if gen.keyword == "stairs" else _ramp)(gen, v, yaw, passed, diag, ground)
        out += [(t, file) for t in things]
    return out
