"""Room ceilings: a `cutaway` slab on the walls' tops, by default in indoor scenes; ceilings of rooms
side by side meet over their shared wall and stop short of a taller one; anything that reaches
above the walls meets the ceiling; the same sources give the same bytes."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wac.compiler.pipeline import compile_project


def source(body: str, kind: str = "indoor", task: str = "    anomaly float crate_1 by 0.4 m\n") -> str:
    return f"""
scene flat {{
    description "A flat."
    type {kind}
    era modern
    ground wood size (40, 40)
    bounds from (-15, -15) to (15, 15)
    start at (-12, -12) yaw 90 deg
    crate_1: crate at (-12, 10)
{body}
}}

task t on flat {{
{task}}}
"""


def build(project, text: str, name: str = "c.wa"):
    project(name, text, header="")
    result = compile_project([project.root / "tasks"], project.root)
    (project.root / "tasks" / name).unlink()
    return result


def objects(result) -> dict[str, dict]:
    assert result.ok, "\n\n".join(d.render() for d in result.diagnostics)
    return {o["id"]: o for o in json.loads(result.tasks["t"]["task.json"])["scene"]["objects"]}


def ceilings(objs: dict) -> dict[str, dict]:
    return {k: o for k, o in objs.items() if "_ceiling" in k}


TWO_ROOMS = """
    lounge: room from (-6, -4) to (1, 4) height 2.6 m material plaster color "#e8e0cc" {
        door e at 2 m
        window w
    }
    study: room from (1, -4) to (6, 4) height 2.6 m material plaster
"""


def test_rooms_indoors_get_ceilings_resting_on_their_walls(project):
    objs = objects(build(project, source(TWO_ROOMS)))
    assert set(ceilings(objs)) == {"lounge_ceiling", "study_ceiling"}
    lounge, study = objs["lounge_ceiling"], objs["study_ceiling"]
    wall = objs["lounge_wall_n"]
    # on the walls' tops, over the floor plan to the middle of each wall: the two meet at x = 1
    assert lounge["aabb_min"] == pytest.approx([-6.0, -4.0, wall["aabb_max"][2]])
    assert lounge["aabb_max"] == pytest.approx([1.0, 4.0, 2.75])
    assert study["aabb_min"] == pytest.approx([1.0, -4.0, 2.6]) and study["aabb_max"][:2] == [6.0, 4.0]
    assert lounge["name"] == "ceiling" and lounge["kind"] == "structure" and lounge["cutaway"] is True
    assert lounge.get("solid", True) and not lounge.get("dynamic", False)  # (defaults are not written)
    assert lounge["parts"][0]["material"] == wall["parts"][0]["material"]  # the walls' material and tint
    assert "cutaway" not in wall  # written only where true: other objects serialise as before


@pytest.mark.parametrize(
    ("kind", "clauses", "material"),
    [
        ("indoor", "", "plaster"),  # indoors: a ceiling by default
        ("indoor", " ceiling no", None),
        ("historical", "", None),  # elsewhere: open to the sky by default
        ("historical", " ceiling yes", "plaster"),
        ("urban", " ceiling_material wood", "wood"),  # a ceiling of its own material gives one
        ("urban", ' ceiling_color "#ffffff"', "plaster#ffffff"),
        ("indoor", " ceiling yes ceiling_material concrete", "concrete"),
    ],
)
def test_who_gets_a_ceiling_and_of_what(project, kind, clauses, material):
    room = f"    hut: room from (-3, -3) to (3, 3) material plaster{clauses} {{ door s }}\n"
    objs = objects(build(project, source(room, kind)))
    if material is None:
        assert not ceilings(objs)
    else:
        assert objs["hut_ceiling"]["parts"][0]["material"] == material
        assert objs["hut_ceiling"]["aabb_min"][2] == pytest.approx(2.6)  # the default wall height


def test_a_ceiling_stops_short_of_a_taller_shared_wall(project):
    rooms = """
    hall: room from (-6, -4) to (0, 4) height 3.2 m thickness 0.3 m
    alcove: room from (0, -2) to (3, 2) height 2.4 m { opening w width 1.5 m height 2 m }
