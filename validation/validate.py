"""Property-based validation: `wac validate BUNDLE` varies what an auditor could plausibly do.

Starting from the bundle's self-check plan, hypothesis draws a `Variation`: where the exposing
view is taken from (a side step and a change of distance, re-aimed at the target), the order of
the final turn and look, the timing of waits and how far a revisit walks away, an extra pause,
the simulation seed, and, for a trigger that must fire unseen, how the auditor turns away (turns
of other sizes either way, a look up or down, a walk away: turn_away.py).  For each variation the
anomaly must still manifest in the perturbed world and stay absent in the clean one (the
differential property of `selfcheck.py`), and a change that must happen unseen must not happen
with the target on screen (the self-check's `check_watched`).  The plan's
walks measured from the target (a distance trigger's far point, a walk into the target) keep their
end points.  A variation that cannot test the plan is discarded: its repositioning is blocked or
itself switches the anomaly, its walk at the target meets something else, its views do not show
the perturbed target, or it overruns the budget (docs/validation.md); another is drawn in its
place, so a profile's count is of valid variations (within a cap on draws).  A failure is shrunk to a
minimal counterexample, printed as an action list for `wac play BUNDLE --actions "…"`.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from random import Random

from wac.bundle.actions import MAX_MOVE_M, MOVE_M, PASSED_SLACK_M
from wac.bundle.reader import Bundle
from wac.errors import UsageError
from wac.exits import sigterm_interrupts
from wac.progress import Progress
from wac.taxonomy.registry import Category

from .capture import Step, actions_text, focus_ids, run_steps
from .judges_physics import clean_walk_passes, went_past
from .observables import Reading, observable
from .turn_away import fired, searches_away, turned_away, walks_away, watched

PROFILES = {"ci": 6, "long": 60}
DRAWS_PER_EXAMPLE = 3  # a discarded variation is replaced by another, up to this many draws per one wanted


@dataclass(frozen=True)
class Variation:
    """One plausible deviation from the plan (all zero/False = the plan itself)."""

    side_m: float = 0.0  # step sideways before the exposing view (negative = left)
    closer_m: float = 0.0  # walk closer (positive) or farther (negative) before the exposing view
    swap_turn_look: bool = False  # do the final look before the final turn
    wait_scale: float = 1.0  # scale every exposing wait (within 0.5-5 s)
    away_scale: float = 1.0  # scale how far a revisit walks away (moves within 0.3-4 m)
    pause_s: float = 0.0  # an extra wait just before the exposing actions
    seed: int = 0
    # how the auditor turns away, for a trigger that must fire unseen (turn_away.py; 0 = the plan's way)
    away_turn_deg: float = 0.0  # the turn away instead of the plan's (positive = right)
    away_look_deg: float = 0.0  # a look (positive = down) while turned away, undone before turning back
    away_walk_m: float = 0.0  # a walk away and back while turned away (a walking plan's: that much longer)

    def describe(self) -> str:
        parts = []
        if self.side_m:
            parts.append(f"side step {self.side_m:+.2f} m")
        if self.closer_m:
            parts.append(f"{'closer' if self.closer_m > 0 else 'farther'} by {abs(self.closer_m):.2f} m")
        if self.swap_turn_look:
            parts.append("look before turning")
        if self.wait_scale != 1.0:
            parts.append(f"waits x{self.wait_scale:.2f}")
        if self.away_scale != 1.0:
            parts.append(f"walk-away x{self.away_scale:.2f}")
        if self.pause_s:
            parts.append(f"pause {self.pause_s:.1f} s")
        if self.seed:
            parts.append(f"seed {self.seed}")
        if self.away_turn_deg:
            way = "right" if self.away_turn_deg > 0 else "left"
            parts.append(f"turn away {abs(self.away_turn_deg):g} deg {way}")
        if self.away_look_deg:
            parts.append(
                f"look {'down' if self.away_look_deg > 0 else 'up'} {abs(self.away_look_deg):g} deg away"
            )
        if self.away_walk_m:
            parts.append(f"walk {self.away_walk_m:g} m farther away")
        return ", ".join(parts) or "the plan as written"

    @property
    def turns_away(self) -> bool:
        """Whether it changes how the auditor turns away from the target."""
        return bool(self.away_turn_deg or self.away_look_deg or self.away_walk_m)


def variations(away: bool = False):
    """The hypothesis strategy of `Variation`s (shrinks towards the plan itself); `away`: also how
    the auditor turns away (turns of 45-180 deg either way, looks of 20-60 deg up or down, walks
    of 1-4 m), for a trigger that must fire unseen."""
    from hypothesis import strategies as st

    def m(lo, hi):
        return st.one_of(st.just(0.0), st.floats(lo, hi, allow_nan=False).map(lambda v: round(v, 2)))

    def either_way(lo, hi):
        return st.one_of(
            st.just(0.0),
            st.tuples(st.sampled_from((1.0, -1.0)), st.floats(lo, hi)).map(lambda t: round(t[0] * t[1], 1)),
        )

    none = st.just(0.0)
    return st.builds(
        Variation,
        side_m=m(-1.2, 1.2).filter(lambda v: v == 0 or abs(v) >= 0.3),
        closer_m=m(-1.5, 0.8).filter(lambda v: v == 0 or abs(v) >= 0.3),
        swap_turn_look=st.booleans(),
        wait_scale=st.one_of(st.just(1.0), st.floats(1.0, 2.0).map(lambda v: round(v, 2))),
        away_scale=st.one_of(st.just(1.0), st.floats(1.0, 1.6).map(lambda v: round(v, 2))),
        pause_s=st.one_of(st.just(0.0), st.floats(0.5, 4.0).map(lambda v: round(v, 1))),
        seed=st.one_of(st.just(0), st.integers(1, 2**16)),
        away_turn_deg=either_way(45.0, 180.0) if away else none,
        away_look_deg=either_way(20.0, 60.0) if away else none,
        away_walk_m=m(1.0, 4.0) if away else none,
    )


def _norm(a: float) -> float:
    return (a + 180.0) % 360.0 - 180.0


@dataclass(frozen=True)
class Repositioning:
    """Where a variation's own steps sit among the actions (indexes from 0)."""

    actions: range = range(0)  # the steps inserted before the exposing view
    moves: frozenset[int] = frozenset()  # those that walk (checked for being blocked)
    walk_in: range = range(0)  # the exposing walk straight at the target, if the plan has one
    turns_away: bool = False  # the auditor turns away otherwise than the plan (turn_away.py)


