"""The validation tests need the simulator (pybullet, VTK); they import `validation_helpers` from here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

pytest.importorskip("pybullet")
pytest.importorskip("vtk")
