"""The simple statements of a scene or task body, evaluated: `Settings` of `Setting`s.

A body's simple statements (`type indoor`, `sun azimuth 120 deg`, `bounds from … to …`, the
repeatable `interact …`, `light …`, `benign …`) are evaluated once by `evaluate` against their
schema (`compiler/schema.py`).  A `Setting` is one statement: its arguments and clauses by name, read
as a mapping, and its source span; `Settings` maps each keyword to its statement, and
`Settings.all(keyword)` gives every statement of a repeatable keyword.  Both are read-only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType

from wac.compiler import nodes as N
from wac.compiler import schema as T
from wac.compiler.spans import Span
from wac.compiler.values import Evaluator


class _View(Mapping):
    """A read-only mapping over `_map` (a `MappingProxyType`)."""

    __slots__ = ("_map",)

    def __getitem__(self, key: str):
        return self._map[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)


class Setting(_View, Mapping[str, object]):
    """One statement: its evaluated arguments and clauses by name (a read-only mapping), and `span`."""

    __slots__ = ("span",)

    def __init__(self, values: Mapping[str, object], span: Span | None) -> None:
        self._map = MappingProxyType(dict(values))
        self.span = span

    def __repr__(self) -> str:
        return f"Setting({dict(self._map)!r})"


class Settings(_View, Mapping[str, Setting]):
    """A body's statements by keyword (those that may appear once); `all(keyword)` for every
    statement of a repeatable keyword, in source order."""

    __slots__ = ("_many",)

    def __init__(self, one: Mapping[str, Setting], many: Mapping[str, tuple[Setting, ...]]) -> None:
        self._map = MappingProxyType(dict(one))
        self._many = MappingProxyType(dict(many))

    def all(self, keyword: str) -> tuple[Setting, ...]:
        return self._many.get(keyword, ())


def evaluate(body: N.Body, context: str, ev: Evaluator) -> Settings:
    """Evaluate the simple statements of a scene or task body against their schema."""
    one: dict[str, Setting] = {}
    many: dict[str, list[Setting]] = {}
    table = T.CONTEXTS[context]
    for st in body.settings:
        spec = table[st.keyword]
        vals: dict = {}
        for (pname, ptype), word in zip(spec.positional, st.args, strict=False):
            choices = T.ENUMS.get((context, st.keyword), ()) if ptype == T.ENUM else ()
            if st.keyword == "era":
                choices = T.ERAS
            vals[pname] = ev.value(word, ptype, f"`{st.keyword}`", choices=choices)
        cmap = {c.key: c for c in spec.clauses}
        for cl in st.clauses:
            c = cmap[cl.key]
            vals[cl.key] = ev.value(cl.value, c.type, f"`{cl.key}`", c.min, c.max, c.choices)
        if spec.repeatable:
            many.setdefault(st.keyword, []).append(Setting(vals, st.span))
        else:
            one[st.keyword] = Setting(vals, st.span)
    return Settings(one, {k: tuple(v) for k, v in many.items()})
