"""Shadows: those of real prefabs are clearly dark and lie where the sun puts them; the shadow
anomalies (`remove_shadow`, `displace_shadow`) change the shadow on other surfaces only, never the
object; each lamp shades with its own map; a lamp that lights nothing still looks lit; translucent
surfaces are lit alike with and without shadow maps."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from wac.runtime.render import look_at

SUN_AZ, SUN_EL = 135.0, 50.0
OFFSET = (2.5, -1.5)
TARGETS = {
    "car_1": (-12.0, -12.0),
    "crate_1": (12.0, -12.0),
    "column_1": (-12.0, 12.0),
    "tree_1": (12.0, 12.0),
}

SCENE = f"""
scene lot {{
    description "A car park in the midday sun with a car, a crate, a gate pillar and a tree far apart."
    type urban
    era modern
    ground asphalt size (60, 60)
    sun azimuth {SUN_AZ:g} deg elevation {SUN_EL:g} deg intensity 1
    bounds from (-25, -25) to (25, 25)
    start at (0, -20) yaw 90 deg
    car_1: car at {TARGETS["car_1"]}
    crate_1: crate at {TARGETS["crate_1"]}
    column_1: column at {TARGETS["column_1"]} column_height 4 m
    tree_1: tree at {TARGETS["tree_1"]}
}}
"""


def _task(name: str, op: str) -> str:
    lines = "\n".join(
        f"    anomaly {op} {oid}" + (f" by {OFFSET}" if op == "displace_shadow" else "") for oid in TARGETS
    )
    return f'import "../scenes/lot.wa"\ntask {name} on lot {{\n    difficulty easy\n    multi_anomaly yes\n{lines}\n}}\n'


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    """The scene compiled with every target's shadow removed, and with every one displaced."""
    from wac.bundle.model import CompiledTask
    from wac.compiler.pipeline import compile_project

    root = tmp_path_factory.mktemp("lot")
    (root / "scenes").mkdir()
    (root / "scenes" / "lot.wa").write_text(textwrap.dedent(SCENE))
    (root / "tasks").mkdir()
    (root / "tasks" / "gone.wa").write_text(_task("gone", "remove_shadow"))
    (root / "tasks" / "moved.wa").write_text(_task("moved", "displace_shadow"))
    res = compile_project([root / "tasks"], root)
    assert res.ok, [str(d) for d in res.diagnostics]
    return {tid: CompiledTask.model_validate_json(files["task.json"]) for tid, files in res.tasks.items()}


VIEW = {
    "car_1": (1.5, 8.0),
    "crate_1": (0.8, 4.0),
    "column_1": (2.5, 8.0),
    "tree_1": (3.5, 11.0),
}  # aim, distance (m)


def _camera(oid: str):
    """A side view of the target and the ground its shadow falls on, the displaced one included."""
    base = np.array([*TARGETS[oid], 0.0])
    away = -np.array([np.cos(np.radians(SUN_AZ)), np.sin(np.radians(SUN_AZ)), 0.0])  # where shadows fall
    side = np.array([-away[1], away[0], 0.0])
    aim, dist = VIEW[oid]
    look = base + away * aim + np.array([*OFFSET, 0.0]) / 3
    return look_at(tuple(look + side * dist + (0.0, 0.0, dist * 0.4)), tuple(look), 75.0)


def _world_xy(cam, depth: np.ndarray) -> np.ndarray:
    """Ground-plane position (x, y) of every pixel, from metric view depth."""
    h, w = depth.shape
    f, up = cam.forward(), cam.up()
    right = np.cross(f, up)
    th = np.tan(np.radians(cam.hfov_deg) / 2)
    tv = np.tan(np.radians(cam.vfov_deg(w, h)) / 2)
    x = ((np.arange(w) + 0.5) / w * 2 - 1) * th
    y = (1 - (np.arange(h) + 0.5) / h * 2) * tv
    ray = f[None, None] + x[None, :, None] * right[None, None] + y[:, None, None] * up[None, None]
    pts = np.asarray(cam.eye)[None, None] + np.where(np.isfinite(depth), depth, 0.0)[..., None] * ray
    return pts[..., :2]


