"""How much simulated time each action takes, and when film frames are taken during it: declared once.

`WAC` is wac's own model (walking 1.4 m/s, turning 120 deg/s, looking 90 deg/s, interacting 0.5 s,
a film frame at the end of every interval).  `REFERENCE` is the reference runtime's
(UCSB-NLP-Chang/WorldAuditBench, commit 1fb54b1b0c0fe057464706b1ffb68904fbee2b08), which `wac mcp`
uses under the reference protocol so that the same action sequence spends the same simulated time
and films the same number of frames:

| constant | value | where (environments/threejs/runtime/core.js unless named) |
|---|---|---|
| walking speed | 5.2 m/s | line 22, `SPEED = 5.2`; agent/vlm/env/threejs.py `speed_mps = 5.2` |
| turning | 120 deg/s | `act()`, turn: `simSleep(abs(deg) / 120)` |
| looking | 120 deg/s | `act()`, look: `simSleep(abs(deg) / 120)` |
| interacting | 2.8 s | `act()`, interact: snapshots at 0 and 0.7 s, final view at 2.8 s |
| film interval | 0.5 s | agent/vlm/mcp/server.py `Episode.__init__`: `ObsConfig(film_dt=0.5, film_max=8)` |
| film frames per action | at most 8, the first at t=0 | `act()`, `startFilm`: a frame, then one per stride until stopped |
| film stride of wait, interact | max(0.5, duration / 7) | `act()`: `Math.max(film.dt, sec / (film.maxFrames - 1))` |
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    name: str
    walk_mps: float
    turn_dps: float
    look_dps: float
    interact_s: float
    film_from_start: bool = False  # the first film frame as the action starts (else after one interval)
    film_max: int | None = None  # at most this many film frames per action
    stretch: bool = False  # wait and interact spread film_max frames over their duration

    def film_stride(self, interval: float, action: str, duration: float) -> float:
        """The time between two film frames of `action`, which lasts `duration` seconds."""
        if self.stretch and self.film_max and self.film_max > 1 and action in ("wait", "interact"):
            return max(interval, duration / (self.film_max - 1))
        return interval


WAC = Timing("wac", walk_mps=1.4, turn_dps=120.0, look_dps=90.0, interact_s=0.5)
REFERENCE = Timing(
    "reference",
    walk_mps=5.2,
    turn_dps=120.0,
    look_dps=120.0,
    interact_s=2.8,
    film_from_start=True,
    film_max=8,
    stretch=True,
)
TIMINGS = {t.name: t for t in (WAC, REFERENCE)}
