"""Progress of a long command wherever its output goes: a bar on a terminal, and elsewhere (a log,
CI, `nohup`, a notebook) a line every `every_s` seconds with what is done, what failed and how long
is left.  The command prints its own summary at the end."""

from __future__ import annotations

import sys
import time


def _duration(s: float) -> str:
    s = int(round(s))
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"


class Progress:
    """`update(ok)` once per finished item; `close()` at the end (or use it as a context manager)."""

    def __init__(self, total: int, desc: str, stream=None, every_s: float = 30.0, clock=time.monotonic):
        self.total, self.desc = total, desc
        self.stream = stream if stream is not None else sys.stderr
        self.every_s, self.clock = every_s, clock
        self.done = self.failed = 0
        self.started = self.last = clock()
        self.bar = None
        if self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="task", file=self.stream, leave=False, desc=desc)

    def update(self, ok: bool = True) -> None:
        self.done += 1
        self.failed += not ok
        if self.bar is not None:
            self.bar.update(1)
            if self.failed:
                self.bar.set_postfix(failed=self.failed)
            return
        now = self.clock()
        if now - self.last >= self.every_s and self.done < self.total:
            self.last = now
            elapsed = now - self.started
            left = elapsed / self.done * (self.total - self.done)
            print(
                f"{self.desc}: {self.done}/{self.total} done, {self.failed} failed, "
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
