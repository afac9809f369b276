"""One error root: every exception class wac defines derives from `wac.errors.WacError`, so
`except WacError` catches every error wac raises on purpose (Hypothesis's errors.py is the model).

Classes are found in the source (`ast`); a class counts as an exception when a base is a builtin
exception or an exception class of the package.  Private classes (`_Stop`) are control flow that
never leaves its module and are exempt.

Nor does wac raise a builtin exception on purpose (`raise ValueError(...)`): an error a user or a
researcher can cause is a `WacError` (with a builtin mixin where callers expect one).  The builtin
raises that remain are in `BUILTIN_RAISES`, each with its reason: broken internal invariants, Python
protocols, and control flow caught beside the raise.  An entry that no longer occurs fails the test.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
from pathlib import Path

import wac.errors as E

ERRORS_MD = Path(__file__).resolve().parents[1] / "docs" / "errors.md"

_spec = importlib.util.spec_from_file_location("_layers", Path(__file__).with_name("test_layers.py"))
_layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_layers)
modules = _layers.modules  # every wac module and its source file

BUILTIN_EXCEPTIONS = {
    n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)
}


# (module, enclosing function or "<module>", builtin exception) -> why it stays builtin
BUILTIN_RAISES = {
    ("wac.compiler.pipeline", "BuiltBundle.__getitem__", "KeyError"): "the Mapping protocol: a bundle "
    "file that is not there is a missing key",
    ("wac.compiler.operators", "<module>", "ImportError"): "the units and operators.yaml disagree: "
    "the package must not import (a programming error, checked by the consistency test)",
    ("wac.compiler.operators.base", "Lowering.__post_init__", "ValueError"): "a unit returned rubric "
    "words starting with '_' (a side channel): a programming error in the unit",
    ("wac.compiler.operators.base", "operator.register", "TypeError"): "two units registered for one "
    "operator: a programming error at import",
    ("wac.compiler.plan_kinds", "<module>", "ImportError"): "the plan kind units and the taxonomy's "
    "plan kinds disagree: a programming error at import",
    ("wac.compiler.plan_kinds", "plan_kind_unit.register", "TypeError"): "two units registered for one "
    "plan kind: a programming error at import",
    ("wac.compiler.values", "Evaluator.value", "AssertionError"): "a parameter type of the schema that "
    "the value reader does not handle: an unreachable branch",
    ("wac.compiler.fmt", "word", "AssertionError"): "a syntax node the formatter does not handle: an "
    "unreachable branch",
    ("wac.compiler.triggers", "<module>", "ImportError"): "the trigger units disagree with the bundle's "
    "TriggerKind or the taxonomy's trigger classes: a programming error at import",
    ("wac.runtime.triggers", "<module>", "ImportError"): "a trigger kind without a rule: a programming "
    "error at import",
    ("wac.runtime.triggers", "fires.register", "TypeError"): "two rules registered for one trigger kind: "
    "a programming error at import",
    ("wac.validation.observables", "<module>", "ImportError"): "the registered judges and the "
    "taxonomy's observables disagree: a programming error at import",
    ("wac.validation.readings", "observes.register", "TypeError"): "two judges registered for one "
    "observable: a programming error at import",
    ("wac.runtime.effects", "<module>", "ImportError"): "an Effect variant without an apply function: "
    "a programming error at import",
    ("wac.runtime.effects", "applies.register", "TypeError"): "two apply functions registered for one "
    "effect kind: a programming error at import",
    ("wac.runtime.commands", "<module>", "SystemExit"): "the module's `__main__` exit status",
    ("wac.bundle.integrity", "verify_bundle", "TypeError"): "caught three lines below and turned into a "
    "BundleError (a manifest whose files are not strings)",
    ("wac.audit.judge_prompts", "judge_prompt", "ValueError"): "the C.4 prompt shipped with wac lost "
    "its reply-format paragraph: a programming error",
    ("wac.audit.mcp_setup", "load_examples", "LookupError"): "caught by the `except` around it: the "
    "server then serves without an in-context example, with a note",
    ("wac.audit.mcp_stdio", "_AsyncLines.__anext__", "StopAsyncIteration"): "the async-iterator "
    "protocol: end of input",
    ("wac.audit.protocol", "ReferenceSession.__getattr__", "AttributeError"): "the attribute protocol",
    ("wac.exits", "sigterm_interrupts._stop", "KeyboardInterrupt"): "SIGTERM stops a command the way "
    "Ctrl-C does: the handler raises what Ctrl-C raises",
}


def builtin_raises(sources: dict[str, str]) -> list[tuple[str, str, str]]:
    """(module, enclosing function, exception) of every `raise <builtin exception>` in the sources."""
    out = []
    for m, src in sources.items():

        def visit(node: ast.AST, where: tuple[str, ...], m: str = m) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    visit(child, (*where, child.name))
                    continue
                if isinstance(child, ast.Raise) and child.exc is not None:
                    exc = child.exc.func if isinstance(child.exc, ast.Call) else child.exc
                    if isinstance(exc, ast.Name) and exc.id in BUILTIN_EXCEPTIONS:
                        out.append((m, ".".join(where) or "<module>", exc.id))
                visit(child, where)

        visit(ast.parse(src), ())
    return sorted(set(out))


def test_wac_raises_no_builtin_exception_on_purpose():
    sources = {m: p.read_text(encoding="utf-8") for m, p in modules().items()}
    found = builtin_raises(sources)
    unlisted = [f"{m}: {fn} raises {exc}" for m, fn, exc in found if (m, fn, exc) not in BUILTIN_RAISES]
    assert not unlisted, (
        f"raise a wac.errors.WacError subclass (with a builtin mixin if callers need it): {unlisted}"
    )
    stale = sorted(set(BUILTIN_RAISES) - set(found))
    assert not stale, f"no longer raised, remove from BUILTIN_RAISES: {stale}"


def test_the_raise_scan_finds_what_it_is_for():
    src = {
        "m.a": (
            "class C:\n    def f(self):\n        raise ValueError('x')\n"
            "def g():\n    if 1:\n        raise KeyError\n"
            "def h():\n    raise SomeWacError('y')\n"
            "raise ImportError('z')\n"
        )
    }
    assert builtin_raises(src) == [
        ("m.a", "<module>", "ImportError"),
        ("m.a", "C.f", "ValueError"),
        ("m.a", "g", "KeyError"),
    ]


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
    assert issubclass(E.TaxonomyError, ValueError) and issubclass(E.UnknownObservable, KeyError)


def test_every_exception_class_is_documented():
    classes = [n for n, v in vars(E).items() if isinstance(v, type) and issubclass(v, E.WacError)]
    table = ERRORS_MD.read_text(encoding="utf-8").split("\n## Exceptions\n", 1)[1]
    missing = [n for n in classes if f"| `{n}` |" not in table]
    assert not missing, f"docs/errors.md's Exceptions table lacks {missing}"
