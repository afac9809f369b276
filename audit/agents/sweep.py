"""`sweep`: a systematic explorer, the VLA-like baseline; it covers the area and never flags a bug.

It knows what an auditor knows: its own pose and each action's outcome, read from the tool text
("pos (x=.., y=..) yaw .. pitch ..", "moved 1.20 m of 4.00 m forward (blocked)" or "(stopped at the
edge of the area)").  The exploration bounds are not given to agents, so the sweep finds them by
walking: it looks around (4 x 90 deg) at the start, walks to the left edge of the area, then mows
lanes `lane_m` apart, parallel to its starting heading, turning at each edge and stepping around
obstacles; it looks around again at lane ends while budget allows.  It uses the whole budget
(or the time limit of a two-stage exploration) and then calls `done`.
"""

from __future__ import annotations

import re
import time

from wac.bundle.actions import MAX_MOVE_M, MOVE_M

POSE = re.compile(r"pos \(x=(-?[\d.]+), y=(-?[\d.]+)\) yaw (-?[\d.]+) pitch (-?[\d.]+)")
MOVED = re.compile(r"moved ([\d.]+) m of ([\d.]+) m")


class _Stop(Exception):
    """No more environment actions (budget, time limit or wall-clock limit)."""


def _norm(deg: float) -> float:
    return (deg + 180.0) % 360.0 - 180.0


class SweepAgent:
    name = "sweep"
    pipeline_check = False
    reads_images = False  # acts on tool text only (poses, outcomes, refs)

    def __init__(
        self,
        seed: int | str = 0,
        lane_m: float | str = 6.0,
        look_around: bool | str = True,
        time_limit_s: float | str | None = None,
        **_ignored,
    ) -> None:
        """Options: `lane_m` (lane spacing), `look_around` (4 x 90 deg turns at the start and at lane ends),
        `time_limit_s` (wall clock); `seed` is accepted for a uniform interface (the sweep is deterministic)."""
        self.seed = int(seed)
        self.lane_m = float(lane_m)
        self.look_around = str(look_around).lower() not in ("false", "0", "no", "off")
        self.time_limit_s = float(time_limit_s) if time_limit_s not in (None, "") else None
        self.travelled_m = 0.0
        self.lanes = 0

    # --- acting and reading the outcome --------------------------------------------------------
    def _act(self, name: str, args: dict, yaw: float | None = None):
        """Run one environment action; `yaw` is the heading it should leave (kept finer than the text's)."""
        s = self.session
        if s.done or s.actions_used >= s.budget:
            raise _Stop
        if self.time_limit_s is not None and time.monotonic() - self._t0 >= self.time_limit_s:
            raise _Stop
        res = s.call(name, args)
        if res.error:
            if "exhausted" in res.text or "already finished" in res.text:
                raise _Stop
            self._errors += 1
            if self._errors > 10:
                raise _Stop
            return res
        self._read_pose(res.text, yaw)
        return res

    def _read_pose(self, text: str, expect_yaw: float | None = None) -> None:
        m = POSE.search(text)
        if m:
            self.x, self.y = float(m.group(1)), float(m.group(2))
            said = float(m.group(3))  # whole degrees
            self.yaw = expect_yaw if expect_yaw is not None and abs(_norm(said - expect_yaw)) <= 1.0 else said
            self.pitch = float(m.group(4))

    def _face(self, yaw: float) -> None:
        delta = _norm(yaw - self.yaw)  # counter-clockwise; the turn tool counts right turns as positive
        if abs(delta) < 1.0:
            return
        self._act("turn", {"degrees": round(-delta, 1)}, yaw=_norm(self.yaw + round(delta, 1)))

    def _turn_around(self) -> None:
        for _ in range(4):
            self._act("turn", {"degrees": 90}, yaw=_norm(self.yaw - 90))

    def _move(self, distance: float) -> tuple[float, str]:
        """One forward move; (metres moved, 'ok' | 'edge' | 'blocked')."""
        res = self._act(
            "move",
            {"distance_m": round(min(max(distance, MOVE_M[0]), MAX_MOVE_M), 2), "direction": "forward"},
            yaw=self.yaw,
        )
        if res.error:
            return 0.0, "blocked"
        m = MOVED.search(res.text)
        moved = float(m.group(1)) if m else 0.0
        self.travelled_m += moved
        if "edge of the area" in res.text:
            return moved, "edge"
        if "blocked" in res.text:
            return moved, "blocked"
        return moved, "ok"

    def _walk(self, distance: float) -> tuple[float, str]:
        """Walk straight up to `distance`; stops at the edge or an obstacle."""
        done = 0.0
        while done < distance - 0.25:
            moved, how = self._move(distance - done)
            done += moved
            if how != "ok":
                return done, how
        return done, "ok"

    # --- the pattern ---------------------------------------------------------------------------
    def _sidestep(self, side: float, heading: float, metres: float = 1.5) -> bool:
        """Step sideways (towards `side`, else the other way) and face `heading` again."""
        self._face(side)
        moved, _ = self._walk(metres)
        if moved < 0.3:
            self._face(side + 180.0)
            moved, _ = self._walk(metres)
        self._face(heading)
        return moved >= 0.3

    def _leg(self, side: float, max_m: float = 40.0) -> None:
        """Walk along the current heading until the edge, stepping around up to two obstacles."""
        heading = self.yaw
        walked, detours = 0.0, 0
        while walked < max_m:
            moved, how = self._walk(max_m - walked)
            walked += moved
            if how != "blocked" or detours >= 2:
                return
            detours += 1
            if not self._sidestep(side, heading):
                return

    def _shift(self, side: float, lane: float) -> str:
        """Move `lane_m` sideways to the next lane; 'edge' when the area ends that way."""
        self._face(side)
        moved, how = self._walk(self.lane_m)
        if how == "blocked" and moved < 0.5 * self.lane_m:  # back off along the next lane and retry
            self._face(lane + 180.0)
            self._walk(2.0)
            self._face(side)
            more, how = self._walk(self.lane_m - moved)
            moved += more
        return "edge" if how == "edge" and moved < 0.5 * self.lane_m else "ok"

    def _sweep(self) -> None:
        heading = self.yaw
        if self.look_around:
            self._turn_around()
        self._face(heading + 90.0)  # to the left edge, then mow towards the right
        self._walk(40.0)
        side = _norm(heading - 90.0)
        lane = heading
        while True:
            self._face(lane)
            self._leg(side)
            self.lanes += 1
            if self.look_around and self.lanes % 2 == 0 and self._left() > 0.4:
                self._turn_around()
            if self._shift(side, lane) == "edge":  # the far side: mow back the other way
                side = _norm(side + 180.0)
                self._shift(side, lane)
            lane = _norm(lane + 180.0)

    def _left(self) -> float:
        s = self.session
        return (s.budget - s.actions_used) / max(1, s.budget)

    def run(self, session) -> None:
        self.session = session
        self._t0 = time.monotonic()
        self._errors = 0
        self.x = self.y = self.yaw = self.pitch = None
        first = session.call("observe")
        self._read_pose(first.text)
        if self.yaw is not None and any(t.env_action for t in session.tools):
            try:
                self._sweep()
            except _Stop:
                pass
        if not session.done:
            session.call(
                "done",
                {"summary": f"No bug found. Swept {self.lanes} lane(s), walking {self.travelled_m:.1f} m."},
            )
