"""Headless rendering: RGB frames, shadows, emission, ids, depth and byte-identical determinism."""

from __future__ import annotations

import numpy as np
import pytest
from rt_scenes import box, chair, lamp, showcase, task

from wac.bundle.model import Sun
from wac.runtime.render import Camera, Renderer, look_at
from wac.runtime.world import World


def test_frame_shape_and_sky(make_env):
    env = make_env(task([]), width=320, height=240)
    f = env.observe().frame
    assert f.shape == (240, 320, 3) and f.dtype == np.uint8
    sky = np.array([0.62, 0.74, 0.88]) * 255
    assert np.abs(f[5, 160].astype(float) - sky).max() < 3


def test_ids_and_depth_see_the_object_ahead(make_env):
    env = make_env(task([box("crate", (1.0, 1.0, 2.0), (4.0, 0.0, 0.0))]))
    ids, depth = env.render_ids(with_depth=True)
    idx = env.object_index("crate")
    assert ids[60, 80] == idx
    assert depth[60, 80] == pytest.approx(3.5, abs=0.05)
    assert ids[0, 0] == 0 and np.isinf(depth[0, 0])  # sky
    assert ids[-1, 80] == -1  # ground


def _ground_pixel(r: Renderer, cam: Camera, point) -> np.ndarray:
    """Colour of the frame where a world point projects (centre camera on it)."""
    img = r.render(look_at(cam.eye, point, 40.0))
    h, w = r.height // 2, r.width // 2
    return img[h - 4 : h + 4, w - 4 : w + 4].reshape(-1, 3).astype(float).mean(axis=0)


def test_sun_casts_real_shadows_headless():
    # sun from +x at 45 deg: a 2 m box at x=0 shadows the ground around x = -1.5
    w = World(
        task([box("block", (1.0, 1.0, 2.0), (0.0, 0.0, 0.0))], sun=Sun(azimuth_deg=0.0, elevation_deg=45.0))
    )
    r = Renderer(w, 160, 120)
    try:
        shaded = _ground_pixel(r, Camera((-6.0, -6.0, 4.0), 0, 0), (-1.5, 0.0, 0.0))
        lit = _ground_pixel(r, Camera((-6.0, -6.0, 4.0), 0, 0), (-1.5, -2.5, 0.0))
        sunny_side = _ground_pixel(r, Camera((-6.0, -6.0, 4.0), 0, 0), (1.5, 0.0, 0.0))
    finally:
        r.close()
    assert shaded.sum() < 0.8 * lit.sum()
    assert shaded.sum() < 0.8 * sunny_side.sum()  # the shadow is on the side away from the sun


def test_shadow_maps_are_reused_when_nothing_moves():
    w = World(showcase())
    r = Renderer(w, 160, 120)
    try:
        a = r.render(Camera((0, 0, 1.6), 0, 10))
        b = r.render(Camera((0, 0, 1.6), 0, 10))  # second frame reuses the baked maps
    finally:
        r.close()
    assert a.tobytes() == b.tobytes()


def test_lit_lamp_bulb_glows_and_dark_one_does_not():
    w = World(
        task(
            [lamp("on", (4.0, -1.0, 0.0), lit=True), lamp("off", (4.0, 1.0, 0.0), lit=False)],
            sun=Sun(elevation_deg=50.0, intensity=0.2),
        )
    )
    r = Renderer(w, 320, 240)
    try:
        cam = look_at((0.0, 0.0, 2.7), (4.0, 0.0, 2.75), 60.0)
        img = r.render(cam)
        ids = r.render_ids(cam)
    finally:
        r.close()
    on = img[ids == w.get("on").index].astype(float)
    off = img[ids == w.get("off").index].astype(float)
    assert on.size and off.size
    assert on.max(axis=0).sum() > off.max(axis=0).sum() + 60


def test_chair_is_recognisable_from_ids():
    w = World(task([chair("chair_1", (3.0, 0.0, 0.0), yaw=180.0)]))
    r = Renderer(w, 160, 120)
    try:
        ids = r.render_ids(look_at((0.5, -1.5, 1.2), (3.0, 0.0, 0.5), 60.0))
    finally:
        r.close()
    mask = ids == w.get("chair_1").index
    assert 200 < mask.sum() < 6000  # legs, seat and back: a sparse silhouette, not a block
    rows = np.where(mask.any(axis=1))[0]
    assert rows.max() - rows.min() > 30


