"""Parity with the reference runtime, measured: for every bug type of WorldAuditBench's bugs.js the
observable it produces (stated in each test's docstring, from reading bugs.js/core.js) is produced by
the wac operator docs/taxonomy.md maps it to, clean against perturbed, in one shared scene.

`taxonomy/parity.yaml` holds the same statements for the docs; a test keeps the two in step."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml

from wac.compiler.pipeline import compile_project
from wac.taxonomy.docs import REFERENCE_BUG_TYPES

pytest.importorskip("pybullet")
pytest.importorskip("vtk")

ROOT = Path(__file__).resolve().parents[2]
PARITY = yaml.safe_load((ROOT / "taxonomy" / "parity.yaml").read_text(encoding="utf-8"))

# crate_3, chair_2, fan_2 and door_2 are the twins the world-alone detectors compare with (issue 27):
# a frozen fan beside one that turns, a dead door beside one that opens, a mirrored chair beside its twin
SCENE = """
scene parity_yard {
    description "A paved yard with crates, chairs, a column, a wall with a lamp behind it, doors, fans, a pond and a shed."
    type urban
    era modern
    ground tile size (40, 40)
    sun azimuth 135 deg elevation 50 deg intensity 1
    ambient 0.4
    bounds from (-18, -18) to (18, 18)
    start at (0, -14) yaw 90 deg
    crate_1: crate at (0, -8)
    crate_2: crate at (-4, -8)
    crate_3: crate at (-6, -10)
    chair_1: chair at (4, -8)
    chair_2: chair at (5.2, -8)
    column_1: column at (-8, -8)
    wall_1: wall at (0, 0) yaw 90 deg length 6 m
    lamp_1: floor_lamp at (0, 1)
    door_1: door at (-8, 0)
    fan_1: industrial_fan at (8, 0)
    fan_2: industrial_fan at (12, 0)
    door_2: door at (-12, 0)
    pond_1: pond at (-8, 8) diameter 3 m
    shed_1: box size (2.4, 2.4, 2.5) at (8, 8) material wood { name "shed" }
}
"""

# reference bug type -> the wac anomaly statement that expresses it
ANOMALY = {
    "air_wall": "invisible_wall at (0, -11) size (4, 0.35, 2.6)",
    "fake_floor": "fake_floor pond_1",
    "float": "float crate_1 by 0.35 m",
    "door_ghost": "ghost_door door_1",
    "door_phantom": "phantom_door door_1 when interact",
    "mechanism_delay": "delay door_1 by 2 s",
    "frozen_anim": "freeze_animation fan_1",
    "door_autoclose": "autoclose door_1 after 2 s",
    "anim_accelerated": "speed_door door_1 factor 6",
    "anim_interrupted": "jam door_1 at 0.5",
    "drift": "drift crate_1 along (1, 0) range 1 m speed 0.5 m/s",
    "wall_trap": "one_way shed_1 from south",
    "interact_through_wall": "interact_through lamp_1",
    "extra_asset": "extra_asset torch_9 as torch_stand at (4, -4)",
    "dead_gem": "ignore_interaction door_1",
    "no_collision": "remove_collision column_1",
    "missing_tex": "missing_texture crate_2",
    "oversize": "scale crate_2 by 2.5",
    "vanish": "vanish column_1",
    "tilt": "tilt chair_1 by 25 deg",
    "mirrored": "mirror chair_1",
    "flip_normals": "flip_normals crate_2",
    "wrong_mat": "swap_material crate_2 to metal",
    "ghost_mesh": "transparent crate_2",
    "emissive": "glow crate_2",
    "no_shadow": "remove_shadow column_1",
    "mesh_offset": "sink crate_1 by 0.3 m",
    "mesh_scale": "scale crate_2 by 2.2",
    "mesh_tilt": "sink crate_1 by 0.2 m tilt 22 deg",
    "mesh_clone": "duplicate crate_1",
    "mesh_nosolid": "remove_collision column_1",
    "floor_hole": "floor_hole at (0, -11)",
    "mesh_drift": "drift crate_1 along (1, 0) range 1.2 m speed 0.3 m/s",
    "mesh_missing_tex": "missing_texture crate_2",
    "mesh_sideview_cull": "cull crate_2 from south",
    "mesh_xray": "xray lamp_1",
    "mesh_vanish_unseen": "hide crate_2 when look_away",
    "mesh_move_unseen": "move crate_2 by (0, -2.4) when look_away repeat yes",
    "mesh_tremble": "tremble crate_2 amplitude 0.025 m",
    "mesh_despawn_on_leave": "hide crate_2 when leave enter 5 m exit 9 m",
    "mesh_reset_on_leave": "move crate_2 by (0, -2.4) when leave enter 5 m exit 9 m repeat yes",
    "mesh_pile": "pile [crate_1, crate_2] at (4, -4)",
    "mesh_lod_pop": "lod_pop crate_2 when beyond 6 m",
    "mesh_colorflip": 'recolor crate_2 to "#c03030" when every 3 s',
    "corrupted_frame": "corrupted_frame crate_2",
}


@pytest.fixture(scope="module")
def bundles(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("parity")
    (root / "scenes").mkdir()
    (root / "scenes" / "yard.wa").write_text(textwrap.dedent(SCENE))
    (root / "tasks").mkdir()
    body = "".join(
        f"task p_{ref} on parity_yard {{\n    difficulty easy\n    anomaly {line}\n}}\n\n"
        for ref, line in ANOMALY.items()
    )
    (root / "tasks" / "parity.wa").write_text('import "../scenes/yard.wa"\n\n' + body)
    out = root / "build"
    res = compile_project([root / "tasks"], root, out=out)
    assert res.ok, [d.render() for d in res.diagnostics]
    return out


@pytest.fixture
def pair(bundles):
    from wac.runtime.env import WorldEnv

    made = []

    def make(ref: str, start=None):
        envs = tuple(
            WorldEnv(
                bundles / f"p_{ref}", variant=v, width=160, height=120, film_interval_s=None, start=start
            )
            for v in ("clean", "perturbed")
        )
        made.extend(envs)
        return envs

    yield make
    for e in made:
        e.close()


def test_every_reference_type_has_a_parity_statement_and_test():
    """Each reference bug type: an entry in parity.yaml (observable + behaviour), and a test here
    unless it is out of scope."""
    assert set(PARITY) == set(REFERENCE_BUG_TYPES)
    in_scope = {k for k, v in PARITY.items() if v.get("behaviour") != "out of scope"}
    assert in_scope == set(ANOMALY)
    tests = {n.removeprefix("test_") for n in globals() if n.startswith("test_")}
    assert not [r for r in ANOMALY if r not in tests]
    for k, v in PARITY.items():
        assert v["observable"].strip() and v["behaviour"].strip(), k
        assert v["behaviour"] == "out of scope" or v["behaviour"].startswith(("identical", "differs: ")), k


# --- helpers --------------------------------------------------------------------------------------
def _ids(env, oid, eye, at, fov=50.0) -> int:
    from wac.runtime.render import look_at

    return int((env.renderer.render_ids(look_at(eye, at, fov)) == env.object_index(oid)).sum())


def _rgb(env, oid, eye, at, fov=30.0) -> np.ndarray:
    """Mean colour of the object's pixels seen from `eye`."""
    from wac.runtime.render import look_at

    cam = look_at(eye, at, fov)
    mask = env.renderer.render_ids(cam) == env.object_index(oid)
    img = env.renderer.render(cam)
    assert mask.sum() > 20
    return img[mask].astype(float).mean(axis=0)


