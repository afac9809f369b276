"""What a task page shows besides the live world, made on demand and cached per task version.

For each (task, version) the cache directory holds

* `context.json` and `context_*.png` — the auditor's initial input exactly as `AuditSession`
  builds it (instructions, scene, hint, in-context example with its figures, the start view
  `a0` and its caption), at the auditor's default options;
* `evidence/` — the self-check's captioned clean | perturbed frames (`wac selfcheck --out`
  writes the same files) and `selfcheck.json`, the check's verdict.

They are made in a separate process (VTK and pybullet stay out of the server) and written to a
temporary directory renamed into place, so a page never sees half of them.  A failure is cached
too (`error.txt`), so a broken bundle is reported, not retried on every page load.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
import threading
import traceback
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from wac.backends import stop_pool


def make_artifacts(bundle: str, build: str, out: str) -> str:
    """Render one task version's context and self-check evidence into `out` (a worker process)."""
    from wac.audit.runner import _examples
    from wac.audit.session import AuditSession, SessionOptions
    from wac.validation.bundlecheck import check_bundle

    final = Path(out)
    tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        options = SessionOptions()
        examples = _examples(Path(build), options)
        session = AuditSession(bundle, None, options, examples)
        try:
            first = session.initial_input()
        finally:
            session.close()
            if examples is not None:
                examples.close()
        images = []
        for i, item in enumerate(first.images):
            name = f"context_{i:02d}.png"
            (tmp / name).write_bytes(item.png)
            images.append({"ref": item.ref, "caption": item.caption, "file": name})
        (tmp / "context.json").write_text(json.dumps({"text": first.text, "images": images}, indent=2))
        result = check_bundle(bundle, tmp / "evidence")
        (tmp / "selfcheck.json").write_text(json.dumps(result.as_dict(), indent=2, default=str))
    except Exception as exc:  # reported on the task page; the worker keeps serving other tasks
        (tmp / "error.txt").write_text(f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}")
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    return str(final)


class Artifacts:
    """The cache of per-version task artifacts and the worker process that fills it."""

    def __init__(self, cache_dir: Path, build: Path) -> None:
        self.root = Path(cache_dir)
        self.build = Path(build)
        self._jobs: dict[Path, Future] = {}
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None

    def dir(self, task_id: str, version_id: str) -> Path:
        return self.root / task_id / version_id

    def state(self, task_id: str, version_id: str, bundle: Path, start: bool = True) -> str:
        """'ready', 'failed' or 'pending' (a job is started for a version not yet made)."""
        d = self.dir(task_id, version_id)
        if (d / "error.txt").is_file():
            return "failed"
        if (d / "context.json").is_file():
            return "ready"
        if start:
            with self._lock:
                job = self._jobs.get(d)
                if job is None or job.done():
                    try:
                        self._jobs[d] = self._submit(bundle, d)
                    except BrokenProcessPool:  # the worker died (killed, crashed): start a new one
                        self._pool = None
                        self._jobs[d] = self._submit(bundle, d)
        return "pending"

    def _submit(self, bundle: Path, d: Path) -> Future:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"))
        return self._pool.submit(make_artifacts, str(bundle), str(self.build), str(d))

    def wait(self, task_id: str, version_id: str, timeout: float | None = None) -> None:
        job = self._jobs.get(self.dir(task_id, version_id))
        if job is not None:
            job.result(timeout=timeout)

    def read(self, task_id: str, version_id: str) -> dict:
        """What the page shows: context text and images, evidence frames, the check's verdict."""
        d = self.dir(task_id, version_id)
        if (d / "error.txt").is_file():
            return {"state": "failed", "error": (d / "error.txt").read_text().split("\n\n")[0]}
        if not (d / "context.json").is_file():
            return {"state": "pending"}
        context = json.loads((d / "context.json").read_text())
        evidence = []
        ev = d / "evidence" / "evidence.json"
        if ev.is_file():
            evidence = json.loads(ev.read_text())["frames"]
        check = json.loads((d / "selfcheck.json").read_text()) if (d / "selfcheck.json").is_file() else {}
        return {
            "state": "ready",
            "context": context,
            "evidence": evidence,
            "selfcheck": {
                "passed": check.get("passed"),
                "reasons": check.get("reasons", []),
                "actions": check.get("actions", ""),
                "actions_needed": check.get("actions_needed"),
                "budget": check.get("budget"),
            },
        }

    def file(self, task_id: str, version_id: str, name: str) -> Path | None:
        """A cached image by name, or None (names are checked: no path leaves the version's folder)."""
        d = self.dir(task_id, version_id)
        parts = name.split("/")
        if not all(p and p not in (".", "..") and not p.startswith(".") for p in parts):
            return None
        path = d.joinpath(*parts)
        if path.suffix != ".png" or not path.is_file():
            return None
        return path

    def shutdown(self) -> None:
        if self._pool is not None:
            # a render in progress is not waited for: its half-made folder is never renamed into place
            stop_pool(self._pool)
