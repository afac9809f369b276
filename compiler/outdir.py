"""The build directory as a transaction: one writer at a time, a journaled commit, a verified no-op.

* `locked(out)` holds an exclusive lock (`.OUT.lock` beside OUT, `flock`) for a whole build;
  a second build of the same OUT waits for it, saying so, and the lock dies with its process.
  The lock file is removed when the build ends (a waiter that locked the removed file sees it is
  no longer the one at the path and tries again), so no `.OUT.lock` is left beside OUT.
* An incremental commit renames bundle directories one by one; before the first rename it
  writes `OUT/.wac-journal.json` (what moves where), after the last it removes it.  A build
  killed in between leaves the journal, and the next build rolls the commit forward (every
  step is an idempotent rename) before it reads anything.
* Staging (`.OUT.tmp-PID`) and trash (`.OUT.old-PID`) directories of killed builds are
  removed by the next build.
* `intact(out, entries)` is what a no-op or reusing build checks before trusting OUT: the
  index on disk is the index the cache recorded, and every bundle's manifest has the version
  the index lists, with all its files present.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from wac.bundle import reader as R

JOURNAL = ".wac-journal.json"
# tests only: a file path; inside the commit window the build creates it and waits while it exists
PAUSE_ENV = "WAC_TEST_PAUSE_IN_COMMIT"


def lock_path(out: Path) -> Path:
    return out.parent / f".{out.name}.lock"


@contextlib.contextmanager
def locked(out: Path, say=None) -> Iterator[None]:
    """Hold OUT's build lock; wait (after saying so) while another build holds it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    path = lock_path(out)
    told = False
    while True:
        fh = open(path, "a+")  # noqa: SIM115 - closed below, or kept open while the lock is held
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not told:
                fh.seek(0)
                holder = fh.read().strip() or "?"
                (say or _stderr)(f"wac: waiting for another build into {out} (pid {holder}) to finish")
                told = True
            fcntl.flock(fh, fcntl.LOCK_EX)
        if _is_at(fh, path):
            break
        fh.close()  # the holder removed the file we waited on: lock the one at the path now
    try:
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        recover(out)
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # while still holding it: whoever waits on this file will look again
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()


def _is_at(fh, path: Path) -> bool:
    """Whether the open file `fh` is still the file at `path` (not removed or replaced)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    own = os.fstat(fh.fileno())
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def write_journal(out: Path, tmp: Path, trash: Path, written: list[str], removed: list[str]) -> None:
    data = {"tmp": tmp.name, "trash": trash.name, "written": written, "removed": removed}
    path = out / JOURNAL
    part = out / (JOURNAL + ".part")
    part.write_text(json.dumps(data), encoding="utf-8")
    os.replace(part, path)  # the journal appears whole or not at all


def pause_for_tests() -> None:
    marker = os.environ.get(PAUSE_ENV)
    if marker:
        path = Path(marker)
        path.write_text(str(os.getpid()), encoding="utf-8")
        deadline = time.monotonic() + 120
        while path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)


def roll_forward(
    out: Path, tmp: Path, trash: Path, written: list[str], removed: list[str], pause: bool = False
) -> None:
    """Finish a commit: each step is a rename that is skipped once done, so it can be replayed."""
    trash.mkdir(exist_ok=True)
    for task_id in removed:
        if (out / task_id).exists():
            _replace(out / task_id, trash / task_id)
    for task_id in written:
        if (tmp / task_id).exists():
            if (out / task_id).exists():
                _replace(out / task_id, trash / task_id)
            os.replace(tmp / task_id, out / task_id)
            if pause:
                pause_for_tests()
                pause = False
    for name in (".wac-cache.json", R.INDEX):  # the index last: it says the commit is done
        if (tmp / name).exists():
            os.replace(tmp / name, out / name)
    (out / JOURNAL).unlink(missing_ok=True)
    shutil.rmtree(trash, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)


def _replace(src: Path, dst: Path) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    os.replace(src, dst)


def recover(out: Path) -> None:
    """Roll forward a commit a killed build left half done; remove killed builds' leftovers."""
    journal = out / JOURNAL
    if journal.is_file():
        try:
            data = json.loads(journal.read_text(encoding="utf-8"))
            tmp, trash = out.parent / data["tmp"], out.parent / data["trash"]
            written, removed = list(data["written"]), list(data["removed"])
        except (OSError, ValueError, KeyError, TypeError):
            data = None
        if data is not None:
            roll_forward(out, tmp, trash, written, removed)
        else:  # unreadable: the cache can no longer be trusted, so everything is rebuilt
            (out / ".wac-cache.json").unlink(missing_ok=True)
            journal.unlink(missing_ok=True)
    (out / (JOURNAL + ".part")).unlink(missing_ok=True)
    for pattern in (f".{out.name}.tmp-*", f".{out.name}.old-*"):
        for leftover in out.parent.glob(pattern):
            if leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)


def intact(out: Path, index: dict[str, dict]) -> bool:
    """Whether OUT holds exactly the bundles `index` (task id -> index entry) lists, as listed."""
    if (out / JOURNAL).exists():
        return False
    try:
        on_disk = json.loads((out / R.INDEX).read_text(encoding="utf-8"))
        listed = {e["id"]: e["version_id"] for e in on_disk["tasks"]}
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if listed != {t: e["version_id"] for t, e in index.items()}:
        return False
    return all(bundle_intact(out / t, v) for t, v in listed.items())


def bundle_intact(bundle: Path, version_id: str) -> bool:
    """The bundle's manifest has `version_id` and every file it lists exists."""
    try:
        manifest = json.loads((bundle / R.MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict) or manifest.get("version_id") != version_id:
        return False
    return all((bundle / f).is_file() for f in manifest.get("files", {}))