def _bottom(env, oid) -> float:
    return float(env.world.aabb(env.world.get(oid))[0][2])


def _up_tilt(env, oid) -> float:
    from wac.runtime.geometry import rotation_matrix

    up = rotation_matrix(env.world.get(oid).rotation_deg) @ np.array([0.0, 0.0, 1.0])
    return float(np.degrees(np.arccos(np.clip(up[2], -1, 1))))


DOOR_FRONT = (-10.0, 0.0, 0.0, 0.0)  # facing the door (+x), 2 m from it


def _walk_door(env) -> str:
    env.step("interact")
    env.step("wait 2")
    return env.step("move 4").outcome


# --- interactive physics -----------------------------------------------------------------------------
def test_air_wall(pair):
    """bugs.js air_wall: an invisible solid box across an apparently clear path stops the player."""
    c, p = pair("air_wall")
    assert (p.render_ids() == c.render_ids()).all()  # nothing drawn
    assert c.step("move 4").moved_m > 3.9
    r = p.step("move 4")
    assert "blocked" in r.outcome and r.pose.y < -11.3


def test_fake_floor(pair):
    """bugs.js fake_floor: a solid slab over a pit: the player walks where it should fall in."""
    c, p = pair("fake_floor", start=(-8.0, 4.0, 90.0, 0.0))
    assert c.step("move 4").pose.z < -0.5
    assert p.step("move 4").pose.z > -0.05