"""
    objs = objects(build(project, source(rooms)))  # and the clean-scene checks pass: nothing cuts in
    assert objs["hall_ceiling"]["aabb_max"][0] == pytest.approx(0.0)
    assert objs["alcove_ceiling"]["aabb_min"][:3] == pytest.approx([0.15, -2.0, 2.4])  # the wall's face


def test_a_polygon_ceiling_is_cut_into_rectangles_covering_the_floor_plan(project):
    room = "    ell: room polygon [(-7, 5), (0, 5), (0, 6), (-3, 6), (-3, 9), (-7, 9)] height 2.4 m\n"
    objs = objects(build(project, source(room)))
    got = ceilings(objs)
    assert list(got) == ["ell_ceiling_1", "ell_ceiling_2"]  # from the south end
    area = sum(
        (o["aabb_max"][0] - o["aabb_min"][0]) * (o["aabb_max"][1] - o["aabb_min"][1]) for o in got.values()
    )
    assert area == pytest.approx(7 * 1 + 4 * 3)


def test_what_reaches_above_the_walls_meets_the_ceiling(project):
    tall = "    hut: room from (-3, -3) to (3, 3) height 2.4 m { door s }\n    post_1: lamp_post at (0, 0)\n"
    result = build(project, source(tall))
    assert "E502" in [d.code for d in result.diagnostics]
    assert "hut_ceiling" in "\n".join(d.render() for d in result.diagnostics)
    # a ceiling fan hangs from it: mount and downrod under the ceiling's underside
    fan = "    hut: room from (-3, -3) to (3, 3) height 2.8 m { door s }\n    fan_1: ceiling_fan at (0, 0, 2.26)\n"
    objs = objects(build(project, source(fan)))
    assert objs["fan_1"]["aabb_max"][2] == pytest.approx(objs["hut_ceiling"]["aabb_min"][2])


def test_a_scatter_goes_under_a_ceiling(project):
    body = (
        "    hut: room from (-8, -8) to (8, 8) height 2.6 m { door s }\n"
        "    stools: scatter 6 stool from (-7, -7) to (7, 7) seed 2 min_gap 0.5 m\n"
    )
    objs = objects(build(project, source(body)))
    assert all(-8 < objs[f"stools_{k}"]["position"][0] < 8 for k in range(1, 7))


def test_ceiling_no_with_a_ceiling_material_is_e468(project):
    room = "    hut: room from (-3, -3) to (3, 3) ceiling no ceiling_material wood\n"
    result = build(project, source(room))
    assert [d.code for d in result.diagnostics] == ["E468"]


def test_same_sources_same_bytes(project):
    a = build(project, source(TWO_ROOMS)).tasks["t"]["task.json"]
    b = build(project, source(TWO_ROOMS)).tasks["t"]["task.json"]
    assert a == b


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.integers(3, 6), min_size=1, max_size=3),
    st.lists(st.integers(3, 5), min_size=1, max_size=3),
    st.lists(
        st.sampled_from([(2.4, 0.15), (2.8, 0.2), (3.2, 0.3), (2.6, 0.1), None]), min_size=9, max_size=9
    ),
)
def test_any_block_of_rooms_with_ceilings_builds_clean(project, widths, depths, rooms):
    """Rooms of mixed heights and wall thicknesses tiled in a grid, every one with a ceiling: the
    ceilings meet or stop short of taller walls, rest on walls, and cut into nothing."""
    xs = list(itertools.accumulate([-10] + widths))
    ys = list(itertools.accumulate([-8] + depths))
    body = ""
    for (i, j), r in zip(itertools.product(range(len(widths)), range(len(depths))), rooms, strict=False):
        if r is not None:
            body += f"    r{i}{j}: room from ({xs[i]}, {ys[j]}) to ({xs[i + 1]}, {ys[j + 1]}) height {r[0]} m"
            body += f" thickness {r[1]} m\n"
    objs = objects(build(project, source(body), "grid.wa"))
    assert len(ceilings(objs)) == sum(r is not None for r in rooms[: len(widths) * len(depths)])


def test_on_hills_the_ceiling_rests_on_the_highest_wall_and_cuts_into_none(project):
    text = source(
        "    hut: room from (-3, -3) to (3, 3) height 2.6 m ceiling yes { opening s width 1.5 m }\n",
        "natural",
    ).replace(
        "ground wood size (40, 40)", "ground grass size (40, 40) terrain heightfield amplitude 0.4 m seed 3"
    )
    objs = objects(build(project, text))  # the clean-scene checks pass
    walls = [o for k, o in objs.items() if k.startswith("hut_wall")]
    assert objs["hut_ceiling"]["aabb_min"][2] == pytest.approx(max(o["aabb_max"][2] for o in walls))


def test_a_light_above_the_ceiling_is_e469(project):
    room = "    hut: room from (-3, -3) to (3, 3) height 2.6 m { door s }\n"
    above = room + "    light hut_light at (0, 0, 2.7)\n"
    result = build(project, source(above))
    assert [d.code for d in result.diagnostics] == ["E469"]
    objects(build(project, source(room + "    light hut_light at (0, 0, 2.5)\n")))  # under it: fine
    objects(build(project, source(above, "urban")))  # a room open to the sky: the light is outdoors
