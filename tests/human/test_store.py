"""The human-auditor database and the assignment rule: balance, no task twice, no scene-and-target twice."""

from __future__ import annotations

import sqlite3
from collections import Counter

import pytest

from wac.errors import AuthError, StoreError, UsageError
from wac.human.assign import Slot, TaskKey, plan
from wac.human.store import Call, HumanStore


def _task(i: int, scene: str | None = None, targets=("t",)) -> TaskKey:
    return TaskKey(f"task_{i}", f"v{i}", scene or f"scene_{i}", frozenset(targets))


def test_two_per_task_balanced_and_never_twice():
    tasks = [_task(i) for i in range(6)]
    slots = plan(tasks, ["ann", "ben", "cat"], per_task=2)
    assert len(slots) == 12
    assert Counter(s.participant for s in slots) == {"ann": 4, "ben": 4, "cat": 4}
    for t in tasks:
        mine = [s for s in slots if s.task == t]
        assert sorted(s.slot for s in mine) == [1, 2]
        assert len({s.participant for s in mine}) == 2  # two different people


def test_loads_differ_by_at_most_one():
    slots = plan([_task(i) for i in range(7)], ["ann", "ben", "cat"], per_task=2)
    loads = Counter(s.participant for s in slots).values()
    assert max(loads) - min(loads) <= 1 and sum(loads) == 14


def test_nobody_audits_the_same_target_on_the_same_scene_twice():
    same = [
        _task(1, "street", ("bench_1",)),
        _task(2, "street", ("bench_1", "lamp_2")),
        _task(3, "street", ("lamp_9",)),
    ]
    slots = plan(same, ["ann", "ben", "cat", "dan"], per_task=2)
    by = {}
    for s in slots:
        by.setdefault(s.participant, []).append(s.task.task_id)
    for tasks in by.values():
        assert not {"task_1", "task_2"} <= set(tasks)  # they share bench_1 on one scene
    # another object on the same scene is fine: task_3 goes to whoever has the least load
    assert len(slots) == 6


def test_existing_slots_are_kept_and_only_the_missing_ones_filled():
    t = _task(1)
    existing = [Slot("ann", t, 1)]
    new = plan([t, _task(2)], ["ann", "ben"], existing, per_task=2)
    assert [(s.participant, s.task.task_id, s.slot) for s in new] == [
        ("ben", "task_1", 2),
        ("ann", "task_2", 1),  # a tie: the participant added first
        ("ben", "task_2", 2),
    ]
    assert plan([t], ["ann", "ben"], [*existing, *new], per_task=2) == []


def test_an_impossible_assignment_says_which_task_and_why():
    same = [_task(1, "street", ("bench_1",)), _task(2, "street", ("bench_1",))]
    with pytest.raises(
        UsageError, match=r"task task_2: no participant can take slot 1 of 2 .*audited the same target"
    ):
        plan(same, ["ann", "ben"], per_task=2)
    with pytest.raises(UsageError, match="add-participant"):
        plan(same, [], per_task=2)


def test_tokens_participants_and_calls(tmp_path):
    store = HumanStore(tmp_path / "h.sqlite")
    token = store.add_participant("ann")
    assert store.authenticate(token).name == "ann"
    with pytest.raises(AuthError):
        store.authenticate("nope")
    with pytest.raises(UsageError, match="already exists"):
        store.add_participant("ann")
    with pytest.raises(UsageError, match="did you mean"):
        store.participant("anne")
    assert token.encode() not in (tmp_path / "h.sqlite").read_bytes()  # only its hash is kept
    store.add_assignments([("ann", "task_1", 1, "v1", "street", ("bench_1",))])
    (a,) = store.assignments("ann")
    assert (a.task_id, a.slot, a.targets, a.status) == ("task_1", 1, ("bench_1",), "not started")
    store.start(a.id, {"session": {"width": 64}, "minutes": 10}, now=100.0)
    store.record_call(
        a.id, Call(1, "move", {"distance_m": 1, "direction": "forward"}, False, "ab"), 2.5, 102.5
    )
    store.record_call(a.id, Call(2, "turn", "not an object", True, "cd"), 3.0, 103.0)
    again = HumanStore(tmp_path / "h.sqlite")  # a restarted server reads the same session
    assert [c.args for c in again.calls(a.id)] == [{"distance_m": 1, "direction": "forward"}, "not an object"]
    b = again.assignment(a.id)
    assert (b.status, b.elapsed_s, b.options["minutes"]) == ("in progress", 3.0, 10)
    again.finish(a.id, "time", 600.0, 700.0)
    assert again.assignment(a.id).status == "finished"
    with pytest.raises(StoreError, match="clash"):
        again.add_assignments([("ann", "task_1", 2, "v1", "street", ("bench_1",))])


def test_a_review_database_is_not_a_human_one(tmp_path):
    from wac.review.store import Store

    Store(tmp_path / "review.sqlite").add_reviewer("ann")
    with pytest.raises(StoreError, match="not a human-auditor database"):
        HumanStore(tmp_path / "review.sqlite")
    con = sqlite3.connect(tmp_path / "other.sqlite")
    con.execute("CREATE TABLE t (x)")
    con.close()
    with pytest.raises(StoreError, match="not a human-auditor database"):
        HumanStore(tmp_path / "other.sqlite")