def test_float(pair):
    """bugs.js float: the object is raised by dy (0.35 m) with nothing under it."""
    c, p = pair("float")
    assert _bottom(c, "crate_1") == pytest.approx(0.0, abs=0.01)
    assert _bottom(p, "crate_1") == pytest.approx(0.35, abs=0.01)


def test_door_ghost(pair):
    """bugs.js door_ghost: the door is drawn open but its collider blocks."""
    c, p = pair("door_ghost", start=DOOR_FRONT)
    assert "blocked" not in _walk_door(c)
    assert "blocked" in _walk_door(p)
    assert p.world.get("door_1").parts["panel"].hinge_deg == pytest.approx(90.0)


def test_door_phantom(pair):
    """bugs.js door_phantom: after use the door stays drawn closed, yet the player passes."""
    c, p = pair("door_phantom", start=DOOR_FRONT)
    assert "blocked" not in _walk_door(c) and c.world.get("door_1").parts["panel"].hinge_deg == pytest.approx(
        90.0
    )
    assert "blocked" not in _walk_door(p) and p.world.get("door_1").parts["panel"].hinge_deg == 0.0


def test_mechanism_delay(pair):
    """bugs.js mechanism_delay: the door answers its use only after delayMs (2 s)."""
    c, p = pair("mechanism_delay", start=DOOR_FRONT)
    for env in (c, p):
        env.step("interact")
        env.step("wait 1")
    assert c.world.get("door_1").open_frac > 0.9 and p.world.get("door_1").open_frac == 0.0
    p.step("wait 3")
    assert p.world.get("door_1").open_frac > 0.9


def test_frozen_anim(pair):
    """bugs.js frozen_anim: the animation's updater stops: the part no longer moves."""
    c, p = pair("frozen_anim")
    spins = []
    for env in (c, p):
        a = env.world.get("fan_1").parts["blades"].spin_deg
        env.step("wait 1")
        spins.append(env.world.get("fan_1").parts["blades"].spin_deg - a)
    assert abs(spins[0]) > 100 and spins[1] == 0.0


def test_door_autoclose(pair):
    """bugs.js door_autoclose: the opened door closes by itself afterMs (2 s) later."""
    c, p = pair("door_autoclose", start=DOOR_FRONT)
    for env in (c, p):
        env.step("interact")
        env.step("wait 5")
    assert c.world.get("door_1").open_frac == 1.0 and p.world.get("door_1").open_frac == 0.0


def test_anim_accelerated(pair):
    """bugs.js anim_accelerated: the door's animation runs `factor` (6) times faster."""
    c, p = pair("anim_accelerated", start=DOOR_FRONT)
    for env in (c, p):
        env.step("interact")  # 0.5 s
    assert p.world.get("door_1").open_frac == 1.0 and c.world.get("door_1").open_frac < 0.6


def test_anim_interrupted(pair):
    """bugs.js anim_interrupted: the door stops half-way (t 0.5) and still blocks passage."""
    c, p = pair("anim_interrupted", start=DOOR_FRONT)
    assert "blocked" not in _walk_door(c)
    assert "blocked" in _walk_door(p)
    assert p.world.get("door_1").open_frac == pytest.approx(0.5)


def _drift_extent(p, seconds: float) -> tuple[float, float]:
    xs = []
    p.add_tick_listener(lambda: xs.append(p.world.get("crate_1").world_position()[0]))
    p.step(f"wait {seconds}")
    p.step(f"wait {seconds}")
    return min(xs), max(xs)


