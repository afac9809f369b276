"""The language server's pieces in-process: analyses of unsaved buffers, quick fixes, completion,
hover, references and the guard that keeps the server alive (the stdio tests are test_server.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pygls")
from lsprotocol import types as T  # noqa: E402

from wac.compiler.pipeline import compile_project  # noqa: E402
from wac.lsp import features as F  # noqa: E402
from wac.lsp.analysis import Projects, project_root  # noqa: E402
from wac.lsp.convert import lsp_diagnostics  # noqa: E402


def _apply(text: str, edits: list[T.TextEdit]) -> str:
    lines = text.split("\n")
    offsets = [sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines))]
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        a = offsets[e.range.start.line] + e.range.start.character
        b = offsets[e.range.end.line] + e.range.end.character
        text = text[:a] + e.new_text + text[b:]
    return text


def _fix(analysis, text: str) -> str:
    diags = lsp_diagnostics(analysis)
    (action,) = F.quick_fixes("file:///x", diags)
    return _apply(text, action.edit.changes["file:///x"])


def test_cheap_passes_give_the_build_s_codes_for_what_they_run(project):
    path = project("t.wa", "task t on yard {\n    anomaly float crate_l by 0.4 m\n}\n")
    analysis = Projects([project.root]).analyse(path)
    built = compile_project([path], project.root)
    assert [d.code for d in analysis.diagnostics] == [d.code for d in built.diagnostics] == ["E601"]
    (mine,), (theirs,) = analysis.diagnostics, built.diagnostics
    where = ("line", "column", "end_line", "end_column")
    assert [getattr(mine.span, k) for k in where] == [getattr(theirs.span, k) for k in where]
    assert (mine.message, mine.hint) == (theirs.message, theirs.hint)
    assert "crate_1" in analysis.worlds["t"].objects


def test_an_unknown_scene_is_fixed_by_the_import_its_hint_names(project):
    path = project("t.wa", "task t on yrd {\n    anomaly float crate_1 by 0.4 m\n}\n", header="")
    projects = Projects([project.root])
    analysis = projects.analyse(path)
    assert [d.code for d in analysis.diagnostics] == ["E301"]
    fixed = _fix(analysis, path.read_text())
    assert fixed.startswith('import "../scenes/yard.wa"\ntask t on yard {')
    projects.update(path, fixed)
    assert projects.analyse(path).diagnostics == []


def test_an_unsaved_scene_edit_reaches_the_task_that_imports_it(project):
    task = project("t.wa", "task t on yard {\n    anomaly float crate_1 by 0.4 m\n}\n")
    scene = project.root / "scenes" / "yard.wa"
    projects = Projects([project.root])
    assert projects.analyse(task).diagnostics == []
    assert projects.analyse(scene).diagnostics == []
    projects.update(scene, scene.read_text().replace("crate_1:", "crate_9:"))
    analysis = projects.analyse(task)
    assert [(d.code, d.hint) for d in analysis.diagnostics] == [("E601", "did you mean `crate_9`?")]
    projects.update(scene, None)  # closed unsaved: the file on disk counts again
    assert projects.analyse(task).diagnostics == []


def test_a_syntax_error_and_a_file_outside_any_project(project, tmp_path_factory):
    path = project("t.wa", "task t on yard {\n    anomaly float crate_1 by (0.4\n")
    (d,) = Projects().analyse(path).diagnostics
    assert d.code.startswith("E0")
    lone = tmp_path_factory.mktemp("outside") / "elsewhere" / "lone.wa"
    lone.parent.mkdir()
    lone.write_text('import "../../x.wa"\ntask t on x {\n}\n')
    assert project_root(lone, [project.root]) == lone.parent
    assert [d.code for d in Projects([project.root]).analyse(lone).diagnostics] == ["E302"]


def test_the_project_root_is_the_nearest_wac_toml_else_the_workspace(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    f = tmp_path / "a" / "b" / "t.wa"
    assert project_root(f, [tmp_path]) == tmp_path
    (tmp_path / "a" / "wac.toml").write_text("")
    assert project_root(f, [tmp_path]) == tmp_path / "a"


def _at(text: str, needle: str, offset: int = 0) -> T.Position:
    before = text[: text.index(needle) + offset]
    return T.Position(line=before.count("\n"), character=len(before.rsplit("\n", 1)[-1]))


def test_completion_by_context(project):
    text = textwrap.dedent(
        """\
        import "../scenes/yard.wa"
        task t on yard {
            anomaly float crate_1 by 0.4 m
            box_1: box size (1, 1, 1) at (2, -4) material wood
        }
        """
    )
    path = project("t.wa", text, header="")
    analysis = Projects([project.root]).analyse(path)

    def labels(needle: str, offset: int) -> set[str]:
        return {i.label for i in F.complete(analysis, text, _at(text, needle, offset))}

    assert "../scenes/yard.wa" in labels('"../scenes', 1)  # import paths
    assert labels("yard {", 4) >= {"yard"}  # scenes after `on`
    assert {"wood", "metal"} <= labels("wood", 4)  # materials
    assert {"chair", "box", "row"} <= labels("box size", 3)  # after a label: prefabs, shapes, generators
    assert {"anomaly", "start", "difficulty"} <= labels("    anomaly", 4)  # statements of a task
    assert "import" in labels("import", 0) and "task" in labels("import", 0)  # file level


def test_hover_on_a_code_a_prefab_and_a_diagnostic(project):
    text = "task t on yard {\n    anomaly float crate_l by 0.4 m  # E601\n    c: chair at (1, 1)\n}\n"
    path = project("t.wa", text)
    analysis = Projects([project.root]).analyse(path)
    full = path.read_text()
    code = F.hover(analysis, full, _at(full, "E601", 1)).contents.value
    assert code.startswith("**E601**") and "Fix." in code
    chair = F.hover(analysis, full, _at(full, "chair", 1)).contents.value
    assert "prefab `chair`" in chair and "era: any" in chair and "`seat` (box)" in chair
    assert "size: 0.44 x 0.44 x 0.9 m" in chair
    on_diag = F.hover(analysis, full, _at(full, "crate_l", 1)).contents.value
    assert "**E601**" in on_diag  # the code of the diagnostic under the cursor


def test_references_and_symbols(project):
    text = "task t on yard {\n    anomaly float crate_1 by 0.4 m\n}\n"
    path = project("t.wa", text)
    analysis = Projects([project.root]).analyse(path)
    full = path.read_text()
    refs = F.references(analysis, full, _at(full, "crate_1", 1))
    files = sorted(Path(r.uri).name for r in refs)
    assert files == ["t.wa", "yard.wa"]  # the use, and the declaration (never the name string)
    (task,) = F.symbols(analysis)
    assert task.name == "t" and [c.name for c in task.children] == ["anomaly float"]


def test_an_internal_error_is_logged_and_answered_with_the_default():
    from wac.lsp.server import guarded

    logged = []

    class Server:
        def window_log_message(self, params):
            logged.append(params.message)

    class State:
        server = Server()

    @guarded(State(), default=[])
    def broken(params):
        raise KeyError("boom")

    assert broken(None) == []
    assert logged and "internal error in broken: KeyError" in logged[0]


def test_related_locations_name_the_other_declaration(project):
    text = "task t on yard {\n    box_1: box size (1, 1, 1) at (2, -4)\n    box_1: box size (1, 1, 1) at (5, -4)\n    anomaly float crate_1 by 0.4 m\n}\n"
    path = project("t.wa", text)
    (d,) = lsp_diagnostics(Projects([project.root]).analyse(path))
    assert d.code == "E409" and d.range.start.line == 3
    (first,) = d.related_information
    assert first.location.uri == path.as_uri() and first.location.range.start.line == 2


def test_an_overlap_points_at_both_objects(project):
    text = "task t on yard {\n    anomaly move crate_1 by (-6, 0) when revisit\n}\n"
    path = project("t.wa", text)
    projects = Projects([project.root])
    diags = lsp_diagnostics(projects.analyse(path, full=True))
    (d,) = [d for d in diags if d.code == "E536"]
    related = {Path(r.location.uri).name: r.location.range.start.line for r in d.related_information}
    assert related == {"yard.wa": related["yard.wa"]} and len(d.related_information) == 2


def test_without_pygls_the_command_says_what_to_install(monkeypatch, capsys):
    import sys

    from wac.cli import main

    monkeypatch.delitem(sys.modules, "wac.lsp.server", raising=False)
    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)  # as if pygls were not installed
    assert main(["lsp"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'wac[lsp]'" in err and "Traceback" not in err
