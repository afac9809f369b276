"""The response-to-contact judge compares the target's motion with the same contact in the other world."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from wac.validation import judges_physics as J
from wac.validation.capture import Run, TickState

TASK = SimpleNamespace(
    scene=SimpleNamespace(objects=(SimpleNamespace(id="bin_1", name="wheelie bin"),)),
    anomalies=(SimpleNamespace(anchor=True, targets=("bin_1",), effects=()),),
)


def _run(tip_deg: float = 0.0, moved_m: float = 0.0, rose_m: float = 0.0, jitter_m: float = 0.0) -> Run:
    """A target that stands still while the agent is far (but for `jitter_m`), then, once touched,
    tips about x, slides along x and rises, ending where the motion takes it."""
    ticks = []
    for i in range(40):
        touched = i >= 20
        k = min(1.0, (i - 19) / 10) if touched else 0.0
        wobble = jitter_m * (1 if i % 2 else -1) if not touched else 0.0
        bottom = rose_m * (1.0 - abs(2 * k - 1)) if touched else 0.0  # up and down again
        ticks.append(
            TickState(
                t=i * 0.1,
                daylight=1.0,
                lit=(False,),
                open_frac=(0.0,),
                spin=(),
                position=((moved_m * k + wobble, 0.0, 0.5 + bottom),),
                rotation=((0.0, tip_deg * k, 0.0),),
                present=(True,),
                agent=(-5.0 + 4.0 * k, 0.0, 0.0) if touched else (-5.0, 0.0, 0.0),
                bottom=(bottom,),
            )
        )
    return Run(variant="", samples=(), steps=(), ticks=tuple(ticks))


@pytest.mark.parametrize(
    ("pert", "clean", "shows"),
    [
        (_run(tip_deg=180, moved_m=0.3), _run(tip_deg=90, moved_m=0.3), "tipped 180 deg"),  # C.5's bin
        (_run(rose_m=1.6, moved_m=3.0), _run(tip_deg=177, moved_m=1.7), "rose 1.60 m"),  # launched
        (_run(moved_m=4.0), _run(moved_m=0.9), "thrown 4.0 m"),
        (_run(jitter_m=0.01), _run(), "jitters"),
    ],
)
def test_a_motion_out_of_proportion_to_the_same_contact_shows_the_anomaly(pert, clean, shows):
    rp, rc = J.judge_contact_pair(pert, clean, TASK)
    assert rp.anomalous and shows in rp.detail, rp.detail
    assert not rc.anomalous, rc.detail


@pytest.mark.parametrize(
    "motion",
    [
        {"tip_deg": 177, "moved_m": 1.7},  # a light basket knocked upside down by the walk
        {"moved_m": 3.0},  # shoved far
        {"rose_m": 0.5},
    ],
)
def test_the_same_motion_in_both_worlds_is_no_anomaly(motion):
    """A motion past the fixed thresholds that the clean world shares is what the contact does."""
    rp, rc = J.judge_contact_pair(_run(**motion), _run(**motion), TASK)
    assert not rp.anomalous and not rc.anomalous


def test_a_perturbed_world_calmer_than_the_clean_one_shows_the_anomaly_in_the_clean_one():
    """The worlds swapped (the clean bin flips, the perturbed one barely moves): the clean run is
    the one out of proportion, and the self-check fails on it."""
    rp, rc = J.judge_contact_pair(_run(tip_deg=10), _run(tip_deg=180), TASK)
    assert not rp.anomalous and rc.anomalous and "tipped 180 deg" in rc.detail


def test_a_launch_a_little_farther_than_a_shove_is_not_enough():
    """Thrown past 2.5 m, but only 0.5 m farther than the clean shove sends it."""
    rp, _ = J.judge_contact_pair(_run(moved_m=2.8), _run(moved_m=2.3), TASK)
    assert not rp.anomalous
