"""Replaying a recorded trajectory on its bundle: the same actions, the same poses (a determinism check)."""

from __future__ import annotations

from pathlib import Path

from wac.bundle.model import CompiledTask
from wac.bundle.reader import Bundle

from .env import WorldEnv
from .timing import TIMINGS
from .trajectory import Trajectory, read_trajectory


def replay_env(traj: Trajectory, bundle_or_task, record_dir: str | Path | None = None) -> WorldEnv:
    """A world set up as `traj` was recorded: its variant, seed, frame size, field of view, film
    interval, timing, budget, and its start pose when that is not the task's own (a closer start)."""
    if isinstance(bundle_or_task, CompiledTask):
        task = bundle_or_task
    else:  # opened (and verified) once: the start pose needs the task before the world is built
        bundle_or_task = Bundle.open(bundle_or_task, verify=Path(bundle_or_task).is_dir())
        task = bundle_or_task.task()
    m, p = traj.meta, traj.steps[0]["pose"]
    s = task.exploration.start
    own = (*s.position[:2], s.yaw_deg, s.pitch_deg)
    rec = (p["x"], p["y"], p["yaw_deg"], p["pitch_deg"])
    return WorldEnv(
        bundle_or_task,
        variant=m["variant"],
        seed=m["seed"],
        width=m["width"],
        height=m["height"],
        film_interval_s=m["film_interval_s"],
        timing=TIMINGS[m.get("timing", "wac")],
        hfov_deg=m["hfov_deg"],
        record_dir=record_dir,
        start=None if all(abs(a - b) < 1e-3 for a, b in zip(own, rec, strict=True)) else rec,
        budget=m.get("budget"),
    )


def replay(path: str | Path, bundle_or_task, out: str | Path | None = None):
    """Re-run a recorded trajectory on its bundle; returns (new Trajectory or None, poses match)."""
    old = read_trajectory(path)
    env = replay_env(old, bundle_or_task, out)
    try:
        same = True
        for s, text in zip(old.steps[1:], old.actions(), strict=True):
            res = env.step(text)
            same &= res.pose.as_dict() == s["pose"]
    finally:
        env.close()
    return (read_trajectory(out) if out else None), same
