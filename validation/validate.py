"""Property-based validation: `wac validate BUNDLE` varies what an auditor could plausibly do.

Starting from the bundle's self-check plan, hypothesis draws a `Variation`: where the exposing
view is taken from (a side step and a change of distance, re-aimed at the target), the order of
the final turn and look, the timing of waits and how far a revisit walks away, an extra pause,
and the simulation seed.  For each variation the anomaly must still manifest in the perturbed
world and stay absent in the clean one (the differential property of `selfcheck.py`).  Variations
whose own repositioning moves are blocked (a wall beside the viewpoint) are discarded, as are
those that would overrun the action budget.  A failure is shrunk to a minimal counterexample,
printed as an action list for `wac play BUNDLE --actions "…"`.
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

from wac.bundle.reader import Bundle
from wac.errors import UsageError

from .capture import Step, actions_text, run_steps
from .observables import Reading, observable

PROFILES = {"ci": 6, "long": 60}


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
        return ", ".join(parts) or "the plan as written"


def variations():
    """The hypothesis strategy of `Variation`s (shrinks towards the plan itself)."""
    from hypothesis import strategies as st

    def m(lo, hi):
        return st.one_of(st.just(0.0), st.floats(lo, hi, allow_nan=False).map(lambda v: round(v, 2)))

    return st.builds(
        Variation,
        side_m=m(-1.2, 1.2).filter(lambda v: v == 0 or abs(v) >= 0.3),
        closer_m=m(-1.5, 0.8).filter(lambda v: v == 0 or abs(v) >= 0.3),
        swap_turn_look=st.booleans(),
        wait_scale=st.one_of(st.just(1.0), st.floats(1.0, 2.0).map(lambda v: round(v, 2))),
        away_scale=st.one_of(st.just(1.0), st.floats(1.0, 1.6).map(lambda v: round(v, 2))),
        pause_s=st.one_of(st.just(0.0), st.floats(0.5, 4.0).map(lambda v: round(v, 1))),
        seed=st.one_of(st.just(0), st.integers(1, 2**16)),
    )


def _norm(a: float) -> float:
    return (a + 180.0) % 360.0 - 180.0


def apply(plan, start_yaw: float, var: Variation) -> tuple[list[Step], set[int]]:
    """The plan's steps changed by `var`; also the indexes (among actions) of the repositioning moves."""
    steps = [Step.of(s) for s in plan.steps]
    first = next((i for i, s in enumerate(steps) if s.action == "mark"), len(steps))
    approach, exposing = steps[:first], steps[first:]
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
    if var.closer_m:
        d = math.hypot(tx - vx, ty - vy)
        step = min(abs(var.closer_m), max(0.0, d - 0.8)) if var.closer_m > 0 else abs(var.closer_m)
        if step >= 0.3:
            extra.append(
                Step(
                    "move",
                    (
                        ("direction", "forward" if var.closer_m > 0 else "back"),
                        ("distance_m", round(step, 2)),
                    ),
                )
            )
    if var.pause_s:
        extra.append(Step("wait", (("seconds", var.pause_s),)))
    reposition = {i for i, s in enumerate(extra) if s.action == "move"}
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
    return approach + extra + out_exposing, {n_before + i for i in reposition}


@dataclass(frozen=True)
class Outcome:
    ok: bool
    valid: bool
    perturbed: Reading | None
    clean: Reading | None
    why: str = ""


def differential(bdir: Path, task, plan, steps: list[Step], reposition: set[int], seed: int) -> Outcome:
    """Run both variants with `steps`; ok when the anomaly shows only in the perturbed world."""
    if sum(1 for s in steps if s.action != "mark") > task.exploration.budget_actions:
        return Outcome(True, False, None, None, "over budget")
    obs = observable(plan.observable)
    shadows = plan.category == "shadow_lighting"
    clean = run_steps(bdir, "clean", steps, obs.measure, seed=seed, shadows=shadows, depth=obs.depth)
    for i in reposition:
        if i < len(clean.steps):
            r = clean.steps[i]
            if r.moved_m < 0.8 * float(r.action.kwargs["distance_m"]):
                return Outcome(True, False, None, None, "repositioning blocked")
    if clean.error:
        return Outcome(True, False, None, None, clean.error)
    pert = run_steps(bdir, "perturbed", steps, obs.measure, seed=seed, shadows=shadows, depth=obs.depth)
    rp, rc = obs.readings(pert, clean, task)
    why = []
    if not rp.anomalous:
        why.append(f"perturbed: {rp.detail}")
    if rc.anomalous:
        why.append(f"clean: {rc.detail}")
    return Outcome(not why, True, rp, rc, "; ".join(why))


