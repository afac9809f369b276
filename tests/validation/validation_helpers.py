"""Helpers shared by the validation tests: where things are, and compiling sources into bundles."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
BROKEN = HERE / "broken"
ROOT = HERE.parent.parent


def build(sources: list[Path], root: Path, out: Path | None):
    """Compile `sources` (into `out` when given); returns the compiler's Result (diagnostics when it failed)."""
    from wac.compiler.pipeline import compile_project

    return compile_project(sources, root, out=out)
