"""The runtime decides "the target is in view" by its pixels, as the self-check judges a watched change:
a long target partly on screen is in view, a few pixels of a far one are not, nor is one behind a
wall; an object about to appear counts by its place, a target about to jump by its new place too."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rt_scenes import anomaly, box, task

from wac.bundle.model import AddObject, RemoveObject, SetPose, TriggerKind, new_trigger
from wac.bundle.onscreen import WATCH_PX
from wac.runtime.geometry import box_grid, corner_points
from wac.runtime.render_probe import PROBE_W
from wac.runtime.triggers import TriggerState

LOOK_AWAY = new_trigger(kind=TriggerKind.look_away)


def _hide(objects, target, trigger=LOOK_AWAY, **kw):
    return task(
        objects, anomalies=[anomaly([RemoveObject(target=target)], [target], trigger, operator="hide")], **kw
    )


def _segmentation_px(env, oid: str) -> float:
    """The object's pixels (640x480) in the full segmentation render of the agent's view."""
    ids = env.render_ids()
    return float(np.count_nonzero(ids == env.world.get(oid).index)) * 640 * 480 / ids.size


def _sample_points_in_view(env, lo, hi) -> bool:
    """The rule the runtime used before: some sample point of the target's box (its centre, its inner
    corners, a grid over it) inside the view frustum (rays aside: this only asks whether any is)."""
    cam = env.camera()
    eye, f, up = np.asarray(cam.eye), cam.forward(), cam.up()
    right = np.cross(f, up)
    th = math.tan(math.radians(env.hfov) / 2)
    tv = th * env.height / env.width
    c = (lo + hi) / 2
    pts = [c] + [c + 0.8 * (np.array(k) - c) for k in corner_points(lo, hi)] + box_grid(lo, hi)
    for p in pts:
        d = p - eye
        z = float(d @ f)
        if z > 0.05 and abs(float(d @ right)) / z <= th and abs(float(d @ up)) / z <= tv:
            return True
    return False


def test_a_long_target_partly_on_screen_is_in_view_and_a_look_away_waits(make_env):
    """Beside the end of a 14 m hoarding, a 69 deg turn leaves 2 m of it filling the frame's edge while
    every sample point of its box is off screen: the old rule fired the look-away here, in view."""
    hoarding = box("hoarding", (0.1, 14.0, 2.4), (6.0, 0.0, 0.0), material="wood")
    env = make_env(_hide([hoarding], "hoarding", start=((4.0, 6.0), 0.0)), width=320, height=240)
    env.step("wait 0.5")  # seen
    env.step("turn -69")
    lo, hi = env.world.aabb(env.world.get("hoarding"))
    assert not _sample_points_in_view(env, lo, hi)
    assert _segmentation_px(env, "hoarding") > 1000
    assert env.target_px(env.anomalies[0]) >= WATCH_PX
    assert env.world.get("hoarding").present and env.trigger_count() == 0
    env.step("turn -111")  # now facing away: it fires, unseen
    fired = [e for e in env.events if e.event == "fired"]
    assert len(fired) == 1 and not fired[0].target_in_view
    assert not env.world.get("hoarding").present


def test_three_pixels_of_a_far_target_are_not_in_view(make_env):
    """A crate 40 m off covers a few pixels: on screen, but not something an auditor watches."""
    crate = box("crate", (0.4, 0.4, 0.4), (40.0, 0.0, 0.0), material="wood")
    env = make_env(_hide([crate], "crate", ground=(100.0, 100.0)), width=320, height=240)
    lo, hi = env.world.aabb(env.world.get("crate"))
    assert _sample_points_in_view(env, lo, hi)  # the old rule saw it
    assert 0 < _segmentation_px(env, "crate") < WATCH_PX
    assert env.target_px(env.anomalies[0]) < WATCH_PX and not env.target_in_view(env.anomalies[0])


def test_an_occluded_target_is_not_in_view_until_it_peeks_over(make_env):
    wall = box("wall", (0.2, 4.0, 2.5), (3.0, 0.0, 0.0), name="wall")
    crate = box("crate", (0.6, 0.6, 0.6), (6.0, 0.0, 0.0), material="wood")
    tall = box("tall_crate", (0.6, 0.6, 4.0), (6.0, 0.0, 0.0), material="wood")
    env = make_env(_hide([wall, crate], "crate"), width=320, height=240)
    assert env.target_px(env.anomalies[0]) == 0.0 and not env.target_in_view(env.anomalies[0])
    env = make_env(_hide([wall, tall], "tall_crate"), width=320, height=240)
    px = env.target_px(env.anomalies[0])
    assert px >= WATCH_PX and px == pytest.approx(_segmentation_px(env, "tall_crate"), abs=4.0)


def test_an_object_about_to_appear_is_in_view_where_its_place_shows(make_env):
    cone = box("cone_9", (0.4, 0.4, 0.7), (5.0, 0.0, 0.0), material="red")
    t = task(
        [box("crate", (0.6, 0.6, 0.6), (0.0, 6.0, 0.0), material="wood")],
        anomalies=[
            anomaly([AddObject(object=cone)], [], new_trigger(kind=TriggerKind.revisit), operator="spawn")
        ],
    )
    env = make_env(t, width=320, height=240)
    an = env.anomalies[0]
    assert "cone_9" not in env.world.objects and env.target_in_view(an)  # its place is ahead
    env.step("turn 120")
    assert not env.target_in_view(an)
    env.step("wait 3")
    assert env.world.get("cone_9").present and env.trigger_count() == 1


def test_a_target_about_to_jump_into_view_is_watched_at_its_new_place(make_env):
    """A crate out of view that a look-away would move into plain view: the trigger waits."""
    crate = box("crate", (0.6, 0.6, 0.6), (5.0, 0.0, 0.0), material="wood")
    jump = SetPose(target="crate", position=(0.0, 5.0, 0.0))
    t = task([crate], anomalies=[anomaly([jump], ["crate"], LOOK_AWAY, operator="move")])
    env = make_env(t, width=320, height=240)
    env.step("wait 0.5")
    env.step("turn -90")  # facing +y: the crate's place is off screen, its new one ahead
    assert env.trigger_count() == 0 and env.target_in_view(env.anomalies[0])
    env.step("turn 180")  # facing -y: both off screen
    assert env.trigger_count() == 1 and tuple(env.world.get("crate").position[:2]) == (0.0, 5.0)


def test_a_probe_leaves_the_frames_as_they_were(make_env):
    """Frames after a probe are the bytes they would be without it (shadows on)."""
    objs = [
        box("hoarding", (0.1, 14.0, 2.4), (6.0, 0.0, 0.0), material="wood"),
        box("wall", (0.2, 4.0, 2.5), (3.0, 2.0, 0.0), name="wall"),
    ]
    plain, probed = (make_env(_hide(objs, "hoarding"), width=320, height=240) for _ in range(2))
    for yaw in (0.0, 40.0, 75.0, 120.0):
        plain.yaw = probed.yaw = yaw
        assert probed.target_px(probed.anomalies[0]) >= 0.0
        assert np.array_equal(plain.observe().frame, probed.observe().frame)


@pytest.mark.parametrize("size", [(640, 480), (320, 240)])
def test_the_probe_counts_what_the_frames_segmentation_counts(make_env, size):
    """At the frame's own resolution (up to `PROBE_W`), the probe's count is the full segmentation's."""
    objs = [box("crate", (0.6, 0.6, 0.6), (4.0, 0.0, 0.0)), box("post", (0.2, 0.2, 2.0), (2.5, 0.2, 0.0))]
    env = make_env(_hide(objs, "crate"), width=size[0], height=size[1])
    assert size[0] <= PROBE_W
    px = env.target_px(env.anomalies[0])
    assert px > WATCH_PX and px == _segmentation_px(env, "crate")


def test_only_a_trigger_that_can_use_the_answer_asks_for_it():
    far, near = 30.0, 3.0
    look = TriggerState(new_trigger(kind=TriggerKind.look_away, seen_within_m=10.0))
    assert look.needs_view(0.0, near) and not look.needs_view(0.0, far)
    look.was_in_view = True
    assert look.needs_view(0.0, far)  # seen: looking away from afar still counts
    after = TriggerState(new_trigger(kind=TriggerKind.after, after_s=5.0))
    assert not after.needs_view(4.0, near) and after.needs_view(5.0, near)
    leave = TriggerState(new_trigger(kind=TriggerKind.leave, enter_m=2.0, exit_m=6.0))
    assert not leave.needs_view(0.0, 8.0)  # never came near: not armed
    leave.entered = True
    assert leave.needs_view(0.0, 8.0) and not leave.needs_view(0.0, 4.0)
    for kind, values in (
        (TriggerKind.every, {"period_s": 1.0}),
        (TriggerKind.beyond, {"distance_m": 2.0}),
        (TriggerKind.within, {"distance_m": 2.0}),
        (TriggerKind.contact, {}),
    ):
        assert not TriggerState(new_trigger(kind, **values)).needs_view(9.0, near)
