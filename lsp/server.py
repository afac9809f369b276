"""`wac lsp`: the language server over stdio (pygls), wiring editor requests to the compiler's passes.

Diagnostics come from `analysis.Projects`: the cheap passes a moment after the last keystroke
(debounced), the whole compile of the file on save.  Every handler is guarded: an internal error is
logged to the client (window/logMessage) and answered with nothing, so the server keeps serving.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
import traceback
from pathlib import Path

from lsprotocol import types as T
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from wac import __version__
from wac.compiler.fmt import format_source
from wac.errors import SourceErrors
from wac.lsp import features as F
from wac.lsp.analysis import Analysis, Projects
from wac.lsp.convert import lsp_diagnostics

DEBOUNCE_S = 0.15  # after a keystroke, before the cheap passes run
log = logging.getLogger("wac.lsp")


class State:
    """The server's memory: projects, each document's path and its latest analysis."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self._projects: Projects | None = None
        self.analyses: dict[str, Analysis] = {}
        self.versions: dict[str, int] = {}

    @property
    def projects(self) -> Projects:
        if self._projects is None:
            folders = [Path(p) for f in self.server.workspace.folders.values() if (p := to_fs_path(f.uri))]
            if not folders and self.server.workspace.root_path:
                folders = [Path(self.server.workspace.root_path)]
            self._projects = Projects(folders)
        return self._projects

    def path(self, uri: str) -> Path:
        """The file of a document; an unsaved one (`untitled:`) gets a hidden name in the workspace."""
        fs = to_fs_path(uri) if uri.startswith("file:") else None
        if fs:
            return Path(fs).resolve()
        base = self.projects.folders[0] if self.projects.folders else Path.cwd()
        name = "".join(c if c.isalnum() else "_" for c in uri)[-60:]
        return (base / f".unsaved_{name}.wa").resolve()

    def text(self, uri: str) -> str:
        return self.server.workspace.get_text_document(uri).source

    def analyse(self, uri: str, full: bool = False) -> Analysis:
        path = self.path(uri)
        self.projects.update(path, self.text(uri))
        analysis = self.projects.analyse(path, full)
        before = self.analyses.get(uri)
        if analysis.module is None and before is not None:  # a half-typed line: keep what was known
            analysis.module, analysis.visible = before.module, before.visible
            analysis.worlds = before.worlds
        self.analyses[uri] = analysis
        return analysis

    def position(self, uri: str, pos: T.Position) -> T.Position:
        """A client position (UTF-16 units) in code points, as spans count columns."""
        doc = self.server.workspace.get_text_document(uri)
        return doc.position_codec.position_from_client_units(doc.lines, pos)

    def latest(self, uri: str) -> Analysis:
        return self.analyses.get(uri) or self.analyse(uri)

    def publish(self, uri: str, full: bool = False) -> None:
        analysis = self.analyse(uri, full)
        doc = self.server.workspace.get_text_document(uri)
        items = lsp_diagnostics(analysis, doc.lines, doc.position_codec)
        self.server.text_document_publish_diagnostics(
            T.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=doc.version)
        )


def guarded(state: State, default=None):
    """A handler that logs an internal error to the client and answers `default` instead of failing."""

    def wrap(f):
        def report(exc: BaseException) -> None:
            message = f"wac lsp: internal error in {f.__name__}: {type(exc).__name__}: {exc}"
            log.error("%s\n%s", message, traceback.format_exc())
            try:
                state.server.window_log_message(T.LogMessageParams(type=T.MessageType.Error, message=message))
            except Exception:  # noqa: BLE001 - the report itself must not break the server
                pass

        if asyncio.iscoroutinefunction(f):

            @functools.wraps(f)
            async def run_async(params):
                try:
                    return await f(params)
                except (Exception, RecursionError) as exc:
                    report(exc)
                    return default

            return run_async

        @functools.wraps(f)
        def run(params):
            try:
                return f(params)
            except (Exception, RecursionError) as exc:
                report(exc)
                return default

        return run

    return wrap


