"""The human-auditor database: participants and their tokens, assignments, and each session's calls.

One SQLite file (`wac human --db FILE`) with the review database's machinery (WAL, one
`BEGIN IMMEDIATE` per write, numbered migrations: `wac.review.store.SqliteStore`).  An assignment
is one participant's slot on one task; once started it holds the session's options, its clock
(seconds spent on the page) and how it ended, and `calls` holds every tool call in order, so a
session is rebuilt after a restart by replaying them (the runtime is deterministic).

Tokens are shown once, when a participant is added; only their SHA-256 is kept.  The scene and
target kept per assignment serve the assignment rule only and never reach a page.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass

from wac.errors import StoreError, UsageError
from wac.review.store import SqliteStore
from wac.suggest import did_you_mean

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE participants (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_sha256 TEXT NOT NULL UNIQUE,
        created_at REAL NOT NULL
    );
    CREATE TABLE assignments (
        id INTEGER PRIMARY KEY,
        participant_id INTEGER NOT NULL REFERENCES participants(id),
        task_id TEXT NOT NULL,
        slot INTEGER NOT NULL,
        version_id TEXT NOT NULL,
        scene TEXT NOT NULL,
        targets TEXT NOT NULL,
        created_at REAL NOT NULL,
        options TEXT,
        started_at REAL,
        elapsed_s REAL NOT NULL DEFAULT 0,
        last_seen REAL,
        finished_at REAL,
        ended TEXT CHECK (ended IN ('done', 'time')),
        UNIQUE (participant_id, task_id),
        UNIQUE (task_id, slot)
    );
    CREATE TABLE calls (
        assignment_id INTEGER NOT NULL REFERENCES assignments(id),
        seq INTEGER NOT NULL,
        tool TEXT NOT NULL,
        args TEXT NOT NULL,
        error INTEGER NOT NULL,
        text_sha256 TEXT NOT NULL,
        PRIMARY KEY (assignment_id, seq)
    );
    """,
)


@dataclass(frozen=True)
class Participant:
    id: int
    name: str


@dataclass(frozen=True)
class Assignment:
    """One participant's slot on one task, and the state of its session."""

    id: int
    participant: str
    task_id: str
    slot: int
    version_id: str
    scene: str
    targets: tuple[str, ...]
    options: dict | None = None  # set when the session starts
    elapsed_s: float = 0.0
    last_seen: float | None = None
    finished_at: float | None = None
    ended: str | None = None  # "done" (the participant called done) or "time" (the clock ran out)

    @property
    def status(self) -> str:
        return "finished" if self.ended else "in progress" if self.options is not None else "not started"


@dataclass(frozen=True)
class Call:
    seq: int
    tool: str
    args: object  # as the page sent them (a JSON value), so a replay makes the same call
    error: bool
    text_sha256: str


_ASSIGNMENT_COLUMNS = (
    "a.id, p.name AS participant, a.task_id, a.slot, a.version_id, a.scene, a.targets, a.options,"
    " a.elapsed_s, a.last_seen, a.finished_at, a.ended"
)