def test_drift(pair):
    """bugs.js drift: the object moves back and forth along an axis between base - range and
    base + range at `speed`."""
    c, p = pair("drift")
    lo, hi = _drift_extent(p, 5)
    assert lo == pytest.approx(-1.0, abs=0.06) and hi == pytest.approx(1.0, abs=0.06)
    c.step("wait 2")
    assert c.world.get("crate_1").world_position()[0] == pytest.approx(0.0, abs=1e-3)


def test_mesh_drift(pair):
    """bugs.js mesh_drift: as drift (range 1.2 m, speed 0.3 m/s), its collider following."""
    c, p = pair("mesh_drift")
    lo, hi = _drift_extent(p, 5)
    assert hi == pytest.approx(1.2, abs=0.06) and lo < -0.5  # 10 s at 0.3 m/s: out to +1.2 and back past 0


def test_wall_trap(pair):
    """bugs.js wall_trap: one face of a solid lets the player slip in, then it cannot leave."""
    c, p = pair("wall_trap", start=(8.0, 5.0, 90.0, 0.0))
    assert "blocked" in c.step("move 3").outcome
    assert p.step("move 3").pose.y > 7.0  # inside the shed
    assert "blocked" in p.step("move 3 back").outcome


def test_interact_through_wall(pair):
    """bugs.js interact_through_wall: the interaction reaches the target through a solid wall."""
    c, p = pair("interact_through_wall", start=(0.0, -1.5, 90.0, 0.0))

    def lamps(env):  # what the agent can see change: which lamps are lit
        return {i: env.world.lamp_lit(st) for i, st in env.world.objects.items() if st.lit is not None}

    before_c, before_p = lamps(c), lamps(p)
    c.step("interact")
    p.step("interact")
    assert lamps(c) == before_c  # the wall is in the way
    assert lamps(p) != before_p  # the switch behind the wall is used


def test_extra_asset(pair):
    """bugs.js extra_asset: an object that should not exist is built into the scene."""
    c, p = pair("extra_asset")
    assert "torch_9" not in c.world.objects
    assert p.world.get("torch_9").present


def test_dead_gem(pair):
    """bugs.js dead_gem: using the object does nothing."""
    c, p = pair("dead_gem", start=DOOR_FRONT)
    c.step("interact")
    p.step("interact")
    c.step("wait 3")
    p.step("wait 3")
    assert c.world.get("door_1").open_frac > 0.5
    assert p.world.get("door_1").open_frac == 0.0


def test_no_collision(pair):
    """bugs.js no_collision: the object's collider is gone: the player walks through it."""
    c, p = pair("no_collision", start=(-8.0, -11.0, 90.0, 0.0))
    assert "blocked" in c.step("move 4").outcome
    assert p.step("move 4").moved_m > 3.9


def test_mesh_nosolid(pair):
    """bugs.js mesh_nosolid: as no_collision (the mesh leaves the collision bake)."""
    c, p = pair("mesh_nosolid", start=(-8.0, -11.0, 90.0, 0.0))
    assert "blocked" in c.step("move 4").outcome and p.step("move 4").moved_m > 3.9


def test_floor_hole(pair):
    """bugs.js floor_hole (+ core.js respawn): the floor there has no collision; the player falls
    into the void and respawns at the spawn, told only that it respawned."""
    c, p = pair("floor_hole")
    assert c.step("move 4").pose.z == pytest.approx(0.0, abs=0.02)
    r = p.step("move 4")
    assert r.outcome.endswith("respawned at the start") and r.pose.y == pytest.approx(-14.0, abs=0.05)


# --- static physics and configuration -------------------------------------------------------------
def test_mesh_offset(pair):
    """bugs.js mesh_offset: a world-space offset (down: the object clips into the ground)."""
    c, p = pair("mesh_offset")
    assert _bottom(p, "crate_1") == pytest.approx(-0.3, abs=0.01) and _bottom(c, "crate_1") == pytest.approx(
        0.0, abs=0.01
    )


def test_mesh_tilt(pair):
    """bugs.js mesh_tilt: rotated about its base centre (22 deg) and sunk: one side below the floor."""
    c, p = pair("mesh_tilt")
    assert _up_tilt(p, "crate_1") == pytest.approx(22.0, abs=0.5) and _bottom(p, "crate_1") < -0.2
    assert _up_tilt(c, "crate_1") < 0.5


def _height(env, oid) -> float:
    lo, hi = env.world.aabb(env.world.get(oid))
    return float(hi[2] - lo[2])