def apply(
    plan, start_yaw: float, var: Variation, by_distance: bool = False, start_pitch: float = 0.0
) -> tuple[list[Step], Repositioning]:
    """The plan's steps changed by `var`, and where the variation's repositioning steps are.

    `by_distance`: the anomaly's trigger is a distance from the target (beyond, within, leave), so
    the plan's walk away and back is measured from the target, not from the viewpoint: from the
    variation's viewpoint and heading the walk is lengthened (or shortened) until it ends as far from
    the target as the plan's does, as an auditor stepping back "beyond" would.
    Likewise a walk straight into the target (to touch it, to pass through it) from a viewpoint the
    variation moved farther walks that much farther.  The auditor's way of turning away
    (`var.away_*`) replaces the plan's turn away and back (turn_away.py; `start_pitch` tells how far
    a look may go).
    """
    steps = [Step.of(s) for s in plan.steps]
    first = next((i for i, s in enumerate(steps) if s.action == "mark"), len(steps))
    approach, exposing = steps[:first], steps[first:]
    plan_walks = walks_away(exposing)  # the plan walks away (a leave trigger's far point)
    if var.turns_away:
        pitch = start_pitch + sum(float(s.kwargs["degrees"]) for s in approach if s.action == "look")
        exposing = turned_away(exposing, var.away_turn_deg, var.away_look_deg, var.away_walk_m, pitch)
    if (
        var.swap_turn_look
        and len(approach) >= 2
        and approach[-1].action == "look"
        and approach[-2].action == "turn"
    ):
        approach[-2], approach[-1] = approach[-1], approach[-2]
    yaw = start_yaw
    for s in approach:
        if s.action == "turn":
            yaw -= float(s.kwargs["degrees"])
    plan_yaw = yaw
    extra: list[Step] = []
    vx, vy = plan.view_point
    tx, ty = plan.target_point[0], plan.target_point[1]
    if var.side_m:
        side = 90.0 if var.side_m > 0 else -90.0  # positive turn = right
        extra.append(Step("turn", (("degrees", side),)))
        yaw -= side
        extra.append(Step("move", (("direction", "forward"), ("distance_m", abs(var.side_m)))))
        vx += abs(var.side_m) * math.cos(math.radians(yaw))
        vy += abs(var.side_m) * math.sin(math.radians(yaw))
    if var.side_m or var.closer_m:
        want = math.degrees(math.atan2(ty - vy, tx - vx))
        turn = round(_norm(yaw - want), 1)
        if abs(turn) > 0.5:
            extra.append(Step("turn", (("degrees", turn),)))
        yaw = want
    toward = 0.0  # how far the variation then walks at the target along the re-aimed line
    if var.closer_m:
        d = math.hypot(tx - vx, ty - vy)
        step = min(abs(var.closer_m), max(0.0, d - 0.8)) if var.closer_m > 0 else abs(var.closer_m)
        if step >= 0.3:
            toward = round(step, 2) * (1 if var.closer_m > 0 else -1)
            extra.append(
                Step(
                    "move",
                    (
                        ("direction", "forward" if var.closer_m > 0 else "back"),
                        ("distance_m", round(step, 2)),
                    ),
                )
            )
    # how much nearer the target the variation's viewpoint is than the plan's (`vx, vy`: after the side step)
    nearer = math.hypot(tx - plan.view_point[0], ty - plan.view_point[1]) - (
        math.hypot(tx - vx, ty - vy) - toward
    )
    if var.pause_s:
        extra.append(Step("wait", (("seconds", var.pause_s),)))
    # the plan's walks measured from the target keep their end points: a far point beyond a
    # distance trigger (its distance from the target), a walk into the target (from a farther one)
    if by_distance:
        at = (vx + toward * _cos(yaw), vy + toward * _sin(yaw))
        longer = _far_walk_extra(exposing, plan.view_point, plan_yaw, at, yaw, (tx, ty))
        if abs(longer) > 0.05:
            exposing = _walk_farther(exposing, longer)
    elif nearer < -0.05:
        exposing = _walk_in_farther(exposing, -nearer)
    if var.away_walk_m and plan_walks:  # beyond the plan's far point, not instead of it
        exposing = _walk_farther(exposing, var.away_walk_m)
    out_exposing = []
    for s in exposing:
        a = s.kwargs
        if s.action == "wait" and var.wait_scale != 1.0:
            s = Step(
                "wait",
                (("seconds", round(min(5.0, max(0.5, float(a["seconds"]) * var.wait_scale)), 1)),),
                s.caption,
            )
        elif (
            s.action == "move"
            and var.away_scale != 1.0
            and not s.caption
            and plan.observable.endswith("before_after")
        ):
            s = Step(
                "move",
                (
                    ("direction", a.get("direction", "forward")),
                    ("distance_m", round(min(4.0, float(a["distance_m"]) * var.away_scale), 2)),
                ),
                s.caption,
            )
        out_exposing.append(s)
    n_before = sum(1 for s in approach if s.action != "mark")
    walk_in = range(0)
    if run := _walk_in(out_exposing):
        first = n_before + len(extra) + sum(1 for s in out_exposing[: run[0]] if s.action != "mark")
        walk_in = range(first, first + run[1] - run[0])
    return approach + extra + out_exposing, Repositioning(
        range(n_before, n_before + len(extra)),
        frozenset(n_before + i for i, s in enumerate(extra) if s.action == "move"),
        walk_in,
        var.turns_away,
    )


