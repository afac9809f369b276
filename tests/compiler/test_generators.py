"""Generators: rows, grids, rings, seeded scatter and rooms expand into objects that tasks can name,
that pass the clean-scene checks, and that come out the same on every build."""

from __future__ import annotations

import itertools
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wac.compiler.pipeline import compile_project

HEAD = """
scene green {
    description "A village green."
    type historical
    era industrial
    ground grass size (80, 80)
    bounds from (-30, -30) to (30, 30)
    start at (0, -25) yaw 90 deg
"""


def source(body: str, anomaly: str = "anomaly float lamps_3 by 0.4 m", extra: str = "") -> str:
    return HEAD + body + "\n}\n" + f"task t on green {{\n{extra}\n    {anomaly}\n}}\n"


def build(project, text: str, name: str = "g.wa"):
    project(name, text, header="")
    return compile_project([project.root / "tasks"], project.root)


def objects(result, task: str = "t") -> dict[str, dict]:
    assert result.ok, "\n\n".join(d.render() for d in result.diagnostics)
    scene = json.loads(result.tasks[task]["task.json"])["scene"]
    return {o["id"]: o for o in scene["objects"]}


def yaw(o: dict) -> float:
    return (o.get("rotation_deg") or [0.0])[0]


def codes(result) -> list[str]:
    return [d.code for d in result.diagnostics]


LAMPS = "    lamps: row lamp_post from (3, -20) to (3, 20) every 8 m face across\n"


# -- rows, grids, rings ------------------------------------------------------------------------


def test_row_every_names_instances_in_order_and_a_task_can_target_one(project):
    objs = objects(build(project, source(LAMPS)))
    lamps = sorted((k for k in objs if k.startswith("lamps_")), key=lambda k: int(k.split("_")[1]))
    assert lamps == [f"lamps_{k}" for k in range(1, 7)]
    assert [objs[k]["position"][1] for k in lamps] == [-20, -12, -4, 4, 12, 20]
    assert all(objs[k]["position"][0] == 3 for k in lamps)
    assert all(yaw(objs[k]) == 180.0 for k in lamps)  # across a row running north: facing west


def test_row_count_spreads_from_end_to_end(project):
    text = source("    lamps: row lamp_post from (0, 10) to (9, 10) count 4\n")
    objs = objects(build(project, text))
    assert [objs[f"lamps_{k}"]["position"][0] for k in range(1, 5)] == [0, 3, 6, 9]


def test_grid_numbers_x_fastest(project):
    text = source(
        LAMPS + "    crates: grid crate at (-12, -20) count (3, 2) spacing (1.5 m, 2 m)\n",
        "anomaly float crates_5 by 0.3 m",
    )
    objs = objects(build(project, text))
    got = [tuple(objs[f"crates_{k}"]["position"][:2]) for k in range(1, 7)]
    assert got == [(-12, -20), (-10.5, -20), (-9, -20), (-12, -18), (-10.5, -18), (-9, -18)]
    assert "crates_7" not in objs


def test_ring_faces_its_centre(project):
    text = source(
        LAMPS + "    stones: ring boulder around (-15, 10) radius 5 m count 8 start 90 deg face in\n"
    )
    objs = objects(build(project, text))
    for k in range(1, 9):
        x, y = objs[f"stones_{k}"]["position"][:2]
        assert math.hypot(x + 15, y - 10) == pytest.approx(5, abs=1e-5)
        heading = math.degrees(math.atan2(10 - y, -15 - x))
        assert (yaw(objs[f"stones_{k}"]) - heading + 180) % 360 - 180 == pytest.approx(0, abs=0.01)
    assert objs["stones_1"]["position"][:2] == pytest.approx([-15, 15])


