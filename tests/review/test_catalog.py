"""Review status per task version, the export, and `wac eval --accepted-only`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from wac.cli import main as wac
from wac.errors import UsageError
from wac.review.catalog import apply_filters, progress, read_build, review_of, reviews
from wac.review.export import accepted_only, read_accepted
from wac.review.store import Store

from .conftest import rebuild


def _status(store: Store, task) -> str:
    return review_of(task, store.verdicts(task.id)).status


def test_two_different_reviewers_accept_the_current_version(project, tmp_path):
    task = read_build(project / "build")[0]
    store = Store(tmp_path / "r.sqlite")
    a, b, c = (store.add_reviewer(n) for n in ("alice", "bob", "carol"))
    assert _status(store, task) == "pending"
    store.record(a, task.id, task.version_id, "accept")
    store.record(a, task.id, task.version_id, "accept")  # the same reviewer twice is one accept
    assert _status(store, task) == "pending"
    store.record(b, task.id, "0123456789abcdef", "accept")  # another version does not count
    assert _status(store, task) == "pending"
    store.record(b, task.id, task.version_id, "accept")
    rev = review_of(task, store.verdicts(task.id))
    assert rev.status == "accepted" and sorted(rev.accepts) == ["alice", "bob"]
    assert [v.version_id for v in rev.stale] == ["0123456789abcdef"]
    store.record(c, task.id, task.version_id, "reject", "the mailbox is hidden by the bus stop")
    assert _status(store, task) == "disputed"
    store.record(a, task.id, task.version_id, "needs_change")
    store.record(b, task.id, task.version_id, "needs_change")
    assert _status(store, task) == "rejected"
    store.record(c, task.id, task.version_id, "needs_change")
    assert _status(store, task) == "needs_change"  # each reviewer's latest verdict counts


def test_a_rebuilt_changed_task_makes_earlier_verdicts_stale(project, tmp_path):
    store = Store(tmp_path / "r.sqlite")
    a, b = store.add_reviewer("alice"), store.add_reviewer("bob")
    before = {t.id: t for t in read_build(project / "build")}
    edited = next(iter(before))
    for tok in (a, b):
        for t in before.values():
            store.record(tok, t.id, t.version_id, "accept")
    assert {r.status for r in reviews(list(before.values()), store.verdicts())} == {"accepted"}
    rebuild(project)  # nothing changed: the same versions, still accepted
    assert {r.status for r in reviews(read_build(project / "build"), store.verdicts())} == {"accepted"}
    src = project / "tasks_src" / "city" / "floating_mailbox.wa"
    text = src.read_text()
    src.write_text(text.replace("by 0.35 m", "by 0.45 m"))
    try:
        rebuild(project)
        after = {r.task.id: r for r in reviews(read_build(project / "build"), store.verdicts())}
        changed = [i for i in after if after[i].task.version_id != before[i].version_id]
        assert changed == [edited] == ["city_09"]
        assert after[edited].status == "pending"
        assert sorted(v.reviewer for v in after[edited].stale) == ["alice", "bob"]
        assert all(r.status == "accepted" for i, r in after.items() if i != edited)
        assert progress(list(after.values()))["stale"] == 1
    finally:
        src.write_text(text)
        rebuild(project)


def test_filters_pick_by_field_and_status(project, tmp_path):
    store = Store(tmp_path / "r.sqlite")
    revs = reviews(read_build(project / "build"), store.verdicts())
    assert len(apply_filters(revs, {"scene": "city_street"})) == len(revs) == 2
    assert apply_filters(revs, {"scene": "garden"}) == []
    assert len(apply_filters(revs, {"status": "pending", "difficulty": ""})) == 2
    assert apply_filters(revs, {"status": "accepted"}) == []


def test_export_and_accepted_only(project, tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    store = Store(db)
    a, b = store.add_reviewer("alice"), store.add_reviewer("bob")
    tasks = read_build(project / "build")
    first = tasks[0]
    for tok in (a, b):
        store.record(tok, first.id, first.version_id, "accept")
    out_json, out_csv = tmp_path / "accepted.json", tmp_path / "accepted.csv"
    build = str(project / "build")
    assert wac(["review", "export", build, "--db", str(db), "--out", str(out_json)]) == 0
    assert wac(["review", "export", build, "--db", str(db), "--out", str(out_csv)]) == 0
    doc = json.loads(out_json.read_text())
    assert doc["accepted"] == [
        {"task_id": first.id, "version_id": first.version_id, "accepted_by": ["alice", "bob"]}
    ]
    assert {r["task_id"]: r["status"] for r in doc["tasks"]} == {
        first.id: "accepted",
        tasks[1].id: "pending",
    }
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert [(r["task_id"], r["status"], r["accepted_by"]) for r in rows] == [
        (first.id, "accepted", "alice;bob"),
        (tasks[1].id, "pending", ""),
    ]
    assert read_accepted(out_csv) == read_accepted(out_json) == {(first.id, first.version_id)}
    assert accepted_only(build, out_json) == [first.id]
    assert accepted_only(build, out_csv, only=[first.id]) == [first.id]
    with pytest.raises(UsageError, match="no evaluation task"):
        accepted_only(build, out_json, only=[tasks[1].id])
    # a version the reviewers never saw is not accepted
    stale = json.loads(out_json.read_text())
    stale["accepted"][0]["version_id"] = "ffffffffffffffff"
    (tmp_path / "stale.json").write_text(json.dumps(stale))
    with pytest.raises(UsageError, match="at its current version"):
        accepted_only(build, tmp_path / "stale.json")
    (tmp_path / "junk.json").write_text("{}")
    with pytest.raises(UsageError, match="not a `wac review export` file"):
        read_accepted(tmp_path / "junk.json")


def test_eval_runs_only_accepted_tasks(project, tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    store = Store(db)
    a, b = store.add_reviewer("alice"), store.add_reviewer("bob")
    first = read_build(project / "build")[0]
    for tok in (a, b):
        store.record(tok, first.id, first.version_id, "accept")
    export = tmp_path / "accepted.json"
    assert wac(["review", "export", str(project / "build"), "--db", str(db), "-o", str(export)]) == 0
    run = tmp_path / "run"
    rc = wac(
        [
            "eval",
            str(project / "build"),
            "--agent",
            "random",
            "--accepted-only",
            str(export),
            "--out",
            str(run),
            "--judge",
            "none",
            "--width",
            "160",
            "--height",
            "120",
            "--budget-multiplier",
            "0.1",
        ]
    )
    assert rc == 0
    assert json.loads((run / "run.json").read_text())["tasks"] == [first.id]
    assert sorted(p.name for p in (run / "tasks").iterdir()) == [first.id]


def test_cli_add_reviewer_prints_a_working_token(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    capsys.readouterr()
    assert wac(["review", "add-reviewer", "dana", "--db", str(db)]) == 0
    token = capsys.readouterr().out.strip()
    assert Store(db).authenticate(token).name == "dana"
    assert wac(["review", "add-reviewer", "dana", "--db", str(db)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert wac(["review", "export", str(tmp_path / "nobuild"), "--db", str(db)]) == 2
    assert "not a wac build" in capsys.readouterr().err
    assert wac(["review", "export", str(Path(db).parent), "--db", str(tmp_path / "missing.sqlite")]) == 2