def _footprint(env, oid: str, offset=(0.0, 0.0)):
    """Where the sun puts the object's shadow: its bounding box thrown along the sun onto the ground
    (moved by `offset`), grown by 0.3 m; as a test on the ground positions of pixels."""
    import shapely

    lo, hi = env.world.aabb(env.world.get(oid))
    d = np.array(
        [
            np.cos(np.radians(SUN_EL)) * np.cos(np.radians(SUN_AZ)),
            np.cos(np.radians(SUN_EL)) * np.sin(np.radians(SUN_AZ)),
            np.sin(np.radians(SUN_EL)),
        ]
    )
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    flat = np.vstack([corners[:, :2], (corners - (corners[:, 2] / d[2])[:, None] * d)[:, :2]]) + np.asarray(
        offset
    )
    region = shapely.MultiPoint(flat).convex_hull.buffer(0.3)
    return lambda xy: shapely.contains_xy(region, xy[..., 0], xy[..., 1])


def _near(oid: str, cam, depth: np.ndarray) -> np.ndarray:
    """Pixels of ground within 8 m of the target (the other targets' shadows change too)."""
    return np.linalg.norm(_world_xy(cam, depth) - np.asarray(TARGETS[oid]), axis=2) <= 8.0


def _lum(img: np.ndarray) -> np.ndarray:
    return img.astype(float) @ np.array([0.2126, 0.7152, 0.0722])


@pytest.fixture(scope="module")
def views(tasks):
    """Per target: (clean, shadow removed, shadow displaced) frames, ids and depth, 320 x 240."""
    from wac.runtime.env import WorldEnv

    envs = {
        "clean": WorldEnv(tasks["gone"], variant="clean", width=320, height=240, film_interval_s=None),
        "gone": WorldEnv(tasks["gone"], variant="perturbed", width=320, height=240, film_interval_s=None),
        "moved": WorldEnv(tasks["moved"], variant="perturbed", width=320, height=240, film_interval_s=None),
    }
    try:
        out = {}
        for oid in TARGETS:
            cam = _camera(oid)
            out[oid] = {
                k: (e.renderer.render(cam), *e.renderer.render_ids(cam, with_depth=True))
                for k, e in envs.items()
            }
            out[oid]["cam"] = cam
        out["env"] = envs["clean"]
        yield out
    finally:
        for e in envs.values():
            e.close()


@pytest.mark.parametrize("oid", list(TARGETS))
def test_objects_cast_clear_shadows_where_the_sun_puts_them(views, oid):
    """Low objects too: the removed shadow is a clear, large change, all of it inside the shadow
    the sun throws from the object's box."""
    v = views[oid]
    (clean, ids, depth), (gone, ids_g, _) = v["clean"], v["gone"]
    ground = (ids == -1) & (ids_g == -1) & _near(oid, v["cam"], depth)
    darker = ground & (_lum(gone) - _lum(clean) >= 12)  # lit without the shadow, dark with it
    assert darker.sum() >= 200, f"{oid}: only {darker.sum()} px of its shadow differ"
    assert (_lum(gone) - _lum(clean))[darker].mean() >= 25  # an obvious shadow, not a faint one
    inside = _footprint(views["env"], oid)(_world_xy(v["cam"], depth))
    assert (darker & inside).sum() >= 0.95 * darker.sum(), f"{oid}: its shadow lies off where the sun puts it"


@pytest.mark.parametrize("oid", list(TARGETS))
@pytest.mark.parametrize("variant", ["gone", "moved"])
def test_shadow_anomalies_leave_the_object_itself_unchanged(views, oid, variant):
    """The object's own pixels (self-shading included) match the clean frame; the ground near it differs."""
    v = views[oid]
    (clean, ids, depth), (pert, ids_p, _) = v["clean"], v[variant]
    idx = views["env"].object_index(oid)
    mine = (ids == idx) & (ids_p == idx)
    assert mine.sum() >= 200 and (ids == idx).sum() == (ids_p == idx).sum()
    diff = np.abs(clean.astype(int) - pert.astype(int)).max(axis=2)[mine]
    assert diff.mean() <= 0.5 and (diff > 6).mean() <= 0.005, f"{oid} ({variant}): its own pixels changed"
    ground = (ids == -1) & (ids_p == -1) & _near(oid, v["cam"], depth)
    assert (ground & (np.abs(_lum(clean) - _lum(pert)) >= 12)).sum() >= 200


@pytest.mark.parametrize("oid", list(TARGETS))
def test_displaced_shadow_lands_at_the_offset(views, oid):
    """The displaced shadow (darker only in the perturbed frame) lies where the sun puts the
    object's shadow moved by the offset, and is as dark as a real one."""
    v = views[oid]
    (clean, ids, _), (moved, ids_m, depth) = v["clean"], v["moved"]
    ground = (ids == -1) & (ids_m == -1) & _near(oid, v["cam"], depth)
    new_dark = ground & (_lum(clean) - _lum(moved) >= 12)
    assert new_dark.sum() >= 300, f"{oid}: its moved shadow shows on {new_dark.sum()} px"
    inside = _footprint(views["env"], oid, OFFSET)(_world_xy(v["cam"], depth))
    assert (new_dark & inside).sum() >= 0.95 * new_dark.sum()