class HumanStore(SqliteStore):
    """The human-auditor database (safe to share between threads)."""

    kind = "human-auditor"
    migrations = MIGRATIONS
    version_table = "human_schema_version"

    # --- participants ----------------------------------------------------------------------
    def add_participant(self, name: str) -> str:
        """Add a participant and return their new token (shown once; only its hash is kept)."""
        return self._add_person("participants", "participant", name)

    def participants(self) -> list[Participant]:
        rows = self._read("SELECT id, name FROM participants ORDER BY id")
        return [Participant(r["id"], r["name"]) for r in rows]

    def authenticate(self, token: str | None) -> Participant:
        """The participant holding `token`; AuthError when it is missing or unknown."""
        row = self._person_of("participants", "participant", token)
        return Participant(row["id"], row["name"])

    def participant(self, name: str) -> Participant:
        found = [p for p in self.participants() if p.name == name]
        if not found:
            hint = did_you_mean(name, [p.name for p in self.participants()])
            raise UsageError(f"no participant named {name!r}" + (f"; {hint}" if hint else ""))
        return found[0]

    # --- assignments -----------------------------------------------------------------------
    def add_assignments(self, rows: list[tuple[str, str, int, str, str, tuple[str, ...]]]) -> int:
        """Add (participant name, task id, slot, version id, scene, targets) rows in one transaction."""
        ids = {p.name: p.id for p in self.participants()}

        def add(con):
            for name, task, slot, version, scene, targets in rows:
                con.execute(
                    "INSERT INTO assignments (participant_id, task_id, slot, version_id, scene, targets,"
                    " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (ids[name], task, slot, version, scene, json.dumps(list(targets)), time.time()),
                )
            return len(rows)

        try:
            return self._write(add)
        except sqlite3.IntegrityError as exc:
            raise StoreError(
                f"assignments clash with ones made meanwhile ({exc}); run assign again"
            ) from None

    def assignments(self, participant: str | None = None) -> list[Assignment]:
        where, args = ("WHERE p.name = ?", (participant,)) if participant is not None else ("", ())
        rows = self._read(
            f"SELECT {_ASSIGNMENT_COLUMNS} FROM assignments a JOIN participants p ON p.id = a.participant_id"
            f" {where} ORDER BY a.id",
            args,
        )
        return [_assignment(r) for r in rows]

    def assignment(self, assignment_id: int) -> Assignment | None:
        rows = self._read(
            f"SELECT {_ASSIGNMENT_COLUMNS} FROM assignments a JOIN participants p ON p.id = a.participant_id"
            " WHERE a.id = ?",
            (assignment_id,),
        )
        return _assignment(rows[0]) if rows else None

    # --- sessions --------------------------------------------------------------------------
    def start(self, assignment_id: int, options: dict, now: float) -> None:
        """Record the options a session starts with (once: a restarted session keeps its own)."""
        self._write(
            lambda con: con.execute(
                "UPDATE assignments SET options = ?, started_at = ?, last_seen = ?"
                " WHERE id = ? AND options IS NULL",
                (json.dumps(options, sort_keys=True), now, now, assignment_id),
            )
        )

    def record_call(self, assignment_id: int, call: Call, elapsed_s: float, now: float) -> None:
        def add(con):
            con.execute(
                "INSERT INTO calls (assignment_id, seq, tool, args, error, text_sha256) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    assignment_id,
                    call.seq,
                    call.tool,
                    json.dumps(call.args),
                    int(call.error),
                    call.text_sha256,
                ),
            )
            con.execute(
                "UPDATE assignments SET elapsed_s = ?, last_seen = ? WHERE id = ?",
                (elapsed_s, now, assignment_id),
            )

        self._write(add)

    def tick(self, assignment_id: int, elapsed_s: float, now: float) -> None:
        self._write(
            lambda con: con.execute(
                "UPDATE assignments SET elapsed_s = ?, last_seen = ? WHERE id = ? AND ended IS NULL",
                (elapsed_s, now, assignment_id),
            )
        )

    def finish(self, assignment_id: int, ended: str, elapsed_s: float, now: float) -> None:
        self._write(
            lambda con: con.execute(
                "UPDATE assignments SET ended = ?, elapsed_s = ?, last_seen = ?, finished_at = ?"
                " WHERE id = ? AND ended IS NULL",
                (ended, elapsed_s, now, now, assignment_id),
            )
        )

    def calls(self, assignment_id: int) -> list[Call]:
        rows = self._read(
            "SELECT seq, tool, args, error, text_sha256 FROM calls WHERE assignment_id = ? ORDER BY seq",
            (assignment_id,),
        )
        return [
            Call(r["seq"], r["tool"], json.loads(r["args"]), bool(r["error"]), r["text_sha256"]) for r in rows
        ]


def _assignment(r: sqlite3.Row) -> Assignment:
    return Assignment(
        r["id"],
        r["participant"],
        r["task_id"],
        r["slot"],
        r["version_id"],
        r["scene"],
        tuple(json.loads(r["targets"])),
        json.loads(r["options"]) if r["options"] else None,
        float(r["elapsed_s"]),
        r["last_seen"],
        r["finished_at"],
        r["ended"],
    )
