"""The clause tables of the language reference (docs/language.md), generated from `schema.py`.

Each table sits between `<!-- GEN:NAME_clauses -->` and `<!-- /GEN:NAME_clauses -->`: the clauses of
an object, part, material, light, ground, sun, day-night cycle, bounds, start, fog or tint, of a
generator (`row`, …, `room`, `stairs`, `ramp`) or of a statement of a room's block (`door`,
`window`, `opening`).  `python -m wac.compiler.clause_tables` rewrites them in place; a test holds
the page to the schema.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from wac.compiler import schema as T

LANGUAGE_MD = Path(__file__).resolve().parents[1] / "docs" / "language.md"

# how a value of each type is written in the tables
VALUE = {
    T.LENGTH: "length",
    T.ANGLE: "angle",
    T.DURATION: "duration",
    T.SPEED: "speed",
    T.RATE: "rate",
    T.MASS: "mass",
    T.NUMBER: "number",
    T.INT: "whole number",
    T.FRACTION: "fraction",
    T.STRING: "string",
    T.COLOR: "colour",
    T.BOOL: "yes/no",
    T.WORD: "name",
    T.VEC2: "(x, y)",
    T.VEC3: "(x, y, z)",
    T.POS: "(x, y) or (x, y, z)",
    T.SCALE: "factor or (fx, fy, fz)",
    T.STRINGS: "string or [strings]",
    T.WORDS: "[names]",
    T.POLYGON: "[(x, y), …]",
    T.OBJECT: "object id",
    T.OBJECTS: "[id, …]",
    T.PART: "part name",
    T.MATERIAL: "material",
    T.PREFAB: "prefab name",
    T.ENUM: "word",
    T.FACING: "word or (x, y)",
}
UNIT = {T.LENGTH: " m", T.ANGLE: " deg", T.DURATION: " s", T.SPEED: " m/s", T.RATE: " deg/s", T.MASS: " kg"}
MARK = re.compile(r"(<!-- GEN:(\w+)_clauses -->\n)(.*?)(<!-- /GEN:\2_clauses -->)", re.S)


def _scene(keyword: str) -> tuple[T.Clause, ...]:
    return next(s.clauses for s in T.SCENE_STATEMENTS if s.keyword == keyword)


def tables() -> dict[str, tuple[T.Clause, ...]]:
    """The clauses of each table, by the table's name (`NAME` of `GEN:NAME_clauses`)."""
    out = {
        "object": T.OBJECT_CLAUSES,
        "part": T.PART_CLAUSES,
        "material": T.MATERIAL_CLAUSES,
        "light": T.LIGHT_CLAUSES,
        "ground": T.GROUND_CLAUSES,
        "sun": T.SUN_CLAUSES,
        "day_night": T.DAY_NIGHT_CLAUSES,
        "bounds": T.BOUNDS_CLAUSES,
        "start": T.START_CLAUSES,
        "fog": _scene("fog"),
        "tint": _scene("tint"),
    }
    out.update({s.keyword: s.clauses for s in T.GENERATOR_STATEMENTS})
    out.update(T.OPENING_CLAUSES)
    return out


def _range(c: T.Clause) -> str:
    if c.choices:
        return " \\| ".join(f"`{x}`" for x in c.choices)
    unit = UNIT.get(c.type, "")
    lo, hi = (_number(c.type, x) for x in (c.min, c.max))
    if lo and hi:
        return f"{lo}–{hi}{unit}"
    if lo:
        return f"≥ {lo}{unit}"
    if hi:
        return f"≤ {hi}{unit}"
    return ""


def _number(type_: str, x: float | None) -> str:
    if x is None:
        return ""
    return str(int(x)) if type_ == T.INT else f"{x:g}"


def table(clauses: tuple[T.Clause, ...]) -> str:
    rows = ["| clause | value | range / choices | meaning |", "|---|---|---|---|"]
    rows += [f"| `{c.key}` | {VALUE[c.type]} | {_range(c)} | {c.doc} |" for c in clauses]
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    """`text` (docs/language.md) with every clause table regenerated."""
    known = tables()
    return MARK.sub(lambda m: m[1] + (table(known[m[2]]) if m[2] in known else m[3]) + m[4], text)


def main() -> int:
    text = LANGUAGE_MD.read_text(encoding="utf-8")
    new = render(text)
    if new != text:
        LANGUAGE_MD.write_text(new, encoding="utf-8")
    print(f"{LANGUAGE_MD.name}: {'rewritten' if new != text else 'up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
