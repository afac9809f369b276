"""Shared fixtures for the auditor tests: built bundles (once per session) and the fake endpoint."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

pytest.importorskip("pybullet")
pytest.importorskip("vtk")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def _example_cache(tmp_path_factory):
    """Rendered in-context examples go to a private cache, never to the user's ~/.cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("WAC_CACHE_DIR", str(tmp_path_factory.mktemp("wac_cache")))
    yield
    mp.undo()


@pytest.fixture(scope="session")
def built(shipped_build) -> Path:
    """The shipped tasks and the taxonomy's demonstration tasks, compiled once per session."""
    res, out = shipped_build
    assert res.ok, [d.message for d in res.diagnostics]
    return out