def make_server() -> LanguageServer:
    """The language server with every feature registered."""
    server = LanguageServer("wac", __version__, text_document_sync_kind=T.TextDocumentSyncKind.Full)
    state = State(server)

    @server.feature(T.TEXT_DOCUMENT_DID_OPEN)
    @guarded(state)
    def did_open(params: T.DidOpenTextDocumentParams) -> None:
        state.versions[params.text_document.uri] = params.text_document.version
        state.publish(params.text_document.uri)

    @server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    @guarded(state)
    async def did_change(params: T.DidChangeTextDocumentParams) -> None:
        uri, version = params.text_document.uri, params.text_document.version
        state.versions[uri] = version
        await asyncio.sleep(DEBOUNCE_S)
        if state.versions.get(uri) == version:  # no newer keystroke meanwhile
            state.publish(uri)

    @server.feature(T.TEXT_DOCUMENT_DID_SAVE)
    @guarded(state)
    def did_save(params: T.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        state.versions[uri] = -1  # a change still waiting out its debounce is covered by this compile
        state.publish(uri, full=True)

    @server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    @guarded(state)
    def did_close(params: T.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        state.projects.update(state.path(uri), None)
        state.analyses.pop(uri, None)
        state.versions.pop(uri, None)
        server.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @guarded(state)
    def files_changed(params: T.DidChangeWatchedFilesParams) -> None:
        state.projects.loaders.clear()  # files changed on disk: load everything afresh (open buffers stay)

    @server.feature(
        T.TEXT_DOCUMENT_CODE_ACTION, T.CodeActionOptions(code_action_kinds=[T.CodeActionKind.QuickFix])
    )
    @guarded(state, [])
    def code_action(params: T.CodeActionParams) -> list[T.CodeAction]:
        return F.quick_fixes(params.text_document.uri, params.context.diagnostics)

    @server.feature(T.TEXT_DOCUMENT_COMPLETION, T.CompletionOptions(trigger_characters=[" ", '"', "/", ":"]))
    @guarded(state, [])
    def completion(params: T.CompletionParams) -> list[T.CompletionItem]:
        uri = params.text_document.uri
        return F.complete(state.latest(uri), state.text(uri), state.position(uri, params.position))

    @server.feature(T.TEXT_DOCUMENT_HOVER)
    @guarded(state)
    def hover(params: T.HoverParams) -> T.Hover | None:
        uri = params.text_document.uri
        return F.hover(state.latest(uri), state.text(uri), state.position(uri, params.position))

    @server.feature(T.TEXT_DOCUMENT_DEFINITION)
    @guarded(state, [])
    def definition(params: T.DefinitionParams) -> list[T.Location]:
        uri = params.text_document.uri
        return F.definition(state.latest(uri), state.text(uri), state.position(uri, params.position))

    @server.feature(T.TEXT_DOCUMENT_REFERENCES)
    @guarded(state, [])
    def references(params: T.ReferenceParams) -> list[T.Location]:
        uri = params.text_document.uri
        return F.references(state.latest(uri), state.text(uri), state.position(uri, params.position))

    @server.feature(T.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @guarded(state, [])
    def symbols(params: T.DocumentSymbolParams) -> list[T.DocumentSymbol]:
        return F.symbols(state.latest(params.text_document.uri))

    @server.feature(T.TEXT_DOCUMENT_FORMATTING)
    @guarded(state, [])
    def formatting(params: T.DocumentFormattingParams) -> list[T.TextEdit]:
        uri = params.text_document.uri
        text = state.text(uri)
        try:
            new = format_source(text.encode("utf-8"), str(state.path(uri)))
        except SourceErrors:
            return []  # a file that does not parse is left as it is (its diagnostics say why)
        if new == text:
            return []
        lines = text.split("\n")
        end = T.Position(line=len(lines) - 1, character=len(lines[-1]))
        return [T.TextEdit(range=T.Range(start=T.Position(line=0, character=0), end=end), new_text=new)]

    return server


def serve() -> None:
    """Serve over stdio until the client exits.  The protocol keeps the real stdout to itself: what
    a library prints (from Python or C) goes to stderr, never into the client's message stream."""
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    make_server().start_io(sys.stdin.buffer, channel)
