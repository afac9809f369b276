"""What a task file lowers to, for `wac check --dump ast|effects|plan FILE` (Scenic's `dumpFinalAST`).

`ast` is the elaborated AST of the file (pass 2); `effects` the anomalies each task lowers to,
with their triggers and effects on the perturbed world (pass 6, as task.json holds them);
`plan` each task's self-check plan (pass 7, selfcheck.json).  The output is JSON, the same
bytes for the same sources: AST nodes keep their field order and show where they start as
"line:column"; bundle parts are printed with sorted keys.
"""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from pathlib import Path

from wac.bundle import reader as R
from wac.compiler.diagnostics import Diagnostic
from wac.compiler.pipeline import compile_file
from wac.compiler.resolve import Loader
from wac.compiler.spans import Source, Span
from wac.errors import UsageError

DUMPS = ("ast", "effects", "plan")


def ast_data(node):
    """A JSON-able view of an AST node: {"node": class name, "at": "line:col", fields…}.

    Spans other than the node's own `span` (an id's, a keyword's) are left out, and so is the
    module's source text."""
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        out: dict = {"node": type(node).__name__}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if isinstance(value, Span):
                if f.name == "span":
                    out["at"] = f"{value.line}:{value.column}"
                continue
            if isinstance(value, Source):
                out[f.name] = value.display
                continue
            out[f.name] = ast_data(value)
        return out
    if isinstance(node, tuple | list):
        return [ast_data(v) for v in node]
    if isinstance(node, dict):
        return {str(k): ast_data(v) for k, v in node.items()}
    if isinstance(node, Enum):
        return node.value
    if isinstance(node, Path):
        return str(node)
    return node


def _anomalies(task_json: dict) -> list[dict]:
    keys = ("operator", "category", "targets", "trigger", "effects", "affects")
    return [{k: a[k] for k in keys if k in a} for a in task_json["anomalies"]]


def dump(what: str, path: Path, loader: Loader) -> tuple[str | None, list[Diagnostic]]:
    """(the dump, None on errors; the diagnostics) of `what` for the tasks of one file."""
    if what not in DUMPS:
        raise UsageError(f"unknown dump {what!r} (known: {', '.join(DUMPS)})")
    if what == "ast":
        module = loader.load(path)
        if module is None:
            return None, list(loader.failed.get(path.resolve(), ()))
        return json.dumps(ast_data(module), indent=2, ensure_ascii=False) + "\n", []
    fr = compile_file(path, loader)
    if fr.diagnostics or any(files is None for _, _, files, _ in fr.tasks):
        return None, fr.diagnostics
    out = {}
    for name, _, files, _ in fr.tasks:
        if what == "effects":
            out[name] = _anomalies(json.loads(files[R.TASK]))
        else:
            out[name] = json.loads(files[R.PLAN])
    return json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False) + "\n", []
