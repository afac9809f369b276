"""Category observables: what a self-check measures in a running world, and when it shows the anomaly.

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
pixels, as a reviewer would judge them (`judge_light_pair`, `judge_material_pair`,
`judge_apparent_pair`): the same evidence view rendered in both worlds, the frames compared where
the shadow should be and where it is, or over the target's own pixels; the world's state only
explains the verdict in words.  The response to contact is
judged against the same contact in the other world (`judge_contact_pair`): a light object that a
walk knocks over moves alike in both.

This module is the table (`OBSERVABLES`, `observable(name)`).  The judges live by family:
`judges_physics.py` (static and interactive physics), `judges_view.py` (visibility, apparent size),
`judges_appearance.py` (shadow/lighting and material, from pixels) and `judges_temporal.py` (change
over time, orientation, era); `readings.py` holds the `Reading` and what they share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from wac.bundle.model import CompiledTask
from wac.errors import UnknownObservable

from .capture import Run
from .judges_appearance import judge_light_pair, judge_material_pair, measure_light
from .judges_physics import (
    judge_blocked_pair,
    judge_contact_pair,
    judge_penetration,
    judge_size,
    judge_support,
    judge_through_pair,
    measure_penetration,
    measure_support,
)
from .judges_temporal import (
    judge_continuity,
    judge_era,
    judge_orientation,
    judge_pose,
    judge_presence,
    measure_era,
)
from .judges_view import judge_apparent_pair, judge_visibility, measure_visibility
from .readings import Reading, base_state

__all__ = ["OBSERVABLES", "Observable", "Reading", "UnknownObservable", "observable"]


@dataclass(frozen=True)
class Observable:
    """A category's measurement: `judge` reads one run; a differential one has `pair` instead, which
    reads both runs (the same evidence views in the two worlds) and returns both readings."""

    name: str
    measure: Callable
    judge: Callable | None = None
    depth: bool = False  # needs the depth image at each sample (one more render per sample)
    pair: Callable | None = None

    def readings(self, pert: Run, clean: Run, task: CompiledTask) -> tuple[Reading, Reading]:
        """(perturbed, clean) readings."""
        if self.pair is not None:
            return self.pair(pert, clean, task)
        assert self.judge is not None
        return self.judge(pert, task), self.judge(clean, task)


def _measure_with(*extra: Callable) -> Callable:
    def measure(env, task) -> dict:
        out = {"base": base_state(env, task)}
        for fn in extra:
            out.update(fn(env, task))
        return out

    return measure


OBSERVABLES: dict[str, Observable] = {
    "support_gap": Observable("support_gap", _measure_with(measure_support), judge_support),
    "penetration_depth": Observable(
        "penetration_depth", _measure_with(measure_penetration), judge_penetration
    ),
    "size_ratio": Observable("size_ratio", _measure_with(), judge_size),
    "displacement_through": Observable("displacement_through", _measure_with(), pair=judge_through_pair),
    "blocked_distance": Observable("blocked_distance", _measure_with(), pair=judge_blocked_pair, depth=True),
    "rotation_after_contact": Observable("rotation_after_contact", _measure_with(), pair=judge_contact_pair),
    "visible_pixels_behind_occluder": Observable(
        "visible_pixels_behind_occluder", _measure_with(measure_visibility), judge_visibility, depth=True
    ),
    "apparent_size_ratio": Observable("apparent_size_ratio", _measure_with(), pair=judge_apparent_pair),
    "shadow_offset": Observable(
        "shadow_offset", _measure_with(measure_light), pair=judge_light_pair, depth=True
    ),
    "material_at_target": Observable("material_at_target", _measure_with(), pair=judge_material_pair),
    "presence_before_after": Observable("presence_before_after", _measure_with(), judge_presence),
    "pose_before_after": Observable("pose_before_after", _measure_with(), judge_pose),
    "lighting_continuity": Observable("lighting_continuity", _measure_with(), judge_continuity),
    "orientation_vs_up": Observable("orientation_vs_up", _measure_with(), judge_orientation),
    "era_mismatch": Observable("era_mismatch", _measure_with(measure_era), judge_era),
}


def observable(name: str) -> Observable:
    try:
        return OBSERVABLES[name]
    except KeyError:
        raise UnknownObservable(
            f"unknown observable {name!r} (known: {', '.join(sorted(OBSERVABLES))})"
        ) from None
