"""Small modules and short functions (STYLE, issue 29): no module of the project over 800 lines, and
no function over 120 lines in the compiler, the runtime and the validation, where the passes,
rules and judges live.  A long function there is where a unit's concept ends up spread over an
if-chain (the planner's 257-line `_make_plan` held every plan kind)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "wac",
    "grammar",
    "compiler",
    "bundle",
    "detectors",
    "taxonomy",
    "runtime",
    "validation",
    "audit",
    "review",
    "lsp",
    "human",
)
MODULE_LINES = 800
FUNCTION_LINES = 120
SHORT_FUNCTIONS = ("compiler", "runtime", "validation")


def _modules(folders):
    for folder in folders:
        yield from sorted((ROOT / folder).rglob("*.py"))


def test_no_module_is_over_800_lines():
    long = [
        f"{p.relative_to(ROOT)}: {n}"
        for p in _modules(PACKAGES)
        if (n := len(p.read_text().splitlines())) > MODULE_LINES
    ]
    assert not long, long


def test_no_function_of_the_compiler_runtime_or_validation_is_over_120_lines():
    long = []
    for path in _modules(SHORT_FUNCTIONS):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {n} lines")
    assert not long, long
