"""Shared test fixtures: the shipped corpus built once per session, a scratch project with a tiny
scene, and the golden-refresh flag."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    parser.addoption(
        "--update-goldens", action="store_true", help="rewrite tests/golden from the current compiler"
    )


@pytest.fixture
def update_goldens(request) -> bool:
    return bool(request.config.getoption("--update-goldens"))


SCENE = """
scene yard {
    description "A small yard with a fence, a crate and a lamp."
    type urban
    era modern
    ground grass size (30, 30)
    bounds from (-8, -8) to (8, 8)
    start at (0, -6) yaw 90 deg
    fence_3: box size (4, 0.1, 1.2) at (0, 0) material wood { name "wooden fence"; synonyms ["fence", "barrier"] }
    crate_1: box size (0.6, 0.6, 0.6) at (3, 3) material wood mass 12 kg { name "crate" }
    crate_2: box size (0.6, 0.6, 0.6) at (-3, 3) material wood { name "crate" }
    table_1: box size (1.2, 0.8, 0.75) at (-3, -3) material wood { name "table" }
    cup_1: cylinder radius 0.05 height 0.1 on table_1 material ceramic { name "cup" }
    post_1: cylinder radius 0.08 height 3 at (4, -2) material metal { name "lamp post" }
}
"""


@pytest.fixture
def project(tmp_path: Path):
    """A project root with `scenes/yard.wa`; `write(name, text)` adds a task file."""
    (tmp_path / "scenes").mkdir()
    (tmp_path / "scenes" / "yard.wa").write_text(textwrap.dedent(SCENE))
    (tmp_path / "tasks").mkdir()

    def write(name: str, body: str, header: str = 'import "../scenes/yard.wa"\n') -> Path:
        p = tmp_path / "tasks" / name
        p.write_text(header + textwrap.dedent(body))
        return p

    write.root = tmp_path
    return write


@pytest.fixture(scope="session")
def shipped_build(tmp_path_factory):
    """The shipped tasks and the taxonomy's demonstration tasks, compiled once per test session,
    strictly (a warning fails the corpus test): (the compiler's result, the build directory).
    Tests read it; a test that edits a bundle copies it first.  Under pytest-xdist (`make test`
    runs two workers) the workers share one build directory: builds into one directory take turns,
    and the second worker finds every bundle up to date (`compile_project` is incremental)."""
    from wac.compiler.pipeline import compile_project

    if os.environ.get("PYTEST_XDIST_WORKER"):
        out = tmp_path_factory.getbasetemp().parent / "shipped" / "build"
        out.parent.mkdir(parents=True, exist_ok=True)
    else:
        out = tmp_path_factory.mktemp("shipped") / "build"
    sources = [ROOT / "tasks_src", ROOT / "taxonomy" / "examples"]
    res = compile_project(sources, ROOT, out=out, jobs=min(2, os.cpu_count() or 1), strict=True)
    return res, out


@pytest.fixture(scope="session")
def built(shipped_build) -> Path:
    """The shipped tasks and the taxonomy's demonstration tasks, compiled once per session."""
    res, out = shipped_build
    assert res.ok, [d.message for d in res.diagnostics]
    return out


@pytest.fixture(scope="session", autouse=True)
def _example_cache(tmp_path_factory):
    """Rendered in-context examples go to a private cache, never to the user's ~/.cache (every test)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("WAC_CACHE_DIR", str(tmp_path_factory.mktemp("wac_cache")))
    yield
    mp.undo()
