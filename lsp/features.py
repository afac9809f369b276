"""Completion, navigation, symbols and quick fixes, read from an `Analysis` (the compiler's AST, the
names each file sees and the worlds its tasks build) and the operator registry."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types as T
from pygls.uris import from_fs_path

from wac.compiler import nodes as N
from wac.compiler import schema as SC
from wac.compiler import triggers as TRG
from wac.compiler.assemble import Built
from wac.compiler.parse import name_tokens
from wac.lsp.analysis import Analysis, prefab_extent, stdlib_file
from wac.lsp.convert import location, to_range
from wac.lsp.docs import hover_markdown
from wac.taxonomy.registry import PARAM_TYPES, registry

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_IMPORT_CHOICES = 2000  # .wa files listed for an import path
K = T.CompletionItemKind


def word_at(text: str, pos: T.Position) -> tuple[str, T.Range] | None:
    """The name under (or just before) the cursor and its range."""
    lines = text.split("\n")
    if pos.line >= len(lines):
        return None
    line = lines[pos.line]
    for m in WORD.finditer(line):
        if m.start() <= pos.character <= m.end():
            start = T.Position(line=pos.line, character=m.start())
            end = T.Position(line=pos.line, character=m.end())
            return m[0], T.Range(start=start, end=end)
    return None


def block_at(analysis: Analysis, text: str, line: int) -> tuple[str, str | None]:
    """(context, name) of the block holding a 0-based line: ("file", None), ("task", name), … ."""
    module = analysis.module
    if module is not None:
        for kind, decls in (("task", module.tasks), ("scene", module.scenes), ("prefab", module.prefabs)):
            for d in decls:
                if d.span.line - 1 < line <= d.span.end_line - 1:
                    return kind, d.name
    depth, head = 0, None  # a buffer that does not parse: count braces (strings and comments aside)
    for raw in text.split("\n")[:line]:
        code = re.sub(r'"([^"\\]|\\.)*"?|#.*', "", raw)
        if depth == 0 and code.count("{") > code.count("}"):
            head = code.split()
        depth = max(depth + code.count("{") - code.count("}"), 0)
    if depth and head and head[0] in ("task", "scene", "prefab"):
        return head[0], head[1] if len(head) > 1 else None
    return ("file", None) if depth == 0 else ("scene", None)


def world_of(analysis: Analysis, text: str, line: int) -> Built | None:
    context, name = block_at(analysis, text, line)
    if name is not None and name in analysis.worlds:
        return analysis.worlds[name]
    return None


def object_ids(analysis: Analysis, text: str, line: int) -> list[str]:
    """The ids of the world in scope (the task's or scene's), else those the scene declares."""
    world = world_of(analysis, text, line)
    if world is not None:
        return sorted(world.objects)
    context, name = block_at(analysis, text, line)
    vis = analysis.visible
    module = analysis.module
    if vis is None or module is None:
        return []
    task = next((t for t in module.tasks if t.name == name), None)
    scene = vis.scenes.get(task.scene if task else name or "")
    ids = [t.id for t in scene[0].body.things] + [g.label for g in scene[0].body.generators] if scene else []
    return sorted(set(ids + ([t.id for t in task.body.things] if task else [])))


def _items(names, kind, detail: str = "", docs: dict[str, str] | None = None) -> list[T.CompletionItem]:
    return [
        T.CompletionItem(label=n, kind=kind, detail=detail or None, documentation=(docs or {}).get(n))
        for n in names
    ]


def complete(analysis: Analysis, text: str, pos: T.Position) -> list[T.CompletionItem]:
    """What may be typed at the cursor, by the statement being written."""
    lines = text.split("\n")
    before = lines[pos.line][: pos.character] if pos.line < len(lines) else ""
    if m := re.match(r'^\s*import\s+"([^"]*)$', before):
        return _import_paths(analysis, pos, len(m[1]))
    vis = analysis.visible
    reg = registry()
    if re.match(r"^\s*anomaly\s+\w*$", before):
        return [
            T.CompletionItem(
                label=op.name,
                kind=K.Function,
                detail=", ".join(sorted({c.value for _, c in op.categories})),
                documentation=op.summary,
            )
            for op in reg.operators
        ]
    if m := re.match(r"^\s*anomaly\s+(\w+)\s+(.*)$", before):
        op = reg.operator(m[1])
        items = _items(object_ids(analysis, text, pos.line), K.Variable, "object")
        if op is not None:
            items += [
                T.CompletionItem(
                    label=p.name,
                    kind=K.Property,
                    detail=f"{p.type}{' (' + PARAM_TYPES[p.type].unit + ')' if PARAM_TYPES[p.type].unit else ''}"
                    + ("" if p.required else f", default {p.default}"),
                    documentation=p.doc,
                )
                for p in op.params
            ]
        items += _items(["when", "affects"], K.Keyword)
        if re.search(r"\bwhen\s+\w*$", before):
            items = _items(sorted(TRG.TRIGGERS), K.Event, "trigger")
        return items
    if re.match(r"^\s*task\s+\w+\s+on\s+\w*$", before):
        return _items(sorted(vis.scenes) if vis else [], K.Module, "scene")
    if re.search(r"\bmaterial\s+\w*$", before):
        return _items(sorted(vis.materials) if vis else [], K.Color, "material")
    if re.match(r"^\s*\w+\s*:\s*\w*$", before):
        prefabs = sorted(vis.prefabs) if vis else []
        return (
            _items(prefabs, K.Class, "prefab")
            + _items(SC.SHAPES, K.Struct, "shape")
            + _items(
                sorted(SC.GENERATORS), K.Keyword, "generator", {k: g.doc for k, g in SC.GENERATORS.items()}
            )
        )
    context, _ = block_at(analysis, text, pos.line)
    statements = SC.CONTEXTS.get(context, SC.CONTEXTS["file"])
    if re.match(r"^\s*\w*$", before):
        return _items(
            sorted(statements), K.Keyword, f"{context} statement", {k: s.doc for k, s in statements.items()}
        )
    if context == "file":
        return []
    clauses = {c.key: c.doc for c in SC.OBJECT_CLAUSES}
    return _items(object_ids(analysis, text, pos.line), K.Variable, "object") + _items(
        sorted(clauses), K.Property, "clause", clauses
    )


def _import_paths(analysis: Analysis, pos: T.Position, typed: int) -> list[T.CompletionItem]:
    """The project's `.wa` files, relative to the importing file."""
    root = analysis.loader.root.resolve()
    found: list[Path] = []
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("node_modules", "build"))
        found += [Path(top, n) for n in sorted(names) if n.endswith(".wa") and not n.startswith(".")]
        if len(found) >= MAX_IMPORT_CHOICES:
            break
    start = T.Position(line=pos.line, character=pos.character - typed)
    out = []
    for f in found:
        if f == analysis.path:
            continue
        rel = Path(os.path.relpath(f, analysis.path.parent)).as_posix()
        edit = T.TextEdit(range=T.Range(start=start, end=pos), new_text=rel)
        out.append(T.CompletionItem(label=rel, kind=K.File, text_edit=edit, filter_text=rel))
    return out


