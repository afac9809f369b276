"""How an auditor makes a trigger that waits for the target to leave the view fire: turns, looks and
walks away other than the plan's (for `wac validate`, validate.py).

A self-check plan for a revisit, look-away, leave or after trigger observes the target (its first
`mark`), turns away (180 deg, or 135 deg and a walk for `leave`), waits or walks, turns back and
observes again.  An auditor turns 60 deg, or 150 deg the other way, looks at the floor, walks off
along another heading.  `turned_away` rewrites the plan's away part so: the turn away by other
degrees (the turn back undoes it, the plan's net heading kept), a look up or down undone before
turning back, a walk away (and back) of some metres or a plan's own walk made longer.  Whichever
way, the change must happen unseen (`watched`: the self-check's `check_watched` verdict in the
perturbed world, the target's pixels just after the change and just before it) and show when the
auditor is back.  A way that never makes the trigger fire (a 45 deg turn keeps the target on screen)
tests nothing: the variation is discarded (`fired`).
"""

from __future__ import annotations

import dataclasses
import math

from wac.bundle.actions import LOOK_DEG, MAX_MOVE_M, MOVE_M
from wac.bundle.model import CompiledTask, SelfCheckPlan

from .capture import Run, Step
from .pixelchecks import check_watched

PITCH_ROOM_DEG = 85.0  # a look stays within this of level, so that looking back restores the plan's pitch


def away_turns(exposing: list[Step]) -> tuple[int, int] | None:
    """The indexes of the turn away (the first turn after the first observation) and of the turn
    back (the last turn, a later one) among the plan's exposing steps; None when it has no such pair."""
    turns = [i for i, s in enumerate(exposing) if s.action == "turn"]
    return (turns[0], turns[-1]) if len(turns) >= 2 else None


def searches_away(task: CompiledTask, plan: SelfCheckPlan) -> bool:
    """Whether `wac validate` varies how the auditor turns away: the plan's anomaly has a trigger
    that must fire unseen, and the plan turns away from the target and back."""
    if not task.anomalies[plan.anomaly].trigger.kind.unseen:
        return False
    steps = [Step.of(s) for s in plan.steps]
    first = next((i for i, s in enumerate(steps) if s.action == "mark"), len(steps))
    return away_turns(steps[first:]) is not None


def _turn(deg: float, caption: str = "") -> Step:
    return Step("turn", (("degrees", round(deg, 1)),), caption)


def _walk(distance_m: float, direction: str) -> list[Step]:
    """A walk split into moves the runtime accepts."""
    n = max(1, math.ceil(distance_m / MAX_MOVE_M - 1e-9))
    each = round(max(MOVE_M[0], distance_m / n), 2)
    return [Step("move", (("direction", direction), ("distance_m", each))) for _ in range(n)]


def _norm(a: float) -> float:
    """An angle in [-180, 180)."""
    return (a + 180.0) % 360.0 - 180.0


def walks_away(exposing: list[Step]) -> bool:
    """Whether the plan walks between its turn away and its turn back (a leave trigger's far point)."""
    pair = away_turns(exposing)
    return pair is not None and any(s.action == "move" for s in exposing[pair[0] + 1 : pair[1]])


def turned_away(
    exposing: list[Step], turn_deg: float, look_deg: float, walk_m: float, pitch_deg: float
) -> list[Step]:
    """The plan's exposing steps with the auditor's own way of turning away (module docstring).

    `turn_deg` (0: the plan's) replaces the turn away, and the turn back becomes what restores the
    plan's heading; `look_deg` (positive down) is looked after turning away and undone before
    turning back, kept within `PITCH_ROOM_DEG` of level from `pitch_deg`, the plan's pitch there;
    `walk_m` is a walk away and back where the plan only waits (a plan that walks has its walk
    lengthened by validate.py, which keeps a distance trigger's far point)."""
    pair = away_turns(exposing)
    if pair is None:
        return exposing
    i, j = pair
    out = list(exposing)
    if turn_deg:
        a0, b0 = (float(out[k].kwargs["degrees"]) for k in (i, j))
        out[i], out[j] = _turn(turn_deg, out[i].caption), _turn(_norm(a0 + b0 - turn_deg), out[j].caption)
    look = max(-PITCH_ROOM_DEG - pitch_deg, min(PITCH_ROOM_DEG - pitch_deg, look_deg))
    look = max(LOOK_DEG[0], min(LOOK_DEG[1], round(look, 1)))
    after_turn: list[Step] = []
    before_back: list[Step] = []
    if walk_m and not walks_away(exposing):
        after_turn, before_back = _walk(walk_m, "forward"), _walk(walk_m, "back")
    if abs(look) >= 1.0:
        after_turn = [Step("look", (("degrees", look),)), *after_turn]
        before_back = [*before_back, Step("look", (("degrees", -look),))]
    return out[: i + 1] + after_turn + out[i + 1 : j] + before_back + out[j:]


def fired(run: Run, anomaly: int) -> bool:
    """Whether the anomaly under test switched in the run."""
    return any(e.anomaly == anomaly and e.event in ("fired", "deactivated") for e in run.events)


def watched(task: CompiledTask, clean: Run, pert: Run) -> str:
    """The self-check's `check_watched` verdict on the perturbed run ("" when the change happened
    unseen): the target's pixels just after each change and, in place of the clean world's at the
    same tick (validate runs the clean world first, before it knows when the trigger fires), just
    before it in the perturbed world, which is the clean world there but for the change."""
    before = {
        round(e.sim_time, 3): px
        for e, px in zip(pert.events, pert.event_before_px, strict=False)
        if e.event in ("fired", "deactivated")
    }
    reasons = check_watched(task, dataclasses.replace(clean, probes=before), pert)
    return reasons[0] if reasons else ""


__all__ = ["away_turns", "fired", "searches_away", "turned_away", "walks_away", "watched"]
