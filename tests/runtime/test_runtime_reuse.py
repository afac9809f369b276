"""What the runtime reuses to be cheap (issue 28) gives the results it gave without reuse: fixed
objects as static bodies, consumers that redo work only for changed objects, frames rendered on
demand, render windows handed from one world of a process to the next."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from rt_scenes import anomaly, box, chair, fence, lamp, task, wall

from wac.bundle.model import Fog, SetLight


def _scene():
    return task(
        [
            wall("wall_1", (4.0, 0.0, 0.0)),
            chair("chair_1", (2.0, 1.5, 0.0)),
            fence("fence_1", (1.0, -3.0, 0.0), yaw=90.0),
            box("crate", (0.6, 0.6, 0.6), (2.5, -1.0, 0.0)),
        ]
    )


def test_fixed_objects_are_static_bodies_that_block_are_hit_and_follow_their_object(make_env):
    """A fixed object's parts are static rigid bodies (no multibody links: Bullet integrates every
    multibody each step, asleep or not); the agent is blocked by them, rays hit them, and an object
    moved in the world takes its bodies along."""
    env = make_env(_scene())
    ph, p = env.physics, env.physics.p
    chair_bodies = [b for b, part in ph.bodies["chair_1"] if part is None]
    assert len(chair_bodies) == 6  # four legs, a seat, a back
    assert all(p.getNumJoints(b, physicsClientId=ph.cid) == 0 for b in chair_bodies)
    ref, _, _ = ph.ray((2.0, 1.5, 3.0), (2.0, 1.5, -1.0))
    assert ref is not None and ref.object_id == "chair_1"
    r = env.step("move 4")
    assert "blocked" in r.outcome and r.pose.x == pytest.approx(4.0 - 0.1 - 0.3, abs=0.05)

    crate = env.world.get("crate")
    crate.position = np.array([6.0, -1.0, 0.0])  # an assignment: physics re-poses it at its next sync
    ph.sync()
    assert ph.ray((2.5, -1.0, 3.0), (2.5, -1.0, -1.0))[0].kind == "ground"
    assert ph.ray((6.0, -1.0, 3.0), (6.0, -1.0, -1.0))[0].object_id == "crate"


def test_the_world_tells_its_consumers_which_objects_changed(make_env):
    """Assignments to an object or one of its parts reach every watcher; copies made outside the
    world do not; bounds and selections follow the changes."""
    env = make_env(_scene())
    w = env.world
    seen = w.watch()
    crate = w.get("crate")
    lo0, _ = w.aabb(crate)
    crate.position = crate.position + np.array([1.0, 0.0, 0.0])
    assert seen == {"crate"} and w.aabb(crate)[0][0] == pytest.approx(lo0[0] + 1.0)
    seen.clear()
    leg = w.get("chair_1").parts["leg0"]
    leg.position = (0.19, 0.19, 0.5)
    assert seen == {"chair_1"}
    assert w.aabb(w.get("chair_1"))[1][2] == pytest.approx(
        0.91, abs=1e-9
    )  # the raised leg tops the back (0.90)
    seen.clear()
    copy = dataclasses.replace(crate)
    copy.position = np.array([0.0, 9.0, 0.0])
    assert not seen
    assert w.aabb(copy)[0][1] == pytest.approx(9.0 - 0.3)  # measured fresh, not the world's crate
    assert w.aabb(crate)[0][1] == pytest.approx(-1.3)

    mech = w.selection(lambda st: bool(st.mechanism))
    assert mech() == []
    w.get("wall_1").mechanism = {"dead": None}
    crate.mechanism = {"dead": None}
    assert [st.id for st in mech()] == ["wall_1", "crate"]  # world order
    crate.present = False
    crate.mechanism = {}
    assert [st.id for st in mech()] == ["wall_1"]


def test_frames_rendered_on_demand_are_the_frames_kept(make_env):
    """`step_images=False` renders no frame per action; `view()` then shows the frame the action
    would have kept, with shadows and with fog (the x-ray layer drawn or skipped alike)."""
    foggy = task([wall("wall_1", (6.0, 0.0, 0.0)), chair("chair_1", (3.0, 1.0, 0.0))])
    foggy = foggy.model_copy(
        update={"scene": foggy.scene.model_copy(update={"fog": Fog(start_m=2.0, end_m=30.0)})}
    )
    for t in (_scene(), foggy):
        kept = make_env(t, shadows=True)
        lazy = make_env(t, shadows=True, step_images=False)
        for a in ("turn 30", "move 1", "look 10", "turn -60", "wait 1"):
            frame = kept.step(a).frame
            assert lazy.step(a).frame is None
            assert np.array_equal(lazy.view(), frame)


def _indoor(lights_nothing: bool):
    """A scene without a sun (lamps cast the shadows) whose lamp is lit but lights nothing, or not."""
    effects = [SetLight(target="lamp_1", illuminates=False)] if lights_nothing else []
    t = task(
        [
            wall("wall_1", (4.0, 0.0, 0.0)),
            chair("chair_1", (2.5, 1.0, 0.0)),
            lamp("lamp_1", (2.0, -1.5, 0.0)),
        ],
        anomalies=[anomaly(effects, targets=["lamp_1"])] if effects else (),
    )
    return t.model_copy(update={"scene": t.scene.model_copy(update={"sun": None})})


def test_a_reused_window_renders_as_a_new_one(make_env):
    """A renderer takes the window a closed renderer of the process left (compiled shaders kept, a
    worker's memory flat): its frames are the frames of a renderer on a new window, with lamp shadow
    maps too (shadow passes are never handed on: a pass that baked another renderer's lamps lit a
    room whose lamp lights nothing)."""
    from wac.runtime import render

    acts = ("turn 30", "move 1", "turn -50")
    render._close_slots()
    fresh = make_env(_indoor(lights_nothing=True), shadows=True)
    want = [fresh.view()] + [fresh.step(a).frame for a in acts]
    fresh.close()
    render._close_slots()
    for before in (_indoor(lights_nothing=False), _scene()):
        make_env(before, shadows=True).close()  # leaves its window to the next renderer
        assert sum(len(v) for v in render._SLOTS.values()) == 1
        again = make_env(_indoor(lights_nothing=True), shadows=True)
        got = [again.view()] + [again.step(a).frame for a in acts]
        again.close()
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


def test_ids_and_depth_from_one_frame_equal_the_two_frame_reading(make_env, monkeypatch):
    """With nothing in the x-ray layer, ids and depth come from one render; they equal what the
    two renders (ids, then depth without that layer) give."""
    env = make_env(_scene())
    env.step("turn 20")
    ids1, depth1 = env.render_ids(with_depth=True)
    monkeypatch.setattr(type(env.renderer), "_xray_empty", lambda self, layer=None: False)
    ids2, depth2 = env.render_ids(with_depth=True)
    assert np.array_equal(ids1, ids2) and np.array_equal(depth1, depth2)
    assert (ids1 > 0).any() and np.isfinite(depth1).any()


def test_flat_twins_follow_the_scene_and_leave_its_frames_alone(make_env):
    """Ids, depth and probe counts come from the scene's flat twin (render_flat.py), brought in step
    with the scene only for the objects that changed: while objects move, hide and come back, with
    frames and probes in between, each reading equals a fresh renderer's, and the frames equal
    those of a renderer that never drew a flat frame."""
    from wac.runtime.render import Renderer
    from wac.runtime.render_probe import Probe

    moves = ((0.0, 0.0), (0.0, 0.8), (-0.5, 0.8))
    probe = Probe(objects=("crate",))

    def states(env):
        for move in moves:
            st = env.world.get("crate")
            st.position = np.asarray(st.position, dtype=float) + (*move, 0.0)
            env.world.get("chair_1").visible = move != (0.0, 0.8)
            yield env.camera()

    used = make_env(_scene())
    got = []
    for cam in states(used):
        r = used.renderer
        got.append((r.render(cam), *r.render_ids(cam, with_depth=True), r.probe_px(cam, probe)))
    plain = make_env(_scene())
    frames = [plain.renderer.render(cam) for cam in states(plain)]
    other = make_env(_scene())
    for k, cam in enumerate(states(other)):
        fresh = Renderer(other.world, other.width, other.height, other.hfov, shadows=other.shadows)
        ids, depth = fresh.render_ids(cam, with_depth=True)
        px = fresh.probe_px(cam, probe)
        fresh.close()
        frame, ids_k, depth_k, px_k = got[k]
        assert np.array_equal(frame, frames[k])
        assert np.array_equal(ids, ids_k) and np.array_equal(depth, depth_k) and px == px_k
    crate, chair = used.object_index("crate"), used.object_index("chair_1")
    assert (got[0][1] == crate).any() and got[0][3] > 0
    assert (got[0][1] == chair).any() and not (got[1][1] == chair).any() and (got[2][1] == chair).any()
    assert not np.array_equal(got[0][1], got[1][1])


def test_equal_objects_turned_alike_share_collision_shapes_and_collide_as_copies(make_env, monkeypatch):
    """Two chairs turned alike are built over one set of collision shapes (`_collision_shape`); walks
    into the chairs and rays onto them come out exactly as with a shape made for every body."""
    from wac.runtime.physics_bodies import Bodies

    scene = task(
        [
            chair("chair_1", (2.0, 0.0, 0.0)),
            chair("chair_2", (2.0, 3.0, 0.0)),
            chair("chair_3", (2.0, -3.0, 0.0), yaw=30.0),
        ]
    )
    acts = (
        "move 3",
        "turn 90",
        "move 3",
        "turn -90",
        "move 1",
        "turn -90",
        "move 4",
        "move 2",
        "turn 90",
        "move 2",
    )

    def run(env):
        ph = env.physics
        rays = [ph.ray((2.0, y, 3.0), (2.0, y, -1.0))[1] for y in (0.0, 3.0, -3.0)]
        steps = [env.step(a) for a in acts]
        return [(r.outcome, r.pose) for r in steps], rays, len(ph._shape_ids)

    shared = run(make_env(scene))
    made = []
    real = Bodies._collision_shape

    def every_time(self, args, same):
        self._shape_ids.clear()
        made.append(same)
        return real(self, args, same)

    monkeypatch.setattr(Bodies, "_collision_shape", every_time)
    copies = run(make_env(scene))
    assert shared[:2] == copies[:2]
    assert shared[2] == len(set(made)) < len(made) - 6  # chair_2's use chair_1's, legs one another's
    assert "blocked" in shared[0][0][0]  # the first walk stops at chair_1


def test_a_renderer_handed_to_a_world_of_an_equal_scene_draws_as_a_new_one(make_env):
    """A closed renderer without shadow maps is kept and handed to the next world of an equal scene
    with its actors (render_reuse.py).  Its frames, ids, depth, probe counts and draw order equal a
    new renderer's: for objects the old world moved, hid or repainted, for a dynamic one whose pose
    physics read back, for one the new world hid before its first frame, and while the new world
    changes on.  A world of another scene gets a new renderer
    (the kept one is released: one at a time), and a renderer whose lamps changed is not kept."""
    from wac.runtime import render_reuse
    from wac.runtime.camera import Camera
    from wac.runtime.render import Renderer
    from wac.runtime.render_probe import Probe
    from wac.runtime.world import World

    t = task(
        [
            wall("wall_1", (4.0, 0.0, 0.0)),
            chair("chair_1", (2.0, 1.5, 0.0)),
            fence("fence_1", (1.0, -3.0, 0.0), yaw=90.0),
            box("crate", (0.6, 0.6, 0.6), (2.5, -1.0, 0.0), dynamic=True, mass_kg=20.0),
            box("block_1", (0.5, 0.5, 0.5), (3.0, 2.5, 0.0)),
            box("block_2", (0.5, 0.5, 0.5), (3.0, -2.5, 0.0)),  # as large: drawn after block_1
        ]
    )
    probe = Probe(objects=("crate",))
    cams = [
        Camera((0.0, 0.0, 1.6), yaw, pitch, 90.0) for yaw, pitch in ((0.0, 5.0), (-40.0, 10.0), (20.0, 0.0))
    ]

    def new_world() -> World:
        w = World(t)
        w.get("fence_1").visible = False  # assigned before the first frame
        return w

    def draw_order(r: Renderer) -> list:
        """Whose actors each layer draws, in order (ties between coplanar faces go by it)."""
        owner = {g.actor: (oid, g.parts) for oid, gs in r.groups.items() for g in gs}
        order = []
        for ren in (r.ren, r.xray):
            props = ren.GetViewProps()
            props.InitTraversal()
            order.append([owner.get(props.GetNextProp()) for _ in range(props.GetNumberOfItems())])
        return order

    def readings(r: Renderer, w: World) -> list:
        out = []
        for k, cam in enumerate(cams):
            if k == 1:  # the world changes on while it runs
                chair = w.get("chair_1")
                chair.position = np.asarray(chair.position, dtype=float) + (0.0, -0.6, 0.0)
            out.append((r.render(cam), *r.render_ids(cam, with_depth=True), r.probe_px(cam, probe)))
        return out

    render_reuse.release_parked()
    old = make_env(t, shadows=False)
    old.step("move 1.5")  # then the crate is moved, the wall hidden and a block repainted
    crate = old.world.get("crate")
    crate.position = np.asarray(crate.position, dtype=float) + (0.0, 1.2, 0.0)
    old.world.get("wall_1").visible = False
    old.world.get("block_1").parts["body"].material = "wood"  # its actor is made anew, and again
    old.step("turn 5")  # drawn so
    kept_actor = old.renderer.groups["chair_1"][0].actor
    old.close()
    assert len(render_reuse._PARKED) == 1

    w = new_world()
    reused = Renderer.open(w, 160, 120, 90.0, shadows=False)
    assert reused.rebinds == 1 and reused.groups["chair_1"][0].actor is kept_actor
    got = readings(reused, w)
    got_order = draw_order(reused)
    reused.close()
    render_reuse.release_parked()
    w2 = new_world()
    fresh = Renderer.open(w2, 160, 120, 90.0, shadows=False)
    assert fresh.rebinds == 0
    want = readings(fresh, w2)
    assert got_order == draw_order(fresh) and len(got_order[0]) == 9
    for (frame, ids, depth, px), (frame2, ids2, depth2, px2) in zip(got, want, strict=True):
        assert np.array_equal(frame, frame2) and np.array_equal(ids, ids2)
        assert np.array_equal(depth, depth2) and px == px2
    crate_i, wall_i = w.get("crate").index, w.get("wall_1").index
    assert (want[0][1] == crate_i).any() and (want[0][1] == wall_i).any() and want[0][3] > 0
    assert not np.array_equal(want[0][0], want[1][0])

    fresh.close()  # kept again: a world of another scene gets a new one, and it is released
    other = Renderer.open(World(_scene()), 160, 120, 90.0, shadows=False)
    assert other.rebinds == 0 and not render_reuse._PARKED
    other.close()

    render_reuse.release_parked()
    lit = make_env(_indoor(lights_nothing=False), shadows=False)
    lit.step("turn 10")
    lit.world.get("lamp_1").lit = False  # the lamps every actor's shader counts change
    lit.step("turn 10")
    lit.close()
    assert not render_reuse._PARKED