def hover(analysis: Analysis, text: str, pos: T.Position) -> T.Hover | None:
    found = word_at(text, pos)
    codes = [
        d.code
        for d in (*analysis.diagnostics, *analysis.warnings)
        if d.span is not None
        and d.span.source.path.resolve() == analysis.path
        and _covers(to_range(d.span), pos)
    ]
    word, rng = found if found else ("", None)
    world = world_of(analysis, text, pos.line)
    md = hover_markdown(word, analysis.visible, world, codes, lambda name: prefab_extent(analysis, name))
    if not md:
        return None
    return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=md), range=rng)


def _covers(rng: T.Range, pos: T.Position) -> bool:
    return (
        (rng.start.line, rng.start.character)
        <= (pos.line, pos.character)
        <= (rng.end.line, rng.end.character)
    )


def definition(analysis: Analysis, text: str, pos: T.Position) -> list[T.Location]:
    """Where the name (or import path) under the cursor is declared."""
    module = analysis.module
    if module is not None:
        for imp in module.imports:
            if _covers(to_range(imp.span), pos):
                target = (analysis.path.parent / imp.path).resolve()
                zero = T.Position(line=0, character=0)
                return [T.Location(uri=from_fs_path(str(target)) or "", range=T.Range(start=zero, end=zero))]
    found = word_at(text, pos)
    if found is None:
        return []
    span = declaration(analysis, text, pos.line, found[0])
    return [location(span)] if span is not None else []


