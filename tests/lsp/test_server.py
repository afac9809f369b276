"""`wac lsp` end to end: pytest-lsp starts the real server over stdio and drives it as an editor does."""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types as T  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from wac.compiler.fmt import format_source  # noqa: E402
from wac.compiler.pipeline import compile_project  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.asyncio(loop_scope="module")

SCENE = """\
scene yard {
    description "A small yard with a fence, a crate and a lamp."
    type urban
    era modern
    ground grass size (30, 30)
    bounds from (-8, -8) to (8, 8)
    start at (0, -6) yaw 90 deg
    fence_3: box size (4, 0.1, 1.2) at (0, 0) material wood { name "wooden fence" }
    crate_1: box size (0.6, 0.6, 0.6) at (3, 3) material wood mass 12 kg { name "crate" }
    table_1: box size (1.2, 0.8, 0.75) at (-3, -3) material wood { name "table" }
    post_1: cylinder radius 0.08 height 3 at (4, -2) material metal { name "lamp post" }
}
"""
TASK = """\
import "../scenes/yard.wa"

task float_crate on yard {
    anomaly float crate_1 by 0.4 m
}
"""


@pytest.fixture(scope="module")
def proj(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    (root / "wac.toml").write_text("")
    (root / "scenes").mkdir()
    (root / "scenes" / "yard.wa").write_text(SCENE)
    (root / "tasks").mkdir()
    (root / "tasks" / "t.wa").write_text(TASK)
    return root


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "wac.cli", "lsp"]), scope="module"
)
async def client(lsp_client: LanguageClient, proj: Path):
    await lsp_client.initialize_session(
        T.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[T.WorkspaceFolder(uri=proj.as_uri(), name="proj")],
        )
    )
    published = lsp_client.published = {}  # (uri, version) -> diagnostics: no stale publish is mistaken
    features = lsp_client.protocol.fm.features
    default = features[T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: T.PublishDiagnosticsParams) -> None:
        default(params)
        published[params.uri, params.version] = list(params.diagnostics)

    features[T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    yield
    await lsp_client.shutdown_session()


async def open_doc(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        T.DidOpenTextDocumentParams(
            text_document=T.TextDocumentItem(
                uri=uri, language_id="wac", version=1, text=text or path.read_text()
            )
        )
    )
    await wait_diagnostics(client, uri)
    return uri


async def wait_diagnostics(client: LanguageClient, uri: str, timeout: float = 20) -> list[T.Diagnostic]:
    async def until():
        while uri not in client.diagnostics:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(until(), timeout)
    return list(client.diagnostics[uri])


async def change(client: LanguageClient, uri: str, version: int, text: str) -> list[T.Diagnostic]:
    """Send the new text; the diagnostics the server publishes for that version."""
    client.published.pop((uri, version), None)
    client.text_document_did_change(
        T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[T.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )

    async def until():
        while (uri, version) not in client.published:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(until(), 20)
    return client.published[uri, version]


async def test_a_typo_in_an_object_id_is_flagged_and_fixed(client: LanguageClient, proj: Path):
    path = proj / "tasks" / "t.wa"
    uri = await open_doc(client, path)
    assert list(client.diagnostics[uri]) == []
    typo = TASK.replace("crate_1", "crate_l")
    diags = await change(client, uri, 2, typo)
    assert [d.code for d in diags] == ["E601"]
    d = diags[0]
    line = typo.split("\n").index("    anomaly float crate_l by 0.4 m")
    start = typo.split("\n")[line].index("crate_l")
    assert (d.range.start.line, d.range.start.character) == (line, start)
    assert (d.range.end.line, d.range.end.character) == (line, start + len("crate_l"))
    assert "did you mean `crate_1`?" in d.message
    actions = await client.text_document_code_action_async(
        T.CodeActionParams(
            text_document=T.TextDocumentIdentifier(uri=uri),
            range=d.range,
            context=T.CodeActionContext(diagnostics=[d]),
        )
    )
    assert [a.title for a in actions] == ["Change to `crate_1`"]
    (edit,) = actions[0].edit.changes[uri]
    fixed = _apply(typo, edit)
    assert fixed == TASK
    assert await change(client, uri, 3, fixed) == []


def _apply(text: str, edit: T.TextEdit) -> str:
    lines = text.split("\n")
    r = edit.range
    head = "\n".join(lines[: r.start.line] + [lines[r.start.line][: r.start.character]])
    tail = "\n".join([lines[r.end.line][r.end.character :]] + lines[r.end.line + 1 :])
    return head + edit.new_text + tail


async def test_completion_offers_the_scene_objects_after_an_operator(client: LanguageClient, proj: Path):
    path = proj / "tasks" / "t.wa"
    uri = await open_doc(client, path)
    text = TASK.replace("anomaly float crate_1 by 0.4 m", "anomaly float ")
    await change(client, uri, 10, text)
    line = text.split("\n").index("    anomaly float ")
    items = await client.text_document_completion_async(
        T.CompletionParams(
            text_document=T.TextDocumentIdentifier(uri=uri),
            position=T.Position(line=line, character=len("    anomaly float ")),
        )
    )
    labels = {i.label for i in (items.items if isinstance(items, T.CompletionList) else items)}
    assert {"crate_1", "fence_3", "table_1", "post_1"} <= labels
    assert "by" in labels  # the operator's parameter, from the spec
    operators = await client.text_document_completion_async(
        T.CompletionParams(
            text_document=T.TextDocumentIdentifier(uri=uri),
            position=T.Position(line=line, character=len("    anomaly ")),
        )
    )
    assert "float" in {i.label for i in operators}


async def test_hover_on_an_operator_shows_its_docs(client: LanguageClient, proj: Path):
    path = proj / "tasks" / "t.wa"
    uri = await open_doc(client, path)
    await change(client, uri, 20, TASK)
    line = TASK.split("\n").index("    anomaly float crate_1 by 0.4 m")
    hover = await client.text_document_hover_async(
        T.HoverParams(
            text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(line=line, character=14)
        )
    )
    assert "anomaly operator `float`" in hover.contents.value
    assert "Raise an object above whatever supports it." in hover.contents.value
    assert "missing_support" in hover.contents.value
    obj = await client.text_document_hover_async(
        T.HoverParams(
            text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(line=line, character=20)
        )
    )
    assert "object `crate_1`" in obj.contents.value and "at (3, 3, 0) m" in obj.contents.value


async def test_go_to_definition_jumps_across_the_import(client: LanguageClient, proj: Path):
    path = proj / "tasks" / "t.wa"
    uri = await open_doc(client, path)
    await change(client, uri, 30, TASK)
    lines = TASK.split("\n")
    scene_use = T.Position(line=2, character=lines[2].index("yard") + 1)
    crate_use = T.Position(line=3, character=lines[3].index("crate_1") + 1)
    yard = (proj / "scenes" / "yard.wa").as_uri()
    for pos, line in (
        (scene_use, 0),
        (crate_use, SCENE.split("\n").index(next(x for x in SCENE.split("\n") if "crate_1:" in x))),
    ):
        (loc,) = await client.text_document_definition_async(
            T.DefinitionParams(text_document=T.TextDocumentIdentifier(uri=uri), position=pos)
        )
        assert loc.uri == yard and loc.range.start.line == line
    (imp,) = await client.text_document_definition_async(
        T.DefinitionParams(
            text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(line=0, character=12)
        )
    )
    assert imp.uri == yard


async def test_formatting_equals_wac_fmt(client: LanguageClient, proj: Path):
    messy = 'import   "../scenes/yard.wa"\ntask   float_crate on yard {\n  anomaly float crate_1 by 0.4m   # up\n}\n'
    path = proj / "tasks" / "messy.wa"
    path.write_text(messy)
    uri = await open_doc(client, path)
    edits = await client.text_document_formatting_async(
        T.DocumentFormattingParams(
            text_document=T.TextDocumentIdentifier(uri=uri),
            options=T.FormattingOptions(tab_size=4, insert_spaces=True),
        )
    )
    assert len(edits) == 1
    assert _apply(messy, edits[0]) == format_source(messy.encode(), "messy.wa")


async def test_symbols_and_a_half_typed_line(client: LanguageClient, proj: Path):
    path = proj / "tasks" / "t.wa"
    uri = await open_doc(client, path)
    await change(client, uri, 40, TASK)
    syms = await client.text_document_document_symbol_async(
        T.DocumentSymbolParams(text_document=T.TextDocumentIdentifier(uri=uri))
    )
    assert [s.name for s in syms] == ["float_crate"]
    diags = await change(client, uri, 41, TASK.replace("by 0.4 m", "by (0.4"))
    assert [d.code for d in diags] == ["E002"] or diags and diags[0].code.startswith("E0")
    items = await client.text_document_completion_async(
        T.CompletionParams(
            text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(line=3, character=18)
        )
    )
    assert "crate_1" in {i.label for i in items}  # the last good analysis still serves


async def test_an_unsaved_buffer_and_a_file_outside_any_project(client: LanguageClient, tmp_path: Path):
    uri = "untitled:Untitled-1"
    client.text_document_did_open(
        T.DidOpenTextDocumentParams(
            text_document=T.TextDocumentItem(
                uri=uri, language_id="wac", version=1, text="task t on nowhere {\n"
            )
        )
    )
    assert [d.code for d in await wait_diagnostics(client, uri)] == ["E003"] or client.diagnostics[uri]
    lone = tmp_path / "lone.wa"
    lone.write_text('import "../../x.wa"\ntask t on x {\n}\n')
    diags = client.diagnostics.get(await open_doc(client, lone), [])
    assert diags and all(d.code.startswith("E") for d in diags)


async def test_save_runs_the_full_compile(client: LanguageClient, proj: Path):
    path = proj / "tasks" / "t.wa"
    uri = await open_doc(client, path)
    await change(client, uri, 50, TASK + "\n")
    client.text_document_did_change(  # saved at once: the change's debounce has not run out
        T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=51),
            content_changes=[T.TextDocumentContentChangeWholeDocument(text=TASK)],
        )
    )
    client.diagnostics.pop(uri, None)
    client.text_document_did_save(
        T.DidSaveTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=uri))
    )
    saved = await wait_diagnostics(client, uri, timeout=60)
    await asyncio.sleep(0.4)  # past the debounce: the cheap passes do not replace what the save found
    assert list(client.diagnostics[uri]) == saved
    build = compile_project([path], proj)  # what `wac check` reports for the file
    assert [(d.code, d.message.split("\nhint: ")[0]) for d in saved] == [
        (d.code, d.message) for d in (*build.diagnostics, *build.warnings)
    ]
    assert "W542" in [d.code for d in saved]  # the cheap passes as you type leave it out
    (w542,) = [d for d in saved if d.code == "W542"]
    (action,) = await client.text_document_code_action_async(
        T.CodeActionParams(
            text_document=T.TextDocumentIdentifier(uri=uri),
            range=w542.range,
            context=T.CodeActionContext(diagnostics=[w542]),
        )
    )
    (edit,) = action.edit.changes[uri]
    moved = _apply(TASK, edit)
    assert "start at (" in moved and compile_project_text(proj, moved).warnings == []


