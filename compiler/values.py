"""Evaluating words against their declared type: units, ranges, colours, expressions.

Every value ends up in SI units (metres, degrees, seconds, kilograms).  A bad value is a
diagnostic pointing at the word, and evaluation returns `None` so checking can go on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from wac.compiler import schema as T
from wac.compiler import syntax as S
from wac.compiler.diagnostics import Collector, did_you_mean

UNITS = {
    T.LENGTH: ({None: 1.0, "m": 1.0, "cm": 0.01, "mm": 0.001}, "m", "metres: `2 m`, `40 cm`"),
    T.ANGLE: ({"deg": 1.0, "rad": 180.0 / math.pi}, "deg", "degrees: `30 deg`"),
    T.DURATION: ({"s": 1.0, "ms": 0.001}, "s", "seconds: `2 s`, `500 ms`"),
    T.SPEED: ({"m/s": 1.0}, "m/s", "metres per second: `1.5 m/s`"),
    T.RATE: ({"deg/s": 1.0}, "deg/s", "degrees per second: `60 deg/s`"),
    T.MASS: ({"kg": 1.0, "g": 0.001}, "kg", "kilograms: `12 kg`"),
    T.NUMBER: ({None: 1.0}, "", "a plain number"),
    T.FRACTION: ({None: 1.0}, "", "a number between 0 and 1"),
    T.INT: ({None: 1.0}, "", "a whole number"),
}
BOOLS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}
COLORS = {
    "red": "#c0392b",
    "green": "#3c8d2f",
    "blue": "#2e5fa8",
    "white": "#f2f2f2",
    "black": "#1a1a1a",
    "grey": "#808080",
    "gray": "#808080",
    "brown": "#7a4a24",
    "yellow": "#e8c21a",
    "orange": "#e07b1a",
    "purple": "#7b3fa0",
    "magenta": "#ff00ff",
    "pink": "#e88fb0",
    "cyan": "#1ab8c8",
    "beige": "#d8c8a0",
    "tan": "#c8a878",
    "navy": "#1f2f5a",
    "olive": "#707a2a",
    "maroon": "#6a1a1a",
    "teal": "#1a7070",
    "gold": "#d4af37",
    "silver": "#c0c0c0",
}
MAX_ABS = 1e6


class Evaluator:
    """Evaluates words with an environment of prefab parameters (name -> (type, SI value))."""

    def __init__(self, diag: Collector, env: Mapping[str, tuple[str, float]] | None = None) -> None:
        self.diag = diag
        self.env = dict(env or {})

    # -- numbers --------------------------------------------------------------------------
    def number(self, word: S.Word, type_: str, what: str) -> float | None:
        units, base, example = UNITS[type_]
        if isinstance(word, S.Quantity):
            if word.unit not in units:
                if word.unit is None:
                    self.diag.error("E201", f"{what} needs a unit", word.span, f"write it in {example}")
                else:
                    self.diag.error(
                        "E202", f"{what} cannot be in `{word.unit}`", word.span, f"write it in {example}"
                    )
                return None
            value = word.value * units[word.unit]
        elif isinstance(word, S.Name):
            if word.text in self.env:
                ptype, value = self.env[word.text]
                if ptype != type_ and not (
                    ptype in (T.NUMBER, T.LENGTH) and type_ in (T.NUMBER, T.LENGTH, T.FRACTION)
                ):
                    self.diag.error(
                        "E203", f"parameter `{word.text}` is a {ptype}, but {what} needs a {type_}", word.span
                    )
                    return None
            else:
                hint = did_you_mean(word.text, self.env) if self.env else None
                self.diag.error(
                    "E204",
                    f"{what} must be a {type_.replace('_', ' ')}, found `{word.text}`",
                    word.span,
                    hint or f"write it in {example}",
                )
                return None
        elif isinstance(word, S.Group):
            return self.number(word.inner, type_, what)
        elif isinstance(word, S.Neg):
            v = self.number(word.operand, type_, what)
            return None if v is None else -v
        elif isinstance(word, S.BinOp):
            if word.op in "+-":
                a = self.number(word.left, type_, what)
                b = self.number(word.right, type_, what)
                if a is None or b is None:
                    return None
                value = a + b if word.op == "+" else a - b
            else:
                if word.op == "*":
                    a = self._factor_or(word.left, type_, what)
                else:
                    a = self.number(word.left, type_, what)
                b = self._factor_or(word.right, type_, what)
                if a is None or b is None:
                    return None
                if word.op == "/":
                    if b == 0:
                        self.diag.error("E205", "division by zero", word.span)
                        return None
                    value = a / b
                else:
                    value = a * b
        else:
            self.diag.error(
                "E204",
                f"{what} must be a {type_.replace('_', ' ')}, found a {type(word).__name__.lower()}",
                word.span,
                f"write it in {example}",
            )
            return None
        if not math.isfinite(value) or abs(value) > MAX_ABS:
            self.diag.error(
                "E206",
                f"{what} is out of range ({value:g})",
                word.span,
                "numbers must stay within ±1,000,000",
            )
            return None
        if type_ == T.INT:
            if value != int(value):
                self.diag.error("E207", f"{what} must be a whole number", word.span)
                return None
            return int(value)
        return value

    def _factor_or(self, word: S.Word, type_: str, what: str) -> float | None:
        if isinstance(word, S.Quantity) and word.unit is None:
            return word.value
        if isinstance(word, S.Name) and self.env.get(word.text, ("",))[0] == T.NUMBER:
            return self.env[word.text][1]
        return self.number(word, type_, what)

    def ranged(self, word: S.Word, type_: str, what: str, lo=None, hi=None) -> float | None:
        v = self.number(word, type_, what)
        if v is None:
            return None
        if type_ == T.FRACTION:
            lo = 0.0 if lo is None else lo
            hi = 1.0 if hi is None else hi
        unit = UNITS[type_][1]
        shown = f"{v:g} {unit}".strip()
        if lo is not None and v < lo - 1e-12:
            self.diag.error(
                "E208", f"{what} is {shown}; it must be at least {lo:g} {unit}".rstrip(), word.span
            )
            return None
        if hi is not None and v > hi + 1e-12:
            self.diag.error(
                "E208", f"{what} is {shown}; it must be at most {hi:g} {unit}".rstrip(), word.span
            )
            return None
        return v

    # -- structured values ---------------------------------------------------------------
    def vector(
        self, word: S.Word, n: tuple[int, ...], type_: str, what: str, lo=None, hi=None
    ) -> tuple | None:
        if isinstance(word, S.Group):
            word = word.inner
        if not isinstance(word, S.Tuple) or len(word.items) not in n:
            want = " or ".join(f"({', '.join('xyz'[:k])})" for k in n)
            self.diag.error(
                "E209", f"{what} must be a tuple {want}", word.span, f"e.g. `({', '.join(['1'] * n[0])})`"
            )
            return None
        vals = [self.ranged(w, type_, what, lo, hi) for w in word.items]
        return None if any(v is None for v in vals) else tuple(float(v) for v in vals)

    def string(self, word: S.Word, what: str) -> str | None:
        if not isinstance(word, S.Str):
            self.diag.error(
                "E210", f"{what} must be a quoted string", word.span, 'write it like `"grain sack"`'
            )
            return None
        return word.value

    def strings(self, word: S.Word, what: str) -> tuple[str, ...] | None:
        if isinstance(word, S.Str):
            return (word.value,)
        if isinstance(word, S.List) and all(isinstance(i, S.Str) for i in word.items):
            return tuple(i.value for i in word.items)
        self.diag.error(
            "E210", f"{what} must be a string or a list of strings", word.span, 'e.g. `["sack", "bag"]`'
        )
        return None

    def name(self, word: S.Word, what: str, choices: tuple[str, ...] = ()) -> str | None:
        if not isinstance(word, S.Name):
            hint = f"one of: {', '.join(choices)}" if choices else None
            self.diag.error("E211", f"{what} must be a name, found {_kind(word)}", word.span, hint)
            return None
        if choices and word.text not in choices:
            self.diag.error(
                "E212",
                f"unknown {what} `{word.text}`",
                word.span,
                did_you_mean(word.text, choices) or f"one of: {', '.join(choices)}",
            )
            return None
        return word.text

    def names(self, word: S.Word, what: str) -> tuple[str, ...] | None:
        if isinstance(word, S.Name):
            return (word.text,)
        if isinstance(word, S.List) and all(isinstance(i, S.Name) for i in word.items):
            return tuple(i.text for i in word.items)
        self.diag.error(
            "E211", f"{what} must be a name or a list of names", word.span, "e.g. `[demo, market]`"
        )
        return None

    def boolean(self, word: S.Word, what: str) -> bool | None:
        if isinstance(word, S.Name) and word.text in BOOLS:
            return BOOLS[word.text]
        self.diag.error("E213", f"{what} must be yes or no", word.span, "write `yes` or `no`")
        return None

    def color(self, word: S.Word, what: str) -> tuple[float, float, float] | None:
        text = None
        if isinstance(word, S.Str):
            text = word.value
        elif isinstance(word, S.Name):
            if word.text not in COLORS:
                self.diag.error(
                    "E214",
                    f"unknown colour `{word.text}`",
                    word.span,
                    did_you_mean(word.text, COLORS) or 'write a hex colour like `"#a0522d"`',
                )
                return None
            text = COLORS[word.text]
        if (
            text is None
            or len(text) != 7
            or text[0] != "#"
            or any(c not in "0123456789abcdefABCDEF" for c in text[1:])
        ):
            self.diag.error("E214", f'{what} must be a colour like "#a0522d" or a colour name', word.span)
            return None
        return tuple(round(int(text[i : i + 2], 16) / 255.0, 4) for i in (1, 3, 5))

    def polygon(self, word: S.Word, what: str) -> tuple[tuple[float, float], ...] | None:
        if not isinstance(word, S.List) or len(word.items) < 3:
            self.diag.error(
                "E215",
                f"{what} must be a list of at least 3 points",
                word.span,
                "e.g. `[(0, 0), (10, 0), (10, 8), (0, 8)]`",
            )
            return None
        pts = [self.vector(p, (2,), T.LENGTH, "a polygon point") for p in word.items]
        return None if any(p is None for p in pts) else tuple(pts)

    def value(self, word: S.Word, type_: str, what: str, lo=None, hi=None, choices: tuple[str, ...] = ()):
        """Evaluate a word of any schema type."""
        if type_ in (T.LENGTH, T.ANGLE, T.DURATION, T.SPEED, T.RATE, T.MASS, T.NUMBER, T.FRACTION, T.INT):
            return self.ranged(word, type_, what, lo, hi)
        if type_ == T.VEC2:
            return self.vector(word, (2,), T.LENGTH, what, lo, hi)
        if type_ == T.VEC3:
            return self.vector(word, (3,), T.LENGTH, what, lo, hi)
        if type_ == T.POS:
            return self.vector(word, (2, 3), T.LENGTH, what, lo, hi)
        if type_ == T.SCALE:
            if isinstance(word, S.Tuple):
                return self.vector(word, (3,), T.NUMBER, what, lo, hi)
            v = self.ranged(word, T.NUMBER, what, lo, hi)
            return None if v is None else (v, v, v)
        if type_ == T.STRING:
            return self.string(word, what)
        if type_ == T.STRINGS:
            return self.strings(word, what)
        if type_ in (T.WORD, T.OBJECT, T.PART, T.MATERIAL, T.PREFAB):
            return self.name(word, what, choices)
        if type_ == T.ENUM:
            return self.name(word, what, choices)
        if type_ in (T.WORDS, T.OBJECTS):
            return self.names(word, what)
        if type_ == T.BOOL:
            return self.boolean(word, what)
        if type_ == T.COLOR:
            return self.color(word, what)
        if type_ == T.POLYGON:
            return self.polygon(word, what)
        raise AssertionError(f"unknown schema type {type_}")


def _kind(word: S.Word) -> str:
    if isinstance(word, S.Quantity):
        return f"the number `{word.text}`"
    if isinstance(word, S.Str):
        return "a string"
    return f"a {type(word).__name__.lower()}"


def param_type(word: S.Word) -> str:
    """The type of a prefab parameter, from the unit of its default value."""
    if isinstance(word, S.Quantity) or (isinstance(word, S.Neg) and isinstance(word.operand, S.Quantity)):
        q = word if isinstance(word, S.Quantity) else word.operand
        for t in (T.ANGLE, T.DURATION, T.SPEED, T.RATE, T.MASS):
            if q.unit in UNITS[t][0]:
                return t
        return T.LENGTH if q.unit in ("m", "cm", "mm") else T.NUMBER
    if isinstance(word, S.Str):
        return T.STRING
    if isinstance(word, S.Name) and word.text in BOOLS:
        return T.BOOL
    if isinstance(word, S.Name):
        return T.WORD
    return T.LENGTH