def test_passed_clauses_reach_every_instance(project):
    text = source("    lamps: row lamp_post from (0, 0) to (0, 16) every 8 m color red scale 1.2\n")
    objs = objects(build(project, text))
    assert all(objs[f"lamps_{k}"]["aabb_max"][2] == pytest.approx(3.9 * 1.2, abs=1e-3) for k in (1, 2, 3))


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("    row lamp_post from (0, 0) to (0, 9) every 3 m\n", "E116"),
        ("    lamps: row lamp_post from (0, 0) to (0, 9) every 3 m count 4\n", "E444"),
        ("    lamps: row lamp_post from (0, 0) to (0, 9)\n", "E444"),
        ("    lamps: row lamp_post from (0, 0) to (0, 9) every 3 m face inwards\n", "E441"),
        ("    lamps: row lamp_post to (0, 9) every 3 m\n", "E442"),
        ("    lamps: row lamp_post from (0, 0) to (0, 9) every 3 m at (1, 1)\n", "E440"),
        ("    lamps: row lamp_post from (0, 0) to (0, 0) every 3 m\n", "E445"),
        ("    lamps: grid lamp_post at (0, 0) count (2.5, 2) spacing (2, 2)\n", "E446"),
        ("    lamps: ring lamp_post around (0, 0) radius 5 m count 2000\n", "E208"),
        ("    lamps: row lamp_post from (0, 0) to (0, 100) every 0.05 m\n", "E443"),
        ("    lamps: row lamp_pots from (0, 0) to (0, 9) every 3 m\n", "E406"),
        ("    lamps: row lamp_post from (0, 0) to (0, 2) every 0.2 m\n", "E502"),
    ],
)
def test_generator_mistakes_get_coded_diagnostics(project, body, code):
    result = build(project, source(body))
    assert not result.ok
    assert code in codes(result), [d.render() for d in result.diagnostics]
    assert all(d.span is not None for d in result.diagnostics)


# -- scatter -------------------------------------------------------------------------------------

TREES = (
    "    trees: scatter 30 tree from (-28, -28) to (28, 28) seed 3 min_gap 1 m avoid [path_1] face random\n"
)
PATH = "    path_1: box size (4, 50, 0.02) at (0, 0) material stone solid no\n"


def test_scatter_keeps_its_gaps_and_avoids_paths(project):
    objs = objects(build(project, source(PATH + LAMPS + TREES)))
    trees = [objs[f"trees_{k}"] for k in range(1, 31)]
    assert "trees_31" not in objs
    for t in trees:
        lo, hi = t["aabb_min"], t["aabb_max"]
        assert -28 <= lo[0] and hi[0] <= 28 and -28 <= lo[1] and hi[1] <= 28
    for a, b in itertools.combinations(trees, 2):
        assert math.dist(a["position"][:2], b["position"][:2]) >= 2 * 1.4 + 1 - 1e-6
    for t in trees:  # clear of the path (|x| <= 2) by the gap
        assert abs(t["position"][0]) >= 2 + 1 + 1.0


def test_scatter_is_reproducible_and_independent_of_statement_order(project, tmp_path):
    a = objects(build(project, source(PATH + LAMPS + TREES), "a.wa"))
    (project.root / "tasks" / "a.wa").unlink()
    b = objects(build(project, source(TREES + LAMPS + "    well_1: well at (25, -25)\n" + PATH), "b.wa"))
    for k in range(1, 31):
        assert a[f"trees_{k}"]["position"] == b[f"trees_{k}"]["position"]


def test_a_different_seed_gives_a_different_layout(project):
    a = objects(build(project, source(PATH + LAMPS + TREES), "a.wa"))
    (project.root / "tasks" / "a.wa").unlink()
    b = objects(build(project, source(PATH + LAMPS + TREES.replace("seed 3", "seed 4")), "b.wa"))
    assert a["trees_1"]["position"] != b["trees_1"]["position"]