@dataclass(frozen=True)
class ValidationResult:
    task_id: str
    examples: int
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
    """Search for a variation that breaks the differential property; shrink it if found."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.configuration import set_hypothesis_home_dir
    from hypothesis.errors import NoSuchExample

    set_hypothesis_home_dir(
        hypothesis_home()
    )  # its caches (constants, charmap) otherwise go to ./.hypothesis

    bundle = Bundle.open(path)
    bdir, task, plan = bundle.path, bundle.task(), bundle.plan()
    start_yaw = task.exploration.start.yaw_deg
    t0 = time.perf_counter()
    tried = {"n": 0, "valid": 0}
    cache: dict[Variation, Outcome] = {}

    def outcome(v: Variation) -> Outcome:
        if v not in cache:
            steps, rep = apply(plan, start_yaw, v)
            cache[v] = differential(bdir, task, plan, steps, rep, v.seed)
            tried["n"] += 1
            tried["valid"] += cache[v].valid
            if log:
                o = cache[v]
                log(
                    f"  {'ok  ' if o.ok else 'FAIL'} {v.describe()}"
                    + ("" if o.valid else f" (discarded: {o.why})")
                )
        return cache[v]

    base = outcome(Variation())
    if not base.ok:
        steps, _ = apply(plan, start_yaw, Variation())
        return ValidationResult(
            task.id, 1, 1, Variation(), actions_text(steps), base.why, time.perf_counter() - t0
        )
    cfg = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=seed is None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        **({} if seed is None else {}),
    )
    try:
        if seed is not None:
            import random

            random.seed(seed)
        bad = find(variations(), lambda v: not outcome(v).ok, settings=cfg)
    except NoSuchExample:
        return ValidationResult(task.id, tried["n"], tried["valid"], None, "", "", time.perf_counter() - t0)
    steps, _ = apply(plan, start_yaw, bad)
    return ValidationResult(
        task.id,
        tried["n"],
        tried["valid"],
        bad,
        actions_text(steps),
        outcome(bad).why,
        time.perf_counter() - t0,
    )


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
        from wac.backends import local_pool, result

        # a fresh interpreter per worker: VTK/EGL and pybullet do not survive fork
        with local_pool(jobs, "spawn") as ex:
            futs = [ex.submit(_job, p, examples, args.seed, args.verbose) for p in paths]
            for path, fut in zip(paths, futs, strict=True):
                res, lines = result(fut)
                yield path, res, lines


def cmd_validate(args: argparse.Namespace) -> int:
    from .pool import find_bundles

    if args.examples is not None and args.examples < 1:
        raise UsageError("--examples must be at least 1")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    examples = args.examples or PROFILES[args.profile]
    paths = [str(b) for b in find_bundles(args.bundles)]
    jobs = args.jobs or min(len(paths), os.cpu_count() or 1)
    failed = 0
    t0 = time.perf_counter()
    for path, res, lines in _results(args, paths, examples, jobs):
        for line in lines:
            print(line, file=sys.stderr)
        if res.passed:
            print(
                f"{res.task_id}: ok: the anomaly manifests only in the perturbed world in all {res.valid} valid "
                f"variation(s) of {res.examples} tried ({res.seconds:.1f} s)",
                flush=True,
            )
        else:
            failed += 1
            print(f"{res.task_id}: FAIL after {res.examples} variation(s): {res.why}")
            print(f"  minimal counterexample: {res.counterexample.describe()}")
            print(
                f'  replay: wac play {path} --variant perturbed --out /tmp/{res.task_id}-cx --actions "{res.actions}"',
                flush=True,
            )
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
        help=f"example count: ci = {PROFILES['ci']}, long = {PROFILES['long']}",
    )
    v.add_argument("--examples", type=int, help="number of variations to try (overrides --profile)")
    v.add_argument("--seed", type=int, help="randomise the search with this seed (default: deterministic)")
    v.add_argument("-j", "--jobs", type=int, help="bundles in parallel processes (default: one per CPU)")
    v.add_argument("-v", "--verbose", action="store_true", help="print every variation tried")
    from wac.backends import add_backend_args

    add_backend_args(v)
    v.set_defaults(func=cmd_validate)