def _move_runs(exposing: list[Step]) -> list[tuple[int, int, str]]:
    """The runs of consecutive moves in one direction: (start, end, direction), in order."""
    runs, i = [], 0
    while i < len(exposing):
        if exposing[i].action != "move":
            i += 1
            continue
        way, j = exposing[i].kwargs.get("direction", "forward"), i
        while (
            j < len(exposing) and exposing[j].action == "move" and exposing[j].kwargs.get("direction") == way
        ):
            j += 1
        runs.append((i, j, way))
        i = j
    return runs


def _lengthened(exposing: list[Step], runs: list[tuple[int, int, str]], extra_m: float) -> list[Step]:
    """`exposing` with each of `runs` `extra_m` longer (shorter if negative), split into equal moves
    the runtime accepts; the run's caption stays on its last move."""
    out = list(exposing)
    for start, end, way in sorted(runs, reverse=True):  # the later run first: earlier indexes hold
        total = max(MOVE_M[0], sum(float(s.kwargs["distance_m"]) for s in out[start:end]) + extra_m)
        n = math.ceil(total / MAX_MOVE_M - 1e-9)
        each = ("distance_m", round(max(MOVE_M[0], total / n), 2))
        caption = next((s.caption for s in reversed(out[start:end]) if s.caption), "")
        out[start:end] = [Step("move", (("direction", way), each)) for _ in range(n - 1)] + [
            Step("move", (("direction", way), each), caption)
        ]
    return out


