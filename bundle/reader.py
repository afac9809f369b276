"""The bundle on disk: the one place that knows its file layout (what `wac build` writes, what
everything downstream reads).

A bundle directory holds::

    task.json             the compiled task: scene, anomalies, exploration (ground truth)
    agent/context.json    what the auditor is given (and agent/context.md, its text view)
    rubric.json           how a report is judged (and rubric.md) -- never shown to the auditor
    selfcheck.json        the self-check plan; selfcheck.py runs it
    manifest.json         every file's SHA-256 (`integrity.verify_bundle`)
    assets/...            meshes and textures the task names

and a build directory holds bundles and an `index.json` listing them.  `Bundle.open(path)` finds
a bundle (its directory or a file in it) and reads its parts through the models; the rubric is
read only by an explicit `bundle.rubric()`, so code that builds the auditor's input never touches it.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from wac.bundle.integrity import MANIFEST, inside, verify_bundle
from wac.bundle.model import AgentContext, CompiledTask, Manifest, Rubric, SelfCheckPlan
from wac.errors import BundleError, NoBundle
from wac.suggest import nearby

TASK = "task.json"
CONTEXT = "agent/context.json"
CONTEXT_MD = "agent/context.md"
RUBRIC = "rubric.json"
RUBRIC_MD = "rubric.md"
PLAN = "selfcheck.json"
SCRIPT = "selfcheck.py"
INDEX = "index.json"  # in a build directory, beside its bundles
__all__ = [
    "CONTEXT",
    "CONTEXT_MD",
    "INDEX",
    "MANIFEST",
    "PLAN",
    "RUBRIC",
    "RUBRIC_MD",
    "SCRIPT",
    "TASK",
    "Bundle",
    "is_build",
    "read_index",
    "require_build",
    "where_instead",
]

# files that stand for their bundle when a path names one of them
_MEMBERS = (TASK, PLAN, SCRIPT)


@functools.lru_cache(maxsize=8)
def _parsed(model, text: str):
    """`text` read as `model`, kept for the next read of the same text: a self-check builds two
    worlds of each task, and the models are frozen (the same object serves both)."""
    return model.model_validate_json(text)


@dataclass(frozen=True)
class Bundle:
    """One bundle directory; its parts are read (and validated) when asked for."""

    path: Path

    @classmethod
    def open(cls, path: str | Path, *, verify: bool = False) -> Bundle:
        """The bundle at `path` (its directory, or its task.json, selfcheck.json or selfcheck.py).

        BundleError when there is no bundle there; with `verify`, also when a file does not
        match the manifest (a damaged or edited bundle is not used)."""
        p = Path(path)
        if p.is_file() and p.name in _MEMBERS:
            p = p.parent
        if not p.is_dir():
            raise NoBundle(f"{path}: no such bundle directory{where_instead(path)}")
        if not (p / TASK).is_file():
            if is_build(p):
                raise NoBundle(
                    f"{p}: a build directory, not a bundle; give one of its bundles ({p}/<task id>)"
                )
            raise NoBundle(f"{p}: not a bundle (no {TASK}); run `wac build` first")
        b = cls(p)
        if verify:
            b.verify()
        return b

    @staticmethod
    def exists(path: str | Path) -> bool:
        """Whether `path` is a bundle directory (it holds a task.json)."""
        return (Path(path) / TASK).is_file()

    def file(self, rel: str) -> Path:
        """A file of the bundle by its bundle-relative path (BundleError if it would lead outside)."""
        return inside(self.path, rel)

    def has(self, rel: str) -> bool:
        return (self.path / rel).is_file()

    def verify(self) -> dict[str, str]:
        """Check every file against the manifest (and the assets' paths); the file digests."""
        return verify_bundle(self.path)

    def _read(self, rel: str, model):
        f = self.path / rel
        try:
            return _parsed(model, f.read_text(encoding="utf-8"))
        except OSError as exc:
            raise BundleError(f"{self.path}: no readable {rel}: {exc}; rebuild it with `wac build`") from None
        except ValueError as exc:
            raise BundleError(f"{self.path}: malformed {rel}: {str(exc).splitlines()[0]}") from None

    def task(self) -> CompiledTask:
        """The compiled task (ground truth: scene, anomalies, exploration)."""
        return self._read(TASK, CompiledTask)

    def task_json(self) -> dict:
        """task.json as plain JSON (for readers that need no models)."""
        try:
            return json.loads((self.path / TASK).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BundleError(f"{self.path}: malformed {TASK}: {exc}") from None

    def context(self) -> AgentContext:
        """What the auditor is given."""
        return self._read(CONTEXT, AgentContext)

    def plan(self) -> SelfCheckPlan:
        """The self-check plan."""
        return self._read(PLAN, SelfCheckPlan)

    def plan_or_none(self) -> SelfCheckPlan | None:
        return self.plan() if self.has(PLAN) else None

    def rubric(self) -> Rubric:
        """The rubric: for judges and reviewers only, never for the auditor's input."""
        return self._read(RUBRIC, Rubric)

    def manifest(self) -> Manifest:
        return self._read(MANIFEST, Manifest)


def is_build(path: str | Path) -> bool:
    """Whether `path` is a build directory (it holds an index.json)."""
    return (Path(path) / INDEX).is_file()


def require_build(build: str | Path) -> Path:
    """`build` as a Path when it is a build directory; else NoBundle saying what it is instead."""
    p = Path(build)
    if is_build(p):
        return p
    if not p.exists():
        raise NoBundle(f"{build} is not a wac build directory: it does not exist{where_instead(build)}")
    if Bundle.exists(p):
        raise NoBundle(
            f"{build} is a bundle, not a wac build directory (no {INDEX}); give its build ({p.parent})"
        )
    raise NoBundle(f"{build} is not a wac build directory (no {INDEX}); run `wac build` first")


def where_instead(path: str | Path) -> str:
    """For a path that does not exist: `"; did you mean …?"` naming the bundles or builds beside it
    whose names are closest (as the path was written), or "" when none is close."""
    return nearby(path, lambda d: d.is_dir() and (Bundle.exists(d) or is_build(d)))


def read_index(build: str | Path) -> list[dict]:
    """The build's task entries (each with its `id`, the bundle's directory name)."""
    f = Path(build) / INDEX
    try:
        return json.loads(f.read_text(encoding="utf-8"))["tasks"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BundleError(f"{f}: not a readable build index ({exc}); rebuild with `wac build`") from None
