"""Import layers: no module imports a layer above its own, nothing but the CLI imports a command-line
module, and no two modules import each other, except the recorded exceptions below.

The layers, lowest first (a module may import its own layer and those below):

  0  wac, wac.errors                       the root exception and the version
  1  wac.bundle, wac.taxonomy, wac.grammar, wac.backends, wac.detectors (detectors after bundle and taxonomy)
  2  wac.compiler
  3  wac.runtime                           (never the compiler: it reads bundles only)
  4  wac.validation
  5  wac.audit
  6  wac.review, wac.lsp, wac.human      (front ends: the review web app, the editors' language server,
                                           the human-auditor app)
  7  wac.cli

Imports are read from the source (`ast`), at module level and inside functions alike: a lazy
import is a dependency too.  The exceptions are today's, each with its reason; they are to be
removed (issue 10), not added to.  An exception that no longer occurs fails the test, so the list
shrinks as they are fixed.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# installed package -> source folder (pyproject.toml's package-dir)
PACKAGES = {
    "wac": "wac",
    "wac.grammar": "grammar",
    "wac.compiler": "compiler",
    "wac.compiler.operators": "compiler/operators",
    "wac.bundle": "bundle",
    "wac.detectors": "detectors",
    "wac.taxonomy": "taxonomy",
    "wac.runtime": "runtime",
    "wac.validation": "validation",
    "wac.audit": "audit",
    "wac.audit.agents": "audit/agents",
    "wac.review": "review",
    "wac.lsp": "lsp",
    "wac.human": "human",
}
LAYERS = {
    "wac": 0,
    "wac.errors": 0,
    "wac.bundle": 1,
    "wac.taxonomy": 1,
    "wac.grammar": 1,
    "wac.backends": 1,
    "wac.detectors": 1,
    "wac.compiler": 2,
    "wac.runtime": 3,
    "wac.validation": 4,
    "wac.audit": 5,
    "wac.review": 6,
    "wac.lsp": 6,
    "wac.human": 6,
    "wac.cli": 7,
}
# pairs of layers that may not meet although their ranks allow it
FORBIDDEN = {("wac.runtime", "wac.compiler"): "the runtime reads bundles and never imports the compiler"}
# command-line front ends: only the CLI dispatches to them; libraries do not import them
CLI_MODULES = {
    "wac.cli",
    "wac.runtime.commands",
    "wac.validation.derive_cli",
    "wac.validation.selfcheck",
    "wac.lsp.commands",
    "wac.human.commands",
}

# importer -> imported: why it is there today
ALLOWED_EDGES = {}
# modules that import each other (all lazily, inside functions: none is an import-time cycle)
ALLOWED_CYCLES = {}


def modules() -> dict[str, Path]:
    out = {}
    for pkg, folder in PACKAGES.items():
        for f in sorted((ROOT / folder).glob("*.py")):
            out[pkg if f.stem == "__init__" else f"{pkg}.{f.stem}"] = f
    return out


def imports(mods: dict[str, Path], top_level_only: bool = False) -> dict[str, set[str]]:
    """Module -> the wac modules it imports (`from pkg import a, b` counts the submodules among
    `pkg.a`, `pkg.b`, else `pkg`)."""
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.stem == "__init__" else name.rpartition(".")[0]
        nodes = tree.body if top_level_only else ast.walk(tree)
        found: set[str] = set()
        for node in nodes:
            if isinstance(node, ast.Import):
                found |= {_module_of(a.name, mods) for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                submodules = {f"{base}.{a.name}" for a in node.names} & mods.keys()
                found |= submodules or {_module_of(base, mods)}
        found.discard("")
        found.discard(name)
        graph[name] = found
    return graph


def _module_of(name: str, mods) -> str:
    """The wac module `name` is or lies in ("" for a third-party one)."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name


def layer(module: str) -> str:
    return max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)


def back_edges(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Imports of a higher layer, of a forbidden layer, or of a command-line module."""
    out = set()
    for a, targets in graph.items():
        for b in targets:
            la, lb = layer(a), layer(b)
            if LAYERS[lb] > LAYERS[la] or (la, lb) in FORBIDDEN or (b in CLI_MODULES and la != "wac.cli"):
                out.add((a, b))
    return out


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_is_in_a_layer():
    assert all(layer(m) in LAYERS for m in modules())


def test_no_layer_imports_one_above_it():
    edges = back_edges(imports(modules()))
    unexplained = sorted(edges - set(ALLOWED_EDGES))
    assert not unexplained, f"imports against the layers (fix them, don't list them): {unexplained}"
    stale = sorted(set(ALLOWED_EDGES) - edges)
    assert not stale, f"fixed, so remove from ALLOWED_EDGES: {stale}"


def test_no_import_cycles():
    graph = imports(modules())
    found = set(cycles(graph))
    unexplained = [sorted(c) for c in found - set(ALLOWED_CYCLES)]
    assert not unexplained, f"modules that import each other: {unexplained}"
    stale = [sorted(c) for c in set(ALLOWED_CYCLES) - found]
    assert not stale, f"untangled, so remove from ALLOWED_CYCLES: {stale}"
    assert cycles(imports(modules(), top_level_only=True)) == []  # none at import time, at all


def test_the_checks_catch_what_they_are_for():
    graph = imports(modules())
    assert ("wac.bundle.model", "wac.compiler.pipeline") in back_edges(
        {**graph, "wac.bundle.model": {"wac.compiler.pipeline"}}
    )
    assert ("wac.runtime.env", "wac.compiler.plan") in back_edges({"wac.runtime.env": {"wac.compiler.plan"}})
    assert ("wac.audit.session", "wac.runtime.commands") in back_edges(
        {"wac.audit.session": {"wac.runtime.commands"}}
    )
    assert back_edges({"wac.cli": {"wac.runtime.commands"}, "wac.audit.judge": {"wac.bundle.model"}}) == set()
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert "wac.audit.accepted" in imports(modules())["wac.audit.runner"]  # lazy imports count
    assert "wac.audit.accepted" not in imports(modules(), top_level_only=True)["wac.audit.runner"]


def test_the_build_cache_digests_every_package_the_compiler_runs():
    """A bundle is reused while the compiler digest is unchanged, so the digest must cover every
    package the compiler's passes import (the detectors joined them with issue 27 and were missed).
    `wac derive` is no compile pass."""
    from wac.compiler.emit import DIGESTED

    mods = modules()
    graph = imports(mods)
    todo = [m for m in mods if m.startswith("wac.compiler") and not m.startswith("wac.compiler.derive")]
    seen = set(todo)
    while todo:
        for b in graph[todo.pop()]:
            if b not in seen and not b.startswith("wac.compiler.derive"):
                seen.add(b)
                todo.append(b)
    owner = {m: max((p for p in PACKAGES if m == p or m.startswith(p + ".")), key=len) for m in seen}
    ran = {p if p != "wac.compiler.operators" else "wac.compiler" for p in owner.values()}
    assert ran <= set(DIGESTED), sorted(ran - set(DIGESTED))
