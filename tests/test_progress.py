"""Progress reaches a log as well as a terminal (`wac.progress`): a line every so often with what is
done, what failed and how long is left, when the output is not a terminal."""

from __future__ import annotations

import io

from wac.progress import Progress


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_a_log_gets_a_line_every_interval_with_done_failed_and_time_left() -> None:
    out, clock = io.StringIO(), _Clock()
    with Progress(10, "selfcheck", stream=out, every_s=30.0, clock=clock) as p:
        clock.t = 10.0
        p.update(True)  # before the interval: nothing yet
        assert out.getvalue() == ""
        clock.t = 40.0
        p.update(False)
        clock.t = 50.0
        p.update(True)  # within 30 s of the last line
        clock.t = 76.0
        for _ in range(7):
            p.update(True)  # a line at the first; none at the last: the command's summary follows
    assert out.getvalue().splitlines() == [
        "selfcheck: 2/10 done, 1 failed, 40 s elapsed, about 2 min 40 s left",
        "selfcheck: 4/10 done, 1 failed, 1 min 16 s elapsed, about 1 min 54 s left",
    ]


def test_a_terminal_gets_a_bar_and_no_lines(monkeypatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(out, "isatty", lambda: True)
    clock = _Clock()
    with Progress(3, "selfcheck", stream=out, every_s=1.0, clock=clock) as p:
        for _ in range(3):
            clock.t += 5.0
            p.update(True)
    assert "done," not in out.getvalue()
