"""Uneven ground in the compiler: `stairs` and `ramp` make walkable objects, their bad values are
diagnosed, and reachability climbs them (a target seen only from a landing builds; without the
stairs it is E534)."""

from __future__ import annotations

import json

import pytest

from wac.bundle.transforms import wedge_mesh
from wac.compiler.pipeline import compile_project

HEAD = """
scene terrace {
    description "A yard with a raised deck."
    type urban
    era modern
    ground grass size (30, 30)
    bounds from (-8, -8) to (8, 8)
    start at (0, -6) yaw 90 deg
    deck: box size (5, 5, 2.5) at (0, 4.5) material concrete walkable yes { name "deck" }
    crate_1: box size (0.3, 0.3, 0.3) on deck at (0, 5) material wood { name "crate" }
"""
STAIRS = "    up: stairs at (0, -2.5) yaw 90 deg steps 15 rise 0.1667 m run 0.3 m material stone\n"


def source(body: str = STAIRS) -> str:
    return HEAD + body + "}\ntask deck_crate on terrace {\n    anomaly float crate_1 by 0.4 m\n}\n"


def build(project, text: str, out=None):
    project("t.wa", text, header="")
    return compile_project([project.root / "tasks"], project.root, out=out)


def task_json(result) -> dict:
    assert result.ok, "\n\n".join(d.render() for d in result.diagnostics)
    return json.loads(result.tasks["deck_crate"]["task.json"])


def objects(result) -> dict[str, dict]:
    return {o["id"]: o for o in task_json(result)["scene"]["objects"]}


def test_stairs_make_walkable_steps_from_the_bottom(project):
    objs = objects(build(project, source()))
    steps = [objs[f"up_{k}"] for k in range(1, 16)]
    assert "up_16" not in objs
    for k, o in enumerate(steps, start=1):
        assert o["walkable"] is True and o["name"] == "stairs" and o["kind"] == "structure"
        assert o["parts"][0]["shape"] == "box" and o["parts"][0]["material"] == "stone"
        assert o["aabb_max"][2] == pytest.approx(k * 0.1667, abs=1e-6)  # step K is K rises high
        assert o["position"][:2] == pytest.approx([0.0, -2.5 + (k - 0.5) * 0.3], abs=1e-6)
    assert steps[0]["aabb_min"][1] == pytest.approx(-2.5, abs=1e-6)  # `at` is the front edge
    assert "walkable" not in objs["crate_1"]  # other objects serialise as before


def test_ramp_is_one_walkable_wedge_rising_towards_its_heading(project):
    objs = objects(
        build(project, source(STAIRS + "    slope: ramp at (-6, -4) yaw 90 deg length 3 m rise 0.6 m\n"))
    )
    o = objs["slope"]
    assert o["walkable"] is True and o["name"] == "ramp" and o["parts"][0]["shape"] == "wedge"
    assert o["parts"][0]["size"] == [3.0, 1.2, 0.6] and o["rotation_deg"][0] == 90.0
    assert o["position"][:2] == pytest.approx([-6.0, -2.5])
    assert o["aabb_min"] == pytest.approx([-6.6, -4.0, 0.0]) and o["aabb_max"] == pytest.approx(
        [-5.4, -1.0, 0.6]
    )


def test_wedge_mesh_is_a_closed_ramp():
    m = wedge_mesh(3.0, 1.2, 0.6)
    assert m.is_watertight and m.is_winding_consistent and m.volume == pytest.approx(3.0 * 1.2 * 0.6 / 2)
    assert m.bounds.tolist() == [[-1.5, -0.6, 0.0], [1.5, 0.6, 0.6]]


def test_a_target_seen_only_from_the_stairs_builds_with_a_view_from_the_landing(project):
    result = build(project, source())
    task_json(result)
    plan = json.loads(result.tasks["deck_crate"]["selfcheck.json"])
    x, y = plan["view_point"]
    assert abs(x) < 0.6 and -2.5 < y < 2.0  # on the flight, which climbs from y = -2.5 to 2.0
    look = [s for s in plan["steps"] if s["action"] == "look"]
    assert look and look[0]["args"]["degrees"] > 0  # looking down onto the deck from above it


def test_without_the_stairs_the_deck_target_cannot_be_reached(project):
    result = build(project, source(""))
    assert [d.code for d in result.diagnostics] == ["E534"]


