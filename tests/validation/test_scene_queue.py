"""Self-check workers stay on a scene (issue 28: group work by scene across workers): the tasks of a
scene share what a worker process keeps of it, so each scene should be loaded by as few workers as
keep them all busy."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from wac.validation.pool import SceneQueue, scenes_of


@settings(max_examples=200, deadline=None)
@given(
    scenes=st.lists(st.sampled_from("abcdef"), min_size=1, max_size=40),
    jobs=st.integers(1, 4),
    order=st.randoms(use_true_random=False),
)
def test_every_task_once_and_a_worker_leaves_a_scene_only_when_it_is_done(scenes, jobs, order):
    q = SceneQueue(scenes)
    handed: list[int] = []
    on: dict[int, str] = {}  # worker -> scene of the task it runs
    for w in range(jobs):
        got = q.next(None)
        if got is not None:
            handed.append(got[0])
            on[w] = got[1]
    while on:
        w = order.choice(sorted(on))  # some worker finishes its task
        before = on.pop(w)
        left_of_before = sum(1 for i, s in enumerate(scenes) if s == before and i not in handed)
        got = q.next(before)
        if got is None:
            continue
        i, scene = got
        assert scenes[i] == scene and i not in handed
        if left_of_before:
            assert scene == before  # it stays while its scene has tasks left
        handed.append(i)
        on[w] = scene
    assert sorted(handed) == list(range(len(scenes)))


def test_a_new_worker_takes_the_largest_scene_nobody_is_on():
    q = SceneQueue(["a", "b", "b", "c", "c", "c"])
    assert q.next(None)[1] == "c"
    assert q.next(None)[1] == "b"  # c has a worker already
    assert q.next(None)[1] == "a"
    assert q.next(None)[1] == "c"  # all taken: share the largest left


def test_scenes_come_from_the_build_index(tmp_path):
    (tmp_path / "index.json").write_text(
        json.dumps({"tasks": [{"id": "t1", "scene": "park"}, {"id": "t2", "scene": "park"}]})
    )
    bundles = [tmp_path / "t1", tmp_path / "t2", tmp_path / "t3"]
    got = scenes_of(bundles)
    assert got[:2] == ["park", "park"] and got[2] not in ("park", got[0]) and got[2]


def test_a_worker_rasterises_in_its_own_thread_unless_told_otherwise(monkeypatch):
    """Self-check workers fill the cores: Mesa's llvmpipe draws in the worker's thread
    (`LP_NUM_THREADS=0`) rather than in threads of its own beside each worker; a setting the user
    gave is kept."""
    import gc
    import os

    from wac.validation.pool import _settle_worker

    monkeypatch.setattr(gc, "freeze", lambda: None)  # this test process is no worker
    monkeypatch.setattr(gc, "set_threshold", lambda *a: None)
    monkeypatch.delenv("LP_NUM_THREADS", raising=False)
    _settle_worker()
    assert os.environ["LP_NUM_THREADS"] == "0"
    monkeypatch.setenv("LP_NUM_THREADS", "4")
    _settle_worker()
    assert os.environ["LP_NUM_THREADS"] == "4"
