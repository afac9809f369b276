"""The shipped corpus (issue 12): its size, its spread over categories and environments, and
how much clutter its scenes hold, measured on one strict compile of tasks_src/.

Tasks under tasks_src/multi are left out of the counts: the derived multi-anomaly tasks are
regenerated on main and may be missing from a branch.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from wac.taxonomy.registry import Category

ROOT = Path(__file__).resolve().parents[2]

ENVIRONMENTS = 13
SCENES = 27
MIN_TASKS = 213
MIN_PER_CATEGORY = 10
MIN_PER_ENVIRONMENT = 10
MIN_INDOOR_OBJECTS = 80
MIN_OUTDOOR_OBJECTS = 150
# Enclosed spaces: the subway scenes and the factory machine hall are typed urban and
# industrial, but they are rooms and tunnels, not open ground, so they are held to the indoor
# figure (80 objects) rather than the outdoor one (150).
ENCLOSED = frozenset(
    {"subway_concourse", "subway_platform", "subway_service_corridor", "industrial_factory_machine_hall"}
)


@pytest.fixture(scope="module")
def corpus(shipped_build):
    """One strict compile of the shipped sources (once per session): (the result, the build directory)."""
    return shipped_build


@pytest.fixture(scope="module")
def entries(corpus) -> list[dict]:
    """The index entries of the single-anomaly evaluation tasks outside tasks_src/multi."""
    _, out = corpus
    tasks = json.loads((out / "index.json").read_text())["tasks"]
    return [
        t
        for t in tasks
        if not t["example"] and t["anomalies"] == 1 and not t["source"].startswith("tasks_src/multi/")
    ]


@pytest.fixture(scope="module")
def scene_objects(corpus, entries) -> dict[str, int]:
    """Objects of each scene: the fewest any task on it has (a task may add its own objects)."""
    _, out = corpus
    counts: dict[str, int] = {}
    for t in entries:
        n = len(json.loads((out / t["id"] / "task.json").read_text())["scene"]["objects"])
        counts[t["scene"]] = min(n, counts.get(t["scene"], n))
    return counts


def test_builds_clean_under_strict(corpus):
    res, _ = corpus
    assert res.ok, [d.render() for d in res.diagnostics]
    assert not res.warnings, [d.render() for d in res.warnings]


def test_size_and_spread(entries):
    assert len(entries) >= MIN_TASKS
    ids = [t["id"] for t in entries]
    assert len(ids) == len(set(ids)), sorted(i for i, n in Counter(ids).items() if n > 1)
    envs = Counter(t["environment"] for t in entries)
    assert None not in envs, "every shipped scene names its environment"
    assert len(envs) == ENVIRONMENTS, sorted(envs)
    assert {e: n for e, n in envs.items() if n < MIN_PER_ENVIRONMENT} == {}
    assert len({t["scene"] for t in entries}) == SCENES
    cats = Counter(t["category"] for t in entries)
    assert {c.value: cats.get(c.value, 0) for c in Category if cats.get(c.value, 0) < MIN_PER_CATEGORY} == {}


def test_scenes_are_cluttered(entries, scene_objects):
    types = {t["scene"]: t["scene_type"] for t in entries}
    short = {}
    for scene, n in scene_objects.items():
        need = MIN_INDOOR_OBJECTS if types[scene] == "indoor" or scene in ENCLOSED else MIN_OUTDOOR_OBJECTS
        if n < need:
            short[scene] = (n, need)
    assert short == {}, f"scenes short of clutter (objects, needed): {short}"
