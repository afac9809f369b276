"""Pass 2, AST: give the parsed statements their meaning (`syntax.File` -> `nodes.Module`).

Each statement is read against the statement schemas (`wac.compiler.schema`); anomaly
statements against the operator registry.  Errors are collected, not raised one by one.
"""

from __future__ import annotations

from wac.compiler import nodes as N
from wac.compiler import schema, triggers
from wac.compiler import syntax as S
from wac.compiler.diagnostics import Collector, did_you_mean
from wac.compiler.spans import Span
from wac.taxonomy.registry import registry


def _describe(word: S.Word) -> str:
    if isinstance(word, S.Name):
        return f"`{word.text}`"
    if isinstance(word, S.Quantity):
        return f"the number `{word.text}`"
    if isinstance(word, S.Str):
        return "a string"
    if isinstance(word, S.Tuple):
        return "a tuple"
    if isinstance(word, S.List):
        return "a list"
    return "an expression"


def _unknown_clause_hint(key: str, allowed: dict, what: str, operator: bool) -> str:
    """What to write instead of an unknown clause: a near name, a trigger's place, or the known ones."""
    if operator and (key in triggers.TRIGGERS or key in ("trigger", "on", "if", "after")):
        kind = key if key in triggers.TRIGGERS else "revisit"
        return f"a trigger goes last, after `when`: `anomaly … when {kind}`"
    near = did_you_mean(key, allowed)
    if near:
        return near
    if not allowed:
        tail = "; a trigger, if any, goes last after `when` (e.g. `when revisit`)" if operator else ""
        return f"{what} takes no parameters: remove `{key} …`{tail}"
    known = f"known clauses: {', '.join(sorted(allowed))}"
    return known + ("; a trigger goes last, after `when`" if operator else "")