def _cos(deg: float) -> float:
    return math.cos(math.radians(deg))


def _sin(deg: float) -> float:
    return math.sin(math.radians(deg))


def _far_walk_extra(exposing: list[Step], plan_at, plan_yaw: float, var_at, var_yaw: float, target) -> float:
    """How much longer the exposing part's first walk must be, from the variation's viewpoint and
    heading, to end as far from the target as the plan's walk ends from the plan's.  Under a distance
    trigger the far point is what matters, and a walk away at an angle (turn 135, walk) gains less
    distance per metre than one straight back."""
    runs = _move_runs(exposing)
    if not runs:
        return 0.0
    i, j, way = runs[0]
    turned = sum(float(s.kwargs["degrees"]) for s in exposing[:i] if s.action == "turn")
    sign = 1.0 if way == "forward" else -1.0
    walk = sum(float(s.kwargs["distance_m"]) for s in exposing[i:j])
    tx, ty = target
    a, b = plan_yaw - turned, var_yaw - turned
    far = math.hypot(plan_at[0] + sign * walk * _cos(a) - tx, plan_at[1] + sign * walk * _sin(a) - ty)
    # |var_at + L u - target| = far, for L >= 0 along the variation's walk direction u
    dx, dy = var_at[0] - tx, var_at[1] - ty
    ux, uy = sign * _cos(b), sign * _sin(b)
    half_b = dx * ux + dy * uy
    disc = half_b * half_b - (dx * dx + dy * dy - far * far)
    if disc < 0.0:
        return 0.0  # the line never gets that far from (or that near to) the target
    return -half_b + math.sqrt(disc) - walk


def _walk_farther(exposing: list[Step], extra_m: float) -> list[Step]:
    """The first walk away and the walk back after it (a run in the other direction), each
    `extra_m` longer (shorter if negative): a distance trigger's far point, from a nearer (farther)
    viewpoint (`_far_walk_extra`)."""
    runs = _move_runs(exposing)
    if not runs:
        return exposing
    back = next((r for r in runs[1:] if r[2] != runs[0][2]), None)
    return _lengthened(exposing, [runs[0], back], extra_m) if back else exposing


def _walk_in(exposing: list[Step]) -> tuple[int, int] | None:
    """The exposing part's first walk straight at the target, [start, end) among its steps: its
    first run of moves, forward, before any turn (into the target, through it, up to it)."""
    runs = _move_runs(exposing)
    if not runs or runs[0][2] != "forward" or any(s.action == "turn" for s in exposing[: runs[0][0]]):
        return None
    return runs[0][0], runs[0][1]


def _walk_in_farther(exposing: list[Step], extra_m: float) -> list[Step]:
    """The walk straight at the target `extra_m` longer: it must still reach the target from a
    viewpoint that much farther."""
    run = _walk_in(exposing)
    return _lengthened(exposing, [(*run, "forward")], extra_m) if run else exposing


@dataclass(frozen=True)
class Outcome:
    ok: bool
    valid: bool
    perturbed: Reading | None
    clean: Reading | None
    why: str = ""


