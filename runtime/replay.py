"""Replaying a recorded trajectory on its bundle: the same actions, the same poses (a determinism check)."""

from __future__ import annotations

from pathlib import Path

from .env import WorldEnv
from .timing import TIMINGS
from .trajectory import read_trajectory


def replay(path: str | Path, bundle_or_task, out: str | Path | None = None):
    """Re-run a recorded trajectory on its bundle; returns (new Trajectory or None, poses match)."""
    old = read_trajectory(path)
    m = old.meta
    env = WorldEnv(
        bundle_or_task,
        variant=m["variant"],
        seed=m["seed"],
        width=m["width"],
        height=m["height"],
        film_interval_s=m["film_interval_s"],
        timing=TIMINGS[m.get("timing", "wac")],
        hfov_deg=m["hfov_deg"],
        record_dir=out,
    )
    try:
        same = True
        for s, text in zip(old.steps[1:], old.actions(), strict=True):
            res = env.step(text)
            same &= res.pose.as_dict() == s["pose"]
    finally:
        env.close()
    return (read_trajectory(out) if out else None), same
