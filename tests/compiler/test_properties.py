"""Property tests: formatting preserves meaning, and no input crashes the compiler."""

from __future__ import annotations

from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark
from lark import Lark

from wac.compiler.fmt import format_source
from wac.compiler.parse import decode, parse
from wac.compiler.pipeline import compile_project
from wac.errors import SourceErrors

GRAMMAR = resources.files("wac.grammar").joinpath("wac.lark").read_text()
# the generator needs a grammar without the post-lexer; tokens get spaces around them so that
# concatenated terminals stay separate words (whitespace is insignificant in the language)
_names = st.from_regex(r"\A[a-z_][a-z0-9_]{0,6}\Z").map(lambda s: f" {s} ")
_quantities = st.builds(
    lambda n, u: f" {n}{u} ",
    st.sampled_from(["0", "1", "2.5", "0.04", "12", "1e3", ".5"]),
    st.sampled_from(["", " m", "deg", " s", " kg", " m/s", "cm"]),
)
_strings = st.text(
    st.characters(blacklist_characters='"\\\n\r', blacklist_categories=("Cs",)), max_size=8
).map(lambda s: f' "{s}" ')
PROGRAMS = from_lark(
    Lark(GRAMMAR, parser="lalr", lexer="contextual"),
    explicit={
        "NAME": _names,
        "QUANTITY": _quantities,
        "STRING": _strings,
        "_NL": st.just("\n"),
        "COMMENT": st.just("# c\n"),
    },
)


def _parse(text: str):
    return parse(decode(text.encode(), "gen.wa", None)).statements


@settings(
    max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much], deadline=None
)
@given(PROGRAMS)
def test_formatting_reparses_to_the_same_tree(program):
    try:
        tree = _parse(program)
    except SourceErrors:
        return  # the generator ignores the bracket post-lexer; such inputs are not the property's concern
    formatted = format_source(program.encode())
    assert _parse(formatted) == tree
    assert format_source(formatted.encode()) == formatted


H = b'import "../scenes/yard.wa"\n'
VALID = b"""import "../scenes/yard.wa"
task t on yard {
    difficulty easy
    anomaly float crate_2 by 0.4 m
}
"""


def _compile(project, data: bytes):
    (project.root / "tasks" / "t.wa").write_bytes(data)
    return compile_project([project.root / "tasks"], project.root)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_random_bytes_give_diagnostics_not_crashes(project, data):
    result = _compile(project, data)
    for d in result.diagnostics:
        assert d.render()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.integers(0, len(VALID)),
            st.integers(0, 6),
            st.sampled_from(
                [
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
                    "]",
                    "#",
                    "\x00",
                ]
            ),
        ),
        max_size=4,
    )
)
def test_random_edits_of_a_valid_task_never_crash(project, edits):
    data = VALID.decode()
    for at, cut, insert in edits:
        at = min(at, len(data))
        data = data[:at] + insert + data[at + cut :]
    result = _compile(project, data.encode())
    for d in result.diagnostics:
        assert d.code.startswith("E") and d.render()


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "\ufeff"])
def test_empty_files_are_fine(project, text):
    assert _compile(project, text.encode()).ok


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"scene \xff\xfe {}\n", "not valid UTF-8"),
        (H + b"task t on yard {\n    anomaly float crate_2 by 1e999 m\n}\n", "out of range"),
        (H + b"task t on yard {\n    anomaly float crate_2 by " + b"9" * 400 + b" m\n}\n", "out of range"),
        (b"scene s {\n    description 'single quotes'\n}\n", "strings use double quotes"),
        (b"scene s {\n" * 3, "file ends too early"),
        (b'scene s {\n    description "bad \\q escape"\n}\n', "unknown escape"),
        (
            H
            + b"task t on yard {\n    anomaly float crate_2 by "
            + b"(" * 3000
            + b"1"
            + b")" * 3000
            + b"\n}\n",
            "nested too deeply",
        ),
    ],
)
def test_hostile_inputs_get_clear_errors(project, data, message):
    result = _compile(project, data)
    text = "\n".join(d.render() for d in result.diagnostics)
    assert message in text