def differential(
    bdir: Path, task, plan, steps: list[Step], rep: Repositioning, seed: int, lenient: bool = True
) -> Outcome:
    """Run both variants with `steps`; ok when the anomaly shows only in the perturbed world.

    `lenient` (every variation but the plan itself, which must show the anomaly): a variation
    that cannot test the plan is discarded: its walk straight at the target stopped short of it
    against something else (a wall its side step put in the way) or, walking into a solid, went on
    past it in the clean world, or its views do not show the perturbed world's target (out of view,
    or cut off where a whole view is needed), or it turns away otherwise than the plan and the trigger
    never fires (a small turn keeps the target on screen: the auditor saw nothing happen).  A change
    that must happen unseen and happens with the target on screen fails, whatever the variation."""
    if sum(1 for s in steps if s.action != "mark") > task.exploration.budget_actions:
        return Outcome(True, False, None, None, "over budget")
    obs = observable(plan.observable)
    shadows = plan.category == Category.shadow_lighting
    clean = run_steps(bdir, "clean", steps, obs.measure, seed=seed, shadows=shadows, depth=obs.depth)
    if off := _repositioning_off(clean, steps, rep, task.exploration.start.yaw_deg):
        return Outcome(True, False, None, None, f"repositioning blocked: {off}")
    if clean.error:
        return Outcome(True, False, None, None, clean.error)
    if lenient and (stopped := _walk_stopped(clean, rep, task, plan)):
        return Outcome(True, False, None, None, stopped)
    if lenient and plan.observable == "displacement_through" and (past := went_past(clean, task)):
        return Outcome(
            True, False, None, None, f"the walk at the target goes on past {past} in the clean world"
        )
    pert = run_steps(bdir, "perturbed", steps, obs.measure, seed=seed, shadows=shadows, depth=obs.depth)
    early = _switched_during(pert, rep, plan.anomaly)
    if early:
        return Outcome(True, False, None, None, f"the repositioning itself {early}")
    if seen := watched(task, clean, pert):
        return Outcome(False, True, None, None, seen)
    if lenient and rep.turns_away and not fired(pert, plan.anomaly):
        return Outcome(True, False, None, None, "the trigger never fired: the target stayed in view or near")
    rp, rc = obs.readings(pert, clean, task)
    if lenient and rp.unseen and not rc.anomalous:
        return Outcome(True, False, rp, rc, f"out of sight: {rp.detail}")
    why = []
    if not rp.anomalous:
        why.append(f"perturbed: {rp.detail}")
    if rc.anomalous:
        why.append(f"clean: {rc.detail}")
    return Outcome(not why, True, rp, rc, "; ".join(why))


def _walk_stopped(clean, rep: Repositioning, task, plan) -> str:
    """Why a walk of the plan after the variation's own steps cannot test it ("" if none): the
    clean world stopped it short against something that is not the target.

    The walk straight at the target (`rep.walk_in`) meets a wall the side step put in the way, slides
    along it and past the target, or is held a few centimetres short of touching it by a wall's end;
    one that stopped against the target, or after shoving it ahead, reached it.  A later walk (away to
    a distance trigger's far point, out of sight for a revisit, or back) runs into a bush the plan's
    own walk passed, so its far point or its return is not the plan's.  A walk the clean world should
    let *through* the target (`clean_walk_passes`: an opened door, a path across an invisible wall)
    must pass: touching the target (an open door's leaf) is not reaching it."""
    targets = set(focus_ids(task))
    passes = clean_walk_passes(task, plan.observable)
    for i in range(rep.actions.stop, len(clean.steps)):
        r = clean.steps[i]
        walk_in = i in rep.walk_in
        slack = PASSED_SLACK_M if walk_in and passes else 0.05
        if r.action.action != "move" or r.moved_m >= float(r.action.kwargs["distance_m"]) - slack:
            continue  # not a walk, or not stopped
        met = {a[1] for a in r.ahead if len(a) > 1 and a[1]} | set(r.contacts)  # what it stopped against
        if walk_in and passes:
            edge = "the edge of the exploration area" if "edge of the area" in r.outcome else "an obstacle"
            by = ", ".join(sorted(met)) or edge
            return (
                f"the walk through the target is stopped in the clean world after {r.moved_m:.2f} m, by {by}"
            )
        if _touching(r, task) & targets or walk_in and _target_moved(clean):
            continue  # stopped against the target, or after shoving it ahead (it moved)
        hit = ", ".join(sorted(met - targets))
        if not walk_in:
            return (
                f"a walk of the plan is cut short: {r.action.text()} stopped after {r.moved_m:.2f} m "
                f"against {hit or 'an obstacle'}"
            )
        if not hit:
            (ax, ay), (bx, by) = r.start_xyz[:2], r.end_xyz[:2]
            tx, ty = plan.target_point[0], plan.target_point[1]
            d = math.hypot(tx - ax, ty - ay) or 1.0
            aside = abs((bx - ax) * (ty - ay) - (by - ay) * (tx - ax)) / d  # off the line to the target
            hit = (
                f"an obstacle ({aside:.2f} m off the line to the target; stopped {r.moved_m:.2f} m in, "
                "not touching it)"
            )
        return f"the way to the target is blocked by {hit}"
    return ""


