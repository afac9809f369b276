"""Shared helpers for the runtime tests (small frames keep them fast)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

pytest.importorskip("pybullet")
pytest.importorskip("vtk")


@pytest.fixture
def make_env():
    from wac.runtime.env import WorldEnv

    envs = []

    def make(task, variant="perturbed", **kw):
        kw.setdefault("width", 160)
        kw.setdefault("height", 120)
        kw.setdefault("film_interval_s", None)
        env = WorldEnv(task, variant=variant, **kw)
        envs.append(env)
        return env

    yield make
    for e in envs:
        e.close()
