"""E538: an anomaly whose change is a symmetry of its target (a square crate turned by 90°, a cross
of fan blades jumping by 90°, a plain wheel frozen, a symmetric sign mirrored) is refused at compile
time; a change that alters the look, or one the check cannot be sure of, builds."""

from __future__ import annotations

import textwrap

import pytest

from wac.compiler.pipeline import compile_project

SCENE = """
prefab wheel_stand {
    name "wheel"
    kind structure
    material metal
    post: box size (0.1, 0.1, 1.0) at (0, 0, 0)
    wheel: cylinder radius 0.4 height 0.05 at (0.05, 0, 0.8) pitch 90 deg spin 60 deg/s spin_axis z
}

scene shop {
    description "A small yard with a fan, a wheel, a post, a crate, a wall, a sign and a ramp block."
    type industrial
    era modern
    ground concrete size (30, 30)
    bounds from (-8, -8) to (8, 8)
    start at (0, -6) yaw 90 deg
    fan_1: industrial_fan at (2, 0) yaw 180 deg
    wheel_1: wheel_stand at (-2, 0)
    post_1: cylinder radius 0.08 height 3 at (4, -2) material metal { name "lamp post" }
    crate_1: box size (0.6, 0.6, 0.6) at (-3, 3) material wood { name "crate" }
    wall_1: box size (2, 0.3, 1.5) at (3, 4) material brick { name "low wall" }
    sign_1: box size (0.1, 0.8, 0.5) at (-4, -2) material painted_metal { name "sign" }
    block_1: wedge size (0.8, 0.3, 0.4) at (-4, 2) material painted_metal { name "ramp block" }
    table_1: box size (1.2, 0.8, 0.75) at (0, 3) material painted_metal { name "table" }
    cup_1: cylinder radius 0.05 height 0.1 on table_1 material ceramic { name "cup" }
}
"""


@pytest.fixture
def shop(tmp_path):
    (tmp_path / "scenes").mkdir()
    (tmp_path / "scenes" / "shop.wa").write_text(textwrap.dedent(SCENE))
    (tmp_path / "tasks").mkdir()

    def build(anomaly: str):
        (tmp_path / "tasks" / "t.wa").write_text(
            f'import "../scenes/shop.wa"\ntask t on shop {{\n    anomaly {anomaly}\n}}\n'
        )
        return compile_project([tmp_path / "tasks"], tmp_path)

    return build


@pytest.mark.parametrize(
    ("anomaly", "says"),
    [
        ("rotate post_1 by 90 deg", "`post_1` looks exactly as it did"),  # round
        ("rotate crate_1 by 90 deg when revisit", "`crate_1` looks exactly as it did"),  # square, fine grain
        ("invert crate_1", "`crate_1` looks exactly as it did"),
        ("mirror sign_1", "`sign_1` looks exactly as it did"),
        ("jump_animation fan_1 by 90 deg", "the turning parts of `fan_1` look the same turned by 90 deg"),
        ("freeze_animation wheel_1", "the turning parts of `wheel_1` look the same at every angle"),
        ("speed_animation wheel_1", "the turning parts of `wheel_1` look the same at every angle"),
    ],
)
def test_a_change_that_is_a_symmetry_of_its_target_is_refused(shop, anomaly, says):
    result = shop(anomaly)
    (d,) = result.diagnostics
    assert d.code == "E538" and says in d.message and "no view can show it" in d.message
    assert d.span is not None and d.span.location.endswith(":3:5")
    assert d.hint


def test_the_advice_fits_the_change(shop):
    (jump,) = shop("jump_animation fan_1 by 90 deg").diagnostics
    assert "45 deg" in jump.hint
    (turn,) = shop("rotate post_1 by 90 deg").diagnostics
    assert "round bin" in turn.hint  # the operator's `if_invisible:` advice


@pytest.mark.parametrize(
    "anomaly",
    [
        "rotate crate_1 by 45 deg",  # a square turned by 45 deg shows its corners
        "jump_animation fan_1 by 45 deg",  # a cross of four blades by half its symmetry
        "freeze_animation fan_1",
        "mirror block_1",  # a ramp block mirrored rises the other way
        "rotate wall_1 by 180 deg",  # bricks: a bold pattern, left to the pixel rule
        "rotate table_1 by 180 deg",  # it carries a cup: left to the self-check
        "rotate sign_1 by 90 deg",
    ],
)
def test_a_change_that_alters_the_look_or_cannot_be_judged_builds(shop, anomaly):
    result = shop(anomaly)
    assert "E538" not in [d.code for d in result.diagnostics], [d.render() for d in result.diagnostics]
