"""`wac derive multi`: multi-anomaly variants of anchor tasks that build, reproducibly from the seed."""

from __future__ import annotations

import json
import shutil
import zlib
from pathlib import Path

import pytest

from wac.cli import main
from wac.compiler.derive import CONDITIONS, CONFIGS, default_anchors, derive_multi, write_derived
from wac.compiler.pipeline import compile_project
from wac.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
ANCHORS = ["market_03", "living_03"]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A project with the shipped scenes and two anchor tasks."""
    root = tmp_path_factory.mktemp("derive")
    shutil.copytree(ROOT / "tasks_src" / "scenes", root / "tasks_src" / "scenes")
    for sub, name in (("market", "floating_sacks.wa"), ("living", "door_closes_itself.wa")):
        (root / "tasks_src" / sub).mkdir(parents=True)
        shutil.copy(ROOT / "tasks_src" / sub / name, root / "tasks_src" / sub / name)
    return root


@pytest.fixture(scope="module")
def derived(project):
    out = project / "tasks_src" / "multi" / "derived"
    made = derive_multi(ANCHORS, [project / "tasks_src"], project, out, seed=7)
    write_derived(made, out)
    return made, out


def test_two_and_three_anomaly_variants_two_configurations_each(derived):
    made, _ = derived
    assert len(made) == len(ANCHORS) * len(CONDITIONS) * CONFIGS
    for anchor in ANCHORS:
        mine = [d for d in made if d.anchor == anchor]
        for count in CONDITIONS:
            configs = [d for d in mine if d.count == count]
            assert len(configs) == CONFIGS
            assert all(len(d.extras) == count - 1 for d in configs)
            assert len({frozenset(d.extras) for d in configs}) == CONFIGS  # the two draws differ


def test_extras_sit_on_distinct_objects_other_than_the_anchors(derived):
    made, _ = derived
    anchor_target = {"market_03": "sack_2", "living_03": "door_1"}
    for d in made:
        targets = [e.split()[2] for e in d.extras]
        assert len(set(targets)) == len(targets)
        assert anchor_target[d.anchor] not in targets


def test_every_derived_task_builds_with_the_anchor_first(derived, project, tmp_path):
    made, out = derived
    res = compile_project([out], project, out=tmp_path / "build", jobs=1)
    assert res.ok, [d.render() for d in res.diagnostics]
    by_id = {e["id"]: e for e in res.index}
    for d in made:
        e = by_id[d.name]
        assert e["anomalies"] == d.count
        assert e["operator"] == ("float" if d.anchor == "market_03" else "autoclose")
        ctx = json.loads((tmp_path / "build" / d.name / "agent" / "context.json").read_text())
        assert ctx["anomaly_count"] == d.count
        assert ctx["example"] == e["category"]  # only the anchor's type and example reach the agent


def test_same_seed_same_bytes_other_seed_other_draws(derived, project, tmp_path):
    made, out = derived
    again = derive_multi(ANCHORS, [project / "tasks_src"], project, out, seed=7)
    assert [d.text for d in again] == [d.text for d in made]
    assert all((out / f"{d.name}.wa").read_text() == d.text for d in made)
    other = derive_multi(ANCHORS, [project / "tasks_src"], project, out, seed=8)
    assert [d.extras for d in other] != [d.extras for d in made]


def test_default_anchor_candidates_per_environment_distinct_categories_first():
    index = [
        {"id": f"{env}_{i}", "scene": env, "environment": None, "category": f"c{i % 4}", "anomalies": 1}
        for env in ("a", "b")
        for i in range(8)
    ]
    index.append({"id": "a_multi", "scene": "a", "category": "c0", "anomalies": 2})
    groups = default_anchors(index, seed=3)
    assert groups == default_anchors(index, seed=3)
    assert len(groups) == 2
    for env, group in zip(("a", "b"), groups, strict=True):
        assert sorted(group) == sorted(f"{env}_{i}" for i in range(8))  # every candidate, in draw order
        assert len({int(p.rsplit("_", 1)[1]) % 4 for p in group[:4]}) == 4  # distinct categories first
    assert all("a_multi" not in g for g in groups)
    assert default_anchors(index, seed=4) != groups


def test_environment_groups_scenes(capsys):
    index = [
        {"id": f"{s}_{i}", "scene": s, "environment": "house", "category": f"c{i}", "anomalies": 1}
        for s in ("kitchen", "hall")
        for i in range(3)
    ]
    assert len(default_anchors(index, seed=0)) == 1  # one environment of two scenes


def test_unknown_anchor_is_a_usage_error(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    assert main(["derive", "multi", "tasks_src", "--anchors", "no_such_task", "--seed", "1"]) == 2
    assert "no such anchor task(s) in the sources: no_such_task" in capsys.readouterr().err


def test_a_draw_is_kept_only_when_the_check_passes(project, tmp_path):
    """An extra anomaly that fails with the anchor alone is never drawn again (one failing extra
    used to sink every three-anomaly draw that kept it); a three-anomaly draw combines extras that
    each passed with the anchor; every kept task passes."""
    out = project / "tasks_src" / "multi" / "checked"
    seen: list[tuple[tuple[str, str], ...]] = []

    def extras(files) -> tuple[tuple[str, str], ...]:
        task = json.loads(files["task.json"])
        return tuple((a["operator"], a["targets"][0]) for a in task["anomalies"][1:])

    def bad(extra) -> bool:  # a deterministic half of the extras cannot pass
        return zlib.crc32(repr(extra).encode()) % 2 == 0

    def check(files):
        seen.append(extras(files))
        return not any(bad(e) for e in seen[-1])

    made = derive_multi(ANCHORS[:1], [project / "tasks_src"], project, out, seed=7, check=check)
    assert len(made) == len(CONDITIONS) * CONFIGS
    assert all(len(draw) + 1 in CONDITIONS for draw in seen)  # only whole tasks are checked
    failed_alone = [d[0] for d in seen if len(d) == 1 and bad(d[0])]
    assert failed_alone and len(failed_alone) == len(set(failed_alone))  # never retried
    passed_alone = {d[0] for d in seen if len(d) == 1 and not bad(d[0])}
    assert all(e in passed_alone for d in seen if len(d) == 2 for e in d)
    kept = [extras({"task.json": _compiled_task(project, out, t)}) for t in made]
    assert all(not bad(e) for draw in kept for e in draw)
    with pytest.raises(UsageError, match="pick another anchor"):
        derive_multi(ANCHORS[:1], [project / "tasks_src"], project, out, seed=7, check=lambda f: False)


def _compiled_task(project: Path, out: Path, derived) -> bytes:
    """The task.json a derived task compiles to."""
    from wac.compiler.pipeline import compile_file
    from wac.compiler.resolve import Loader

    path = write_derived([derived], out)[0]
    res = compile_file(path, Loader(root=project))
    ((_, _, files, _),) = res.tasks
    return files["task.json"]


def test_default_takes_full_environments_in_seeded_order(monkeypatch):
    """Three anchors from each of N environments (the paper's 21 = 3 x 7): an environment where
    fewer than three anchors derive is left out and the next one in the seed's order is taken."""
    import wac.compiler.derive as D

    groups = [[f"{env}_{i}" for i in range(4)] for env in "abcde"]
    fails = {"b_0", "b_1"}  # environment b has only two anchors that derive

    def fake_find(names, sources, loader):
        return [D._Anchor(task=type("T", (), {"name": n})(), path=Path(n), lines=[]) for n in names]

    def fake_derive(anchor, loader, out_dir, seed, check, say):
        n = anchor.task.name
        return None if n in fails else [D.Derived(f"{n}_m2_c1", n, 2, 1, (), "")]

    monkeypatch.setattr(D, "_find_anchors", fake_find)
    monkeypatch.setattr(D, "_derive_anchor", fake_derive)
    monkeypatch.setattr(D, "Loader", lambda root: None)
    run = lambda seed, envs: D.derive_default(groups, [], Path("."), Path("."), seed, 3, None, None, envs)  # noqa: E731
    used, made = run(0, 3)
    envs = [u.split("_")[0] for u in used[::3]]
    assert len(used) == 9 and len(set(envs)) == 3 and "b" not in envs
    assert all(u.split("_")[0] == e for e, u in zip([e for e in envs for _ in range(3)], used, strict=True))
    assert run(0, 3) == (used, made)  # reproducible from the seed
    assert any(run(s, 3)[0] != used for s in range(1, 6))  # the seed draws the environments
    every, _ = run(0, None)  # every environment, short ones included
    assert len(every) == 4 * 3 + 2


def test_an_interrupted_run_keeps_the_anchors_it_finished(project):
    """`wac derive multi` can take hours: each anchor's files are written when it is done, so
    Ctrl-C in the second anchor keeps the first one's four tasks."""
    out = project / "tasks_src" / "multi" / "interrupted"

    def check(files):
        if json.loads(files["task.json"])["id"].startswith(ANCHORS[1]):
            raise KeyboardInterrupt
        return True

    with pytest.raises(KeyboardInterrupt):
        derive_multi(ANCHORS, [project / "tasks_src"], project, out, seed=7, check=check, keep_each=True)
    kept = sorted(p.stem for p in out.glob("*.wa"))
    assert kept == sorted(f"{ANCHORS[0]}_m{n}_c{c}" for n in CONDITIONS for c in range(1, CONFIGS + 1))
    again = derive_multi(ANCHORS[:1], [project / "tasks_src"], project, out, seed=7, check=lambda f: True)
    assert {d.name: d.text for d in again} == {p.stem: p.read_text() for p in out.glob("*.wa")}


def test_an_operator_that_shows_in_every_frame_is_never_an_extra(project):
    """corrupted_frame tints every frame: as an extra it would hide the anchor's evidence."""
    from wac.compiler import derive
    from wac.compiler.operators import UNITS
    from wac.compiler.resolve import Loader

    loader = Loader(root=project)
    (anchor,) = derive._find_anchors(ANCHORS[:1], [project / "tasks_src"], loader)
    ops = {stmt.split()[1] for _, stmt in derive.candidates(anchor, loader)}
    assert "swap_material" in ops and "corrupted_frame" not in ops
    assert {n for n, u in UNITS.items() if u.alone} == {"corrupted_frame"}


def test_parallel_default_does_not_wait_for_environments_it_no_longer_needs(monkeypatch):
    """With -j 2, once enough environments are full the one still deriving in the other process
    is stopped (the run used to wait for it: tens of minutes on the shipped corpus)."""
    import time

    import wac.compiler.derive as D

    groups = [[f"{env}_{i}" for i in range(3)] for env in "ab"]
    order = list(groups)
    D._rng(0, "environments").shuffle(order)
    fast = order[0][0]

    def fake_find(names, sources, loader):
        return [D._Anchor(task=type("T", (), {"name": n})(), path=Path(n), lines=[]) for n in names]

    def fake_derive(anchor, loader, out_dir, seed, check, say):  # runs in the forked workers
        n = anchor.task.name
        if n[0] != fast[0]:
            time.sleep(120)
        return [D.Derived(f"{n}_m2_c1", n, 2, 1, (), "")]

    monkeypatch.setattr(D, "_find_anchors", fake_find)
    monkeypatch.setattr(D, "_derive_anchor", fake_derive)
    monkeypatch.setattr(D, "Loader", lambda root: None)
    t0 = time.monotonic()
    used, _ = D.derive_default(groups, [], Path("."), Path("."), 0, 3, None, None, 1, jobs=2)
    assert used == order[0]
    assert time.monotonic() - t0 < 60


def test_an_extra_anomaly_never_changes_the_anchors_in_context_example():
    """The example shown with a task is the first demonstration of its category sharing no target
    kind with it; an extra anomaly on, say, a table would swap the table demonstration for
    another, and the swap would hint at the extra's target.  Such draws are not kept."""
    from wac.compiler.derive import same_example

    def task(extra_name: str) -> dict[str, bytes]:
        objects = [
            {"id": "sack_1", "name": "grain sack", "synonyms": ["sack"]},
            {"id": "thing_1", "name": extra_name, "synonyms": []},
        ]
        anomalies = [
            {"category": "missing_support", "targets": ["sack_1"], "effects": []},
            {"category": "scale", "targets": ["thing_1"], "effects": []},
        ]
        return {"task.json": json.dumps({"scene": {"objects": objects}, "anomalies": anomalies}).encode()}

    assert same_example(task("lamp post"))
    assert not same_example(task("table"))  # the first missing-support demonstration floats a table


def test_re_deriving_some_anchors_keeps_the_other_anchors_files(derived, tmp_path):
    """`wac derive multi --anchors A` re-derives A's files: another anchor's derived files stay, a
    stale file of A goes, and so does every stale file when the whole set is derived."""
    made, out = derived
    scratch = tmp_path / "derived"
    shutil.copytree(out, scratch)
    stale = scratch / "market_03_m4_c1.wa"  # a file A's earlier run wrote, no longer drawn
    stale.write_text("# Derived by `wac derive multi --seed 7` from `market_03`: 4 anomalies.\n")
    hand = scratch / "notes.wa"  # not derived: never touched
    hand.write_text("# a hand-written file\n")
    market = [d for d in made if d.anchor == "market_03"]
    write_derived(market, scratch, {"market_03"})
    left = {p.name for p in scratch.glob("*.wa")}
    assert {f"{d.name}.wa" for d in made} | {"notes.wa"} == left
    write_derived(market, scratch)
    assert {f"{d.name}.wa" for d in market} | {"notes.wa"} == {p.name for p in scratch.glob("*.wa")}
