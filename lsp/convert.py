"""Compiler diagnostics as LSP diagnostics: ranges from spans, related locations from the places a
message or hint names, and the single obvious fix (if any) carried in `data` for the code action."""

from __future__ import annotations

import re
from pathlib import Path

from lsprotocol import types as T
from pygls.uris import from_fs_path

from wac.compiler import nodes as N
from wac.compiler.diagnostics import Diagnostic
from wac.compiler.spans import Span
from wac.lsp.analysis import Analysis, stdlib_file

DID_YOU_MEAN = re.compile(r"^did you mean `([^`]+)`\?")  # one suggestion only: a single obvious fix
ADD_IMPORT = re.compile(r"add `(import \"[^\"]+\")` at the top of this file")
START = re.compile(r"`(start at \([^`]+\)[^`]*)`")
LOCATION = re.compile(r"([^\s`'(),]+\.wa):(\d+):(\d+)")
BACKTICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")
DECLARED_IN = re.compile(r"declared in ([^\s:`]+\.wa)")


def to_range(span: Span) -> T.Range:
    """A 1-based span (end column exclusive) as a 0-based LSP range."""
    start = T.Position(line=max(span.line - 1, 0), character=max(span.column - 1, 0))
    end = T.Position(line=max(span.end_line - 1, 0), character=max(span.end_column - 1, 0))
    if (end.line, end.character) < (start.line, start.character):
        end = start
    return T.Range(start=start, end=end)


def location(span: Span) -> T.Location:
    return T.Location(uri=from_fs_path(str(stdlib_file(span.source.path))) or "", range=to_range(span))


def _file_start(path: Path) -> T.Location:
    zero = T.Position(line=0, character=0)
    return T.Location(uri=from_fs_path(str(path)) or "", range=T.Range(start=zero, end=zero))


def _related(d: Diagnostic, analysis: Analysis) -> list[T.DiagnosticRelatedInformation]:
    """The other places a diagnostic names: `file.wa:L:C` in its message or hint, the file its hint
    says declares a scene."""
    out = []
    base = analysis.loader.root
    for text in (d.message, d.hint or ""):
        for where, line, col in LOCATION.findall(text):
            path = (base / where).resolve()
            if path.is_file():
                pos = T.Position(line=int(line) - 1, character=int(col) - 1)
                loc = T.Location(uri=from_fs_path(str(path)) or "", range=T.Range(start=pos, end=pos))
                out.append(T.DiagnosticRelatedInformation(location=loc, message="the other declaration"))
        for where in DECLARED_IN.findall(text):
            path = (base / where).resolve()
            if path.is_file():
                out.append(
                    T.DiagnosticRelatedInformation(location=_file_start(path), message="declared here")
                )
    return out + _objects_named(d, analysis)


def _objects_named(d: Diagnostic, analysis: Analysis) -> list[T.DiagnosticRelatedInformation]:
    """Where the objects a message names are declared (the other side of an E536 overlap, …)."""
    if d.span is None or analysis.module is None:
        return []
    task = next((t for t in analysis.module.tasks if t.span.line <= d.span.line <= t.span.end_line), None)
    world = analysis.worlds.get(task.name) if task else None
    out = []
    for oid in dict.fromkeys(BACKTICKED.findall(d.message)):
        thing = world.things.get(oid) if world else None
        if thing is not None and thing.id_span != d.span:
            message = f"`{oid}` is declared here"
            out.append(T.DiagnosticRelatedInformation(location=location(thing.id_span), message=message))
    return out[:3]


def _fix(d: Diagnostic, analysis: Analysis, rng: T.Range) -> dict | None:
    """The one obvious fix for a diagnostic, as `{"title", "edits": [{"range", "text"}]}` (JSON, for
    the code action): the single did-you-mean name, the import its hint names, W542's start."""
    hint = d.hint or ""
    edits, titles = [], []
    if m := DID_YOU_MEAN.match(hint):
        edits.append({"range": _plain(rng), "text": m[1]})
        titles.append(f"change to `{m[1]}`")
    if m := ADD_IMPORT.search(hint):
        top = _import_line(analysis.module)
        at = {"start": {"line": top, "character": 0}, "end": {"line": top, "character": 0}}
        edits.append({"range": at, "text": m[1] + "\n"})
        titles.append(f"add `{m[1]}`")
    if d.code in ("W542", "W543") and (m := START.search(hint)):
        edit = _start_edit(analysis.module, m[1], d.span)
        if edit is not None:
            edits.append(edit)
            titles.append(f"use `{m[1]}`")
    if not edits:
        return None
    title = " and ".join(titles)
    return {"title": title[0].upper() + title[1:], "edits": edits}


def _import_line(module: N.Module | None) -> int:
    """Where a new import goes: after the file's last import, else at the top (0-based line)."""
    if module is None or not module.imports:
        return 0
    return max(i.span.end_line for i in module.imports)


def _start_edit(module: N.Module | None, statement: str, span: Span | None) -> dict | None:
    """Replace the task's `start` statement, or put one first in its block."""
    if module is None or span is None:
        return None
    task = next((t for t in module.tasks if t.span.line <= span.line <= t.span.end_line), None)
    if task is None:
        return None
    old = task.body.setting("start")
    if old is not None:
        return {"range": _plain(to_range(old.span)), "text": statement}
    line = task.span.line  # the line after the task's header
    return {
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
        "text": f"    {statement}\n",
    }


def _plain(rng: T.Range) -> dict:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def _anchor(d: Diagnostic, analysis: Analysis) -> T.Range:
    """Where a diagnostic of another file (an import's) shows in this one: the import leading there."""
    module = analysis.module
    if module is not None and module.imports:
        target = d.span.source.path.resolve() if d.span is not None else None
        for imp in module.imports:
            if target is not None and (analysis.path.parent / imp.path).resolve() == target:
                return to_range(imp.span)
        return to_range(module.imports[0].span)
    zero = T.Position(line=0, character=0)
    return T.Range(start=zero, end=zero)


def lsp_diagnostics(analysis: Analysis, lines: list[str] | None = None, codec=None) -> list[T.Diagnostic]:
    """The analysis's errors and warnings for its own document (those of other files on the import
    that leads to them, pointing there)."""
    out = []
    for d in (*analysis.diagnostics, *analysis.warnings):
        related = _related(d, analysis)
        here = d.span is not None and d.span.source.path.resolve() == analysis.path
        if here:
            rng = to_range(d.span)
            if codec is not None and lines is not None:
                rng = codec.range_to_client_units(lines, rng)
            message = d.message
        else:
            rng = _anchor(d, analysis)
            message = f"{d.message} (in {d.span.location})" if d.span is not None else d.message
            if d.span is not None:
                related.insert(
                    0, T.DiagnosticRelatedInformation(location=location(d.span), message=d.message)
                )
        if d.hint:
            message += f"\nhint: {d.hint}"
        fix = _fix(d, analysis, rng) if here or d.span is None else None
        out.append(
            T.Diagnostic(
                range=rng,
                message=message,
                severity=T.DiagnosticSeverity.Warning
                if d.severity == "warning"
                else T.DiagnosticSeverity.Error,
                code=d.code,
                source="wac",
                related_information=related or None,
                data={"fix": fix} if fix else None,
            )
        )
    return out
