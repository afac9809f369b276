"""Shared fixtures for the auditor tests: built bundles (once per session) and the fake endpoint."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

pytest.importorskip("pybullet")
pytest.importorskip("vtk")

ROOT = Path(__file__).resolve().parents[2]