class _Elaborator:
    def __init__(self, diag: Collector) -> None:
        self.diag = diag

    # -- helpers ----------------------------------------------------------------------
    def clauses(
        self,
        words: tuple[S.Word, ...],
        allowed: dict[str, object] | None,
        what: str,
        operator: bool = False,
    ) -> tuple[N.Clause, ...]:
        """Read `key value key value …`; `allowed=None` accepts any key (checked later)."""
        out: list[N.Clause] = []
        i = 0
        while i < len(words):
            key = words[i]
            if not isinstance(key, S.Name):
                self.diag.error(
                    "E101",
                    f"expected a clause name in {what}, found {_describe(key)}",
                    key.span,
                    "clauses are written `name value`, e.g. `yaw 30 deg`",
                )
                return tuple(out)
            if allowed is not None and key.text not in allowed:
                self.diag.error(
                    "E102",
                    f"unknown clause `{key.text}` in {what}",
                    key.span,
                    _unknown_clause_hint(key.text, allowed, what, operator),
                )
                i += 2
                continue
            if i + 1 >= len(words):
                self.diag.error(
                    "E103", f"clause `{key.text}` needs a value", key.span, f"write `{key.text} VALUE`"
                )
                return tuple(out)
            value = words[i + 1]
            out.append(N.Clause(key.text, value, _join(key.span, value.span)))
            i += 2
        return tuple(out)

    def block_clauses(
        self, block: tuple[S.Statement, ...] | None, allowed, what: str
    ) -> tuple[N.Clause, ...]:
        out: list[N.Clause] = []
        for st in block or ():
            if st.label is not None:
                self.diag.error(
                    "E104",
                    f"a labelled declaration cannot appear inside {what}",
                    st.label.span,
                    "declare objects at the scene or task level",
                )
                continue
            if st.block is not None:
                self.diag.error("E104", f"unexpected block inside {what}", st.span)
            out.extend(self.clauses(st.words, allowed, what))
        return tuple(out)

    def thing(self, st: S.Statement, allowed, what: str) -> N.Thing | None:
        assert st.label is not None
        head = st.words[0]
        if not isinstance(head, S.Name):
            self.diag.error(
                "E105",
                f"`{st.label.text}:` must be followed by a prefab or shape name, found {_describe(head)}",
                head.span,
                "e.g. `chair_1: chair at (1, 2)`",
            )
            return None
        clauses = self.clauses(st.words[1:], allowed, f"`{st.label.text}`")
        clauses += self.block_clauses(st.block, allowed, f"`{st.label.text}`")
        return N.Thing(st.label.text, head.text, clauses, st.span, st.label.span, head.span)

    def body(self, block: tuple[S.Statement, ...] | None, context: str, owner: str) -> N.Body:
        table = schema.CONTEXTS[context]
        settings: list[N.Setting] = []
        things: list[N.Thing] = []
        anomalies: list[N.Anomaly] = []
        seen: dict[str, Span] = {}
        thing_clauses = schema.PART_CLAUSE_MAP if context == "prefab" else None
        generators: list[N.Generator] = []
        for st in block or ():
            if context in ("scene", "task") and _generator_head(st):
                g = self.generator(st)
                if g:
                    generators.append(g)
                continue
            if st.label is not None:
                if context not in ("scene", "task", "prefab"):
                    self.diag.error("E106", f"labels are not allowed in {owner}", st.label.span)
                    continue
                t = self.thing(
                    st, thing_clauses, f"{'part' if context == 'prefab' else 'object'} declaration"
                )
                if t:
                    things.append(t)
                continue
            head = st.words[0]
            if not isinstance(head, S.Name):
                self.diag.error(
                    "E107", f"a statement must start with a keyword, found {_describe(head)}", head.span
                )
                continue
            kw = head.text
            if kw == "anomaly" and context == "task":
                a = self.anomaly(st)
                if a:
                    anomalies.append(a)
                continue
            spec = table.get(kw)
            if spec is None:
                hint = did_you_mean(kw, table)
                if hint is None and context != "prefab":
                    hint = "to declare an object, write `id: prefab …`, e.g. `chair_1: chair at (1, 2)`"
                self.diag.error("E108", f"unknown statement `{kw}` in {owner}", head.span, hint)
                continue
            if not spec.repeatable and kw in seen:
                self.diag.error(
                    "E109",
                    f"`{kw}` is given twice in {owner}",
                    head.span,
                    f"the first is at line {seen[kw].line}; keep one",
                )
                continue
            seen[kw] = head.span
            npos = len(spec.positional)
            args = st.words[1 : 1 + npos]
            if len(args) < npos:
                names = " ".join(n.upper() for n, _ in spec.positional)
                self.diag.error(
                    "E110", f"`{kw}` needs {npos} argument(s)", head.span, f"write `{kw} {names}`"
                )
                continue
            allowed = {c.key: c for c in spec.clauses}
            clauses = self.clauses(st.words[1 + npos :], allowed, f"`{kw}`")
            if st.block is not None:
                clauses += self.block_clauses(st.block, allowed, f"`{kw}`")
            settings.append(N.Setting(kw, tuple(args), clauses, st.span))
        return N.Body(tuple(settings), tuple(things), tuple(anomalies), tuple(generators))

    # -- generators (row, grid, ring, scatter, room) --------------------------------------
    def generator(self, st: S.Statement) -> N.Generator | None:
        head = st.words[0]
        kw = head.text
        if st.label is None:
            self.diag.error(
                "E116",
                f"`{kw}` needs a label: the ids of the objects it makes are built from it",
                head.span,
                f"write `NAME: {kw} …`, e.g. `lamps: row lamp_post from (0, 0) to (20, 0) every 5 m`"
                " makes lamps_1, lamps_2, …",
            )
            return None
        spec = schema.GENERATORS[kw]
        npos = len(spec.positional)
        args = st.words[1 : 1 + npos]
        if len(args) < npos or any(
            t == schema.PREFAB and not isinstance(w, S.Name)
            for (_, t), w in zip(spec.positional, args, strict=False)
        ):
            names = " ".join(n.upper() for n, _ in spec.positional)
            self.diag.error(
                "E110",
                f"`{kw}` needs {npos} argument(s)",
                head.span,
                f"write `{st.label.text}: {kw} {names} …`",
            )
            return None
        what = f"`{st.label.text}: {kw}`"
        clauses = self.clauses(st.words[1 + npos :], None, what)
        items: list[N.Setting] = []
        for sub in st.block or ():
            if kw != "room":
                if sub.label is None and isinstance(sub.words[0], S.Name):
                    clauses += self.clauses(sub.words, None, what)
                else:
                    self.diag.error("E104", f"unexpected declaration inside {what}", sub.span)
                continue
            item = self.room_item(sub, what)
            if item:
                items.append(item)
        return N.Generator(
            st.label.text, kw, tuple(args), clauses, tuple(items), st.span, st.label.span, head.span
        )

    def room_item(self, st: S.Statement, what: str) -> N.Setting | None:
        head = st.words[0]
        if st.label is not None or not isinstance(head, S.Name) or head.text not in schema.OPENING_CLAUSES:
            text = head.text if isinstance(head, S.Name) else ""
            self.diag.error(
                "E117",
                f"unknown statement {_describe(head)} in {what}",
                (st.label or head).span,
                did_you_mean(text, schema.OPENING_CLAUSES)
                or "a room's block holds `door SIDE …`, `window SIDE …` and `opening SIDE …`",
            )
            return None
        if len(st.words) < 2 or not isinstance(st.words[1], S.Name | S.Quantity):
            self.diag.error(
                "E117",
                f"`{head.text}` needs the side of the room it is in",
                head.span,
                "sides of a rectangle: `s`, `e`, `n`, `w`; of a polygon: 1, 2, … (side 1 runs from its"
                f" first corner to the second), e.g. `{head.text} s at 1.5 m`",
            )
            return None
        allowed = {c.key: c for c in schema.OPENING_CLAUSES[head.text]}
        clauses = self.clauses(st.words[2:], allowed, f"`{head.text}`")
        return N.Setting(head.text, (st.words[1],), clauses, st.span)

    # -- anomalies ----------------------------------------------------------------------
    def anomaly(self, st: S.Statement) -> N.Anomaly | None:
        words = list(st.words[1:])
        trigger: N.Trigger | None = None
        if words and isinstance(words[0], S.Name) and words[0].text in triggers.LEADING_TRIGGERS:
            lead = words.pop(0)
            trigger = N.Trigger(triggers.LEADING_TRIGGERS[lead.text], None, (), lead.span)
        if not words or not isinstance(words[0], S.Name):
            self.diag.error(
                "E120",
                "`anomaly` needs an operator",
                st.words[0].span,
                "e.g. `anomaly float sack_2 by 0.4 m`; see the operator table in docs/language.md",
            )
            return None
        op_word = words.pop(0)
        reg = registry()
        spec = reg.operator(op_word.text)
        if spec is None:
            self.diag.error(
                "E121",
                f"unknown anomaly operator `{op_word.text}`",
                op_word.span,
                did_you_mean(op_word.text, [o.name for o in reg.operators])
                or "see the operator table in docs/language.md",
            )
            return None
        # split off `when TRIGGER …`
        when_at = next((i for i, w in enumerate(words) if isinstance(w, S.Name) and w.text == "when"), None)
        tail: list[S.Word] = []
        if when_at is not None:
            tail = words[when_at + 1 :]
            words = words[:when_at]
            if trigger is not None:
                self.diag.error(
                    "E122",
                    "the anomaly has two triggers",
                    words and words[0].span or op_word.span,
                    "use either a leading `on_revisit`-style trigger or `when …`, not both",
                )
                return None
            trigger = self.trigger(tail, st.words[0].span)
            if trigger is None:
                return None
        affects: tuple[S.Word, ...] = ()
        at = next(
            (i for i, w in enumerate(words) if i and isinstance(w, S.Name) and w.text == "affects"), None
        )
        if at is not None:  # `affects OBJ | [OBJ, …]`: checked when the anomaly is lowered
            affects = tuple(words[at : at + 2])
            words = words[:at] + words[at + 2 :]
        operand: list[S.Name] = []
        new_object: N.Thing | None = None
        if spec.operand in ("object", "objects"):
            if not words:
                self.diag.error(
                    "E123",
                    f"`{spec.name}` needs a target object",
                    op_word.span,
                    f"write `anomaly {spec.name} OBJECT_ID …`",
                )
                return None
            first = words.pop(0)
            if isinstance(first, S.Name):
                operand = [first]
            elif isinstance(first, S.List) and spec.operand == "objects":
                for item in first.items:
                    if isinstance(item, S.Name):
                        operand.append(item)
                    else:
                        self.diag.error("E124", f"expected an object id, found {_describe(item)}", item.span)
                        return None
            else:
                self.diag.error(
                    "E124",
                    f"expected the target object's id after `{spec.name}`, found {_describe(first)}",
                    first.span,
                )
                return None
        elif spec.operand == "new_object":
            if (
                len(words) < 3
                or not isinstance(words[0], S.Name)
                or not (isinstance(words[1], S.Name) and words[1].text == "as")
                or not isinstance(words[2], S.Name)
            ):
                self.diag.error(
                    "E125",
                    f"`{spec.name}` declares a new object: write `anomaly {spec.name} ID as PREFAB …`",
                    op_word.span,
                    f"e.g. `anomaly {spec.name} cola_1 as cola_bottle on table_1`",
                )
                return None
            ident, _, kind = words[0], words[1], words[2]
            rest = tuple(words[3:])
            clauses = self.clauses(rest, None, f"`{ident.text}`")
            new_object = N.Thing(ident.text, kind.text, clauses, st.span, ident.span, kind.span)
            operand = [ident]
            words = []
        allowed = {p.name: p for p in spec.params}
        clauses = self.clauses(tuple(words), allowed, f"`{spec.name}`", operator=True) if words else ()
        return N.Anomaly(
            spec.name, tuple(operand), new_object, clauses, trigger, st.span, op_word.span, affects
        )

    def trigger(self, words: list[S.Word], at: Span) -> N.Trigger | None:
        if not words or not isinstance(words[0], S.Name):
            self.diag.error("E126", "`when` needs a trigger", at, f"triggers: {', '.join(triggers.TRIGGERS)}")
            return None
        kind = words[0]
        if kind.text not in triggers.TRIGGERS:
            self.diag.error(
                "E127",
                f"unknown trigger `{kind.text}`",
                kind.span,
                did_you_mean(kind.text, triggers.TRIGGERS) or f"triggers: {', '.join(triggers.TRIGGERS)}",
            )
            return None
        rest = words[1:]
        arg = None
        if kind.text in triggers.TRIGGER_ARG:
            if not rest:
                self.diag.error(
                    "E128",
                    f"`when {kind.text}` needs a value",
                    kind.span,
                    f"e.g. `when {kind.text} {'20 s' if triggers.TRIGGER_ARG[kind.text] == schema.DURATION else '6 m'}`",
                )
                return None
            arg, rest = rest[0], rest[1:]
        allowed = {c.key: c for c in triggers.TRIGGERS[kind.text]}
        clauses = self.clauses(tuple(rest), allowed, f"trigger `{kind.text}`")
        return N.Trigger(
            kind.text, arg, clauses, _join(kind.span, (rest[-1] if rest else (arg or kind)).span)
        )

    # -- files ----------------------------------------------------------------------------
    def module(self, f: S.File) -> N.Module:
        imports, scenes, tasks, prefabs, materials = [], [], [], [], []
        for st in f.statements:
            if st.label is not None:
                self.diag.error(
                    "E106",
                    "objects must be declared inside a scene or task",
                    st.label.span,
                    "move this line into a `scene NAME { … }` or `task NAME on SCENE { … }` block",
                )
                continue
            head = st.words[0]
            if not isinstance(head, S.Name) or head.text not in schema.CONTEXTS["file"]:
                text = head.text if isinstance(head, S.Name) else ""
                self.diag.error(
                    "E107",
                    f"unknown top-level statement {_describe(head)}",
                    head.span,
                    did_you_mean(text, schema.CONTEXTS["file"])
                    if text
                    else "a file holds `import`, `material`, `prefab`, `scene` and `task` statements",
                )
                continue
            kw = head.text
            rest = st.words[1:]
            if kw == "import":
                if len(rest) != 1 or not isinstance(rest[0], S.Str):
                    self.diag.error(
                        "E111",
                        "`import` takes one quoted path",
                        head.span,
                        'write `import "../scenes/market.wa"`',
                    )
                    continue
                imports.append(N.Import(rest[0].value, rest[0].span))
                continue
            if not rest or not isinstance(rest[0], S.Name):
                self.diag.error("E112", f"`{kw}` needs a name", head.span, f"write `{kw} NAME {{ … }}`")
                continue
            name = rest[0]
            if kw == "material":
                allowed = {c.key: c for c in schema.MATERIAL_CLAUSES}
                cl = self.clauses(rest[1:], allowed, f"material `{name.text}`") + self.block_clauses(
                    st.block, allowed, f"material `{name.text}`"
                )
                materials.append(N.MaterialDecl(name.text, cl, st.span))
                continue
            if st.block is None:
                self.diag.error(
                    "E113",
                    f"`{kw} {name.text}` needs a `{{ … }}` block",
                    st.span,
                    "put `{` at the end of this line and `}` after its contents",
                )
                continue
            if kw == "task":
                if (
                    len(rest) != 3
                    or not isinstance(rest[1], S.Name)
                    or rest[1].text != "on"
                    or not isinstance(rest[2], S.Name)
                ):
                    self.diag.error(
                        "E114",
                        f"write `task {name.text} on SCENE {{ … }}`",
                        st.words[0].span,
                        "a task names the scene it uses after `on`",
                    )
                    continue
                body = self.body(st.block, "task", f"task `{name.text}`")
                tasks.append(N.TaskDecl(name.text, rest[2].text, body, st.span, rest[2].span))
            else:
                if len(rest) != 1:
                    self.diag.error(
                        "E115",
                        f"unexpected {_describe(rest[1])} after `{kw} {name.text}`",
                        rest[1].span,
                        f"write `{kw} {name.text} {{ … }}`",
                    )
                    continue
                body = self.body(st.block, kw, f"{kw} `{name.text}`")
                (scenes if kw == "scene" else prefabs).append(
                    (N.SceneDecl if kw == "scene" else N.PrefabDecl)(name.text, body, st.span)
                )
        return N.Module(
            f.source, tuple(imports), tuple(scenes), tuple(tasks), tuple(prefabs), tuple(materials)
        )


def _generator_head(st: S.Statement) -> bool:
    head = st.words[0]
    return isinstance(head, S.Name) and head.text in schema.GENERATORS


def _join(a: Span, b: Span) -> Span:
    if a.source is not b.source or (b.line, b.column) < (a.line, a.column):
        return a
    return Span(a.source, a.line, a.column, b.end_line, b.end_column)


def elaborate(f: S.File, diag: Collector) -> N.Module:
    """Build the AST of one parsed file, reporting statement-shape errors to `diag`."""
    return _Elaborator(diag).module(f)
