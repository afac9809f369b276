"""The build's shortcuts give the bytes and paths the plain definitions give.

A build reuses a scene's serialised object list across its tasks, validates a material table
once, and tests a path's straight-line shortcuts many at a time; each must be invisible in the
bundles (the golden bundles and byte-identical rebuilds rely on it).
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wac.bundle.model import AGENT_STEP_M
from wac.compiler import emit, plan
from wac.compiler.validate import Grid


def _doc(objects, name="crate_1"):
    return {
        "id": "t",
        "scene": {"name": "yard", "objects": objects, "materials": {"wood": {"colour": [1, 0, 0]}}},
        "meta": {"hint": name},
    }


def test_a_shared_object_list_is_serialised_once_and_spliced_byte_for_byte():
    objects = [{"id": "crate_1", "position": [1.5, -2.0, 0.0]}, {"id": "sack_2", "tags": ["ü", "\n"]}]
    seen: dict = {}
    first = emit._task_bytes(_doc(objects), seen)
    assert first == emit.canonical_json(_doc(objects))
    assert list(seen) == [tuple(map(id, objects))]
    second = emit._task_bytes(_doc(objects, name="sack_2"), seen)
    assert second == emit.canonical_json(_doc(objects, name="sack_2"))
    assert len(seen) == 1  # the second task reused the list


def test_a_task_string_that_spells_the_stand_in_gets_the_plain_serialisation():
    objects = [{"id": "crate_1"}]
    doc = _doc(objects, name=emit._OBJECTS)
    assert emit._task_bytes(doc, {}) == emit.canonical_json(doc)


def _clear_line(grid, a, b) -> bool:
    """The definition: the segment's samples every half cell all on reachable cells, no rise
    between two of them over a step."""
    n = max(2, int(math.dist(a, b) / (grid.cell / 2)))
    k = np.arange(n + 1, dtype=float)
    i, j = grid.cells_of(a[0] + (b[0] - a[0]) * k / n, a[1] + (b[1] - a[1]) * k / n)
    h, w = grid.reach.shape
    if not ((i >= 0) & (i < h) & (j >= 0) & (j < w)).all() or not grid.reach[i, j].all():
        return False
    if grid.height is not None:
        return not (np.abs(np.diff(grid.height[i, j].astype(float))) > AGENT_STEP_M + 1e-9).any()
    return True


def _straighten_one_at_a_time(grid, pts):
    """The definition: from each corner, the farthest later point in a clear line, else the next."""
    out, i = [pts[0]], 0
    while i < len(pts) - 1:
        j = len(pts) - 1
        while j > i + 1 and not _clear_line(grid, pts[i], pts[j]):
            j -= 1
        out.append(pts[j])
        i = j
    return out


@st.composite
def grids_and_paths(draw):
    h, w = draw(st.integers(3, 14)), draw(st.integers(3, 14))
    cells = draw(st.lists(st.sampled_from([True] * 6 + [False]), min_size=h * w, max_size=h * w))
    reach = np.array(cells, dtype=bool).reshape(h, w)
    height = None
    ground = draw(st.sampled_from(["flat", "steps", "ramp"]))
    if ground == "steps":  # uneven ground: steps of 0-0.4 m between cells
        rises = draw(st.lists(st.sampled_from([0.0, 0.1, 0.2, 0.4]), min_size=h * w, max_size=h * w))
        height = np.array(rises).reshape(h, w)
    elif ground == "ramp":  # a slope climbable cell by cell, not in one step end to end
        height = np.add.outer(np.zeros(h), np.arange(w) * 0.15)
    cell = draw(st.sampled_from([0.1, 0.25, 0.5]))
    grid = Grid(-1.0, 2.0, cell, reach, reach, (0, 0), np.zeros_like(reach), height)
    point = st.tuples(
        st.floats(-1.5, -1.0 + w * cell + 0.5, allow_nan=False),
        st.floats(1.5, 2.0 + h * cell + 0.5, allow_nan=False),
    )
    return grid, draw(st.lists(point, min_size=2, max_size=45))


@settings(max_examples=200, deadline=None)
@given(grids_and_paths(), st.sampled_from([1, 3, 32]))
def test_straightening_in_blocks_keeps_the_corners_of_the_one_at_a_time_definition(case, block):
    grid, pts = case
    assert plan._straighten(grid, pts, block) == _straighten_one_at_a_time(grid, pts)


def test_a_material_table_validated_once_is_not_validated_again(tmp_path, monkeypatch):
    from wac.compiler.pipeline import compile_project

    root = Path(__file__).resolve().parents[2]
    assert compile_project(
        [root / "taxonomy" / "examples" / "missing_support.wa"], root, out=tmp_path / "b"
    ).ok
    task = json.loads((tmp_path / "b" / "missing_support_demo" / "task.json").read_bytes())
    assert task["scene"]["materials"]
    monkeypatch.setattr(emit, "_VALID_PARTS", set())  # as in a fresh build process
    seen = []
    real = emit._validate_part
    monkeypatch.setattr(emit, "_validate_part", lambda v, item: (seen.append(item), real(v, item))[1])
    materials = lambda: [m for m in seen if m in task["scene"]["materials"].values()]  # noqa: E731
    emit.validate_task(copy.deepcopy(task))
    assert len(materials()) == len(task["scene"]["materials"])
    seen.clear()
    emit.validate_task(copy.deepcopy(task))  # another task of the scene: the same table
    assert materials() == []
    bad = copy.deepcopy(task)
    next(iter(bad["scene"]["materials"].values()))["color"] = "red"
    with pytest.raises(jsonschema.ValidationError):
        emit.validate_task(bad)  # a table that differs is validated again
