"""Sealed builds: opaque task ids, so no name an auditor can see gives the anomaly away.

Task ids and bundle directories name the anomaly (`city_ghost_car`), and `agent/context.json`
carries the id.  `wac build --sealed` gives every evaluation task an opaque id derived from its
compiled content (`task_3f9a2c1b7d4e`: deterministic, but not computable without the withheld
task and rubric), uses it for the directory and in every file of the bundle, and keeps the
mapping in `seal.json` next to the rubric (withheld like it).  In-context demonstration tasks
keep their names: they are shown to the auditor anyway, and the example library finds them by
name.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

from wac import __version__
from wac.bundle import model as B
from wac.bundle import reader as R
from wac.compiler.emit import canonical_json
from wac.compiler.lower import Lowered3

SEAL_FILE = "seal.json"
AGENT_DIR = "agent/"  # everything under it may be shown to an auditor; nothing else is


def _digest(model: B.Model) -> bytes:
    return json.dumps(model.model_dump(mode="json"), sort_keys=True, separators=(",", ":")).encode()


def sealed_id(out: Lowered3) -> str:
    """The opaque id of a task: a hash of its compiled task and rubric (both withheld)."""
    h = hashlib.sha256(b"wac-seal/1\0")
    h.update(_digest(out.task))
    h.update(b"\0")
    h.update(_digest(out.rubric))
    return f"task_{h.hexdigest()[:12]}"


def seal(out: Lowered3) -> tuple[Lowered3, str]:
    """The task under its opaque id, and its original id; demonstration tasks are left as they are."""
    original = out.task.id
    if out.task.meta.example:
        return out, original
    new = sealed_id(out)
    return (
        replace(
            out,
            task=out.task.model_copy(update={"id": new}),
            context=out.context.model_copy(update={"task_id": new}),
            rubric=out.rubric.model_copy(update={"task_id": new}),
            plan=out.plan.model_copy(update={"task_id": new}),
        ),
        original,
    )


def add_mapping(files: dict[str, bytes], sealed: str, original: str, source: str) -> dict[str, bytes]:
    """The bundle's files with `seal.json` (sealed id -> original id and source) and a new manifest."""
    if sealed == original:
        return files
    files = {k: v for k, v in files.items() if k != R.MANIFEST}
    files[SEAL_FILE] = canonical_json({"sealed_id": sealed, "task_id": original, "source": source})
    digests = {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())}
    version = hashlib.sha256(canonical_json(digests)).hexdigest()[:16]
    manifest = B.Manifest(task_id=sealed, version_id=version, wac_version=__version__, files=digests)
    files[R.MANIFEST] = canonical_json(manifest.model_dump(mode="json"))
    return files


def original_id(bundle: str | Path) -> str:
    """The id a bundle was written with: the original one for a sealed bundle, else its own id."""
    bundle = Path(bundle)
    try:
        return json.loads((bundle / SEAL_FILE).read_text(encoding="utf-8"))["task_id"]
    except (OSError, ValueError, KeyError):
        return bundle.name


def agent_visible(bundle: str | Path) -> dict[str, bytes]:
    """What of a bundle may be shown to an auditor: its directory name and the files under `agent/`."""
    bundle = Path(bundle)
    files = {"<directory name>": bundle.name.encode()}
    for p in sorted((bundle / AGENT_DIR).rglob("*")):
        if p.is_file():
            files[str(p.relative_to(bundle))] = p.read_bytes()
    return files