def _target_moved(run, by_m: float = 0.05) -> bool:
    """Whether the (first) focus object moved across the ground in the run: the agent reached it
    and shoved it (settling moves it a centimetre or so)."""
    at = [t.position[0][:2] for t in run.ticks if t.position]
    return bool(at) and max(math.dist(at[0], p) for p in at) > by_m


def _touching(r, task) -> set[str]:
    """The objects the agent touches where a move ended: in contact, or one of the rays ahead
    (`capture._ahead`, which reach 0.1 m past the capsule) hit it within 3 cm of the capsule."""
    reach = task.exploration.agent_radius_m + 0.03
    ex, ey = r.end_xyz[:2]
    near = {a[1] for a in r.ahead if len(a) > 2 and a[1] and math.hypot(a[2][0] - ex, a[2][1] - ey) <= reach}
    return near | set(r.contacts)


def _repositioning_off(clean, steps: list[Step], rep: Repositioning, start_yaw: float) -> str:
    """How a move of the variation's own repositioning went astray in the clean world ("" if none
    did): stopped short, or slid along a wall off its line, so the re-aimed view is not at the
    target (a thin floor lamp is missed by a few centimetres)."""
    yaw = start_yaw
    actions = [s for s in steps if s.action != "mark"]
    for i, s in enumerate(actions):
        if i >= len(clean.steps):
            break
        if s.action == "turn":
            yaw -= float(s.kwargs["degrees"])
        if i not in rep.moves:
            continue
        r, asked = clean.steps[i], float(s.kwargs["distance_m"])
        sign = 1.0 if s.kwargs.get("direction", "forward") == "forward" else -1.0
        dx, dy = r.end_xyz[0] - r.start_xyz[0], r.end_xyz[1] - r.start_xyz[1]
        ux, uy = sign * _cos(yaw), sign * _sin(yaw)
        aside = abs(dx * uy - dy * ux)
        if r.moved_m < asked - 0.05 or aside > 0.05:
            return f"{s.text()} ended {aside:.2f} m off its line after {r.moved_m:.2f} m"
    return ""


def _switched_during(run, rep: Repositioning, anomaly: int) -> str:
    """How the anomaly under test (its index in the task) switched during the variation's own steps
    ("" if it did not): the evidence would then be taken in a state the plan never sees.  A periodic
    trigger switches on a clock, whatever the agent does, and is left to the plan's own timing; a
    further anomaly of a multi-anomaly task switching is no concern of this plan."""
    for ev in run.events:
        if ev.anomaly != anomaly or ev.step - 1 not in rep.actions or ev.trigger == "every":
            continue
        if ev.event in ("fired", "deactivated"):
            return f"{'set off' if ev.event == 'fired' else 'switched off'} the anomaly ({ev.trigger})"
    return ""


class _DrawsSpent(Exception):
    """Raised inside the search when the draws allowed for the wanted valid variations are spent."""


@dataclass(frozen=True)
class ValidationResult:
    task_id: str
    examples: int  # variations tried (the discarded ones included)
    valid: int
    counterexample: Variation | None
    actions: str
    why: str
    seconds: float

    @property
    def passed(self) -> bool:
        return self.counterexample is None


