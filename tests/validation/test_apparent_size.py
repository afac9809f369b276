"""The apparent-size judge's view of a silhouette, on synthetic images (no simulator): a width is
only a size when no nearer object cuts an end of it off."""

from __future__ import annotations

import numpy as np
import pytest

from wac.validation.capture import Sample
from wac.validation.judges_view import _shape

TARGET, OTHER, GROUND = 5, 7, -1


def view(left_id: int, left_depth: float, with_depth: bool = True) -> Sample:
    """A 40x60 view: the target (depth 5 m) in columns 20-39, something else right of column 20."""
    ids = np.zeros((40, 60), dtype=np.int32)
    depth = np.full((40, 60), np.inf)
    ids[10:30, 20:40], depth[10:30, 20:40] = TARGET, 5.0
    ids[5:35, 10:20], depth[5:35, 10:20] = left_id, left_depth
    return Sample(
        0,
        "mark",
        1,
        "",
        0.0,
        (0.0, 0.0, 0.0, 0.0, 0.0),
        np.zeros((40, 60, 3), dtype=np.uint8),
        ids,
        depth if with_depth else None,
        {"t": TARGET, "o": OTHER},
    )


@pytest.mark.parametrize(
    ("left_id", "left_depth", "cut"),
    [
        (OTHER, 3.0, True),  # a door frame in front of the left end: the width is the frame's edge
        (OTHER, 8.0, False),  # a wall behind it: the end is the object's own
        (GROUND, 3.0, False),  # the floor meets a table's leg; it hides nothing
        (OTHER, 4.95, False),  # touching at the same depth (a chair against it) within the margin
    ],
)
def test_an_end_is_cut_short_only_by_a_nearer_object(left_id, left_depth, cut):
    shape = _shape(view(left_id, left_depth), "t")
    assert shape is not None and shape.width == 20  # in pixels
    assert shape.end_hidden is cut


def test_without_depth_no_end_counts_as_cut():
    assert _shape(view(OTHER, 3.0, with_depth=False), "t").end_hidden is False
