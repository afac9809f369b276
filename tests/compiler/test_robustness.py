"""Build robustness (issue 9): any nesting depth, invisible characters, helpful hints, stacked
objects, a broad phase that finds every near pair, and a project root found from the sources."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wac.bundle import model as B
from wac.compiler.parse import MAX_NESTING, decode, parse
from wac.compiler.pipeline import compile_project
from wac.compiler.validate import TOUCH_M, _touch, near_pairs
from wac.errors import SourceErrors


def _first_error(text: str):
    try:
        parse(decode(text.encode("utf-8"), "t.wa", Path("t.wa")))
    except SourceErrors as exc:
        return exc.diagnostics[0]
    return None


def _nested(kind: str, depth: int) -> tuple[str, tuple[int, int]]:
    """A source nested `depth` deep, and the line:col of the first opener past the limit."""
    if kind == "block":
        text = "scene s {\n" + "x {\n" * depth + "}\n" * (depth + 1)
        return text, (MAX_NESTING + 1, 3)  # the 64th `x {` is the 65th open brace
    if kind == "paren":
        head = "scene s {\n    start at "
        text = head + "(" * depth + "1" + ")" * depth + "\n}\n"
        return text, (2, len("    start at ") + MAX_NESTING)
    if kind == "list":
        head = "scene s {\n    bounds polygon "
        text = head + "[" * depth + "1" + "]" * depth + "\n}\n"
        return text, (2, len("    bounds polygon ") + MAX_NESTING)
    head = "scene s {\n    ambient (1"
    text = head + "+1" * depth + ")\n}\n"
    return text, (2, len("    ambient (1") + 2 * MAX_NESTING + 1)  # the 65th `+`


@pytest.mark.parametrize("kind", ["block", "paren", "list", "operators"])
@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 300, 3000])
def test_any_nesting_depth_gives_a_located_diagnostic(kind, depth):
    text, (line, col) = _nested(kind, depth)
    d = _first_error(text)
    assert d is not None and d.code == "E005", d
    assert (d.span.line, d.span.column) == (line, col), d.render()


@pytest.mark.parametrize("kind", ["paren", "list", "operators"])
def test_nesting_within_the_limit_parses(kind):
    text, _ = _nested(kind, MAX_NESTING - 2)
    d = _first_error(text)
    assert d is None or d.code != "E005"


@pytest.mark.parametrize(
    "char, name",
    [
        ("\u00a0", "U+00A0 NO-BREAK SPACE"),
        ("\u200b", "U+200B ZERO WIDTH SPACE"),
        ("\u201c", "U+201C LEFT DOUBLE QUOTATION MARK"),
        ("\x0b", "U+000B LINE TABULATION"),
    ],
)
def test_invisible_and_look_alike_characters_are_named(char, name):
    d = _first_error(f"scene s {{\n    era{char}medieval\n}}\n")
    assert d.code == "E002" and name in d.message and (d.span.line, d.span.column) == (2, 8)
    assert d.hint


def test_carriage_return_line_ends_are_named_even_after_a_comment():
    text = "# a scene\rscene s {\r    era medieval\r}\r"
    try:
        decode(text.encode(), "t.wa", Path("t.wa"))
    except SourceErrors as exc:
        (d,) = exc.diagnostics
    else:
        pytest.fail("a CR-only file was accepted (its first comment swallows the rest)")
    assert d.message == "unexpected character U+000D CARRIAGE RETURN" and "line ends" in d.hint
    assert (d.span.line, d.span.column) == (1, 10)


def test_crlf_files_still_compile(project):
    path = project("t.wa", "task t on yard {\n    anomaly float crate_2 by 0.4 m\n}\n")
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert compile_project([project.root / "tasks"], project.root).ok


@pytest.mark.parametrize(
    "anomaly, hint",
    [
        ("remove_collision fence_3 by 2 m", "`remove_collision` takes no parameters"),
        ("remove_collision fence_3 trigger revisit", "a trigger goes last, after `when`"),
        ("hide crate_2 revisit", "a trigger goes last, after `when`: `anomaly … when revisit`"),
    ],
)
def test_unknown_operator_clauses_explain_themselves(project, anomaly, hint):
    project("t.wa", f"task t on yard {{\n    anomaly {anomaly}\n}}\n")
    (d,) = compile_project([project.root / "tasks"], project.root).diagnostics
    assert d.code == "E102" and hint in d.hint and "known clauses: \n" not in d.render() + "\n"


def test_a_stacked_object_reports_the_gap_to_what_is_beneath(project):
    project(
        "t.wa",
        """
        task t on yard {
            box_8: box size (0.6, 0.6, 0.6) at (5, -5) material wood
            box_9: box size (0.6, 0.6, 0.6) at (5, -5, 0.7) material wood
            anomaly float crate_2 by 0.4 m
        }
        """,
    )
    (d,) = compile_project([project.root / "tasks"], project.root).diagnostics
    assert d.code == "E501"
    assert d.message == ("`box_9` (box) floats 0.10 m above `box_8` beneath it in the clean scene")
    assert "`on box_8`" in d.hint


# -- the broad phase finds exactly the pairs a full comparison finds ---------------------------

_coord = st.floats(-5, 5, allow_nan=False).map(lambda v: round(v, 2))
_size = st.floats(0.05, 3, allow_nan=False).map(lambda v: round(v, 2))


def _box(i: int, x: float, y: float, z: float, sx: float, sy: float, sz: float) -> B.SceneObject:
    part = B.Part(id="body", shape="box", size=(sx, sy, sz), material="wood")
    return B.SceneObject(
        id=f"o{i}",
        name="box",
        position=(x, y, z),
        parts=(part,),
        aabb_min=(x - sx / 2, y - sy / 2, z),
        aabb_max=(x + sx / 2, y + sy / 2, z + sz),
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(_coord, _coord, st.floats(0, 2).map(lambda v: round(v, 2)), _size, _size, _size),
        max_size=25,
    )
)
def test_broad_phase_pairs_match_all_pairs(specs):
    objs = [_box(i, *s) for i, s in enumerate(specs)]
    found = set(near_pairs(objs, TOUCH_M))
    expected = {(i, j) for i, j in itertools.combinations(range(len(objs)), 2) if _touch(objs[i], objs[j])}
    assert expected <= found  # every touching pair is a candidate
    assert all(_touch(objs[i], objs[j]) or _near(objs[i], objs[j]) for i, j in found)


def _near(a, b) -> bool:
    return all(
        a.aabb_min[k] <= b.aabb_max[k] + TOUCH_M + 1e-6 and b.aabb_min[k] <= a.aabb_max[k] + TOUCH_M + 1e-6
        for k in range(3)
    )


# -- the project root --------------------------------------------------------------------------


def _wac(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "WAC_TEST_PAUSE_IN_COMMIT"}
    return subprocess.run(
        [sys.executable, "-m", "wac.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_building_another_project_from_elsewhere_finds_its_root(project, tmp_path):
    project("t.wa", "task t on yard {\n    anomaly float crate_2 by 0.4 m\n}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = _wac(["check", str(project.root / "tasks")], elsewhere)
    assert proc.returncode == 0, proc.stderr


def test_a_wac_toml_marks_the_root(project, tmp_path):
    (project.root / "wac.toml").write_text("")
    nested = project.root / "tasks" / "deep"
    nested.mkdir()
    (nested / "t.wa").write_text(
        'import "../../scenes/yard.wa"\ntask t on yard {\n    anomaly float crate_2 by 0.4 m\n}\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = _wac(["check", str(nested)], elsewhere)
    assert proc.returncode == 0, proc.stderr


def test_a_failed_import_is_reported_once_without_a_cascade(project, tmp_path):
    project(
        "t.wa",
        "task t on yard {\n    anomaly float crate_2 by 0.4 m\n}\n",
        header='import "../../../x/yard.wa"\n',
    )
    result = compile_project([project.root / "tasks"], project.root)
    assert [d.code for d in result.diagnostics] == ["E302"]


def test_an_unknown_scene_hint_names_the_declaring_file_and_an_import_that_works(project, monkeypatch):
    """Issue 33: the hint's import is written from the task's own folder (not `scenes/….wa`), and
    it names the file that declares the scene (also for a misspelt name)."""
    monkeypatch.chdir(project.root)
    body = "task t on {scene} {{\n    anomaly float crate_2 by 0.4 m\n}}\n"
    sub = project.root / "tasks" / "deep"
    sub.mkdir()
    for name, meant in (("yard", ""), ("yrad", "did you mean `yard`? ")):
        (sub / "t.wa").write_text(body.format(scene=name))
        result = compile_project([sub / "t.wa"], project.root)
        (d,) = result.diagnostics
        line = 'import "../../scenes/yard.wa"'
        assert d.code == "E301" and d.hint == (
            f"{meant}scene `yard` is declared in scenes/yard.wa: add `{line}` at the top of this file"
        )
    (sub / "t.wa").write_text(line + "\n" + body.format(scene="yard"))  # the hint, followed, builds
    assert compile_project([sub / "t.wa"], project.root).ok
    (sub / "t.wa").write_text(body.format(scene="nowhere"))
    (d,) = compile_project([sub / "t.wa"], project.root).diagnostics
    assert "no file under the project root (the current directory) declares a scene `nowhere`" in d.hint
    assert "relative to tasks/deep/" in d.hint


def test_a_path_outside_the_root_names_the_root_used(project, monkeypatch):
    monkeypatch.chdir(project.root)
    task = project("t.wa", "task t on yard {\n    anomaly float crate_2 by 0.4 m\n}\n")
    (d,) = compile_project([task], project.root / "tasks").diagnostics
    assert d.code == "E302"
    assert d.message == "import `../scenes/yard.wa` is outside the project root `tasks`"
    assert d.hint.startswith("it resolves to scenes/yard.wa;") and "`--root .`" in d.hint
