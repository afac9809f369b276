"""Seconds per action and film sampling: wac's model and the reference runtime's (runtime/timing.py)."""

from __future__ import annotations

import pytest
from rt_scenes import box, task

from wac.runtime.timing import REFERENCE, WAC


def empty(**kw):
    return task([box("marker", (0.5, 0.5, 1.0), (10.0, 10.0, 0.0))], **kw)


def test_the_reference_timing_per_action(make_env):
    env = make_env(empty(), film_interval_s=0.5, timing=REFERENCE)
    r = env.step("move 2.6")
    assert r.sim_elapsed == pytest.approx(0.5, abs=0.02) and r.moved_m == pytest.approx(2.6, abs=0.03)
    assert [round(f.t_sim, 2) for f in r.film] == [pytest.approx(0.01, abs=0.01), 0.5]  # from t = 0
    assert env.step("turn 60").sim_elapsed == pytest.approx(0.5, abs=0.02)  # 120 deg/s
    assert env.step("look 30").sim_elapsed == pytest.approx(0.25, abs=0.02)  # 120 deg/s, not 90
    assert env.step("interact").sim_elapsed == pytest.approx(2.8, abs=0.02)
    r = env.step("wait 2")
    assert len(r.film) == 5 and r.sim_elapsed == pytest.approx(2.0, abs=0.02)  # 0, 0.5, ..., 2.0 s
    r = env.step("wait 5")  # 8 frames at most, spread over the wait: a stride of 5/7 s
    assert len(r.film) == REFERENCE.film_max
    assert r.film[1].t_sim - r.film[0].t_sim == pytest.approx(5 / 7, abs=0.01)


def test_wacs_timing_is_unchanged(make_env):
    env = make_env(empty(), film_interval_s=0.5)
    assert env.timing is WAC
    r = env.step("wait 2")
    assert len(r.film) == 3 and r.film[0].t_sim == pytest.approx(0.5, abs=0.01)  # at the end of each interval
    assert env.step("move 1.4").sim_elapsed == pytest.approx(1.0, abs=0.02)
    assert env.step("interact").sim_elapsed == pytest.approx(0.5, abs=0.02)
    assert len(env.step("wait 5").film) == 9  # no cap
