"""Each light's kind (positional, spot) written into the lit shaders as constants
(`render_lights.light_kind_replacements`, issue 28): llvmpipe no longer runs the branches a light
never takes, and frames stay byte-identical to VTK's own shaders'."""

from __future__ import annotations

import numpy as np
import pytest
from rt_scenes import box, chair, lamp, task, wall

from wac.runtime import render_shadows
from wac.runtime.render_lights import light_kind_replacements

ACTIONS = ("turn 30", "move 1", "turn -60")


def _street():
    """Sun and two lamps lit as point lights (lamps are lit at half intensity by day)."""
    return task(
        [
            wall("wall_1", (4.0, 0.0, 0.0)),
            chair("chair_1", (2.5, 1.0, 0.0)),
            box("crate", (0.6, 0.6, 0.6), (2.0, -1.0, 0.0)),
            lamp("lamp_1", (2.0, -1.5, 0.0)),
            lamp("lamp_2", (3.0, 2.0, 0.0)),
        ]
    )


def _room():
    """No sun: the lamps are downward spots, with shadow maps when shadows are drawn."""
    t = _street()
    return t.model_copy(update={"scene": t.scene.model_copy(update={"sun": None})})


def _frames(make_env, t, shadows: bool) -> list[np.ndarray]:
    env = make_env(t, shadows=shadows)
    frames = [env.view()] + [env.step(a).frame for a in ACTIONS[:2]]
    env.world.get("lamp_2").lit = False  # a light fewer: every shader's lights are numbered anew
    frames.append(env.step(ACTIONS[2]).frame)
    env.close()
    return frames


@pytest.mark.parametrize(
    ("scene", "shadows"), [(_street, False), (_street, True), (_room, False), (_room, True)]
)
def test_frames_with_light_kinds_equal_vtks_own_shaders(make_env, monkeypatch, scene, shadows):
    """Point lamps beside the sun, spot lamps alone, with and without shadow maps, and a lamp
    switched off on the way: every frame equals the one VTK's unmodified light code draws."""
    got = _frames(make_env, scene(), shadows)
    monkeypatch.setattr(render_shadows, "light_kind_replacements", lambda kinds: [])
    want = _frames(make_env, scene(), shadows)
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    assert not np.array_equal(got[0], got[-1])


def test_the_light_code_the_kinds_replace_is_the_code_vtk_writes(make_env, monkeypatch):
    """A VTK whose light code no longer reads as expected would leave the replacements unused
    (frames right, the saving gone): a compile error planted on each anchor shows that VTK writes
    them, and that the kinds take them out first."""
    vtk = pytest.importorskip("vtk")
    kinds = ((False, False), (True, False))  # the sun, then a point lamp

    anchors = [old for old, _ in light_kind_replacements(kinds)]
    assert len(anchors) == 4

    def errors(with_kinds: bool) -> str:
        plant = [(old, f"#error wac-anchor-{i}\n") for i, old in enumerate(anchors)]

        def reps(k):
            return (light_kind_replacements(k) if with_kinds else []) + plant

        monkeypatch.setattr(render_shadows, "light_kind_replacements", reps)
        log = vtk.vtkStringOutputWindow()
        previous = vtk.vtkOutputWindow.GetInstance()
        vtk.vtkOutputWindow.SetInstance(log)
        try:
            env = make_env(task([lamp("lamp_1", (2.0, 0.0, 0.0))]), shadows=False)
            assert env.renderer._kinds[id(env.renderer.ren)] == kinds
            env.view()
            env.close()
        finally:
            vtk.vtkOutputWindow.SetInstance(previous)
        return log.GetOutput()

    plain = errors(with_kinds=False)
    assert all(f"wac-anchor-{i}" in plain for i in range(len(anchors)))
    assert "wac-anchor" not in errors(with_kinds=True)
