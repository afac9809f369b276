"""`wac video`: an episode as a video of exactly what the auditor saw, from its PNGs or, for an
episode recorded without film images, replayed in the simulator and checked against its poses."""

from __future__ import annotations

import json

import numpy as np
import pytest

from wac.audit.session import AuditSession, SessionOptions
from wac.audit.video import FPS, frames_for, recorded_shots, replayed_shots, write_video
from wac.errors import BundleError
from wac.runtime.trajectory import read_trajectory

TASK = "living_02"
SMALL = SessionOptions(example=False, width=96, height=72)
ACTIONS = [
    ("move", {"distance_m": 1.5, "direction": "forward"}),
    ("turn", {"degrees": 40}),
    ("wait", {"seconds": 1.0}),
]


@pytest.fixture(scope="module")
def episode(built, tmp_path_factory):
    out = tmp_path_factory.mktemp("ep")
    with AuditSession(built / TASK, out=out, options=SMALL) as s:
        for name, args in ACTIONS:
            assert not s.call(name, args).error
    return out / "trajectory"


def test_a_replay_renders_the_recorded_frames_exactly(episode, built):
    traj = read_trajectory(episode)
    recorded = recorded_shots(traj)
    replayed = replayed_shots(traj, built / TASK)
    assert [s.ref for s in replayed] == [s.ref for s in recorded]
    assert any(".f" in s.ref for s in recorded)  # film frames are part of the video
    assert [s.t_sim for s in replayed] == pytest.approx(
        [s.t_sim for s in recorded], abs=1e-4
    )  # 4 decimals kept
    assert all(np.array_equal(a.image, b.image) for a, b in zip(recorded, replayed, strict=True))
    assert replayed[2].caption.startswith(replayed[2].ref) and "move 1.5 m forward" in replayed[2].caption


def test_the_video_holds_each_frame_for_its_simulated_time(episode, tmp_path):
    import imageio_ffmpeg

    shots = recorded_shots(read_trajectory(episode))
    out = tmp_path / "v.mp4"
    n = write_video(shots, out, "mp4", width=192)
    assert n == sum(h for _, h in frames_for(shots, 1.0))
    gaps = [b.t_sim - a.t_sim for a, b in zip(shots, shots[1:], strict=False)]
    assert n >= round(sum(gaps) * FPS)  # about the episode's simulated time at speed 1
    reader = imageio_ffmpeg.read_frames(str(out))
    meta = next(reader)
    frames = [np.frombuffer(f, dtype=np.uint8) for f in reader]
    w, h = meta["size"]
    assert w == 192 and 144 + 10 <= h <= 144 + 20 and len(frames) == n  # the frame and a caption bar
    first = frames[0].reshape(h, w, 3)[:144].astype(float)
    from PIL import Image

    a0 = np.asarray(Image.fromarray(shots[0].image).resize((192, 144))).astype(float)
    assert np.abs(first - a0).mean() < 12  # the start view (lossy codec)
    assert (
        n // 3 <= write_video(shots, tmp_path / "fast.webm", "webm", width=192, speed=2.0) < n
    )  # twice as fast


def test_a_replay_that_leaves_the_recorded_trajectory_is_an_error(episode, built, tmp_path):
    import shutil

    bent = tmp_path / "bent"
    shutil.copytree(episode, bent)
    lines = (bent / "trajectory.jsonl").read_text().splitlines()
    step = json.loads(lines[1])
    step["pose"]["x"] += 0.5
    lines[1] = json.dumps(step)
    (bent / "trajectory.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(BundleError, match="left the recorded trajectory at a1"):
        replayed_shots(read_trajectory(bent), built / TASK)
