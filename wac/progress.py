"""Progress of a long command wherever its output goes: a bar on a terminal, and elsewhere (a log,
CI, `nohup`, a notebook) a line every `every_s` seconds with what is done, what failed and how long
is left.  The command prints its own summary at the end.  `WAC_PROGRESS_S` sets the interval of
those lines (seconds; 0: a line per finished item)."""

from __future__ import annotations

import os
import sys
import time

EVERY_S = 30.0


def _duration(s: float) -> str:
    s = int(round(s))
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"


def _interval() -> float:
    try:
        return max(0.0, float(os.environ.get("WAC_PROGRESS_S", EVERY_S)))
    except ValueError:
        return EVERY_S


class Progress:
    """`update(ok)` once per finished item (`n` items at once); `close()` at the end (or use it as a
    context manager).  A total not known at the start is given later with `set_total`."""

    def __init__(
        self,
        total: int,
        desc: str,
        stream=None,
        every_s: float | None = None,
        clock=time.monotonic,
        unit: str = "task",
    ):
        self.total, self.desc, self.unit = total, desc, unit
        self.stream = stream if stream is not None else sys.stderr
        self.every_s = every_s if every_s is not None else _interval()
        self.clock = clock
        self.done = self.failed = 0
        self.started = self.last = clock()
        self.bar = None
        if self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit=unit, file=self.stream, leave=False, desc=desc)

    def set_total(self, total: int) -> None:
        self.total = total
        if self.bar is not None:
            self.bar.total = total
            self.bar.refresh()

    def update(self, ok: bool = True, n: int = 1) -> None:
        self.done += n
        self.failed += 0 if ok else n
        if self.bar is not None:
            self.bar.update(n)
            if self.failed:
                self.bar.set_postfix(failed=self.failed)
            return
        now = self.clock()
        if now - self.last >= self.every_s and 0 < self.done < self.total:
            self.last = now
            elapsed = now - self.started
            left = elapsed / self.done * (self.total - self.done)
            print(
                f"{self.desc}: {self.done}/{self.total} {self.unit}s done, {self.failed} failed, "
                f"{_duration(elapsed)} elapsed, about {_duration(left)} left",
                file=self.stream,
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