def compile_project_text(proj: Path, text: str):
    other = proj / "tasks" / "moved.wa"
    other.write_text(text.replace("float_crate", "moved_task"))
    try:
        return compile_project([other], proj)
    finally:
        other.unlink()


def _mutations(seed: int, n: int) -> list[tuple[Path, str]]:
    """Seeded edits of shipped task sources: characters cut, brackets, quotes and junk put in."""
    rng = random.Random(seed)
    files = sorted((ROOT / "tasks_src").rglob("*.wa"))
    junk = [
        "",
        "(",
        ")",
        "{",
        "}",
        "-",
        "1e999",
        '"',
        "\\",
        "é",
        "\n",
        "x",
        "0",
        ",",
        ":",
        " when",
        " m",
        "[",
        "#",
    ]
    out = []
    for _ in range(n):
        f = rng.choice(files)
        text = f.read_text()
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(junk) + text[at + rng.randint(0, 6) :]
        out.append((f, text))
    return out


async def test_fuzzed_edits_of_shipped_sources_are_all_answered(client: LanguageClient):
    codes = []
    for path, text in _mutations(seed=32, n=30):
        uri = path.as_uri()
        client.diagnostics.pop(uri, None)
        client.text_document_did_open(
            T.DidOpenTextDocumentParams(
                text_document=T.TextDocumentItem(uri=uri, language_id="wac", version=1, text=path.read_text())
            )
        )
        diags = await change(client, uri, 2, text)
        assert all(d.code for d in diags)
        codes += [d.code for d in diags] or ["ok"]
        doc = T.TextDocumentIdentifier(uri=uri)
        pos = T.Position(line=min(3, text.count("\n")), character=6)
        await client.text_document_hover_async(T.HoverParams(text_document=doc, position=pos))
        await client.text_document_completion_async(T.CompletionParams(text_document=doc, position=pos))
        await client.text_document_definition_async(T.DefinitionParams(text_document=doc, position=pos))
        await client.text_document_document_symbol_async(T.DocumentSymbolParams(text_document=doc))
        client.text_document_did_close(T.DidCloseTextDocumentParams(text_document=doc))
    assert not [m for m in client.log_messages if "internal error" in m.message]
    assert "E302" not in codes  # the shipped files resolve their imports (the root is the checkout)
    kinds = {c[:2] for c in codes}
    assert "E0" in kinds and kinds & {"E1", "E2", "E4", "E6"}, codes  # syntax errors and later passes'