def test_oversize(pair):
    """bugs.js oversize: the object is scaled up by `factor` (2.5)."""
    c, p = pair("oversize")
    assert _height(p, "crate_2") == pytest.approx(2.5 * _height(c, "crate_2"), rel=0.02)


def test_mesh_scale(pair):
    """bugs.js mesh_scale: scaled by `factor` (2.2), kept standing on its base."""
    c, p = pair("mesh_scale")
    assert _height(p, "crate_2") == pytest.approx(2.2 * _height(c, "crate_2"), rel=0.02)
    assert _bottom(p, "crate_2") == pytest.approx(0.0, abs=0.01)


def test_tilt(pair):
    """bugs.js tilt: rotated 25 deg about a horizontal axis."""
    c, p = pair("tilt")
    assert _up_tilt(p, "chair_1") == pytest.approx(25.0, abs=0.5) and _up_tilt(c, "chair_1") < 0.5


def test_mirrored(pair):
    """bugs.js mirrored: scale.x *= -1 (left and right swapped)."""
    c, p = pair("mirrored")
    assert np.prod(p.world.get("chair_1").scale) < 0 < np.prod(c.world.get("chair_1").scale)


def test_mesh_clone(pair):
    """bugs.js mesh_clone: a solid copy offset (0.28, 0.18) m, interpenetrating the original."""
    c, p = pair("mesh_clone")
    a, b = p.world.get("crate_1"), p.world.get("crate_1_copy")
    assert "crate_1_copy" not in c.world.objects
    assert np.allclose(b.world_position()[:2] - a.world_position()[:2], (0.28, 0.18), atol=0.01)


def test_mesh_pile(pair):
    """bugs.js mesh_pile: copies of scene props dumped tilted into and through each other at a spot;
    the originals stay."""
    c, p = pair("mesh_pile")
    copies = [st for oid, st in p.world.objects.items() if "_pile" in oid and st.present]
    assert len(copies) == 2 and not [o for o in c.world.objects if "_pile" in o]
    (alo, ahi), (blo, bhi) = (p.world.aabb(s) for s in copies)
    assert np.all(alo < bhi) and np.all(blo < ahi)  # they overlap
    assert all(np.hypot(*(s.world_position()[:2] - (4.0, -4.0))) < 0.6 for s in copies)
    assert p.world.get("crate_1").world_position()[1] == pytest.approx(-8.0)


def test_mesh_tremble(pair):
    """bugs.js mesh_tremble: the object rocks in place, 1.5-2.5 Hz, amplitude ~0.025 m."""
    c, p = pair("mesh_tremble")
    xs = []
    p.add_tick_listener(lambda: xs.append(p.world.get("crate_2").motion_offset[0]))
    p.step("wait 4")
    xs = np.array(xs)
    spec = np.abs(np.fft.rfft(xs - xs.mean()))
    f = np.fft.rfftfreq(len(xs), 0.05)[int(np.argmax(spec))]
    assert 1.4 <= f <= 2.6 and 0.01 < np.abs(xs).max() <= 0.025
    c.step("wait 1")
    assert not c.world.get("crate_2").motion_offset.any()


# --- appearance -----------------------------------------------------------------------------------
NEAR_CRATE_2 = ((-4.0, -11.0, 1.2), (-4.0, -8.0, 0.3))


def test_missing_tex(pair):
    """bugs.js missing_tex: the surface turns magenta (#ff00ff)."""
    c, p = pair("missing_tex")
    r, g, b = _rgb(p, "crate_2", *NEAR_CRATE_2)
    assert r > 200 and b > 200 and g < 60
    assert _rgb(c, "crate_2", *NEAR_CRATE_2)[2] < 150


def test_mesh_missing_tex(pair):
    """bugs.js mesh_missing_tex: flat, unlit magenta: one colour whatever the face's light."""
    c, p = pair("mesh_missing_tex")
    from wac.runtime.render import look_at

    cam = look_at((-6.0, -11.0, 1.8), (-4.0, -8.0, 0.3), 30.0)
    mask = p.renderer.render_ids(cam) == p.object_index("crate_2")
    px = p.renderer.render(cam)[mask].astype(float)
    assert np.allclose(px.mean(axis=0), (255, 0, 255), atol=30) and px.std(axis=0).max() < 20


