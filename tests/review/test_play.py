"""Live worlds of the review app: limits on open worlds, ownership, replay on switching."""

from __future__ import annotations

import pytest

from wac.review.catalog import read_build
from wac.review.play import PlayError, PlayHub


def test_worlds_are_limited_and_owned(project):
    task = read_build(project / "build")[0]
    hub = PlayHub(width=160, height=120, max_worlds=1)
    try:
        first, _ = hub.start("alice", task.id, task.version_id, task.bundle, "perturbed")
        with pytest.raises(PlayError):
            hub.act("bob", first["play"], {"action": "turn", "degrees": 10})
        second, _ = hub.start("bob", task.id, task.version_id, task.bundle, "clean")
        assert list(hub.plays) == [second["play"]]  # the older world was closed to make room
        with pytest.raises(PlayError, match="start again"):
            hub.act("alice", first["play"], {"action": "turn", "degrees": 10})
        with pytest.raises(PlayError, match="variant"):
            hub.start("bob", task.id, task.version_id, task.bundle, "dirty")
    finally:
        hub.shutdown()


def test_switching_worlds_replays_the_same_actions(project):
    task = read_build(project / "build")[0]
    hub = PlayHub(width=160, height=120)
    try:
        state, _ = hub.start("alice", task.id, task.version_id, task.bundle, "perturbed")
        pid = state["play"]
        for a in ("turn -20", "move 1", "look 10"):
            state, frame = hub.act("alice", pid, a)
            assert state["ok"], state["outcome"]
        there, _ = hub.switch("alice", pid, "clean")
        back, again = hub.switch("alice", pid, "perturbed")
        assert (there["step"], there["pose"]) == (3, state["pose"])
        assert back["pose"] == state["pose"] and again == frame  # deterministic: the same frame bytes
        assert back["actions"] == ["turn -20", "move 1", "look 10"]
    finally:
        hub.shutdown()


def test_the_world_a_page_will_start_is_built_while_the_page_loads(project):
    task = read_build(project / "build")[0]
    hub = PlayHub(width=160, height=120)
    try:
        hub.prepare("alice", task.id, task.version_id, task.bundle)
        ready = hub.run(lambda: dict(hub._ready))  # the simulation thread did the prepare first
        env = ready[("alice", task.id, task.version_id, "perturbed")]
        state, frame = hub.start("alice", task.id, task.version_id, task.bundle, "perturbed")
        assert hub.plays[state["play"]].env is env and frame  # the page's start took it
        assert hub.run(lambda: dict(hub._ready)) == {}
        # another reviewer, another version, or more pages than kept: a world of its own
        hub.prepare("bob", task.id, task.version_id, task.bundle)
        hub.prepare("bob", task.id, "another-version", task.bundle)
        hub.prepare("carol", task.id, task.version_id, task.bundle)
        assert len(hub.run(lambda: dict(hub._ready))) == 2  # READY_KEPT: the oldest was closed
        state, _ = hub.start("bob", task.id, task.version_id, task.bundle, "perturbed")
        assert state["step"] == 0 and len(hub.run(lambda: dict(hub._ready))) == 2
    finally:
        hub.shutdown()