def test_scatter_that_cannot_fit_says_so(project):
    text = source(LAMPS + "    trees: scatter 40 tree from (10, 10) to (20, 20) seed 1 min_gap 2 m\n")
    result = build(project, text)
    assert codes(result) == ["E448"]
    assert "placed only" in result.diagnostics[0].message and "of 40" in result.diagnostics[0].message


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 25), st.integers(0, 10**6), st.floats(0.0, 3.0))
def test_scatter_either_places_all_apart_or_reports_e448(project, count, seed, gap):
    text = source(
        LAMPS
        + f"    bushes: scatter {count} bush from (-25, -15) to (25, 15) seed {seed} min_gap {gap:.2f} m\n"
    )
    result = build(project, text, "p.wa")
    (project.root / "tasks" / "p.wa").unlink()
    if not result.ok:
        assert codes(result) == ["E448"]
        return
    objs = objects(result)
    pts = [objs[f"bushes_{k}"]["position"][:2] for k in range(1, count + 1)]
    for p, q in itertools.combinations(pts, 2):
        assert math.dist(p, q) >= round(gap, 2) - 1e-6


# -- rooms -----------------------------------------------------------------------------------------

ROOMS = """
    house: room from (10, 5) to (16, 10) height 2.8 m material plaster {
        door w at 2.5 m
        window s at 3 m
    }
    shed: room from (16, 5) to (20, 10) height 2.8 m {
        door w at 1.2 m open yes
        opening e width 1 m height 2 m
    }
"""


def test_rooms_share_walls_and_name_their_pieces(project):
    objs = objects(build(project, source(LAMPS + ROOMS, "anomaly float lamps_1 by 0.3 m")))
    walls = {k for k in objs if "_wall_" in k}
    assert walls == {
        "house_wall_n",
        "house_wall_s_1",
        "house_wall_s_2",
        "house_wall_w_1",
        "house_wall_w_2",
        "house_wall_e_1",  # the shared wall belongs to the room that names it first ...
        "house_wall_e_2",  # ... and the shed's door cuts it
        "shed_wall_n",
        "shed_wall_s",
        "shed_wall_e_1",
        "shed_wall_e_2",
    }
    assert {
        "house_door_1",
        "house_window_1",
        "shed_door_1",
        "house_door_1_lintel",
        "shed_opening_1_lintel",
    } <= set(objs)
    assert "open" in objs["shed_door_1"]["interactions"]
    assert objs["house_door_1_lintel"]["aabb_min"][2] == pytest.approx(objs["house_door_1"]["aabb_max"][2])


def test_an_l_shaped_room_builds_clean(project):
    text = source(
        LAMPS
        + """    hall: room polygon [(0, 0), (8, 0), (8, 4), (4, 4), (4, 8), (0, 8)] {
        door 1 at 2 m
        window 3
    }
""",
        "anomaly float lamps_1 by 0.3 m",
    )
    objs = objects(build(project, text))
    assert {"hall_wall_2", "hall_wall_4", "hall_wall_5", "hall_wall_6", "hall_window_1"} <= set(objs)


@pytest.mark.parametrize(
    ("rooms", "code"),
    [
        ("    r: room from (0, 0) to (4, 4) { door s at 0.2 m }\n", "E465"),
        ("    r: room from (0, 0) to (4, 4) { door s at 2 m; window s at 2.3 m }\n", "E466"),
        ("    r: room from (0, 0) to (4, 4) { door q }\n", "E463"),
        ("    r: room from (0, 0) to (4, 4) { chimney s }\n", "E117"),
        ("    r: room polygon [(0, 0), (4, 0), (5, 4), (0, 4)]\n", "E462"),
        ("    r: room height 3 m\n", "E460"),
        ("    r: room from (0, 0) to (4, 4) height 2 m { door s }\n", "E464"),
        (
            "    r: room from (0, 0) to (4, 4) { door e at 3.9 m }\n    q: room from (4, 0) to (8, 4)\n",
            "E465",
        ),
        (
            "    r: room from (0, 0) to (4, 4)\n    q: room from (0, 4) to (8, 8) { door s at 4 m }\n",
            "E467",
        ),
    ],
)
def test_room_mistakes_get_coded_diagnostics(project, rooms, code):
    result = build(project, source(rooms))
    assert code in codes(result), [d.render() for d in result.diagnostics]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.integers(3, 6), min_size=1, max_size=3),
    st.lists(st.integers(3, 6), min_size=1, max_size=3),
    st.lists(st.sampled_from([0.1, 0.15, 0.2, 0.3, None]), min_size=9, max_size=9),
)
def test_any_block_of_rooms_builds_without_interpenetration(project, widths, depths, thicknesses):
    """Rooms tiled in a grid (some cells empty, walls of mixed thickness) share walls, corners,
    T-junctions and crossings: the walls only ever touch."""
    xs = list(itertools.accumulate([-20] + widths))
    ys = list(itertools.accumulate([-10] + depths))
    rooms = ""
    doors = 0
    for (i, j), t in zip(
        itertools.product(range(len(widths)), range(len(depths))), thicknesses, strict=False
    ):
        if t is None:
            continue
        door = f"{{ door s at {widths[i] / 2:g} m }}" if j == 0 else ""
        doors += j == 0
        rooms += f"    r{i}{j}: room from ({xs[i]}, {ys[j]}) to ({xs[i + 1]}, {ys[j + 1]}) thickness {t} m {door}\n"
    result = build(project, source(LAMPS + rooms), "rooms.wa")
    (project.root / "tasks" / "rooms.wa").unlink()
    objs = objects(result)
    assert sum(1 for k in objs if k.startswith("r") and "_door_" in k and "lintel" not in k) == doors