def test_vanish(pair):
    """bugs.js vanish: visible = false: not drawn, no shadow (three.js draws none), still solid."""
    c, p = pair("vanish", start=(-8.0, -11.0, 90.0, 0.0))
    view = ((-8.0, -12.0, 1.6), (-8.0, -8.0, 1.5))
    assert _ids(c, "column_1", *view) > 0 and _ids(p, "column_1", *view) == 0
    st = p.world.get("column_1")
    assert not st.visible and not st.casts_shadow
    assert "blocked" in p.step("move 4").outcome


def test_flip_normals(pair):
    """bugs.js flip_normals: BackSide: the front faces vanish and the inner back faces show."""
    c, p = pair("flip_normals")
    assert np.abs(_rgb(p, "crate_2", *NEAR_CRATE_2) - _rgb(c, "crate_2", *NEAR_CRATE_2)).max() > 10


def test_wrong_mat(pair):
    """bugs.js wrong_mat: the surface becomes polished metal (metalness 1, roughness 0.02)."""
    c, p = pair("wrong_mat")
    mats = {p.world.material(ps.material).category for ps in p.world.get("crate_2").parts.values()}
    assert mats == {"metal"}
    assert np.abs(_rgb(p, "crate_2", *NEAR_CRATE_2) - _rgb(c, "crate_2", *NEAR_CRATE_2)).max() > 10


def test_ghost_mesh(pair):
    """bugs.js ghost_mesh: the object turns see-through (opacity 0.35)."""
    c, p = pair("ghost_mesh")
    ops = {p.world.material(ps.material).opacity for ps in p.world.get("crate_2").parts.values()}
    assert ops == {0.35}
    assert {c.world.material(ps.material).opacity for ps in c.world.get("crate_2").parts.values()} == {1.0}


def test_emissive(pair):
    """bugs.js emissive: the surface glows green (#44ff88) with nothing lighting it."""
    c, p = pair("emissive")
    rp, gp, bp = _rgb(p, "crate_2", *NEAR_CRATE_2)
    rc, gc, bc = _rgb(c, "crate_2", *NEAR_CRATE_2)
    assert gp > gc + 40 and gp > rp


def test_no_shadow(pair):
    """bugs.js no_shadow: the object casts no shadow (castShadow = false)."""
    c, p = pair("no_shadow")
    from wac.runtime.render import look_at

    # the sun (azimuth 135, elevation 50) throws the 3 m column's shadow towards +x, -y
    spot = (-6.5, -9.3, 0.0)
    cam = look_at((-6.5, -13.0, 3.0), spot, 15.0)
    lum = [float(env.renderer.render(cam)[50:70, 70:90].astype(float).mean()) for env in (c, p)]
    assert lum[1] > lum[0] + 10


def test_mesh_sideview_cull(pair):
    """bugs.js mesh_sideview_cull: invisible seen from one side of its plane, visible from the
    other, still solid."""
    c, p = pair("mesh_sideview_cull")
    south, north = (-4.0, -11.0, 1.2), (-4.0, -5.0, 1.2)
    at = (-4.0, -8.0, 0.3)
    assert _ids(p, "crate_2", south, at) == 0 and _ids(c, "crate_2", south, at) > 0
    assert _ids(p, "crate_2", north, at) > 0


def test_mesh_xray(pair):
    """bugs.js mesh_xray: depthTest off: the object is drawn over the wall in front of it."""
    c, p = pair("mesh_xray")
    eye, at = (0.0, -4.0, 1.2), (0.0, 1.0, 1.0)
    assert _ids(c, "lamp_1", eye, at) == 0 and _ids(p, "lamp_1", eye, at) > 0


