"""`wac review export`: the accepted task versions of a build (JSON or CSV), and the filter that reads them.

The JSON file (`wac.review-export/1`) lists every task of the build with its version and status,
and `accepted`: the (task id, version id) pairs that two reviewers accepted.  `wac eval
--accepted-only FILE` keeps only tasks whose *current* bundle version is in that list, so a task
rebuilt after its review is left out until it is reviewed again.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

from wac.audit.accepted import EXPORT_FORMAT, accepted_only, read_accepted  # noqa: F401 - re-exported

from .catalog import read_build, reviews
from .store import Store

CSV_FIELDS = ("task_id", "version_id", "status", "accepted_by", "scene", "category", "difficulty", "stale")


def export_rows(build: str | Path, store: Store) -> list[dict]:
    revs = reviews(read_build(build), store.verdicts())
    return [
        {
            "task_id": r.task.id,
            "version_id": r.task.version_id,
            "status": r.status,
            "accepted_by": sorted(r.accepts),
            "scene": r.task.scene,
            "category": r.task.category,
            "difficulty": r.task.difficulty,
            "example": r.task.example,
            "stale": len(r.stale),
        }
        for r in revs
    ]


def export_document(build: str | Path, store: Store) -> dict:
    rows = export_rows(build, store)
    return {
        "format": EXPORT_FORMAT,
        "build": str(Path(build).resolve()),
        "accepted": [
            {"task_id": r["task_id"], "version_id": r["version_id"], "accepted_by": r["accepted_by"]}
            for r in rows
            if r["status"] == "accepted"
        ],
        "tasks": rows,
    }


def export_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({**r, "accepted_by": ";".join(r["accepted_by"])})
    return buf.getvalue()


def write_export(build: str | Path, store: Store, out: str | None, fmt: str | None) -> str:
    """Write the export (format from `fmt`, else the file suffix, else JSON); return a summary line."""
    if fmt is None:
        fmt = "csv" if out and out.lower().endswith(".csv") else "json"
    doc = export_document(build, store)
    text = export_csv(doc["tasks"]) if fmt == "csv" else json.dumps(doc, indent=2) + "\n"
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return f"{len(doc['accepted'])} of {len(doc['tasks'])} task(s) accepted"
