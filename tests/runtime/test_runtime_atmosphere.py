"""Fog and tint: far things fade into the fog colour, near ones keep theirs; a tint shifts every pixel."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from rt_scenes import box, task

from wac.bundle.model import Fog, Tint
from wac.runtime.atmosphere import fogged, tinted


def _with(t, **update):
    return t.model_copy(update={"scene": t.scene.model_copy(update=update)})


def _centre(f: np.ndarray) -> np.ndarray:
    h, w = f.shape[0] // 2, f.shape[1] // 2
    return f[h - 3 : h + 3, w - 3 : w + 3].reshape(-1, 3).astype(float).mean(axis=0)


FOG = (0.1, 0.3, 0.45)


def test_fog_hides_far_objects_and_spares_near_ones(make_env):
    near = task([box("crate", (1.0, 4.0, 3.0), (3.0, 0.0, 0.0))])
    far = task([box("crate", (1.0, 4.0, 3.0), (18.0, 0.0, 0.0))])
    fog = Fog(color=FOG, start_m=2.0, end_m=12.0)
    target = np.array(FOG) * 255
    near_clear = _centre(make_env(near).observe().frame)
    near_fog = _centre(make_env(_with(near, fog=fog)).observe().frame)
    far_fog = make_env(_with(far, fog=fog)).observe().frame
    assert np.abs(_centre(far_fog) - target).max() < 3  # 17.5 m away: beyond the fog's end
    assert np.abs(far_fog[2, 80].astype(float) - target).max() < 3  # the sky is all fog
    assert np.abs(near_fog - target).sum() < np.abs(near_clear - target).sum()  # partly fogged
    assert np.abs(near_fog - target).max() > 20  # but still far from the fog colour


def test_tint_and_fog_render_deterministically(make_env):
    t = _with(
        task([box("crate", (1.0, 1.0, 2.0), (6.0, 0.0, 0.0))]),
        fog=Fog(density=0.08),
        tint=Tint(color=(0.1, 0.4, 0.6), strength=0.35),
    )
    a = make_env(t).observe().frame
    b = make_env(t).observe().frame
    assert np.array_equal(a, b)


@given(
    st.integers(0, 255),
    st.floats(0.0, 500.0),
    st.floats(0.0, 50.0),
    st.floats(0.1, 50.0),
)
def test_linear_fog_moves_pixels_monotonically_towards_the_fog_colour(value, depth, start, span):
    img = np.full((1, 2, 3), value, dtype=np.uint8)
    d = np.array([[depth, depth + 1.0]], dtype=np.float32)
    fog = Fog(color=(1.0, 1.0, 1.0), start_m=start, end_m=start + span)
    out = fogged(img, d, fog, np.array(fog.color)).astype(int)
    assert value <= out[0, 0, 0] <= out[0, 1, 0] <= 255  # farther is never less fogged
    if depth >= start + span:
        assert out[0, 0, 0] == 255
    if depth <= start:
        assert out[0, 0, 0] == value


@given(st.integers(0, 255), st.floats(0.0, 1.0))
def test_tint_mixes_towards_its_colour(value, strength):
    img = np.full((1, 1, 3), value, dtype=np.uint8)
    out = tinted(img, Tint(color=(0.0, 0.0, 0.0), strength=strength)).astype(int)
    assert abs(out[0, 0, 0] - value * (1 - strength)) <= 0.5 + 1e-9
