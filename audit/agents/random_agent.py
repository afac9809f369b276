"""`random`: uniformly random environment actions until the budget is spent; it never flags a bug.

A floor for the metrics: every action and every argument is drawn uniformly from the tool's
schema (move 0.3-4 m forward or back, turn -180..180, look -90..90, wait 0.5-5 s, interact) by
one generator seeded with `seed`, so a seed gives the same episode every time.
"""

from __future__ import annotations

import time

import numpy as np


class RandomAgent:
    name = "random"
    pipeline_check = False
    reads_images = False  # acts on tool text only (poses, outcomes, refs)

    def __init__(self, seed: int | str = 0, time_limit_s: float | str | None = None, **_ignored) -> None:
        """`time_limit_s` bounds wall-clock time; other options (meant for other agents) are ignored."""
        self.seed = int(seed)
        self.time_limit_s = float(time_limit_s) if time_limit_s not in (None, "") else None

    def _args(self, rng: np.random.Generator, spec) -> dict:
        args = {}
        for key, schema in spec.parameters.get("properties", {}).items():
            if key not in spec.parameters.get("required", ()):
                continue
            if "enum" in schema:
                args[key] = str(schema["enum"][int(rng.integers(len(schema["enum"])))])
            else:
                args[key] = round(float(rng.uniform(schema["minimum"], schema["maximum"])), 2)
        return args

    def run(self, session) -> None:
        rng = np.random.default_rng(self.seed)
        t0 = time.monotonic()
        session.call("observe")
        actions = [t for t in session.tools if t.env_action]
        errors = 0
        while actions and session.actions_used < session.budget and errors < 20:
            if self.time_limit_s is not None and time.monotonic() - t0 >= self.time_limit_s:
                break
            spec = actions[int(rng.integers(len(actions)))]
            res = session.call(spec.name, self._args(rng, spec))
            if res.error:
                if "exhausted" in res.text or "already finished" in res.text:  # budget or time spent
                    break
                errors += 1
        if not session.done:
            session.call("done", {"summary": "No bug found (random actions only)."})
