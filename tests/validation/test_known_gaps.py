"""Former known gaps: shipped tasks the runtime once could not expose, kept as regression tests.

A task the runtime cannot show yet is parked under `tests/validation/known_gaps/` with a strict
xfail here; once the runtime learns to show it, the test XPASSes, the task moves back to
`tasks_src/` and its test becomes a plain one below.  There are no parked gaps at the moment.

- set_mass (`tasks_src/factory/weightless_drum.wa`): the agent used to push with unbounded force
  (its velocity was reset every tick), so a 180 kg drum and a 0.02 kg one moved alike.  The push
  is now force-limited (`runtime/physics.py`, `PUSH_FORCE_N`).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from validation_helpers import ROOT, build

DRUM = ROOT / "tasks_src" / "factory" / "weightless_drum.wa"


@pytest.fixture(scope="module")
def drum_bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("drum") / "out"
    result = build([DRUM], ROOT, out)
    assert result.ok, [d.render() for d in result.diagnostics]
    return out / "factory_15"


def test_weightless_drum_shows_in_the_perturbed_world_only(drum_bundle):
    from wac.validation.bundlecheck import check_bundle

    r = check_bundle(drum_bundle)
    assert r.passed, r.reasons
    assert r.perturbed.anomalous and not r.clean.anomalous


def test_walking_into_the_drum_moves_only_the_weightless_one(drum_bundle):
    """The self-check plan's walk: the clean 180 kg drum stops the agent and stays put; the
    perturbed one is shoved away."""
    from wac.bundle.model import CompiledTask
    from wac.runtime.env import WorldEnv

    task = CompiledTask.model_validate_json((drum_bundle / "task.json").read_text())
    assert {o.id: o.mass_kg for o in task.scene.objects}["oil_drum_3"] == 180.0
    plan = json.loads((drum_bundle / "selfcheck.json").read_text())
    walk = [{"action": s["action"], **s["args"]} for s in plan["steps"] if s["action"] != "mark"]
    into = max(i for i, a in enumerate(walk) if a["action"] == "move" and a["direction"] == "forward")
    moved, blocked = {}, {}
    for variant in ("clean", "perturbed"):
        with WorldEnv(drum_bundle, variant, width=64, height=48, film_interval_s=None) as env:
            st = env.world.get("oil_drum_3")
            p0 = st.position.copy()
            results = [env.step(a) for a in walk]
            moved[variant] = float(np.linalg.norm(st.position[:2] - p0[:2]))
            blocked[variant] = "blocked" in results[into].outcome
    assert moved["clean"] < 0.02 and blocked["clean"]
    assert moved["perturbed"] > 1.0 and not blocked["perturbed"]
