"""Shared fixtures for the ecosystem tests: the shipped corpus built plain and sealed (once each)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "tasks_src", ROOT / "taxonomy" / "examples"]


@pytest.fixture(scope="session")
def sealed(tmp_path_factory) -> Path:
    from wac.compiler.pipeline import compile_project

    out = tmp_path_factory.mktemp("eco_sealed") / "build"
    res = compile_project(SOURCES, ROOT, out=out, jobs=1, sealed=True)
    assert res.ok, [d.message for d in res.diagnostics]
    return out
