"""The detectors' world queries that are kept per world (issue 28) answer as their definitions do,
on the shipped corpus's worlds: the twins near an object, the things built alike, the material of
each part; and the world-alone stage reuses a clean scene's findings for an equal scene only."""

from __future__ import annotations

from wac.bundle.reader import Bundle
from wac.detectors import World
from wac.validation import world_alone


def _worlds(built, every: int = 25):
    bundles = sorted(p for p in built.iterdir() if (p / "task.json").is_file())[::every]
    for b in bundles:
        task = Bundle.open(b).task()
        yield task, World.of(task, fired=range(len(task.anomalies)))


def _built(t) -> tuple:
    o = t.spec
    return (o.prefab or o.name, tuple((p.shape, tuple(p.size)) for p in o.parts))


def test_kept_queries_answer_as_their_definitions(built):
    checked = 0
    for _, w in _worlds(built):
        things = list(w.things.values())
        for t in things[::3]:
            assert w.built_as(t) == _built(t)
            alike = [x for x in things if x.drawn and _built(x) == _built(t)]
            assert w.built_alike(t) == alike
            for gap in (0.05, 15.0):
                near = [
                    x
                    for x in things
                    if x.id != t.id
                    and all(
                        x.spec.aabb_min[i] <= t.spec.aabb_max[i] + gap
                        and x.spec.aabb_max[i] >= t.spec.aabb_min[i] - gap
                        for i in range(3)
                    )
                ]
                assert w.near(t, gap) == near
                assert w.near_alike(t, gap) == [x for x in near if x.drawn and _built(x) == _built(t)]
            cats = {}
            for p in t.spec.parts:
                m = w.material(p.material)
                cats.setdefault(p.id, m.category if m is not None else None)
            assert w.part_categories(t) == cats
            checked += 1
    assert checked > 100


def test_the_clean_findings_of_a_scene_are_reused_for_an_equal_scene_only(built, monkeypatch):
    calls = []
    real = world_alone.detect
    monkeypatch.setattr(world_alone, "detect", lambda tl: calls.append(tl) or real(tl))
    monkeypatch.setattr(world_alone, "_KNOWN", {})
    tasks = [Bundle.open(b).task() for b in sorted(p for p in built.iterdir() if (p / "task.json").is_file())]
    first, same = next((a, b) for a, b in zip(tasks, tasks[1:], strict=False) if a.scene == b.scene)
    other = next(t for t in tasks if t.scene != first.scene)
    assert same.scene is not first.scene
    found = world_alone._known(first, World.of_scene(first.scene, first.exploration))
    assert world_alone._known(same, World.of_scene(same.scene, same.exploration)) is found
    assert len(calls) == 1
    world_alone._known(other, World.of_scene(other.scene, other.exploration))
    assert len(calls) == 2
