"""Ceilings with the real renderer: looking up inside a room shows the ceiling, not the sky; the
ceiling shades the room from the sun as a roof does; the overview shots cut it away and look
into the room."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

SCENE = """
scene yard {
    description "A yard with a roofed shed and a walled pen open to the sky."
    type urban
    era modern
    ground grass size (40, 40)
    sun azimuth 200 deg elevation 70 deg intensity 1.0
    bounds from (-15, -15) to (15, 15)
    start at (-10, -10) yaw 90 deg
    shed: room from (-6, -3) to (0, 3) height 2.6 m material plaster ceiling_material plastic ceiling_color "#c03030" {
        opening s width 1.2 m height 2.2 m
    }
    pen: room from (2, -3) to (8, 3) height 2.6 m material plaster {
        opening s width 1.2 m height 2.2 m
    }
    mat_1: box size (2, 2, 0.02) at (-3, 0) material plastic color "#f0f0f0" solid no name "mat"
    mat_2: box size (2, 2, 0.02) at (5, 0) material plastic color "#f0f0f0" solid no name "mat"
    crate_1: crate at (-10, 8)
}

task roofed on yard {
    anomaly float crate_1 by 0.4 m
}
"""


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    from wac.bundle.model import CompiledTask
    from wac.compiler.pipeline import compile_project

    root = tmp_path_factory.mktemp("ceilings")
    (root / "tasks").mkdir()
    (root / "tasks" / "yard.wa").write_text(textwrap.dedent(SCENE))
    res = compile_project([root / "tasks"], root)
    assert res.ok, [d.render() for d in res.diagnostics]
    return CompiledTask.model_validate_json(res.tasks["roofed"]["task.json"])


def _centre(img: np.ndarray) -> np.ndarray:
    h, w = img.shape[0] // 2, img.shape[1] // 2
    return img[h - 3 : h + 3, w - 3 : w + 3].reshape(-1, img.shape[-1] if img.ndim == 3 else 1).mean(axis=0)


def test_looking_up_indoors_shows_the_ceiling_not_the_sky(make_env, task):
    from wac.runtime.render import Camera

    env = make_env(task, variant="clean")
    up_in_shed = Camera((-3.0, -1.0, 1.6), 90.0, -60.0, 60.0)  # pitch negative: looking up
    ids = env.renderer.render_ids(up_in_shed)
    assert (ids == env.object_index("shed_ceiling")).mean() > 0.9
    r, g, b = _centre(env.renderer.render(up_in_shed))
    assert r > g + 30 and r > b + 30  # the ceiling's red, lit from the room
    up_in_pen = Camera((5.0, -1.0, 1.6), 90.0, -60.0, 60.0)
    assert (env.renderer.render_ids(up_in_pen) == 0).mean() > 0.9  # the pen is open: sky


def test_the_ceiling_shades_the_room_from_the_sun(make_env, task):
    from wac.runtime.render import look_at

    env = make_env(task, variant="clean")
    shaded = _centre(env.renderer.render(look_at((-3.0, -2.2, 1.6), (-3.0, 0.0, 0.0), 40.0))).mean()
    sunlit = _centre(env.renderer.render(look_at((5.0, -2.2, 1.6), (5.0, 0.0, 0.0), 40.0))).mean()
    assert shaded < 0.7 * sunlit  # the mat under the roof against its twin in the open pen


def test_the_overview_cuts_the_ceiling_away_and_sees_the_floor(make_env, task):
    import dataclasses

    from wac.runtime.compose import overview_cameras

    env = make_env(task, variant="clean")
    cams = overview_cameras(env)
    assert all(c.cutaway for c in cams)
    ceiling, mat = env.object_index("shed_ceiling"), env.object_index("mat_1")
    over = env.renderer.render_ids(cams[0])
    assert (over == mat).sum() > 20 and not (over == ceiling).any()
    shut = env.renderer.render_ids(dataclasses.replace(cams[0], cutaway=False))  # the same view, roofed
    assert (shut == ceiling).sum() > 20 and not (shut == mat).any()
    # a camera that does not cut away, as the agent's, draws it again after an overview
    up = dataclasses.replace(cams[0], eye=(-3.0, -1.0, 1.6), yaw_deg=90.0, pitch_deg=-60.0, cutaway=False)
    assert (env.renderer.render_ids(up) == ceiling).mean() > 0.9
