"""Who audits which task: `per_task` participants per task, the load balanced between participants.

The rule (the paper's human baseline, two participants per task): nobody gets a task twice, nor a
task on a scene where they already audited one of its target objects (they would know where to
look).  Tasks are filled in order; each open slot goes to the eligible participant with the fewest
tasks so far (ties: the one added first), so loads differ by at most one where the rule allows.
The scene and targets come from the bundle's task.json: harness side, never shown to anyone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from wac.errors import UsageError


@dataclass(frozen=True)
class TaskKey:
    """What the assignment rule needs to know of a task."""

    task_id: str
    version_id: str
    scene: str
    targets: frozenset[str]


@dataclass(frozen=True)
class Slot:
    participant: str
    task: TaskKey
    slot: int  # 1 .. per_task


def task_key(bundle: Path) -> TaskKey:
    from wac.bundle.reader import Bundle

    b = Bundle(bundle)
    task = b.task()
    targets = frozenset(t for a in task.anomalies for t in a.targets)
    return TaskKey(task.id, b.manifest().version_id, task.scene.name, targets)


def _clash(task: TaskKey, seen: Iterable[TaskKey]) -> str | None:
    for s in seen:
        if s.task_id == task.task_id:
            return "has it already"
        if s.scene == task.scene and s.targets & task.targets:
            return f"audited the same target on its scene ({s.task_id})"
    return None


def plan(
    tasks: Sequence[TaskKey],
    participants: Sequence[str],
    existing: Sequence[Slot] = (),
    per_task: int = 2,
) -> list[Slot]:
    """The new slots that bring every task to `per_task` participants (existing slots are kept)."""
    if per_task < 1:
        raise UsageError("--per-task must be at least 1")
    if not participants:
        raise UsageError("no participants yet: add them with `wac human add-participant NAME`")
    seen: dict[str, list[TaskKey]] = {p: [] for p in participants}
    for s in existing:
        seen.setdefault(s.participant, []).append(s.task)
    order = {p: i for i, p in enumerate(participants)}
    new: list[Slot] = []
    for task in tasks:
        slots = sorted(s.slot for s in [*existing, *new] if s.task.task_id == task.task_id)
        for slot in range(1, per_task + 1):
            if slot in slots:
                continue
            free = [p for p in participants if _clash(task, seen[p]) is None]
            if not free:
                why = "; ".join(f"{p} {_clash(task, seen[p])}" for p in participants)
                raise UsageError(
                    f"task {task.task_id}: no participant can take slot {slot} of {per_task} ({why}); "
                    f"add participants or lower --per-task"
                )
            who = min(free, key=lambda p: (len(seen[p]), order[p]))
            seen[who].append(task)
            new.append(Slot(who, task, slot))
    return new