def test_reachability_connects_surfaces_a_step_apart_and_walls_off_higher_sides():
    import numpy as np

    from wac.compiler.validate import _connect

    free = np.ones((6, 10), dtype=bool)
    steps = np.tile(np.arange(10) * 0.2, (6, 1))  # a tread every cell, 0.2 m up each time
    _, labels = _connect(free, steps, 0.3)
    assert len(np.unique(labels)) == 1  # one flight from bottom to top
    wall = np.zeros((6, 10))
    wall[:, 5:] = 1.0  # a 1 m high walkable block beside the ground
    ok, labels = _connect(free, wall, 0.3)
    assert not ok[:, 4].any()  # the agent cannot stand against a side higher than a step
    assert set(labels[:, :4].ravel()).isdisjoint(labels[:, 5:].ravel())  # nor step onto it


@pytest.mark.parametrize(
    ("line", "code", "caret", "hint"),
    [
        (
            "    up: stairs at (0, -2.5) yaw 90 deg steps 6 rise 0.3 m",
            "E470",
            "rise 0.3 m",
            "at least 8 steps, e.g. `steps 8 rise 0.225 m`",
        ),
        (
            "    slope: ramp at (-6, -4) length 1 m rise 1 m",
            "E471",
            "length 1 m",
            "at least 1.43 m long",
        ),
        (
            "    pad: box size (1, 1, 0.2) at (-5, -5) walkable yes mass 20 kg",
            "E472",
            "walkable yes",
            "drop `mass`",
        ),
        ("    up: stairs at (0, -2.5) rise 0.1 m", "E442", "stairs", "steps"),
        ("    up: stairs at (0, -2.5) steps 3 colour red", "E102", "colour red", "color"),
        ("    up: stairs at (0, -2.5) steps 3 run 0.1 m", "E208", "0.1 m", "0.25 m"),
    ],
)
def test_bad_stairs_and_ramps_are_diagnosed_at_their_clause(project, line, code, caret, hint):
    result = build(project, source(line + "\n"))
    diags = [d for d in result.diagnostics if d.code == code]
    assert diags, [d.render() for d in result.diagnostics]
    text = diags[0].render()
    row = text.splitlines()[1].split("|", 1)[1]
    marks = text.splitlines()[2].split("|", 1)[1]
    start = marks.index("^")
    assert row[start : start + len(caret)] == caret, text
    assert ":11:" in text.splitlines()[0] and hint in text


def test_stairs_and_ramps_build_byte_identically(project, tmp_path):
    text = source(STAIRS + "    slope: ramp at (-6, -4) yaw 90 deg length 3 m rise 0.6 m\n")
    a = build(project, text).tasks["deck_crate"]["task.json"]
    b = compile_project([project.root / "tasks"], project.root).tasks["deck_crate"]["task.json"]
    assert a == b


# -- heightfield terrain ---------------------------------------------------------------------------

MEADOW = """
scene meadow {{
    description "Rolling grassland."
    type natural
    era modern
    ground grass size (40, 40) {ground}
    bounds from (-15, -15) to (15, 15)
    start at (0, -12) yaw 90 deg
    crate_1: box size (0.6, 0.6, 0.6) at (2, 3) material wood {{ name "crate" }}
    post_1: cylinder radius 0.08 height 3 at (5, -2) material metal {{ name "lamp post" }}
    up: stairs at (-8, -6) yaw 90 deg steps 4 rise 0.15 m
{extra}}}
task meadow_crate on meadow {{
    anomaly {anomaly}
}}
"""
HILLS = "terrain heightfield seed 3 amplitude 1.5 m scale 12 m"


def meadow(project, ground: str = HILLS, extra: str = "", anomaly: str = "float crate_1 by 0.4 m"):
    project("m.wa", MEADOW.format(ground=ground, extra=extra, anomaly=anomaly), header="")
    return compile_project([project.root / "tasks"], project.root)


def test_objects_stand_on_the_heightfield_and_stairs_stay_level(project):
    from wac.bundle.model import Ground, Terrain
    from wac.bundle.terrain import height_range

    result = meadow(project)
    assert result.ok, [d.render() for d in result.diagnostics]
    scene = json.loads(result.tasks["meadow_crate"]["task.json"])["scene"]
    assert scene["ground"]["terrain"] == {"seed": 3, "amplitude_m": 1.5, "scale_m": 12.0}
    ground = Ground(material="grass", size=(40, 40), terrain=Terrain(seed=3, amplitude_m=1.5, scale_m=12))
    objs = {o["id"]: o for o in scene["objects"]}
    for oid in ("crate_1", "post_1"):
        lo, hi = height_range(ground, objs[oid]["aabb_min"][:2], objs[oid]["aabb_max"][:2])
        assert lo != 0.0 and objs[oid]["aabb_min"][2] == pytest.approx(lo, abs=1e-6)  # on the lowest ground
    bases = {objs[f"up_{k}"]["aabb_min"][2] for k in range(1, 5)}
    assert len(bases) == 1  # one level for the whole flight: the treads stay 0.15 m apart
    base = bases.pop()
    assert [round(objs[f"up_{k}"]["aabb_max"][2] - base, 6) for k in range(1, 5)] == [0.15, 0.3, 0.45, 0.6]