def declaration(analysis: Analysis, text: str, line: int, word: str):
    """The span declaring `word` as seen from a line: an object of the world in scope, a scene, a
    prefab, a material, a task of this file."""
    vis = analysis.visible
    world = world_of(analysis, text, line)
    if world is not None and word in world.things:
        thing = world.things[word]
        return thing.id_span
    if vis is not None:
        if word in vis.scenes:
            return vis.scenes[word][0].span
        if word in vis.prefabs:
            return vis.prefabs[word].span
        if word in vis.materials:
            return vis.materials[word].span
    if analysis.module is not None:
        for t in analysis.module.tasks:
            if t.name == word:
                return t.span
    if world is not None:  # a generated object: its generator's label
        for decl in _bodies(analysis):
            for g in decl.generators:
                if word.startswith(g.label):
                    return g.label_span
    return None


def _bodies(analysis: Analysis) -> list[N.Body]:
    vis, module = analysis.visible, analysis.module
    out = [s.body for s, _ in vis.scenes.values()] if vis else []
    return out + ([t.body for t in module.tasks] if module else [])


def references(analysis: Analysis, text: str, pos: T.Position) -> list[T.Location]:
    """Every use of the name under the cursor in this file and the files it sees (names as the
    compiler's lexer reads them: never in strings or comments)."""
    found = word_at(text, pos)
    if found is None:
        return []
    word = found[0]
    files: list[Path] = [analysis.path]
    if analysis.visible is not None:
        files += [f for f in analysis.visible.files if f != analysis.path]
    decl = declaration(analysis, text, pos.line, word)
    if decl is not None:
        home = stdlib_file(decl.source.path).resolve()
        if home not in files:
            files.append(home)
    out = []
    for f in files:
        source = text if f == analysis.path else _read(f, analysis)
        uri = from_fs_path(str(f)) or ""
        for name, line, col in name_tokens(source):
            if name == word:
                start = T.Position(line=line - 1, character=col - 1)
                end = T.Position(line=line - 1, character=col - 1 + len(name))
                out.append(T.Location(uri=uri, range=T.Range(start=start, end=end)))
    return out


def _read(path: Path, analysis: Analysis) -> str:
    data = analysis.loader.overlay.get(path)
    try:
        return (data if data is not None else path.read_bytes()).decode("utf-8", "replace")
    except OSError:
        return ""


def symbols(analysis: Analysis) -> list[T.DocumentSymbol]:
    """Scenes, tasks, prefabs and materials, with their objects, generators and anomalies inside."""
    module = analysis.module
    if module is None:
        return []

    def sym(
        name: str, kind, span, children: Sequence[T.DocumentSymbol] = (), detail=None
    ) -> T.DocumentSymbol:
        rng = to_range(span)
        return T.DocumentSymbol(
            name=name or "?",
            kind=kind,
            range=rng,
            selection_range=rng,
            detail=detail,
            children=list(children),
        )

    def inner(body: N.Body) -> list[T.DocumentSymbol]:
        return (
            [sym(t.id, T.SymbolKind.Object, t.span, detail=t.kind) for t in body.things]
            + [sym(g.label, T.SymbolKind.Array, g.span, detail=g.keyword) for g in body.generators]
            + [sym(f"anomaly {a.operator}", T.SymbolKind.Event, a.span) for a in body.anomalies]
        )

    out = [sym(s.name, T.SymbolKind.Namespace, s.span, inner(s.body), "scene") for s in module.scenes]
    out += [
        sym(t.name, T.SymbolKind.Module, t.span, inner(t.body), f"task on {t.scene}") for t in module.tasks
    ]
    out += [sym(p.name, T.SymbolKind.Class, p.span, inner(p.body), "prefab") for p in module.prefabs]
    out += [sym(m.name, T.SymbolKind.Constant, m.span, detail="material") for m in module.materials]
    return sorted(out, key=lambda s: (s.range.start.line, s.range.start.character))


def quick_fixes(uri: str, diagnostics: Sequence[T.Diagnostic]) -> list[T.CodeAction]:
    """The fix each diagnostic carries (`convert._fix`), as a quick-fix code action."""
    out = []
    for d in diagnostics:
        fix = (d.data or {}).get("fix") if isinstance(d.data, dict) else None
        if not fix:
            continue
        edits = [T.TextEdit(range=_range(e["range"]), new_text=e["text"]) for e in fix["edits"]]
        edit = T.WorkspaceEdit(changes={uri: edits})
        out.append(
            T.CodeAction(
                title=fix["title"],
                kind=T.CodeActionKind.QuickFix,
                diagnostics=[d],
                edit=edit,
                is_preferred=True,
            )
        )
    return out


def _range(r: dict) -> T.Range:
    return T.Range(
        start=T.Position(line=r["start"]["line"], character=r["start"]["character"]),
        end=T.Position(line=r["end"]["line"], character=r["end"]["character"]),
    )
