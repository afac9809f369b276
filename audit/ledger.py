"""The bug ledger: what the auditor flagged, revised or retracted; scoring reads the active set."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from wac.errors import LedgerError  # noqa: F401 - re-exported
from wac.taxonomy.registry import Category, Family

STATUSES = ("suspect", "confirmed", "retracted")
# The reference harness's coarse categories, accepted so that agents written for it run unchanged.
REFERENCE_CATEGORIES = ("geometry", "collision", "visual", "state", "semantic", "other")
CATEGORIES = tuple(c.value for c in Category) + tuple(f.value for f in Family) + REFERENCE_CATEGORIES


@dataclass(frozen=True)
class Bug:
    id: str
    description: str
    category: str
    status: str
    evidence: tuple[str, ...]
    action: int  # the number of environment actions taken when it was flagged or last changed
    sim_time: float
    pose: dict | None = None
    history: tuple[dict, ...] = field(default=(), compare=False)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["evidence"] = list(self.evidence)
        d.pop("history")
        return d

    def line(self) -> str:
        ev = ", ".join(self.evidence) if self.evidence else "-"
        return f"{self.id} [{self.status}] ({self.category}) at a{self.action}: {self.description} | evidence: {ev}"


class BugLedger:
    """Flags have ids b1, b2, ...; updates replace fields; every change is kept as an event."""

    def __init__(self) -> None:
        self._bugs: dict[str, Bug] = {}
        self.events: list[dict] = []

    def flag(
        self,
        description: str,
        category: str,
        status: str,
        evidence,
        *,
        action: int,
        sim_time: float,
        pose: dict | None = None,
    ) -> Bug:
        description = str(description).strip()
        if not description:
            raise LedgerError("flag_bug needs a non-empty description of what is wrong and where")
        if category not in CATEGORIES:
            raise LedgerError(f"category must be one of: {', '.join(CATEGORIES)}")
        if status not in ("suspect", "confirmed"):
            raise LedgerError("status must be 'suspect' or 'confirmed' (use update_bug to retract)")
        bug = Bug(
            f"b{len(self._bugs) + 1}",
            description,
            category,
            status,
            tuple(evidence or ()),
            action,
            round(sim_time, 3),
            pose,
        )
        self._bugs[bug.id] = bug
        self.events.append({"event": "flag", **bug.as_dict()})
        return bug

    def update(
        self,
        bug_id: str,
        *,
        description=None,
        status=None,
        evidence=None,
        action: int | None,
        sim_time: float | None,
    ) -> Bug:
        """Change a bug; `action` and `sim_time` None keep the ones it was flagged at."""
        bug = self.get(bug_id)
        if bug.status == "retracted":
            raise LedgerError(f"{bug_id} is retracted and cannot be changed; flag a new bug instead")
        if status is not None and status not in STATUSES:
            raise LedgerError(f"status must be one of: {', '.join(STATUSES)}")
        if description is not None and not str(description).strip():
            raise LedgerError("description cannot be empty")
        if description is None and status is None and evidence is None:
            raise LedgerError("update_bug needs at least one of description, status, evidence")
        bug = replace(
            bug,
            description=str(description).strip() if description is not None else bug.description,
            status=status or bug.status,
            evidence=tuple(evidence) if evidence is not None else bug.evidence,
            action=bug.action if action is None else action,
            sim_time=bug.sim_time if sim_time is None else round(sim_time, 3),
        )
        self._bugs[bug_id] = bug
        self.events.append({"event": "update", **bug.as_dict()})
        return bug

    def get(self, bug_id: str) -> Bug:
        if bug_id not in self._bugs:
            known = ", ".join(self._bugs) or "none flagged yet"
            raise LedgerError(f"no bug {bug_id!r} (known: {known})")
        return self._bugs[bug_id]

    def all(self) -> list[Bug]:
        return list(self._bugs.values())

    def active(self) -> list[Bug]:
        return [b for b in self._bugs.values() if b.status != "retracted"]

    def render(self) -> str:
        act = self.active()
        return "\n".join(b.line() for b in act) if act else "(no bugs flagged)"
