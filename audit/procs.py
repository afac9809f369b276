"""Process hygiene for `wac eval`: workers that die with their parent, and one writer per run.

* `worker_init` runs first in every episode worker: it asks Linux to kill the worker when the
  parent dies (`PR_SET_PDEATHSIG`, so a SIGKILLed `wac eval` leaves no orphan writing into the
  run) and ignores SIGINT (Ctrl-C reaches the whole process group; the parent alone decides what
  an interrupt cancels).
* `RunLock` is an exclusive `flock` on `RUN/.lock`: a second `wac eval` into the same run fails
  at once with a clear message; the kernel releases the lock when its holder dies, however it dies.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

from wac.errors import UsageError

PR_SET_PDEATHSIG = 1
LOCK_NAME = ".lock"


def die_with_parent(parent: int | None = None) -> None:
    """Be killed (SIGKILL) when the parent process exits; exit now if it already has."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the parent still cleans up
            pass
    if parent is not None and os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def worker_init(parent: int) -> None:
    """ProcessPoolExecutor initializer of the episode workers."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class RunLock:
    """An exclusive lock on a run directory for as long as the `with` block runs."""

    def __init__(self, run: Path) -> None:
        self.path = Path(run) / LOCK_NAME
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "another process"
            os.close(fd)
            raise UsageError(
                f"{self.path.parent} is in use by another `wac eval` (pid {holder}); wait for it to finish "
                f"or stop it, or use a different --out directory"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None