def hypothesis_home() -> Path:
    """Where hypothesis keeps its files during `wac validate`: the user's cache, never the cwd."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "wac" / "hypothesis"


def validate_bundle(
    path, examples: int = PROFILES["ci"], seed: int | None = None, log=None
) -> ValidationResult:
    """Search for a variation that breaks the differential property; shrink it if found.

    `examples` is the number of *valid* variations wanted (the plan itself is the first): a
    discarded one is replaced by a fresh draw, up to `DRAWS_PER_EXAMPLE` draws per wanted one."""
    from hypothesis import HealthCheck, Phase, find, reject, settings
    from hypothesis.configuration import set_hypothesis_home_dir
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    set_hypothesis_home_dir(
        hypothesis_home()
    )  # its caches (constants, charmap) otherwise go to ./.hypothesis

    bundle = Bundle.open(path)
    bdir, task, plan = bundle.path, bundle.task(), bundle.plan()
    start_yaw, start_pitch = task.exploration.start.yaw_deg, task.exploration.start.pitch_deg
    by_distance = task.anomalies[plan.anomaly].trigger.kind.by_distance
    away = searches_away(task, plan)
    t0 = time.perf_counter()
    tried = {"n": 0, "valid": 0}
    cache: dict[Variation, Outcome] = {}
    draws = examples * DRAWS_PER_EXAMPLE

    def outcome(v: Variation) -> Outcome:
        if v not in cache:
            steps, rep = apply(plan, start_yaw, v, by_distance, start_pitch)
            cache[v] = differential(bdir, task, plan, steps, rep, v.seed, lenient=v != Variation())
            tried["n"] += 1
            tried["valid"] += cache[v].valid
            if log:
                o = cache[v]
                log(
                    f"  {'ok  ' if o.ok else 'FAIL'} {v.describe()}"
                    + ("" if o.valid else f" (discarded: {o.why})")
                )
        return cache[v]

    def breaks(v: Variation) -> bool:
        shrinking = any(not o.ok for o in cache.values())  # a counterexample was found
        if v not in cache and tried["n"] >= draws and not shrinking:
            raise _DrawsSpent
        o = outcome(v)
        if not o.valid:
            reject()  # hypothesis draws another in its place; it does not count as an example
        return not o.ok

    def result(bad: Variation | None) -> ValidationResult:
        if bad is None:
            return ValidationResult(
                task.id, tried["n"], tried["valid"], None, "", "", time.perf_counter() - t0
            )
        steps, _ = apply(plan, start_yaw, bad, by_distance, start_pitch)
        return ValidationResult(
            task.id,
            tried["n"],
            tried["valid"],
            bad,
            actions_text(steps),
            outcome(bad).why,
            time.perf_counter() - t0,
        )

    if not outcome(Variation()).ok:
        return result(Variation())
    cfg = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=seed is None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    draw = None if seed is None else Random(seed)  # the same seed draws the same variations
    try:
        return result(find(variations(away), breaks, settings=cfg, random=draw))
    except (NoSuchExample, Unsatisfiable, _DrawsSpent):
        return result(None)


def _job(path: str, examples: int, seed: int | None, verbose: bool) -> tuple[ValidationResult, list[str]]:
    """One bundle's validation in a worker process, with the lines `--verbose` would print."""
    lines: list[str] = []
    res = validate_bundle(path, examples, seed, log=lines.append if verbose else None)
    return res, lines


def _results(
    args, paths: list[str], examples: int, jobs: int
) -> Iterator[tuple[str, ValidationResult, list[str]]]:
    """(path, result, verbose lines) per bundle, in input order, computed where `args` says."""
    if getattr(args, "backend", "local") == "ray":  # wac/backends.py: one Ray task per bundle
        from wac.backends import ray_map

        for path, res in zip(
            paths,
            ray_map(validate_bundle, [(p, examples, args.seed) for p in paths], args.address),
            strict=True,
        ):
            yield path, res, []
    elif jobs <= 1 or len(paths) == 1:
        for path in paths:
            print(f"validating {path} ({examples} examples, profile {args.profile})", file=sys.stderr)
            log = (lambda m: print(m, file=sys.stderr)) if args.verbose else None
            yield path, validate_bundle(path, examples, args.seed, log=log), []
    else:
        from wac.backends import local_pool

        from .pool import by_scene, scenes_of

        # a fresh interpreter per worker: VTK/EGL and pybullet do not survive fork; a worker stays on
        # a scene (`by_scene`), and results are printed in input order as soon as they can be
        calls = [(p, examples, args.seed, args.verbose) for p in paths]
        done: dict[int, tuple] = {}
        nxt = 0
        with local_pool(jobs, "spawn") as ex:
            for i, got in by_scene(ex, jobs, _job, calls, scenes_of([Path(p) for p in paths])):
                done[i] = got
                while nxt in done:
                    res, lines = done.pop(nxt)
                    yield paths[nxt], res, lines
                    nxt += 1