# --- lamps and translucent surfaces (small fixture scenes) ---------------------------------------------


def _patch(env, eye, target, fov=10.0) -> float:
    """Mean colour of the frame's centre looking from `eye` at `target`."""
    img = env.renderer.render(look_at(eye, target, fov))
    h, w = img.shape[0] // 2, img.shape[1] // 2
    return float(img[h - 4 : h + 4, w - 4 : w + 4].astype(float).mean())


def test_every_lamp_shades_with_its_own_map(make_env):
    """Indoors (no sun) each lamp's shadows come from its own map: the block next to the second
    lamp shades the floor on its far side from that lamp (VTK numbers the switched-off sun too, which
    gave every lamp the map of the one before it)."""
    from rt_scenes import box, lamp, task

    t = task(
        [
            lamp("lamp_a", (0.0, -4.0, 0.0)),
            lamp("lamp_b", (0.0, 4.0, 0.0)),
            box("block", (0.4, 0.4, 1.0), (1.0, 4.0, 0.0)),
        ]
    )
    t = t.model_copy(update={"scene": t.scene.model_copy(update={"sun": None})})
    env = make_env(t, "clean")
    behind, mirror = (
        _patch(env, (1.6, 1.0, 5.0), (1.6, 4.0, 0.0)),
        _patch(env, (-1.6, 1.0, 5.0), (-1.6, 4.0, 0.0)),
    )
    assert behind < 0.8 * mirror


def test_lamp_that_lights_nothing_looks_as_lit_as_in_the_clean_world(make_env):
    """Its light still reaches the lamp itself (the hood over its bulb); only everything else goes dark."""
    from rt_scenes import anomaly, obj, task

    from wac.bundle.model import Emitter, Part, SetLight, Sun

    parts = [
        Part(id="pole", shape="cylinder", size=(0.12, 0.12, 2.6), material="metal"),
        Part(
            id="bulb",
            shape="sphere",
            size=(0.3, 0.3, 0.3),
            position=(0, 0, 2.6),
            material="bulb",
            emitter=Emitter(intensity=1.5, range_m=8.0),
        ),
        Part(id="hood", shape="box", size=(0.8, 0.8, 0.06), position=(0, 0, 3.0), material="metal"),
    ]
    lantern = obj("lamp_1", parts, (3.0, 0.0, 0.0), name="lantern", kind="lamp", lit=True)
    eff = SetLight(target="lamp_1", lit=True, illuminates=False)
    t = task([lantern], anomalies=[anomaly([eff], ["lamp_1"])], sun=Sun(elevation_deg=50.0, intensity=0.05))
    c, p = make_env(t, "clean"), make_env(t, "perturbed")
    cam = look_at((1.5, -1.0, 2.0), (3.0, 0.0, 2.9), 50.0)
    ids = c.renderer.render_ids(cam)
    mine = ids == c.object_index("lamp_1")
    diff = np.abs(c.renderer.render(cam).astype(int) - p.renderer.render(cam).astype(int)).max(axis=2)
    assert mine.sum() > 100 and diff[mine].mean() < 0.5
    ground = ((2.0, -3.0, 3.0), (3.0, -1.5, 0.0))
    assert _patch(c, *ground) > _patch(p, *ground) + 5  # the ground next to it is not lit


def test_translucent_surfaces_are_lit_alike_with_shadows_on(make_env):
    """Water is lit the same with and without shadow maps.  A prop the camera culls is baked into
    the sun's map with its plain shader; a translucent surface sharing that program kept the light
    camera's light directions for the frame (the first one here, which bakes)."""
    from rt_scenes import box, pond, task

    t = task([pond("pond_1", (3.0, 0.0)), box("behind", (0.5, 0.5, 0.5), (-4.0, 0.0, 0.0), material="red")])
    plain, shadowed = (make_env(t, "clean", shadows=on) for on in (False, True))
    water = plain.render_ids() == plain.object_index("pond_1")
    assert water.sum() > 500
    diff = np.abs(plain.observe().frame.astype(float) - shadowed.observe().frame.astype(float))
    assert diff[water].mean() < 3
