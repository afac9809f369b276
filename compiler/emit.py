"""Pass 8, emit: write bundles atomically, with a manifest, an index and a build cache.

A build writes into a temporary directory beside OUT and renames it into place only when
every task compiled, so a failed build leaves the previous OUT untouched.  Unchanged
tasks (same sources, same wac) are copied from the previous build instead of recompiled.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jsonschema
from wac.bundle import model as B
from wac.compiler.lower import Lowered3, context_markdown
from wac.compiler.rubric import markdown as rubric_markdown

from wac import __version__

CACHE_FILE = ".wac-cache.json"


def canonical_json(data) -> bytes:
    return (json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def dump(model: B.Model) -> bytes:
    return canonical_json(model.model_dump(mode="json"))


@lru_cache(maxsize=1)
def task_validator():
    schema = B.CompiledTask.model_json_schema()
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


@lru_cache(maxsize=1)
def compiler_digest() -> str:
    """Hash of wac's own code and data: a new compiler invalidates the build cache."""
    h = hashlib.sha256(__version__.encode())
    for pkg in ("wac.compiler", "wac.bundle", "wac.taxonomy", "wac.grammar"):
        root = resources.files(pkg)
        for entry in sorted(_walk(root), key=lambda e: str(e)):
            h.update(str(entry).split(pkg.split(".")[-1], 1)[-1].encode())
            h.update(entry.read_bytes())
    return h.hexdigest()


def _walk(root):
    for entry in root.iterdir():
        if entry.is_dir():
            if entry.name != "__pycache__":
                yield from _walk(entry)
        elif entry.name.endswith((".py", ".lark", ".yaml", ".wa")):
            yield entry


def bundle_files(out: Lowered3) -> dict[str, bytes]:
    task_json = out.task.model_dump(mode="json")
    task_validator().validate(task_json)  # an independent check of the emitted document
    files = {
        "task.json": canonical_json(task_json),
        "agent/context.json": dump(out.context),
        "agent/context.md": context_markdown(out.context).encode("utf-8"),
        "rubric.json": dump(out.rubric),
        "rubric.md": rubric_markdown(out.rubric).encode("utf-8"),
        "selfcheck.json": dump(out.plan),
    }
    for asset, path in out.assets:
        files[asset.file] = Path(path).read_bytes()
    digests = {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())}
    version = hashlib.sha256(canonical_json(digests)).hexdigest()[:16]
    manifest = B.Manifest(task_id=out.task.id, version_id=version, wac_version=__version__, files=digests)
    files["manifest.json"] = dump(manifest)
    return files


def write_bundle(directory: Path, files: dict[str, bytes]) -> None:
    for rel, data in sorted(files.items()):
        p = directory / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def index_entry(out: Lowered3, version_id: str) -> dict:
    a = out.task.anomalies[0]
    return {
        "id": out.task.id, "source": out.task.source, "scene": out.task.scene.name,
        "scene_type": out.task.scene.scene_type.value, "category": a.category, "family": a.family,
        "operator": a.operator, "anomalies": len(out.task.anomalies), "example": out.task.meta.example,
        "difficulty": out.task.meta.difficulty, "version_id": version_id,
    }


class Output:
    """A build in progress: a temporary directory that becomes OUT on commit."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
        if self.tmp.exists():
            shutil.rmtree(self.tmp)
        self.tmp.mkdir(parents=True)

    def add(self, task_id: str, files: dict[str, bytes]) -> None:
        write_bundle(self.tmp / task_id, files)

    def reuse(self, task_id: str) -> None:
        shutil.copytree(self.out / task_id, self.tmp / task_id)

    def commit(self, index: list[dict], cache: dict) -> None:
        (self.tmp / "index.json").write_bytes(canonical_json({"wac_version": __version__, "tasks": index}))
        (self.tmp / CACHE_FILE).write_bytes(canonical_json(cache))
        old = self.out.parent / f".{self.out.name}.old-{os.getpid()}"
        if self.out.exists():
            os.replace(self.out, old)
        os.replace(self.tmp, self.out)
        if old.exists():
            shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def read_cache(out: Path) -> dict:
    try:
        data = json.loads((out / CACHE_FILE).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) and data.get("compiler") == compiler_digest() else {}
    except (OSError, ValueError):
        return {}
