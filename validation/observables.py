"""Category observables: what a self-check measures in a running world, and when it shows the anomaly.

An observable (named by a category's or an operator's `observable:`, declared with the traits the
planner needs in `wac.taxonomy.registry.OBSERVABLES`) is one judge function registered with
`@observes(name, …)` beside the judges of its family: `judges_physics.py` (static and interactive
physics), `judges_view.py` (visibility, apparent size), `judges_appearance.py` (shadow/lighting and
material, from pixels) and `judges_temporal.py` (change over time, orientation, era); `readings.py`
holds the `Reading`, the `Observable` and what the judges share.  Importing this module imports
them all and fails unless they register exactly the taxonomy's observables.

Each observable has a `measure(env, task)` taken at every evidence sample (the plan's `mark`
steps, captioned actions, the start and the end) and a `judge(run, task)` that turns one
variant's run into a `Reading`: a value, whether it shows the anomaly, and a sentence saying why.
Measurements come from the running world: object poses and bounds, physics contacts and
penetration, the agent's commanded vs actual displacement, the target's pixels in the
segmentation render, its depth and colour, materials, light and mechanism state, and the
per-tick state of the target (spin angles, door opening, lamp state, daylight).

Most judges never look at the other variant: the differential property (anomalous in the
perturbed world, normal in the clean one) is checked by `selfcheck.py` from two independent
readings.  Shadow/lighting, material and view-dependent appearance are judged differentially from
pixels, as a reviewer would judge them (`pair=True`): the same evidence view rendered in both
worlds, the frames compared where the shadow should be and where it is, or over the target's own
pixels; the world's state only explains the verdict in words.  The response to contact is judged
against the same contact in the other world: a light object that a walk knocks over moves alike in
both.  A differential observable's `alone` judges the perturbed run by itself (the world-alone
stage, `world_alone.py`).
"""

from __future__ import annotations

from wac.errors import UnknownObservable
from wac.taxonomy.registry import OBSERVABLES as DECLARED

from . import judges_appearance, judges_physics, judges_temporal, judges_view  # noqa: F401 - they register
from .readings import OBSERVED, Observable, Reading

OBSERVABLES: dict[str, Observable] = OBSERVED  # complete once the judge modules are imported

if set(OBSERVABLES) != set(DECLARED):
    raise ImportError(
        f"observables without a judge: {sorted(set(DECLARED) - set(OBSERVABLES))}; "
        f"judges of unknown observables: {sorted(set(OBSERVABLES) - set(DECLARED))}"
    )

__all__ = ["OBSERVABLES", "Observable", "Reading", "UnknownObservable", "observable"]


def observable(name: str) -> Observable:
    try:
        return OBSERVABLES[name]
    except KeyError:
        raise UnknownObservable(
            f"unknown observable {name!r} (known: {', '.join(sorted(OBSERVABLES))})"
        ) from None
