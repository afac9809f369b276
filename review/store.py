"""The review database: reviewers and their tokens, verdicts per task version, flagged frames.

One SQLite file (`wac review --db FILE`), opened in WAL mode with a busy timeout so several
server processes and command-line calls can write at once; every write is one `BEGIN IMMEDIATE`
transaction.  The schema is versioned: `schema_version` holds the number of migrations applied,
and `open` applies the missing ones in order (each in the transaction that records it), so a
database made by an older wac is upgraded in place and one made by a newer wac is refused.

Tokens are shown once, when a reviewer is added; the database keeps only their SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from wac.errors import AuthError, StoreError, UsageError, WacError  # noqa: F401 - re-exported
from wac.suggest import did_you_mean

VERDICTS = ("accept", "reject", "needs_change")

# Each entry upgrades the schema by one version; never edit an applied one, append a new one.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE reviewers (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_sha256 TEXT NOT NULL UNIQUE,
        created_at REAL NOT NULL
    );
    CREATE TABLE verdicts (
        id INTEGER PRIMARY KEY,
        task_id TEXT NOT NULL,
        version_id TEXT NOT NULL,
        reviewer_id INTEGER NOT NULL REFERENCES reviewers(id),
        verdict TEXT NOT NULL CHECK (verdict IN ('accept', 'reject', 'needs_change')),
        comment TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL
    );
    CREATE INDEX verdicts_task ON verdicts(task_id, version_id);
    """,
    """
    ALTER TABLE verdicts ADD COLUMN seconds_spent REAL NOT NULL DEFAULT 0;
    CREATE TABLE flagged_frames (
        id INTEGER PRIMARY KEY,
        verdict_id INTEGER NOT NULL REFERENCES verdicts(id),
        label TEXT NOT NULL,
        meta TEXT NOT NULL DEFAULT '{}',
        image BLOB
    );
    CREATE INDEX flagged_verdict ON flagged_frames(verdict_id);
    """,
    """
    CREATE TABLE labels (
        id INTEGER PRIMARY KEY,
        run TEXT NOT NULL,
        task_id TEXT NOT NULL,
        reviewer_id INTEGER NOT NULL REFERENCES reviewers(id),
        kind TEXT NOT NULL CHECK (kind IN ('exposure', 'report')),
        value INTEGER NOT NULL CHECK (value IN (0, 1)),
        created_at REAL NOT NULL
    );
    CREATE INDEX labels_episode ON labels(run, task_id);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


@dataclass(frozen=True)
class Reviewer:
    id: int
    name: str


@dataclass(frozen=True)
class FlaggedFrame:
    label: str  # what the reviewer saw, e.g. "perturbed a3 (move forward 0.50 m)"
    meta: dict  # variant, step, pose, the actions that reproduce it
    image: bytes | None = None  # JPEG or PNG bytes


@dataclass(frozen=True)
class Verdict:
    id: int
    task_id: str
    version_id: str
    reviewer: str
    verdict: str
    comment: str
    created_at: float
    seconds_spent: float
    flagged: tuple[dict, ...] = ()  # {id, label, meta} (images are read one by one)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class SqliteStore:
    """A connection-per-call view of one versioned SQLite database (safe to share between threads):
    WAL, a busy timeout, one `BEGIN IMMEDIATE` per write, and `migrations` applied in order.  A
    subclass names its `kind` (for messages) and its `migrations`."""

    kind = "review"
    migrations: tuple[str, ...] = MIGRATIONS
    version_table = "schema_version"  # its own per kind: one kind's file is never taken for another's

    def __init__(self, path: str | Path, timeout_s: float = 10.0) -> None:
        self.path = Path(path)
        self.timeout_s = timeout_s
        if self.path.exists() and not self.path.is_file():
            raise StoreError(f"{self.path} is not a file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.migrate()

    # --- people who sign in with a token (reviewers, participants) ------------------------
    def _add_person(self, table: str, role: str, name: str, taken_hint: str = "") -> str:
        """Add a person to `table` and return their new token (shown once; only its hash is kept)."""
        name = name.strip()
        if not name or len(name) > 64 or any(c in name for c in "\r\n\t"):
            raise UsageError(f"a {role} name is 1-64 characters on one line")
        token = secrets.token_urlsafe(24)

        def add(con):
            try:
                con.execute(
                    f"INSERT INTO {table} (name, token_sha256, created_at) VALUES (?, ?, ?)",
                    (name, token_hash(token), time.time()),
                )
            except sqlite3.IntegrityError:
                raise UsageError(
                    f"a {role} named {name!r} already exists; pick another name{taken_hint}"
                ) from None

        self._write(add)
        return token

    def _person_of(self, table: str, role: str, token: str | None) -> sqlite3.Row:
        """The row of `table` whose token is `token`; AuthError when it is missing or unknown."""
        if not token:
            raise AuthError(f"sign in first: this needs a {role} token")
        rows = self._read(f"SELECT id, name FROM {table} WHERE token_sha256 = ?", (token_hash(token),))
        if not rows:
            raise AuthError(f"unknown {role} token")
        return rows[0]

    # --- connections and migrations -------------------------------------------------------
    def connect(self) -> sqlite3.Connection:
        deadline = time.monotonic() + self.timeout_s
        while True:
            con = None
            try:
                con = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
                con.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as exc:
                if con is not None:
                    con.close()
                # switching a new file to WAL while another connection does the same fails at once
                # with "database is locked" (SQLite does not wait on that lock): try again
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise StoreError(f"{self.path} is not a {self.kind} database: {exc}") from None
                time.sleep(0.05)
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"{self.path} is not a {self.kind} database: {exc}") from None
        con.execute(f"PRAGMA busy_timeout={int(self.timeout_s * 1000)}")
        con.execute("PRAGMA foreign_keys=ON")
        con.row_factory = sqlite3.Row
        return con

    def version(self) -> int:
        con = self.connect()
        try:
            return _version(con, self.version_table)
        finally:
            con.close()

    def migrate(self) -> int:
        """Apply the migrations this database lacks; return the schema version."""
        con = self.connect()
        try:
            con.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see it done
            try:
                table = self.version_table
                con.execute(f"CREATE TABLE IF NOT EXISTS {table} (version INTEGER NOT NULL)")
                have = _version(con, table)
                latest = len(self.migrations)
                if have > latest:
                    raise StoreError(
                        f"{self.path} has {self.kind} schema version {have}, newer than this wac "
                        f"understands ({latest}); upgrade wac"
                    )
                if have == 0 and _user_tables(con) - {table}:
                    raise StoreError(f"{self.path} is an SQLite database, but not a {self.kind} database")
                for n in range(have, latest):
                    for stmt in _statements(self.migrations[n]):
                        con.execute(stmt)
                con.execute(f"DELETE FROM {table}")
                con.execute(f"INSERT INTO {table} (version) VALUES (?)", (latest,))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            return latest
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: {exc}") from None
        finally:
            con.close()

    def _write(self, fn):
        con = self.connect()
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                out = fn(con)
                con.execute("COMMIT")
                return out
            except BaseException:
                con.execute("ROLLBACK")
                raise
        finally:
            con.close()

    def _read(self, sql: str, args: Iterable = ()) -> list[sqlite3.Row]:
        con = self.connect()
        try:
            return con.execute(sql, tuple(args)).fetchall()
        finally:
            con.close()


class Store(SqliteStore):
    """The review database (safe to share between threads)."""

    # --- reviewers ---------------------------------------------------------------------------
    def add_reviewer(self, name: str) -> str:
        """Add a reviewer and return their new token (shown once; only its hash is kept)."""
        return self._add_person(
            "reviewers", "reviewer", name, f" (or --rotate to give {name.strip()!r} a new token)"
        )

    def rotate_token(self, name: str) -> str:
        """Give an existing reviewer a new token; the old one stops working."""
        token = secrets.token_urlsafe(24)

        def rotate(con):
            cur = con.execute(
                "UPDATE reviewers SET token_sha256 = ? WHERE name = ?", (token_hash(token), name)
            )
            if cur.rowcount != 1:
                names = [r[0] for r in con.execute("SELECT name FROM reviewers")]
                hint = did_you_mean(name, names)
                raise UsageError(f"no reviewer named {name!r}" + (f"; {hint}" if hint else ""))

        self._write(rotate)
        return token

    def reviewers(self) -> list[Reviewer]:
        return [
            Reviewer(r["id"], r["name"]) for r in self._read("SELECT id, name FROM reviewers ORDER BY name")
        ]

    def authenticate(self, token: str | None) -> Reviewer:
        """The reviewer holding `token`; AuthError when it is missing or unknown."""
        row = self._person_of("reviewers", "reviewer", token)
        return Reviewer(row["id"], row["name"])

    # --- verdicts ----------------------------------------------------------------------------
    def record(
        self,
        token: str | None,
        task_id: str,
        version_id: str,
        verdict: str,
        comment: str = "",
        seconds_spent: float = 0.0,
        flagged: Iterable[FlaggedFrame] = (),
    ) -> Verdict:
        """Record the verdict of the token's reviewer on one task version (their latest one counts)."""
        reviewer = self.authenticate(token)
        if verdict not in VERDICTS:
            raise StoreError(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
        if not task_id or not version_id:
            raise StoreError("a verdict needs a task id and a version id")
        seconds = max(0.0, min(float(seconds_spent), 7 * 24 * 3600.0))
        now = time.time()
        flagged = tuple(flagged)

        def add(con):
            cur = con.execute(
                "INSERT INTO verdicts (task_id, version_id, reviewer_id, verdict, comment, created_at,"
                " seconds_spent) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (task_id, version_id, reviewer.id, verdict, comment, now, seconds),
            )
            vid = cur.lastrowid
            for f in flagged:
                con.execute(
                    "INSERT INTO flagged_frames (verdict_id, label, meta, image) VALUES (?, ?, ?, ?)",
                    (vid, f.label, json.dumps(f.meta, sort_keys=True), f.image),
                )
            return vid

        vid = self._write(add)
        return self.verdict(vid)

    def verdict(self, verdict_id: int) -> Verdict:
        rows = self._verdict_rows("WHERE v.id = ?", (verdict_id,))
        if not rows:
            raise StoreError(f"no verdict {verdict_id}")
        return rows[0]

    def verdicts(self, task_id: str | None = None) -> list[Verdict]:
        """Every verdict (of one task), oldest first, superseded ones included."""
        if task_id is None:
            return self._verdict_rows("", ())
        return self._verdict_rows("WHERE v.task_id = ?", (task_id,))

    # --- raters' labels of episodes (review/rating.py) -------------------------------------
    def record_label(self, token: str | None, run: str, task_id: str, kind: str, value: bool) -> None:
        """Record one rater's answer about one episode (their latest answer counts)."""
        reviewer = self.authenticate(token)
        if kind not in ("exposure", "report") or not run or not task_id:
            raise StoreError(f"a label needs a run, a task and a kind (exposure or report), got {kind!r}")
        self._write(
            lambda con: con.execute(
                "INSERT INTO labels (run, task_id, reviewer_id, kind, value, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (run, task_id, reviewer.id, kind, int(bool(value)), time.time()),
            )
        )

    def labels(self) -> list:
        """Every rater's latest answer per episode and question, as `wac.audit.agreement.Label`s."""
        from wac.audit.agreement import Label

        rows = self._read(
            "SELECT l.run, l.task_id, r.name AS rater, l.kind, l.value FROM labels l"
            " JOIN reviewers r ON r.id = l.reviewer_id ORDER BY l.created_at, l.id"
        )
        latest = {(r["run"], r["task_id"], r["rater"], r["kind"]): bool(r["value"]) for r in rows}
        return [
            Label(run=k[0], task_id=k[1], rater=k[2], kind=k[3], value=v) for k, v in sorted(latest.items())
        ]

    def flagged_image(self, frame_id: int) -> bytes | None:
        rows = self._read("SELECT image FROM flagged_frames WHERE id = ?", (frame_id,))
        return rows[0]["image"] if rows else None

    def _verdict_rows(self, where: str, args: tuple) -> list[Verdict]:
        rows = self._read(
            "SELECT v.id, v.task_id, v.version_id, r.name AS reviewer, v.verdict, v.comment, v.created_at,"
            f" v.seconds_spent FROM verdicts v JOIN reviewers r ON r.id = v.reviewer_id {where}"
            " ORDER BY v.created_at, v.id",
            args,
        )
        flags: dict[int, list[dict]] = {}
        if rows:
            ids = [r["id"] for r in rows]
            marks = ",".join("?" * len(ids))
            for f in self._read(
                f"SELECT id, verdict_id, label, meta FROM flagged_frames WHERE verdict_id IN ({marks})"
                " ORDER BY id",
                ids,
            ):
                flags.setdefault(f["verdict_id"], []).append(
                    {"id": f["id"], "label": f["label"], "meta": json.loads(f["meta"])}
                )
        return [
            Verdict(
                r["id"],
                r["task_id"],
                r["version_id"],
                r["reviewer"],
                r["verdict"],
                r["comment"],
                r["created_at"],
                r["seconds_spent"],
                tuple(flags.get(r["id"], ())),
            )
            for r in rows
        ]


def _version(con: sqlite3.Connection, table: str = "schema_version") -> int:
    if table not in _user_tables(con):
        return 0
    row = con.execute(f"SELECT MAX(version) FROM {table}").fetchone()
    return int(row[0] or 0)


def _user_tables(con: sqlite3.Connection) -> set[str]:
    return {
        r[0]
        for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
