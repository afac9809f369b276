"""The tasks a review covers and their review status: a build's index and manifests beside the verdicts.

A task is reviewed per *version* (its bundle's manifest `version_id`, docs/bundle.md): verdicts
on another version of the same task are **stale** — kept and shown, but they count for nothing.
Among the current version's verdicts only each reviewer's latest counts, and the task is

* `accepted` — two or more different reviewers accept it and nobody objects;
* `disputed` — some accept, some reject or ask for changes;
* `rejected` / `needs_change` — only objections (any reject makes it `rejected`);
* `pending` — fewer than two accepts and no objection.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wac.bundle.reader import Bundle, read_index, require_build

from .store import Verdict

STATUSES = ("pending", "accepted", "disputed", "needs_change", "rejected")
ACCEPTS_NEEDED = 2
FILTERS = ("scene", "scene_type", "family", "category", "difficulty", "status")


@dataclass(frozen=True)
class TaskEntry:
    """One task of the build (index.json entry) and the version its bundle has now."""

    id: str
    version_id: str
    scene: str
    scene_type: str
    family: str
    category: str
    operator: str
    difficulty: str
    example: bool
    source: str
    bundle: Path

    def field(self, name: str) -> str:
        return str(getattr(self, name))


@dataclass(frozen=True)
class Review:
    """A task's review state for its current version."""

    task: TaskEntry
    status: str
    current: tuple[Verdict, ...]  # each reviewer's latest verdict on the current version
    stale: tuple[Verdict, ...]  # verdicts on other versions (latest per reviewer and version)
    history: tuple[Verdict, ...]  # every verdict on the task, oldest first
    seconds_spent: float  # reviewers' time on the current version, summed over their verdicts

    @property
    def accepts(self) -> tuple[str, ...]:
        return tuple(v.reviewer for v in self.current if v.verdict == "accept")

    def field(self, name: str) -> str:
        return self.status if name == "status" else self.task.field(name)


def read_build(build: str | Path) -> list[TaskEntry]:
    """Every task of a build, with each bundle's version id read from its manifest."""
    build = require_build(build)
    entries = read_index(build)
    out = []
    for e in entries:
        bundle = build / e["id"]
        out.append(
            TaskEntry(
                id=e["id"],
                version_id=Bundle(bundle).manifest().version_id,
                scene=e.get("scene", ""),
                scene_type=e.get("scene_type", ""),
                family=e.get("family", ""),
                category=e.get("category", ""),
                operator=e.get("operator", ""),
                difficulty=e.get("difficulty", ""),
                example=bool(e.get("example", False)),
                source=e.get("source", ""),
                bundle=bundle,
            )
        )
    return out


def review_of(task: TaskEntry, verdicts: list[Verdict]) -> Review:
    """The status of one task from all its verdicts (any version)."""
    mine = [v for v in verdicts if v.task_id == task.id]
    latest: dict[tuple[str, str], Verdict] = {}
    for v in mine:  # oldest first: later verdicts replace earlier ones
        latest[(v.reviewer, v.version_id)] = v
    current = tuple(v for (_, ver), v in latest.items() if ver == task.version_id)
    stale = tuple(v for (_, ver), v in latest.items() if ver != task.version_id)
    accepts = {v.reviewer for v in current if v.verdict == "accept"}
    objections = [v for v in current if v.verdict != "accept"]
    if accepts and objections:
        status = "disputed"
    elif objections:
        status = "rejected" if any(v.verdict == "reject" for v in objections) else "needs_change"
    elif len(accepts) >= ACCEPTS_NEEDED:
        status = "accepted"
    else:
        status = "pending"
    spent = sum(v.seconds_spent for v in mine if v.version_id == task.version_id)
    return Review(task, status, current, stale, tuple(mine), spent)


def reviews(tasks: list[TaskEntry], verdicts: list[Verdict]) -> list[Review]:
    by_task: dict[str, list[Verdict]] = {}
    for v in verdicts:
        by_task.setdefault(v.task_id, []).append(v)
    return [review_of(t, by_task.get(t.id, [])) for t in tasks]


def progress(revs: list[Review]) -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for r in revs:
        counts[r.status] += 1
    counts["total"] = len(revs)
    counts["stale"] = sum(1 for r in revs if r.stale)
    return counts


def choices(revs: list[Review]) -> dict[str, list[str]]:
    """The values each list filter can take, sorted."""
    out = {name: sorted({r.field(name) for r in revs if r.field(name)}) for name in FILTERS}
    out["status"] = list(STATUSES)
    return out


def apply_filters(revs: list[Review], filters: dict[str, str]) -> list[Review]:
    wanted = {k: v for k, v in filters.items() if k in FILTERS and v}
    return [r for r in revs if all(r.field(k) == v for k, v in wanted.items())]