def _print_result(path: str, res: ValidationResult, lines: list[str], examples: int) -> int:
    """Print one bundle's outcome (and its `--verbose` lines); 1 if it failed, else 0."""
    for line in lines:
        print(line, file=sys.stderr)
    if res.passed:
        if res.valid <= 1 < res.examples:
            few = "; only the plan itself could be tested, every variation was discarded (-v says why)"
        elif res.valid < examples:
            few = f"; {examples} wanted, the other draws were discarded (-v says why)"
        else:
            few = ""
        print(
            f"{res.task_id}: ok: the anomaly manifests only in the perturbed world in all {res.valid} valid "
            f"variation(s) of {res.examples} tried{few} ({res.seconds:.1f} s)",
            flush=True,
        )
    else:
        print(f"{res.task_id}: FAIL after {res.examples} variation(s): {res.why}")
        print(f"  minimal counterexample: {res.counterexample.describe()}")
        print(
            f'  replay: wac play {path} --variant perturbed --out /tmp/{res.task_id}-cx --actions "{res.actions}"',
            flush=True,
        )
        return 1
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from .pool import find_bundles

    if args.examples is not None and args.examples < 1:
        raise UsageError("--examples must be at least 1")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    examples = args.examples or PROFILES[args.profile]
    paths = [str(b) for b in find_bundles(args.bundles)]
    jobs = args.jobs or min(len(paths), os.cpu_count() or 1)
    failed = done = 0
    t0 = time.perf_counter()
    try:
        with (
            sigterm_interrupts(),
            Progress(len(paths), "validate") as bar,
        ):  # a bar on a terminal, a line every 30 s in a log
            for path, res, lines in _results(args, paths, examples, jobs):
                failed += _print_result(path, res, lines, examples)
                done += 1
                bar.update(res.passed)
    except KeyboardInterrupt:  # the finished tasks' outcomes are printed above; nothing is cached
        print(
            f"wac: interrupted: {done - failed} passed, {failed} failed, {len(paths) - done} not validated "
            "(their outcomes are above; validation keeps no results: run the rest by naming their bundles)",
            file=sys.stderr,
        )
        return 130
    if len(paths) > 1:
        where = "on Ray" if getattr(args, "backend", "local") == "ray" else f"on {jobs} process(es)"
        print(
            f"validated {len(paths)} task(s) ({examples} examples each, profile {args.profile}): "
            f"{len(paths) - failed} passed, {failed} failed, in {time.perf_counter() - t0:.1f} s {where}"
        )
    return 1 if failed else 0


def register(subparsers) -> None:
    v = subparsers.add_parser(
        "validate", help="property-based validation: vary approach, timing, order and seed"
    )
    v.add_argument(
        "bundles", nargs="+", metavar="BUNDLE", help="bundles, or build directories (every bundle in them)"
    )
    v.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default="ci",
        help=f"valid variations wanted: ci = {PROFILES['ci']}, long = {PROFILES['long']}",
    )
    v.add_argument(
        "--examples",
        type=int,
        help="number of valid variations wanted (overrides --profile); a discarded one is "
        f"replaced by another draw, up to {DRAWS_PER_EXAMPLE} draws per one wanted",
    )
    v.add_argument(
        "--seed",
        type=int,
        help="draw another set of variations, the same for the same seed (default: the deterministic search)",
    )
    v.add_argument("-j", "--jobs", type=int, help="bundles in parallel processes (default: one per CPU)")
    v.add_argument("-v", "--verbose", action="store_true", help="print every variation tried")
    from wac.backends import add_backend_args

    add_backend_args(v)
    v.set_defaults(func=cmd_validate)
