"""When a target counts as on screen, declared once: the runtime's triggers (is the target in view
before a change that must happen unseen?) and the self-check's pixel checks (did it happen in view?)
read the same threshold, so the two layers cannot disagree about what "watched" means.

Counts are in pixels of a `WATCH_FRAME` (640x480) frame, the auditors' frame size; a count taken at
another resolution is scaled by area (`px640`).  docs/validation.md gives the measurement behind it.
"""

from __future__ import annotations

WATCH_FRAME = (640, 480)
WATCH_PX = 30.0  # the target is on screen when this many of its px (640x480) are in the frame


def px640(n: float, width: int, height: int) -> float:
    """A pixel count of a `width` x `height` frame, scaled to a 640x480 one."""
    return float(n) * (WATCH_FRAME[0] * WATCH_FRAME[1]) / (width * height)


def on_screen(px_640: float) -> bool:
    """Whether a target with this many pixels (640x480) is on screen: an auditor can watch it."""
    return px_640 >= WATCH_PX


__all__ = ["WATCH_FRAME", "WATCH_PX", "on_screen", "px640"]
