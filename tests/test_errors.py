"""One error root: every exception class wac defines derives from `wac.errors.WacError`, so
`except WacError` catches every error wac raises on purpose (Hypothesis's errors.py is the model).

Classes are found in the source (`ast`); a class counts as an exception when a base is a builtin
exception or an exception class of the package.  Private classes (`_Stop`) are control flow that
never leaves its module and are exempt.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
from pathlib import Path

import wac.errors as E

_spec = importlib.util.spec_from_file_location("_layers", Path(__file__).with_name("test_layers.py"))
_layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_layers)
modules = _layers.modules  # every wac module and its source file

BUILTIN_EXCEPTIONS = {
    n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)
}


def exception_classes(sources: dict[str, str]) -> list[tuple[str, str]]:
    """(module, class) of every public exception class defined in the given module sources."""
    trees = {m: ast.parse(src) for m, src in sources.items()}
    known = set(BUILTIN_EXCEPTIONS) | {n for n in vars(E) if n[:1].isupper()}
    found: list[tuple[str, str]] = []
    grew = True
    while grew:  # a class deriving from an exception class of another module counts too
        grew = False
        for m, tree in trees.items():
            for node in ast.walk(tree):
                if not isinstance(node, ast.ClassDef) or (m, node.name) in found:
                    continue
                bases = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases}
                if bases & known:
                    found.append((m, node.name))
                    known.add(node.name)
                    grew = True
    return sorted((m, c) for m, c in found if not c.startswith("_"))


def test_every_exception_wac_defines_derives_from_wac_error():
    sources = {m: p.read_text(encoding="utf-8") for m, p in modules().items()}
    classes = exception_classes(sources)
    assert ("wac.runtime.actions", "ActionError") not in classes  # defined in wac.errors, re-exported
    assert len(classes) >= 15
    outside = [
        f"{m}.{c}" for m, c in classes if not issubclass(getattr(importlib.import_module(m), c), E.WacError)
    ]
    assert not outside, (
        f"derive these from wac.errors.WacError (with a builtin mixin if callers need it): {outside}"
    )


def test_the_scan_finds_what_it_is_for():
    src = {
        "m.a": "class Oops(ValueError): pass\nclass _Private(Exception): pass\nclass Plain: pass",
        "m.b": "from m.a import Oops\nclass Deeper(Oops): pass",
    }
    assert exception_classes(src) == [("m.a", "Oops"), ("m.b", "Deeper")]


def test_builtin_mixins_keep_what_callers_catch():
    assert issubclass(E.LedgerError, ValueError) and issubclass(E.FrameRefError, ValueError)
    assert issubclass(E.CorruptFile, ValueError) and issubclass(E.JudgeCallError, RuntimeError)
    assert issubclass(E.ActionError, E.UsageError) and issubclass(E.AgentError, E.UsageError)