# -- atmosphere ------------------------------------------------------------------------------------


def test_fog_and_tint_reach_the_bundle(project):
    text = source(LAMPS + '    fog color "#1d4e6b" start 4 m end 30 m\n    tint "#2a6f8f" strength 0.35\n')
    scene = json.loads(build(project, text).tasks["t"]["task.json"])["scene"]
    assert (
        scene["fog"]["start_m"] == 4 and scene["fog"]["end_m"] == 30 and scene["fog"].get("density") is None
    )
    assert scene["tint"]["strength"] == 0.35


def test_scenes_without_fog_carry_no_fog_field(project):
    scene = json.loads(build(project, source(LAMPS)).tasks["t"]["task.json"])["scene"]
    assert "fog" not in scene and "tint" not in scene


@pytest.mark.parametrize(
    ("fog", "code"),
    [("fog color blue", "E430"), ("fog density 0.1 end 20 m", "E430"), ("fog start 10 m end 5 m", "E431")],
)
def test_fog_mistakes(project, fog, code):
    assert codes(build(project, source(LAMPS + f"    {fog}\n"))) == [code]


def test_walking_through_a_room_wall_crosses_it(project):
    """Wall pieces face across the wall like the `wall` prefab, so a walk-through plan crosses it
    instead of walking along it into the next wall."""
    result = build(project, source(LAMPS + ROOMS, "anomaly remove_collision house_wall_n"))
    assert result.ok, [d.render() for d in result.diagnostics]
    plan = json.loads(result.tasks["t"]["selfcheck.json"])
    x, y = plan["view_point"]
    assert 10 < x < 16 and abs(y - 10) > 1.0


def test_a_row_can_rest_on_a_support(project):
    text = source(
        LAMPS
        + "    table_1: table at (-10, -10) length 2 m\n"
        + "    cups: row bottle from (-10.6, -10) to (-9.4, -10) count 4 on table_1\n",
        "anomaly float cups_2 by 0.1 m",
    )
    objs = objects(build(project, text))
    top = objs["table_1"]["aabb_max"][2]
    assert all(objs[f"cups_{k}"]["aabb_min"][2] == pytest.approx(top, abs=1e-4) for k in range(1, 5))
    assert all(objs[f"cups_{k}"].get("support") == "table_1" for k in range(1, 5))


