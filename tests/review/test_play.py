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