def test_heightfields_are_deterministic_and_differ_by_seed():
    from wac.bundle.model import Ground, Terrain
    from wac.bundle.terrain import samples

    def field(seed):
        return samples(
            Ground(material="grass", size=(20, 30), terrain=Terrain(seed=seed, amplitude_m=2, scale_m=8))
        )

    xs, ys, a = field(7)
    _, _, b = field(7)
    _, _, c = field(8)
    assert a.shape == (len(ys), len(xs)) == (61, 41) and (a == b).all() and not (a == c).all()
    assert -2.0 <= a.min() < 0 < a.max() <= 2.0
    assert float(a[0, 0]) == pytest.approx(0.211143, abs=1e-6)  # pinned: the same on every machine


def test_flat_ground_serialises_as_before(project):
    result = meadow(project, ground="")
    assert (
        result.ok
        and "terrain" not in json.loads(result.tasks["meadow_crate"]["task.json"])["scene"]["ground"]
    )


def test_slopes_steeper_than_the_agent_walks_are_not_walkable(project):
    import numpy as np

    from wac.bundle.model import Ground, Terrain
    from wac.compiler.validate import _too_steep

    steep = Ground(material="grass", size=(40, 40), terrain=Terrain(seed=3, amplitude_m=6, scale_m=6))
    gentle = Ground(material="grass", size=(40, 40), terrain=Terrain(seed=3, amplitude_m=1.5, scale_m=12))
    gx, gy = np.meshgrid(np.linspace(-15, 15, 151), np.linspace(-15, 15, 151))
    assert _too_steep(steep, gx, gy).mean() > 0.2 and not _too_steep(gentle, gx, gy).any()


@pytest.mark.parametrize(
    ("ground", "extra", "anomaly", "code"),
    [
        ("terrain heightfield seed 2", "", "float crate_1 by 0.4 m", "E432"),
        ("seed 2 amplitude 1 m", "", "float crate_1 by 0.4 m", "E433"),
        (HILLS, "    pond_1: pond at (-5, 8)\n", "float crate_1 by 0.4 m", "E434"),
        (HILLS, "", "floor_hole at (0, 0) size (1 m, 1 m)", "E434"),
    ],
)
def test_bad_terrain_is_diagnosed(project, ground, extra, anomaly, code):
    result = meadow(project, ground, extra, anomaly)
    assert code in [d.code for d in result.diagnostics], [d.render() for d in result.diagnostics]


def test_operators_that_move_objects_put_them_on_the_heightfield(project):
    from wac.bundle.model import Ground, Terrain
    from wac.bundle.terrain import height, height_range

    ground = Ground(material="grass", size=(40, 40), terrain=Terrain(seed=3, amplitude_m=1.5, scale_m=12))
    result = meadow(project, anomaly="move crate_1 by (-8, 4) when revisit")
    assert result.ok, [d.render() for d in result.diagnostics]
    task = json.loads(result.tasks["meadow_crate"]["task.json"])
    effect = task["anomalies"][0]["effects"][0]
    crate = next(o for o in task["scene"]["objects"] if o["id"] == "crate_1")
    lo = (crate["aabb_min"][0] - 8, crate["aabb_min"][1] + 4)
    hi = (crate["aabb_max"][0] - 8, crate["aabb_max"][1] + 4)
    base = effect["position"][2] - (crate["position"][2] - crate["aabb_min"][2])
    assert base == pytest.approx(height_range(ground, lo, hi)[0], abs=1e-5)
    crate_2 = '    crate_2: box size (0.6, 0.6, 0.6) at (-2, 3) material wood { name "crate" }\n'
    result = meadow(project, extra=crate_2, anomaly="pile [crate_1, crate_2] at (4, 8) spread 0.1 m")
    assert result.ok, [d.render() for d in result.diagnostics]
    effects = json.loads(result.tasks["meadow_crate"]["task.json"])["anomalies"][0]["effects"]
    copy = next(e["object"] for e in effects if e["kind"] == "add_object")
    x, y, _ = copy["position"]
    lowest = copy["aabb_min"][2]  # the tilted copy's lowest point on the ground under it
    assert lowest == pytest.approx(height(ground, x, y), abs=1e-5) and abs(lowest) > 0.05