@given(
    st.tuples(st.integers(-50, 50), st.integers(-50, 50)),
    st.tuples(st.integers(-50, 50), st.integers(-50, 50)),
    st.sampled_from([0.5, 1.0, 2.5, 3.0, 7.0]),
)
def test_row_positions_are_evenly_spaced_on_the_line(a, b, every):
    from wac.compiler.diagnostics import Collector
    from wac.compiler.placement import Read, positions

    gen = _Gen("row")
    got = positions(gen, Read({"from": a, "to": b, "every": every}, (), 0.0, "along", True), Collector())
    length = math.dist(a, b)
    if length == 0:
        assert got is None
        return
    assert len(got) == math.floor(length / every + 1e-9) + 1
    assert got[0][0] == pytest.approx(a)
    for (p, yaw), (q, _) in itertools.pairwise(got):
        assert math.dist(p, q) == pytest.approx(every, abs=1e-5)
        assert yaw == pytest.approx(math.degrees(math.atan2(b[1] - a[1], b[0] - a[0])))
    assert math.dist(got[-1][0], a) <= length + 1e-6  # never past `to`


@given(st.integers(1, 12), st.integers(1, 12), st.floats(0.3, 5), st.floats(-5, -0.3))
def test_grid_positions_cover_every_cell_once(nx, ny, dx, dy):
    from wac.compiler.diagnostics import Collector
    from wac.compiler.placement import Read, positions

    got = positions(
        _Gen("grid"),
        Read({"at": (1.0, 2.0), "count": (nx, ny), "spacing": (dx, dy)}, (), 0.0, None, True),
        Collector(),
    )
    assert len(got) == nx * ny
    if ny > 1:  # x varies fastest: the second line starts after nx objects
        assert got[nx][0] == pytest.approx((1.0, 2.0 + dy), abs=1e-5)
    assert len({(round(p[0], 4), round(p[1], 4)) for p, _ in got}) == nx * ny


class _Gen:
    """The little of a generator node that `positions` reads."""

    def __init__(self, keyword: str) -> None:
        self.keyword, self.label, self.span, self.head_span = keyword, "g", None, None

    def clause(self, key: str):
        return None


@pytest.mark.parametrize(("face", "offset"), [("out", 180.0), ("along", -90.0), ("in", 0.0)])
def test_ring_facing_rules(project, face, offset):
    text = source(
        LAMPS + f"    stones: ring boulder around (-15, 10) radius 5 m count 4 face {face} yaw 0 deg\n"
    )
    objs = objects(build(project, text))
    for k in range(1, 5):
        x, y = objs[f"stones_{k}"]["position"][:2]
        inward = math.degrees(math.atan2(10 - y, -15 - x))
        assert (yaw(objs[f"stones_{k}"]) - inward - offset + 180) % 360 - 180 == pytest.approx(0, abs=0.01)


def test_scatter_in_a_polygon_stays_inside_it_and_faces_a_point(project):
    from shapely.geometry import Point, Polygon

    region = [(-25, -20), (-5, -20), (-5, 0), (-15, 10), (-25, 0)]
    text = source(
        LAMPS
        + f"    shrubs: scatter 12 bush in {list(region)} seed 9 min_gap 0.5 m face (0, 0)\n".replace("'", "")
    )
    objs = objects(build(project, text))
    poly = Polygon(region)
    for k in range(1, 13):
        o = objs[f"shrubs_{k}"]
        x, y = o["position"][:2]
        assert poly.contains(Point(x, y).buffer(0.5))
        assert (yaw(o) - math.degrees(math.atan2(-y, -x)) + 180) % 360 - 180 == pytest.approx(0, abs=0.01)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("    shrubs: scatter 5 bush from (-20, -20) to (-10, -10) avoid [pond_9]\n", "E447"),
        ("    shrubs: scatter 5 bush in [(-20, -20), (-10, -10), (-20, -10), (-10, -20)]\n", "E449"),
        ("    shrubs: scatter 5 bush from (-20, -20) to (-10, -10) on lamps_1\n", "E440"),
        ("    shrubs: scatter 5 bush from (-20, -20) to (-10, -10) in [(0, 0), (1, 0), (0, 1)]\n", "E442"),
        ("    lamps_2: bench at (-10, 0)\n", "E409"),
    ],
)
def test_scatter_and_id_mistakes(project, body, code):
    result = build(project, source(LAMPS + body))
    assert code in codes(result), [d.render() for d in result.diagnostics]
