"""The pixel rule (`wac.validation.visual`): what counts as a visible change between two frames.

Synthetic frames stand in for renders: a grey background and coloured rectangles, with their
segmentation.  The rule must see a thin object that moved or vanished, and must not see a
shift of one pixel, a colour change below its contrast floor, or a frame compared with itself.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from wac.validation.capture import Sample
from wac.validation.pixels import pixel_counts
from wac.validation.visual import CHANGE_DE, CHANGE_PX, change, same_view, target_px

W, H = 320, 240
BG = (128, 128, 128)


def frame(rects: list[tuple[int, int, int, int, tuple[int, int, int]]]) -> Sample:
    """A sample with rectangles (row0, col0, height, width, rgb), object index 1 for all of them."""
    rgb = np.zeros((H, W, 3), dtype=np.uint8)
    rgb[:] = BG
    ids = np.zeros((H, W), dtype=np.int32)
    for r, c, h, w, col in rects:
        rgb[r : r + h, c : c + w] = col
        ids[r : r + h, c : c + w] = 1
    return Sample(0, "mark", 0, "view", 0.0, (0.0, 0.0, 0.0, 90.0, 0.0), rgb, ids, None, {"t": 1})


RED = (200, 30, 30)


def test_a_frame_compared_with_itself_shows_no_change():
    a = frame([(100, 100, 40, 30, RED)])
    assert change(a, a, ("t",)).core == 0


def test_a_one_pixel_shift_is_an_outline_not_a_change():
    a = frame([(100, 100, 60, 60, RED)])
    b = frame([(101, 101, 60, 60, RED)])
    ch = change(a, b, ("t",))
    assert ch.changed > 0  # the edges did change colour ...
    assert not ch.visible  # ... but a shift of one pixel explains them


def test_a_thin_pole_that_moved_counts_with_all_its_pixels():
    a = frame([(40, 100, 160, 3, RED)])  # 3 px wide (6 at 640x480), 160 tall
    b = frame([(40, 180, 160, 3, RED)])
    ch = change(a, b, ("t",))
    assert ch.visible
    assert ch.core >= 0.9 * 2 * 3 * 160 * 4  # both places, counted at 640x480


def test_a_vanished_object_counts_by_its_old_pixels():
    a = frame([(100, 100, 20, 20, RED)])
    b = frame([])
    ch = change(a, b, ("t",))
    assert ch.region == 20 * 20 * 4
    assert ch.visible


def test_a_colour_change_below_the_contrast_floor_is_invisible():
    a = frame([(80, 80, 80, 80, (120, 60, 40))])
    b = frame([(80, 80, 80, 80, (123, 61, 41))])
    assert change(a, b, ("t",)).core == 0


def test_an_object_too_small_to_matter_is_invisible_even_if_it_changes_completely():
    side = int(np.sqrt(CHANGE_PX / 4)) - 2  # fewer px than the floor, at 640x480
    a = frame([(100, 100, side, side, RED)])
    b = frame([(100, 100, side, side, (30, 30, 200))])
    assert not change(a, b, ("t",)).visible


def test_samples_from_different_viewpoints_are_not_compared():
    a = frame([])
    b = frame([])
    moved = Sample(0, "mark", 0, "", 0.0, (0.5, 0.0, 0.0, 90.0, 0.0), b.frame, b.ids, None, b.index_of)
    assert same_view(a, b)
    assert not same_view(a, moved)


def test_pixel_counts_scale_to_640x480():
    a = frame([(0, 0, 10, 10, RED)])
    counts = pixel_counts(a.ids, {"t": 1, "gone": 7})
    assert target_px(counts, ("t", "gone")) == 400.0


rects = st.lists(
    st.tuples(
        st.integers(0, H - 2),
        st.integers(0, W - 2),
        st.integers(1, 60),
        st.integers(1, 60),
        st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255)),
    ),
    max_size=3,
)


@settings(max_examples=40, deadline=None)
@given(rects, rects)
def test_the_rule_is_symmetric_and_counts_only_region_pixels_that_changed(ra, rb):
    a, b = frame(ra), frame(rb)
    ab, ba = change(a, b, ("t",)), change(b, a, ("t",))
    assert ab.core == ba.core and ab.changed == ba.changed
    assert 0 <= ab.core <= ab.changed <= ab.region
    if ab.changed:
        assert ab.de >= CHANGE_DE
