"""The VS Code extension's TextMate grammar stays true to the Lark grammar, the statement schemas and
the operator registry (it is generated from them: `python -m wac.lsp.textmate`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from wac.compiler import schema as SC
from wac.compiler import triggers as TRG
from wac.compiler.parse import _ESCAPES
from wac.lsp import textmate
from wac.taxonomy.registry import registry

ROOT = Path(__file__).resolve().parents[2]
TM = ROOT / "editors" / "vscode" / "syntaxes" / "wac.tmLanguage.json"
LARK = (ROOT / "grammar" / "wac.lark").read_text()


def _repo() -> dict:
    return json.loads(TM.read_text())["repository"]


def _words(pattern: str, group: int) -> set[str]:
    """The words of the `group`-th alternation `(a|b|…)` of a pattern."""
    alternations = re.findall(r"\(((?:[A-Za-z_/\\]+\|)+[A-Za-z_/\\]+)\)", pattern)
    return {w.replace("\\", "") for w in alternations[group].split("|")}


def test_the_grammar_file_is_current():
    assert TM.read_text() == textmate.render(), "run `python -m wac.lsp.textmate`"


def test_operators_are_the_registry_s():
    assert _words(_repo()["anomaly"]["match"], 1) == {op.name for op in registry().operators}


def test_keywords_cover_every_statement_generator_and_trigger():
    words = _words(_repo()["keyword"]["match"], 0) | _words(_repo()["declaration"]["match"], 0)
    statements = {k for table in SC.CONTEXTS.values() for k in table}
    assert statements | set(SC.GENERATORS) | set(TRG.TRIGGERS) | set(SC.SHAPES) <= words


def test_units_comments_and_escapes_follow_the_lark_grammar():
    quantity = next(line for line in LARK.splitlines() if line.startswith("QUANTITY:"))
    lark_units = set(re.search(r"\(m\\/s\|[^)]*\)", quantity)[0].strip("()").replace("\\/", "/").split("|"))
    assert _words(_repo()["number"]["match"], 0) == lark_units
    assert re.search(r"^COMMENT: /#", LARK, re.M) and _repo()["comment"]["match"].startswith("#")
    escapes = _repo()["string"]["patterns"][0]["match"]
    assert all(e in escapes for e in _ESCAPES if e != '"') and "u[0-9a-fA-F]{4}" in escapes


def test_every_shipped_anomaly_line_is_highlighted():
    anomaly = re.compile(_repo()["anomaly"]["match"])
    lines = [
        line
        for f in sorted((ROOT / "tasks_src").rglob("*.wa"))
        for line in f.read_text().splitlines()
        if line.strip().startswith("anomaly ")
    ]
    assert lines and all(anomaly.search(line) for line in lines)
    number = re.compile(_repo()["number"]["match"])
    assert number.fullmatch("0.4 m")[2] == "m" and number.fullmatch("30deg")[2] == "deg"
    assert number.fullmatch("2 m/s")[2] == "m/s" and number.match("3 mx")[0] == "3"