def test_same_actions_give_identical_frame_bytes(make_env):
    t = showcase()
    acts = ["move 2", "turn 30", "look 10", "wait 1", "interact"]
    runs = []
    for _ in range(2):
        env = make_env(t, width=320, height=240, film_interval_s=0.5)
        frames = [env.observe().frame.tobytes()]
        for a in acts:
            r = env.step(a)
            frames += [r.frame.tobytes()] + [f.frame.tobytes() for f in r.film]
        runs.append((frames, [h.pose for h in env.history]))
    assert runs[0][0] == runs[1][0]
    assert runs[0][1] == runs[1][1]


def test_mesh_asset_from_bundle_dir(tmp_path, make_env):
    import trimesh
    from rt_scenes import obj

    from wac.bundle.model import Asset, Part

    (tmp_path / "assets").mkdir()
    trimesh.creation.icosphere(subdivisions=1, radius=3.0).export(tmp_path / "assets" / "abc.obj")
    rock = obj(
        "rock",
        [Part(id="body", shape="mesh", mesh="abc", size=(1.0, 1.0, 1.0), material="stone")],
        (3.0, 0.0, 0.0),
    )
    t = task([rock]).model_copy(
        update={"assets": (Asset(id="abc", file="assets/abc.obj", format="obj", source="x.obj"),)}
    )
    (tmp_path / "task.json").write_text(t.model_dump_json())
    from wac.bundle.integrity import write_manifest

    write_manifest(tmp_path)  # bundles are verified against their manifest on load
    env = make_env(tmp_path)
    lo, hi = env.world.aabb(env.world.get("rock"))
    assert np.allclose(hi - lo, 1.0, atol=0.02) and lo[2] == pytest.approx(
        0.0, abs=1e-6
    )  # fitted to size, base at z=0
    assert (
        env.render_ids()[60, 80] == env.object_index("rock")
        or (env.render_ids() == env.object_index("rock")).any()
    )
    assert "blocked" in env.step("move 4").outcome


def test_shadow_maps_are_rebaked_only_when_a_change_can_show(make_env):
    """The fan keeps spinning behind the agent: its stale shadow is out of view, so the maps are not
    re-baked, and every frame is byte-identical to one rendered with freshly baked maps."""
    t = showcase()
    acts = ["turn 180", "wait 1", "look 20", "wait 0.5", "look -20", "turn 180", "wait 1"]
    lazy, eager = make_env(t, width=160, height=120), make_env(t, width=160, height=120)
    eager.renderer._need_bake = lambda cam: True
    bakes = lazy.renderer.bakes
    for a in acts:
        assert lazy.step(a).frame.tobytes() == eager.step(a).frame.tobytes(), a
    assert lazy.renderer.bakes - bakes < len(acts)  # the turned-away frames reused the maps


def test_lamp_shadow_maps_are_smaller_than_the_suns():
    t = task([lamp("lamp_1", (3.0, 0.0, 0.0))])
    sizes = {}
    for name, scene in (("outdoor", t.scene), ("indoor", t.scene.model_copy(update={"sun": None}))):
        r = Renderer(World(t.model_copy(update={"scene": scene})), 64, 48)
        try:
            sizes[name] = (r.lamp_cone < 90.0, r._bake_seq.GetPasses().GetItemAsObject(0).GetResolution())
        finally:
            r.close()
    assert sizes == {"outdoor": (False, 2048), "indoor": (True, 1024)}  # lamps cast shadows indoors only


def test_a_mirrored_object_is_lit_as_itself(make_env):
    """A mirror turns every face's winding; the renderer winds a mirrored object's faces back, so a
    symmetric object mirrored draws exactly as before (it once drew dark, lit from inside), while an
    asymmetric one shows its mirror image."""

    def frame(objects):
        env = make_env(task(objects), width=160, height=120)
        return env.observe().frame.astype(int)

    plain = frame([box("post", (0.6, 0.6, 1.6), (3.0, 0.4, 0.0), material="red", rotation_deg=(30, 0, 0))])
    mirrored = frame(
        [
            box(
                "post",
                (0.6, 0.6, 1.6),
                (3.0, 0.4, 0.0),
                material="red",
                rotation_deg=(30, 0, 0),
                scale=(-1, 1, 1),
            )
        ]
    )
    assert np.abs(plain - mirrored).max() <= 2
    seat = frame([chair("chair", (2.0, 0.0, 0.0), yaw=60.0)])
    flipped = frame([chair("chair", (2.0, 0.0, 0.0), yaw=60.0, scale=(-1, 1, 1))])
    assert (np.abs(seat - flipped).sum(axis=2) > 30).sum() > 50