def test_mesh_lod_pop(pair):
    """bugs.js mesh_lod_pop: beyond the distance the object is drawn at a crude level of detail
    (default flavour: a blocky 8x8 texture; proxy flavour: a flat box), and pops back near."""
    c, p = pair("mesh_lod_pop", start=(-4.0, -16.0, 90.0, 0.0))  # 7.7 m away
    from wac.runtime.render import look_at

    def look(env, eye):
        cam = look_at(eye, (-4.0, -8.0, 0.3), 30.0)
        mask = env.renderer.render_ids(cam) == env.object_index("crate_2")
        return env.renderer.render(cam)[mask].astype(float)

    far_p, far_c = look(p, (-4.0, -16.0, 1.6)), look(c, (-4.0, -16.0, 1.6))
    assert far_p.std(axis=0).max() < 0.5 * far_c.std(axis=0).max()  # one flat colour: the proxy box
    p.step("move 4")  # 3.7 m away: the detail is back
    near_p, near_c = look(p, (-4.0, -12.0, 1.6)), look(c, (-4.0, -12.0, 1.6))
    assert np.allclose(near_p.mean(axis=0), near_c.mean(axis=0), atol=3)


def test_mesh_colorflip(pair):
    """bugs.js mesh_colorflip: the colour flips to #c03030 and back every `period` (3 s)."""
    c, p = pair("mesh_colorflip")
    reds = []
    for _ in range(3):
        reds.append(_rgb(p, "crate_2", *NEAR_CRATE_2)[0] - _rgb(p, "crate_2", *NEAR_CRATE_2)[1])
        p.step("wait 3")
    assert reds[1] > reds[0] + 30 and reds[2] < reds[1] - 30


# --- temporal ------------------------------------------------------------------------------------
def test_corrupted_frame(pair):
    """bugs.js corrupted_frame: a quad of #ff0033 at opacity 0.35, without depth test, in front of the
    camera: every pixel of every frame, sky included, mixes 35 % of that colour in."""
    from wac.runtime.render import look_at

    c, p = pair("corrupted_frame")
    cam = look_at(*NEAR_CRATE_2, 50.0)
    clean, pert = c.renderer.render(cam).astype(float), p.renderer.render(cam).astype(float)
    assert np.abs(pert - (clean * 0.65 + np.array([255.0, 0.0, 51.0]) * 0.35)).max() <= 1.0


def _look_away_and_back(env):
    env.step("turn 180")
    env.step("wait 1")
    env.step("turn 180")


def test_mesh_vanish_unseen(pair):
    """bugs.js mesh_vanish_unseen: once seen, the object despawns for good (collider too) the moment
    it goes out of view."""
    c, p = pair("mesh_vanish_unseen", start=(-4.0, -12.0, 90.0, 0.0))
    for env in (c, p):
        _look_away_and_back(env)
    assert c.world.get("crate_2").present and not p.world.get("crate_2").present
    assert p.step("move 4").moved_m > 3.9  # nothing left to block


def test_mesh_move_unseen(pair):
    """bugs.js mesh_move_unseen: each time it goes unobserved it jumps by the offset, then back."""
    c, p = pair("mesh_move_unseen", start=(-4.0, -14.0, 90.0, 0.0))
    ys = []
    for _ in range(2):
        _look_away_and_back(p)
        ys.append(p.world.get("crate_2").world_position()[1])
    assert ys[0] == pytest.approx(-10.4, abs=0.05) and ys[1] == pytest.approx(-8.0, abs=0.05)
    _look_away_and_back(c)
    assert c.world.get("crate_2").world_position()[1] == pytest.approx(-8.0, abs=0.05)


def _visit_and_leave(env):
    env.step("move 4")  # within 5 m of the crate
    env.step("turn 180")
    env.step("move 4")
    env.step("move 4")  # beyond 9 m


def test_mesh_despawn_on_leave(pair):
    """bugs.js mesh_despawn_on_leave: after a visit (within 5 m) and a leave (beyond 9 m) the object
    is unloaded for good."""
    c, p = pair("mesh_despawn_on_leave", start=(-4.0, -16.0, 90.0, 0.0))
    for env in (c, p):
        _visit_and_leave(env)
    assert c.world.get("crate_2").present and not p.world.get("crate_2").present


def test_mesh_reset_on_leave(pair):
    """bugs.js mesh_reset_on_leave: every visit-and-leave moves it by the offset, toggling back."""
    c, p = pair("mesh_reset_on_leave", start=(-4.0, 0.0, -90.0, 0.0))
    _visit_and_leave(p)
    assert p.world.get("crate_2").world_position()[1] == pytest.approx(-10.4, abs=0.05)
    _visit_and_leave(c)
    assert c.world.get("crate_2").world_position()[1] == pytest.approx(-8.0, abs=0.05)
