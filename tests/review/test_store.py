"""The review database: tokens, verdicts, two writers at once, restarts, migrations."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
import threading

import pytest

from wac.errors import UsageError
from wac.review.store import MIGRATIONS, SCHEMA_VERSION, AuthError, FlaggedFrame, Store, StoreError


def test_tokens_are_checked_and_only_their_hash_is_stored(tmp_path):
    db = tmp_path / "r.sqlite"
    store = Store(db)
    token = store.add_reviewer("alice")
    assert store.authenticate(token).name == "alice"
    with pytest.raises(AuthError):
        store.authenticate("not-a-token")
    with pytest.raises(AuthError):
        store.authenticate(None)
    with pytest.raises(UsageError, match="already exists"):
        store.add_reviewer("alice")
    raw = db.read_bytes() + (
        db.with_name(db.name + "-wal").read_bytes() if db.with_name(db.name + "-wal").exists() else b""
    )
    assert token.encode() not in raw
    new = store.rotate_token("alice")
    with pytest.raises(AuthError):
        store.authenticate(token)
    assert store.authenticate(new).name == "alice"


def test_a_write_needs_a_valid_token(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    store.add_reviewer("alice")
    for bad in (None, "", "forged"):
        with pytest.raises(AuthError):
            store.record(bad, "t", "v1", "accept")
    assert store.verdicts() == []


def test_verdicts_keep_comment_time_and_flagged_frames(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    tok = store.add_reviewer("alice")
    v = store.record(
        tok,
        "t",
        "v1",
        "needs_change",
        "the sack floats only a little",
        seconds_spent=93.5,
        flagged=[FlaggedFrame("perturbed a3", {"step": 3, "actions": ["move 1"]}, b"\xff\xd8jpeg")],
    )
    assert (v.reviewer, v.verdict, v.comment, v.seconds_spent) == (
        "alice",
        "needs_change",
        "the sack floats only a little",
        93.5,
    )
    (flag,) = v.flagged
    assert flag["label"] == "perturbed a3" and flag["meta"]["actions"] == ["move 1"]
    assert store.flagged_image(flag["id"]) == b"\xff\xd8jpeg"
    with pytest.raises(StoreError, match="verdict must be one of"):
        store.record(tok, "t", "v1", "maybe")


def test_data_survives_a_restart(tmp_path):
    db = tmp_path / "r.sqlite"
    store = Store(db)
    tok = store.add_reviewer("alice")
    store.record(tok, "t", "v1", "accept", "fine")
    del store
    again = Store(db)  # a new server process on the same file
    assert again.authenticate(tok).name == "alice"
    assert [(v.task_id, v.verdict, v.comment) for v in again.verdicts()] == [("t", "accept", "fine")]
    assert again.version() == SCHEMA_VERSION


def _writer(db: str, token: str, task: str, n: int) -> None:
    store = Store(db)
    for i in range(n):
        store.record(token, task, f"v{i}", "accept", f"{task} {i}")


def test_two_writer_processes_lose_nothing(tmp_path):
    db = tmp_path / "r.sqlite"
    store = Store(db)
    ta, tb = store.add_reviewer("alice"), store.add_reviewer("bob")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(db), t, name, 40)) for t, name in ((ta, "a"), (tb, "b"))]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    got = store.verdicts()
    assert len(got) == 80
    assert {v.comment for v in got} == {f"{t} {i}" for t in "ab" for i in range(40)}
    assert {v.reviewer for v in got if v.task_id == "a"} == {"alice"}


def test_two_writer_threads_and_concurrent_first_open(tmp_path):
    db = tmp_path / "r.sqlite"
    errors = []

    def open_and_write(name: str) -> None:
        try:
            store = Store(db)  # both threads may create and migrate the new file at once
            tok = store.add_reviewer(name)
            for i in range(25):
                store.record(tok, "shared", "v1", "accept" if i % 2 else "reject", str(i))
        except Exception as exc:  # collected: an assertion in a thread would be lost
            errors.append(exc)

    threads = [threading.Thread(target=open_and_write, args=(n,)) for n in ("alice", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    store = Store(db)
    assert store.version() == SCHEMA_VERSION
    assert len(store.verdicts("shared")) == 50


def test_an_old_database_is_migrated_in_place(tmp_path):
    db = tmp_path / "old.sqlite"
    con = sqlite3.connect(db)
    con.executescript(MIGRATIONS[0])  # the first released schema
    con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    con.execute("INSERT INTO schema_version VALUES (1)")
    con.execute("INSERT INTO reviewers (name, token_sha256, created_at) VALUES ('old', 'x', 0)")
    con.execute(
        "INSERT INTO verdicts (task_id, version_id, reviewer_id, verdict, comment, created_at) "
        "VALUES ('t', 'v1', 1, 'accept', 'from before', 1)"
    )
    con.commit()
    con.close()
    store = Store(db)
    assert store.version() == SCHEMA_VERSION
    (v,) = store.verdicts()
    assert (v.reviewer, v.comment, v.seconds_spent, v.flagged) == ("old", "from before", 0.0, ())
    tok = store.add_reviewer("new")
    store.record(tok, "t", "v1", "accept", flagged=[FlaggedFrame("a1", {})])  # the new table works
    assert len(store.verdicts("t")[-1].flagged) == 1


def test_a_newer_or_foreign_database_is_refused(tmp_path):
    newer = tmp_path / "newer.sqlite"
    Store(newer)
    con = sqlite3.connect(newer)
    con.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="newer than this wac"):
        Store(newer)
    foreign = tmp_path / "other.sqlite"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE photos (id INTEGER)")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="not a review database"):
        Store(foreign)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError):
        Store(junk)
