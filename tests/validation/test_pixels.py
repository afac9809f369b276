"""The pixel tools of the differential observables, on synthetic data (no simulator): colour,
back-projection through the depth image, the sun-shadow test and where a misplaced shadow went."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wac.validation.pixels import Footprint, View, in_sun_shadow, lab, lightness, shadow_hulls

SUN_45_FROM_X = np.array([math.cos(math.radians(45)), 0.0, math.sin(math.radians(45))])  # sun to the +x


def cube(cx=0.0, cy=0.0, size=1.0) -> np.ndarray:
    """The corners of a cube standing on the ground."""
    h = size / 2
    return np.array([[cx + x, cy + y, z] for x in (-h, h) for y in (-h, h) for z in (0.0, size)])


def test_lab_of_white_black_and_grey():
    assert lab(np.array([255, 255, 255], dtype=np.uint8)) == pytest.approx([100.0, 0.0, 0.0], abs=0.1)
    assert lab(np.array([0, 0, 0], dtype=np.uint8)) == pytest.approx([0.0, 0.0, 0.0], abs=0.1)
    assert float(lightness(np.array([119, 119, 119], dtype=np.uint8))) == pytest.approx(50.0, abs=0.5)
    magenta = lab(np.array([255, 0, 255], dtype=np.uint8))
    assert magenta[1] > 80 and magenta[2] < -50  # strongly red-blue


def test_points_come_back_from_depth():
    """A camera 1.6 m up, looking 30 deg down at flat ground: every ground pixel comes back at z = 0."""
    cam = {"eye": [1.0, 2.0, 1.6], "yaw_deg": 90.0, "pitch_deg": 30.0, "hfov_deg": 90.0}
    v = View.of(cam, (240, 320))
    rows, cols = np.mgrid[0:240, 0:320]
    x = (cols + 0.5 - 160) / v.focal_px
    y = (120 - rows - 0.5) / v.focal_px
    rays = v.forward + x[..., None] * v.right + y[..., None] * v.up
    t = -1.6 / rays[..., 2]  # distance along each ray to z = 0, in units of the ray
    depth = np.where(t > 0, t, np.inf)  # eye-space depth: rays have unit length along `forward`
    ground = np.isfinite(depth)
    pts = v.points(ground, depth)
    assert np.abs(pts[:, 2]).max() < 1e-6
    assert (pts[:, 1] > 2.0).all()  # all in front of the camera, which looks along +y


def test_words_say_where_a_displacement_goes_for_the_viewer():
    v = View.of({"eye": [0, 0, 1.6], "yaw_deg": 90.0, "pitch_deg": 0.0, "hfov_deg": 90.0}, (240, 320))
    assert v.words((2.0, 0.0)) == "2.0 m to the right"
    assert v.words((-1.0, -0.5)) == "1.0 m to the left and 0.5 m nearer"
    assert v.words((0.0, 0.05)) == "in the same place"


def test_a_cube_shades_the_ground_on_the_side_away_from_the_sun():
    hulls = shadow_hulls(SUN_45_FROM_X, [cube()])
    pts = np.array(
        [
            [-1.0, 0.0, 0.0],  # in its shadow (which reaches x = -1.5)
            [-2.0, 0.0, 0.0],  # beyond its end
            [1.0, 0.0, 0.0],  # on the sunny side
            [-1.0, 0.8, 0.0],  # beside it
            [0.0, 0.0, 2.0],  # above it
        ]
    )
    assert in_sun_shadow(pts, SUN_45_FROM_X, hulls).tolist() == [True, False, False, False, False]
    assert in_sun_shadow(pts, SUN_45_FROM_X, hulls, margin_m=0.6).tolist()[:2] == [True, True]
    per_point = np.array([0.0, 0.6, 0.0, 0.0, 0.0])
    assert in_sun_shadow(pts, SUN_45_FROM_X, hulls, per_point).tolist()[:2] == [True, True]


def test_a_misplaced_shadow_is_found_even_when_half_of_it_is_out_of_view():
    hulls = shadow_hulls(SUN_45_FROM_X, [cube()])
    foot = Footprint.of(SUN_45_FROM_X, hulls, 0.0)
    assert foot is not None
    grid = np.stack(np.meshgrid(np.arange(-6, 6, 0.05), np.arange(-6, 6, 0.05)), axis=-1).reshape(-1, 2)
    ground = np.c_[grid, np.zeros(len(grid))]
    moved = in_sun_shadow(ground - [2.0, -1.0, 0.0], SUN_45_FROM_X, hulls)  # the shadow, moved by (2, -1)
    seen = grid[:, 1] < -1.2  # only the near half of the moved shadow is in view
    off = foot.offset(grid[moved & seen], grid[~moved & seen])
    assert off is not None
    assert off == pytest.approx([2.0, -1.0], abs=0.15)
    assert foot.offset(grid[:0], grid) is None  # nothing dark, nothing to find
