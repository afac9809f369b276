"""The task versions reviewers accepted: the reader of a `wac review export` file.

`wac eval --accepted-only FILE` runs only the evaluation tasks of a build whose current version two
reviewers accepted; `wac review export` (wac.review.export) writes the file, in JSON
(`wac.review-export/1`) or CSV.  The reader lives here, below the review app, so that the
runner reads the file without importing the app.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from wac.bundle.reader import Bundle, read_index, require_build
from wac.errors import UsageError

EXPORT_FORMAT = "wac.review-export/1"


def read_accepted(path: str | Path) -> set[tuple[str, str]]:
    """The accepted (task id, version id) pairs of an export file (JSON or CSV)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read the accepted list {path}: {exc.strerror}") from None
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        if rows and not {"task_id", "version_id", "status"} <= set(rows[0]):
            raise UsageError(f"{path}: not a `wac review export` CSV (needs task_id, version_id, status)")
        return {(r["task_id"], r["version_id"]) for r in rows if r["status"] == "accepted"}
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON ({exc}); write it with `wac review export`") from None
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise UsageError(f"{path}: not a `wac review export` file (format {EXPORT_FORMAT})")
    return {(a["task_id"], a["version_id"]) for a in doc["accepted"]}


def accepted_only(build: str | Path, path: str | Path, only: list[str] | None = None) -> list[str]:
    """The evaluation task ids of `build` whose current version is accepted in `path` (within `only`)."""
    accepted = read_accepted(path)
    build = require_build(build)
    keep = []
    for e in read_index(build):
        if e.get("example", False) or (only and e["id"] not in only):
            continue
        if (e["id"], Bundle(build / e["id"]).manifest().version_id) in accepted:
            keep.append(e["id"])
    if not keep:
        raise UsageError(
            f"no evaluation task of {build} is accepted in {path} at its current version "
            f"(review them with `wac review`, then export again)"
        )
    return keep
