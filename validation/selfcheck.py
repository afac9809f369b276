"""Self-checks: prove that a bundle's anomaly manifests, only in the perturbed world, within budget.

`check_bundle(path)` runs the bundle's `selfcheck.json` plan in the perturbed and the clean
variant and checks, each with a reason in words when it fails:

- **differential**: the category's observable shows the anomaly in the perturbed run and not in
  the clean one (`observables.py`; shadow/lighting and material compare the two runs' frames
  pixel by pixel, as a reviewer would);
- **necessity** (categories whose evidence needs interaction, revisit, time or another view):
  the clean and perturbed worlds look the same from the start view and, for revisit, time and
  interaction categories, also at the plan's first `mark` (before the exposing actions);
- **visible** (`pixelchecks.py`): a visual anomaly changes the target's pixels visibly at an
  evidence view (the pixel rule, `visual.py`, docs/validation.md);
- **one change from clean**: after load and after the run, only the anomaly's targets, the
  objects it adds and those it declares with `affects` differ between the two worlds (`benign`
  does not excuse a second change);
- **trigger**: the anomaly's trigger fired the intended number of times, after the "before" view,
  and not while the target was on screen when it must fire unseen (segmentation at the firing tick);
- **budget**: the plan's actions fit the task's budget.

A multi-anomaly task is checked anomaly by anomaly, each with its own plan.

The evidence frames (clean | perturbed side by side, with the plan's captions) are written to
`out_dir` when one is given.  `wac selfcheck` (see `register`) runs many bundles in parallel.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from wac.bundle.model import AddObject, CompiledTask, SelfCheckPlan, TriggerKind
from wac.errors import BundleError, UsageError, WacError

from .capture import Run, Sample, Step, actions_text, anchor, anchor_index, focus_ids, run_steps
from .observables import Reading, observable
from .pixelchecks import check_visible, check_watched, necessity_change

FRAME_DIFF = 24  # a pixel differs when a channel differs by more than this (0-255)
DIFF_FRACTION = 0.002  # frames differ when more than this fraction of pixels do
CONTINUOUS = {"set_motion", "set_animation", "set_day_night", "set_flicker"}
PHYSICAL = {"set_physics", "set_solid", "add_blocker", "add_hole", "set_motion", "set_mechanism", "set_pose"}
NOT_DEFERRED = {TriggerKind.every, TriggerKind.beyond, TriggerKind.within}
ONCE = {
    TriggerKind.revisit,
    TriggerKind.look_away,
    TriggerKind.leave,
    TriggerKind.after,
    TriggerKind.contact,
    TriggerKind.interact,
}


@dataclass(frozen=True)
class SelfCheckResult:
    """The verdict on one bundle; `passed` when every check holds."""

    task_id: str
    category: str
    observable: str
    operator: str
    perturbed: Reading | None
    clean: Reading | None
    necessity: str  # ok | n/a | FAIL
    actions_needed: int
    budget: int
    seconds: float
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    trigger_fired: int = 0
    frames: tuple[str, ...] = ()
    actions: str = ""
    bundle: str = ""
    error: str | None = None

    @property
    def passed(self) -> bool:
        return not self.reasons and self.error is None

    @property
    def perturbed_ok(self) -> bool:
        return bool(self.perturbed and self.perturbed.anomalous)

    @property
    def clean_ok(self) -> bool:
        return bool(self.clean and not self.clean.anomalous)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["passed"] = self.passed
        return d


def load_bundle(path: str | Path) -> tuple[Path, CompiledTask, SelfCheckPlan]:
    """The bundle directory, its task and its self-check plan; BundleError with the reason otherwise."""
    p = Path(path)
    if p.is_file() and p.name in ("task.json", "selfcheck.json", "selfcheck.py"):
        p = p.parent
    if not p.is_dir():
        raise BundleError(f"{path}: no such bundle directory")
    for name in ("task.json", "selfcheck.json"):
        if not (p / name).is_file():
            raise BundleError(f"{p}: not a bundle (no {name}); run `wac build` first")
    try:
        task = CompiledTask.model_validate_json((p / "task.json").read_text(encoding="utf-8"))
        plan = SelfCheckPlan.model_validate_json((p / "selfcheck.json").read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BundleError(f"{p}: malformed bundle: {str(exc).splitlines()[0]}") from None
    return p, task, plan


# --- the checks -----------------------------------------------------------------------------------


def _frames_differ(a: Sample, b: Sample, ignore: tuple[str, ...] = ()) -> tuple[bool, str]:
    """Whether two samples (clean, perturbed) of the same moment look different, and where; the
    pixels of the objects `ignore` (another anomaly's, in a multi-anomaly task) do not count."""
    if a.frame.shape != b.frame.shape:
        return True, "frames of different sizes"
    rgb = np.abs(a.frame.astype(np.int16) - b.frame.astype(np.int16)).max(axis=-1) > FRAME_DIFF
    ids = a.ids != b.ids
    if ignore:
        from .visual import mask

        keep = ~(mask(a, ignore) | mask(b, ignore))
        rgb &= keep
        ids &= keep
    n = int(np.count_nonzero(rgb | ids))
    if n <= DIFF_FRACTION * rgb.size:
        return False, ""
    idx = {v: k for k, v in {**a.index_of, **b.index_of}.items()}
    vals = np.concatenate([a.ids[ids], b.ids[ids]]) if ids.any() else np.array([], dtype=int)
    objs = sorted({idx[int(v)] for v in np.unique(vals) if int(v) in idx})
    where = f" ({', '.join(objs[:4])})" if objs else " (light or shadow)"
    return True, f"{n} px differ{where}"


def check_necessity(
    task: CompiledTask, plan: SelfCheckPlan, clean: Run, pert: Run
) -> tuple[str, list[str], list[str]]:
    """Modality necessity: the anomaly must not show before the action that is meant to expose it.

    Returns (verdict, failure reasons, notes).  For revisit, time and interaction categories the
    clean and perturbed frames must be alike at the start and at the first `mark`; a continuous
    change (drift, tremble, animation, day-night, flicker) differs from the first frame on but no
    single frame can show it, so it is noted, not failed.  For several-view categories (visibility,
    view-dependent appearance) a difference at the start view is only noted: one view cannot tell
    an object drawn through a wall from one standing in front of it, nor a missing object from an
    empty spot.
    """
    from wac.taxonomy.registry import registry

    ev = set(registry().category(plan.category).evidence)
    if "single_view" in ev or not ev & {"interaction", "revisit", "time", "several_views"}:
        return "n/a", [], []
    an = anchor(task)
    continuous = (
        an.trigger.kind in (TriggerKind.always, TriggerKind.every)
        and {e.kind for e in an.effects} <= CONTINUOUS
    )
    reasons, notes = [], []
    points = [("the start view", clean.samples[0], pert.samples[0])]
    strict = bool(ev & {"interaction", "revisit", "time"})
    if strict:
        cm, pm = clean.first_mark(), pert.first_mark()
        if cm is not None and pm is not None:
            points.append((f"the first evidence view ('{cm.caption}', before the exposing actions)", cm, pm))
    need = "/".join(sorted(ev - {"single_view"}))
    others = _other_ids(task)
    for label, c, p in points:
        differ, where = _frames_differ(c, p, others)
        seen = necessity_change(task, c, p)  # the pixel rule: a thin or long target's change counts too
        if seen is not None and not differ:
            differ, where = True, f"{', '.join(focus_ids(task))}: {seen.words()}"
        if not differ:
            continue
        if strict and continuous:
            notes.append(
                f"necessity: frames differ at {label} ({where}) from a continuous change, which one frame cannot show"
            )
        elif strict:
            reasons.append(
                f"necessity: the anomaly is already visible at {label}: clean and perturbed frames differ, "
                f"{where}; an auditor would not need to {need}"
            )
        else:  # one view cannot tell an object drawn through a wall from one in front of it
            extra = sum(p.px640(p.pixels(o)) - c.px640(c.pixels(o)) for o in focus_ids(task))
            notes.append(
                f"necessity: {label} already differs ({where}; target {extra:+.0f} px vs clean), which only "
                f"several views can tell apart from a normal scene"
            )
    return ("FAIL" if reasons else "ok"), reasons, notes


def _other_ids(task: CompiledTask) -> tuple[str, ...]:
    """The objects of the task's other anomalies (a multi-anomaly task)."""
    mine = set(focus_ids(task))
    out = []
    for an in task.anomalies:
        if an is anchor(task):
            continue
        for oid in (*an.targets, *(e.target for e in an.effects if e.target), *an.affects):
            if oid not in mine and oid not in out:
                out.append(oid)
    return tuple(out)


def allowed_to_differ(task: CompiledTask) -> set[str]:
    """Objects that may differ between the worlds: the anomalies' targets, the objects they add,
    what the task declares they affect (`affects`), and what rests on any of these.  A `benign`
    object is not among them: benign excuses an oddity of the clean scene, not a second change."""
    out: set[str] = set()
    for an in task.anomalies:
        out |= set(an.targets)
        out |= set(an.affects)
        out |= {e.target for e in an.effects if e.target}
        out |= {e.object.id for e in an.effects if isinstance(e, AddObject)}
    # what rests on a target moves with it (a removed support, a moved table)
    changed = True
    while changed:
        extra = {o.id for o in task.scene.objects if o.support in out and o.id not in out}
        changed = bool(extra)
        out |= extra
    return out


# signatures hold positions to 1 cm and angles to 1 deg: the same pose a hair apart in the two
# worlds (a settling dynamic object) may round one step apart, which is no change
NOISE_M, NOISE_DEG = 0.015, 1.5


def check_one_change(task: CompiledTask, clean: Run, pert: Run) -> tuple[list[str], list[str]]:
    """Only the anomalies' targets (and what they add or declare with `affects`) may differ between the worlds.

    After the run, dynamic objects may also differ when the agent's path differed or when the
    anomaly is a contact-triggered physical one (what the target hits moves too): those are noted.
    """
    notes: list[str] = []
    allowed = allowed_to_differ(task)
    benign = {b.object for b in task.scene.benign}
    reasons = []
    moved_apart = any(
        abs(a - b) > 0.05 for a, b in zip(clean.samples[-1].pose[:2], pert.samples[-1].pose[:2], strict=True)
    )
    dynamic = {o.id for o in task.scene.objects if o.dynamic}
    kinds = {e.kind for an in task.anomalies for e in an.effects}
    contact_physics = any(
        an.trigger.kind in (TriggerKind.contact, TriggerKind.interact) for an in task.anomalies
    ) and bool(kinds & PHYSICAL)
    for when, cs, ps, cw, pw in (
        ("after load", clean.states_start, pert.states_start, clean.world_start, pert.world_start),
        ("after the run", clean.states_end, pert.states_end, clean.world_end, pert.world_end),
    ):
        for oid in sorted(set(cs) | set(ps)):
            if oid in allowed or cs.get(oid) == ps.get(oid):
                continue
            if when == "after the run" and oid in dynamic and (moved_apart or contact_physics):
                notes.append(
                    f"one change: {oid} (dynamic) differs after the run as a consequence of the anomaly"
                )
                continue
            if oid not in cs or oid not in ps:
                reasons.append(
                    f"one change: {oid} exists only in the {'perturbed' if oid in ps else 'clean'} world "
                    f"{when}, but it is not a target of the anomaly (declare it with `affects {oid}` if deliberate)"
                )
                continue
            if _close(cs[oid], ps[oid], metres=NOISE_M, degrees=NOISE_DEG):
                continue  # one rounding step apart: float noise at the edge of a 1 cm / 1 deg bucket
            fields = [k for (k, a), (_, b) in zip(cs[oid], ps[oid], strict=True) if a != b]
            if when == "after the run" and oid in dynamic and _close(cs[oid], ps[oid]):
                continue  # a pushed dynamic object: contact chaos of a few cm / deg is not a change
            reasons.append(
                f"one change: {oid} differs {when} ({', '.join(fields)}) but it is not a target of the "
                f"anomaly: the anomaly changes a second object (an auditor sees two changes). Move the anomaly "
                f"or {oid} apart, or declare the consequence with `affects {oid}` on the anomaly"
                + (
                    " (`benign` does not excuse it: it marks an oddity of the clean scene)"
                    if oid in benign
                    else ""
                )
            )
        for (k, a), (_, b) in zip(cw, pw, strict=True):
            if a != b and not (
                {"holes": {"add_hole"}, "blockers": {"add_blocker"}, "day_night": {"set_day_night"}}[k]
                & kinds
            ):
                reasons.append(
                    f"one change: the scene's {k} differ {when} without an anomaly effect that explains it"
                )
    return reasons[:4], notes[:4]


def _close(a: tuple, b: tuple, metres: float = 0.05, degrees: float = 5.0) -> bool:
    """Two object signatures that differ only in position/rotation, by less than the tolerances."""
    for (k, x), (_, y) in zip(a, b, strict=True):
        if x == y:
            continue
        if k == "position" and max(abs(u - v) for u, v in zip(x, y, strict=True)) < metres:
            continue
        if (
            k == "rotation"
            and max(abs((u - v + 180) % 360 - 180) for u, v in zip(x, y, strict=True)) < degrees
        ):
            continue
        return False
    return True


def check_trigger(task: CompiledTask, pert: Run) -> tuple[int, list[str]]:
    an = anchor(task)
    ai = anchor_index(task)
    kind = an.trigger.kind
    fired = [e for e in pert.events if e.anomaly == ai and e.event == "fired"]
    n = len(fired)
    first = pert.first_mark()
    if kind == TriggerKind.always:
        return n, (
            [] if n == 1 else [f"trigger: the static anomaly was applied {n} times at load (expected once)"]
        )
    if n == 0:
        return 0, [f"trigger: the {kind.value} trigger never fired during the plan" + _never_why(task, pert)]
    if kind in ONCE and not an.trigger.repeat and n != 1:
        return n, [f"trigger: the {kind.value} trigger fired {n} times (expected exactly once)"]
    if first is not None and kind in ONCE and fired[0].step <= first.step:
        return n, [
            f"trigger: the {kind.value} trigger fired at action {fired[0].step}, before the 'before' view "
            f"(action {first.step}): the change is already there when the auditor first looks"
        ]
    witnessed = [
        e
        for e, seen in zip(pert.events, pert.event_in_view, strict=False)
        if seen and e.anomaly == ai and e.event in ("fired", "deactivated")
    ]
    if witnessed and an.category in ("existence", "static_attribute"):
        e = witnessed[0]
        return n, [
            f"trigger: the change happened in view ({e.trigger} trigger {e.event} at {e.sim_time:.1f} s, action "
            f"{e.step}): the auditor can watch it happen instead of comparing before and after"
        ]
    return n, []


def _never_why(task: CompiledTask, pert: Run) -> str:
    tr = anchor(task).trigger
    if tr.kind == TriggerKind.revisit:
        if not any(t.trigger_seen for t in pert.ticks):
            within = f" within {tr.seen_within_m:g} m" if tr.seen_within_m else ""
            return f": the target was never seen{within}"
        return f": the target was seen but never out of view for {tr.away_s or 2:g} s" + (
            f" nor left by {tr.leave_m:g} m" if tr.leave_m else ""
        )
    if tr.kind == TriggerKind.leave:
        ds = _target_distances(task, pert)
        got = f" (the plan goes from {min(ds):.1f} m to {max(ds):.1f} m)" if ds else ""
        return f": the agent must come within {tr.enter_m:g} m and then go beyond {tr.exit_m:g} m{got}"
    if tr.kind == TriggerKind.after:
        return f": the plan ends at {pert.samples[-1].sim_time:.1f} s, before {tr.after_s:g} s (or the target stayed in view)"
    if tr.kind in (TriggerKind.beyond, TriggerKind.within):
        return f": the agent never went {'farther' if tr.kind == TriggerKind.beyond else 'nearer'} than {tr.distance_m:g} m"
    return ""


def _target_distances(task: CompiledTask, run: Run) -> list[float]:
    """Horizontal agent-to-target-bounds distances over the run's ticks."""
    ids = focus_ids(task)
    objs = [o for o in task.scene.objects if o.id in ids]
    if not objs:
        return []
    lo, hi = objs[0].aabb_min, objs[0].aabb_max
    out = []
    for t in run.ticks:
        dx = max(lo[0] - t.agent[0], 0.0, t.agent[0] - hi[0])
        dy = max(lo[1] - t.agent[1], 0.0, t.agent[1] - hi[1])
        out.append(float(np.hypot(dx, dy)))
    return out


def static_checks(task: CompiledTask, plan: SelfCheckPlan) -> list[str]:
    """What can be said without running anything."""
    reasons = []
    budget = task.exploration.budget_actions
    if plan.actions_needed > budget:
        reasons.append(f"budget: the plan needs {plan.actions_needed} actions, the budget is {budget}")
    an = anchor(task)
    tr = an.trigger
    if an.category in ("existence", "static_attribute") and tr.kind in NOT_DEFERRED:
        reasons.append(
            f"trigger: the {tr.kind.value} trigger does not wait until the target is out of view, so the "
            f"{an.category.replace('_', ' ')} can happen while the auditor watches (use revisit, look_away, leave "
            f"or after)"
        )
    if tr.kind == TriggerKind.revisit and tr.leave_m and tr.away_s is None:
        b = np.asarray(task.exploration.bounds, dtype=float)
        span = max(float(np.linalg.norm(p - q)) for p in b for q in b)
        if tr.leave_m > span:
            reasons.append(
                f"trigger: the revisit needs the agent to move {tr.leave_m:g} m away, but the exploration "
                f"area is only {span:.1f} m across: it can never fire"
            )
    return reasons


# --- evidence -------------------------------------------------------------------------------------


def save_evidence(out_dir: Path, task: CompiledTask, clean: Run, pert: Run) -> list[str]:
    """Write clean | perturbed evidence frames with the plan's captions; return the file names."""
    from wac.runtime.compose import side_by_side
    from wac.runtime.trajectory import save_png

    out_dir.mkdir(parents=True, exist_ok=True)
    files, captions = [], []
    for c, p in zip(clean.samples, pert.samples, strict=False):
        if c.kind not in ("start", "mark", "after"):
            continue
        name = f"{len(files):02d}_{c.kind}.png"
        save_png(out_dir / name, side_by_side(c.frame, p.frame))
        files.append(name)
        captions.append(
            {
                "file": name,
                "caption": c.caption,
                "step": c.step,
                "sim_time": c.sim_time,
                "left": "clean",
                "right": "perturbed",
            }
        )
    (out_dir / "evidence.json").write_text(
        json.dumps({"task_id": task.id, "frames": captions}, indent=2) + "\n"
    )
    return files


# --- entry points ---------------------------------------------------------------------------------


def focused(task: CompiledTask, index: int) -> CompiledTask:
    """The task with anomaly `index` as its anchor: what the checks of that anomaly look at."""
    if anchor_index(task) == index:
        return task
    ans = tuple(an.model_copy(update={"anchor": i == index}) for i, an in enumerate(task.anomalies))
    return task.model_copy(update={"anomalies": ans})


@dataclass(frozen=True)
class _Checked:
    """One anomaly's checks: its readings, necessity verdict, reasons and notes."""

    perturbed: Reading | None
    clean: Reading | None
    necessity: str
    reasons: list
    notes: list
    fired: int
    runs: tuple = ()
    error: str | None = None


def _check_anomaly(
    bdir: Path, task: CompiledTask, plan: SelfCheckPlan, steps: list[Step], seed: int, shadows: bool | None
) -> _Checked:
    """Run one anomaly's plan in both worlds and apply every check to it (`task` has it as anchor)."""
    obs = observable(plan.observable)
    reasons = static_checks(task, plan)
    if shadows is None:
        shadows = plan.category == "shadow_lighting"
    try:
        pert = run_steps(
            bdir, "perturbed", steps, obs.measure, seed=seed, shadows=shadows, depth=obs.depth, focus=task
        )
        probe = [e.sim_time for e in pert.events if e.event in ("fired", "deactivated")]
        clean = run_steps(
            bdir,
            "clean",
            steps,
            obs.measure,
            seed=seed,
            shadows=shadows,
            depth=obs.depth,
            probe_times=probe,
            focus=task,
        )
    except WacError as exc:
        return _Checked(None, None, "?", [f"the runtime refused the bundle: {exc}"], [], 0, error=str(exc))
    for run in (pert, clean):
        if run.error:
            reasons.append(f"{run.variant}: {run.error}")
    rp, rc = obs.readings(pert, clean, task)
    if not rp.anomalous:
        reasons.append(f"perturbed variant does not show the anomaly: {rp.detail}")
    if rc.anomalous:
        reasons.append(f"clean variant also shows it: {rc.detail}")
    vreasons, notes = check_visible(task, plan, clean, pert)
    reasons += vreasons
    necessity, nreasons, nnotes = check_necessity(task, plan, clean, pert)
    reasons += nreasons
    notes += nnotes
    oreasons, onotes = check_one_change(task, clean, pert)
    reasons += oreasons
    notes += onotes
    fired, treasons = check_trigger(task, pert)
    reasons += treasons
    if not any("happened in view" in r for r in treasons):
        reasons += check_watched(task, clean, pert)
    return _Checked(rp, rc, necessity, reasons, notes, fired, (clean, pert))


def check_bundle(
    path: str | Path,
    out_dir: str | Path | None = None,
    steps: list[Step] | None = None,
    seed: int = 0,
    shadows: bool | None = None,
) -> SelfCheckResult:
    """Self-check one bundle (optionally with another action list); see the module docstring.

    A multi-anomaly task is checked anomaly by anomaly, each with its own plan (`plan.others`);
    the result's readings are the anchor's, and the reasons of a further anomaly name it.
    Shadows are rendered only for the shadow/lighting category unless `shadows` says otherwise
    (no other observable needs them, and they cost most of the render time).
    """
    t0 = time.perf_counter()
    bdir, task, plan = load_bundle(path)
    an = anchor(task)
    steps = steps if steps is not None else [Step.of(s) for s in plan.steps]
    base = dict(
        task_id=task.id,
        category=plan.category,
        observable=plan.observable,
        operator=an.operator,
        actions_needed=sum(1 for s in steps if s.action != "mark"),
        budget=task.exploration.budget_actions,
        actions=actions_text(steps),
        bundle=str(bdir),
    )
    main = _check_anomaly(bdir, task, plan, steps, seed, shadows)
    reasons, notes = list(main.reasons), list(main.notes)
    for other in plan.others:
        if other.anomaly >= len(task.anomalies):
            reasons.append(f"the plan for anomaly {other.anomaly + 1} has no anomaly in the task")
            continue
        o = task.anomalies[other.anomaly]
        label = f"anomaly {other.anomaly + 1} (`{o.operator} {' '.join(o.targets)}`): "
        sub = _check_anomaly(
            bdir, focused(task, other.anomaly), other, [Step.of(x) for x in other.steps], seed, shadows
        )
        reasons += [label + r for r in sub.reasons]
        notes += [label + n for n in sub.notes]
    if main.error is not None:
        return SelfCheckResult(
            perturbed=None,
            clean=None,
            necessity="?",
            seconds=time.perf_counter() - t0,
            reasons=tuple(reasons),
            error=main.error,
            **base,
        )
    frames: list[str] = []
    if out_dir is not None:
        clean, pert = main.runs
        frames = save_evidence(Path(out_dir), task, clean, pert)
    return SelfCheckResult(
        perturbed=main.perturbed,
        clean=main.clean,
        necessity=main.necessity,
        seconds=round(time.perf_counter() - t0, 2),
        reasons=tuple(reasons),
        notes=tuple(notes),
        trigger_fired=main.fired,
        frames=tuple(frames),
        **base,
    )


def _safe_check(path: str, out: str | None) -> SelfCheckResult:
    """check_bundle for a worker process: every failure becomes a failed result."""
    t0 = time.perf_counter()
    try:
        return check_bundle(path, Path(out) / Path(path).name if out else None)
    except WacError as exc:
        msg = str(exc)
    except Exception as exc:  # a bug in wac or the runtime: report it as this task's failure, keep going
        import traceback

        msg = (
            f"internal error: {type(exc).__name__}: {exc} ({traceback.extract_tb(exc.__traceback__)[-1].filename.rsplit('/', 1)[-1]}:"
            f"{traceback.extract_tb(exc.__traceback__)[-1].lineno})"
        )
    return SelfCheckResult(
        task_id=Path(path).name,
        category="?",
        observable="?",
        operator="?",
        perturbed=None,
        clean=None,
        necessity="?",
        actions_needed=0,
        budget=0,
        seconds=round(time.perf_counter() - t0, 2),
        reasons=(msg,),
        bundle=path,
        error=msg,
    )


def find_bundles(paths: list[str]) -> list[Path]:
    """Bundle directories under the given build directories or bundles, sorted, de-duplicated."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file() and p.name in ("task.json", "selfcheck.json"):
            p = p.parent
        if (p / "selfcheck.json").is_file():
            out.append(p)
        elif p.is_dir():
            found = sorted(d for d in p.iterdir() if (d / "selfcheck.json").is_file())
            if not found:
                raise UsageError(
                    f"{raw}: no bundles here (a build directory or a bundle with selfcheck.json)"
                )
            out += found
        else:
            raise UsageError(f"{raw}: no such build directory or bundle")
    seen, uniq = set(), []
    for b in out:
        if b.resolve() not in seen:
            seen.add(b.resolve())
            uniq.append(b)
    return uniq


def run_many(
    bundles: list[Path], jobs: int = 1, out: str | None = None, progress: bool = False
) -> list[SelfCheckResult]:
    """Self-check bundles in `jobs` processes; results in input order."""
    results: dict[int, SelfCheckResult] = {}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(bundles), unit="task", file=sys.stderr, leave=False, desc="selfcheck")
    if jobs <= 1 or len(bundles) == 1:
        for i, b in enumerate(bundles):
            results[i] = _safe_check(str(b), out)
            if bar:
                bar.update(1)
    else:
        from wac.backends import local_pool

        # a fresh interpreter per worker: VTK/EGL and pybullet do not survive fork
        with local_pool(jobs, "spawn") as ex:
            futs = {ex.submit(_safe_check, str(b), out): i for i, b in enumerate(bundles)}
            for f in as_completed(futs):
                results[futs[f]] = f.result()
                if bar:
                    bar.update(1)
    if bar:
        bar.close()
    return [results[i] for i in range(len(bundles))]


def table(results: list[SelfCheckResult]) -> str:
    """The human summary: one row per task, then each failure's reasons."""
    mark = lambda ok: "✓" if ok else "✗"  # noqa: E731
    rows = [("task", "category", "perturbed", "clean", "necessity", "actions", "seconds")]
    for r in results:
        rows.append(
            (
                r.task_id,
                r.category,
                mark(r.perturbed_ok),
                mark(r.clean_ok),
                r.necessity,
                f"{r.actions_needed}/{r.budget}",
                f"{r.seconds:.1f}",
            )
        )
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    failed = [r for r in results if not r.passed]
    if failed:
        lines.append("")
        for r in failed:
            lines.append(f"FAIL {r.task_id}:")
            lines += [f"  - {why}" for why in r.reasons]
    n = len(results)
    lines.append("")
    lines.append(
        f"{n - len(failed)} of {n} task(s) pass the self-check" + (f"; {len(failed)} fail" if failed else "")
    )
    return "\n".join(lines)


def cmd_selfcheck(args: argparse.Namespace) -> int:
    bundles = find_bundles(args.paths)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    jobs = args.jobs or min(len(bundles), os.cpu_count() or 1)
    t0 = time.perf_counter()
    if getattr(args, "backend", "local") == "ray":  # wac/backends.py: one Ray task per bundle
        from wac.backends import ray_map

        results = ray_map(_safe_check, [(str(b), args.out) for b in bundles], args.address)
    else:
        results = run_many(bundles, jobs, args.out, progress=sys.stderr.isatty() and not args.json)
    wall = time.perf_counter() - t0
    if args.json:
        print(
            json.dumps(
                {
                    "results": [r.as_dict() for r in results],
                    "passed": sum(r.passed for r in results),
                    "total": len(results),
                    "seconds": round(wall, 2),
                    "jobs": jobs,
                },
                indent=2,
                default=str,
            )
        )
    else:
        print(table(results))
        print(f"{len(results)} task(s) in {wall:.1f} s on {jobs} process(es)")
    return 0 if all(r.passed for r in results) else 1


def register(subparsers) -> None:
    """Add `selfcheck` and `validate` to the `wac` command line."""
    s = subparsers.add_parser("selfcheck", help="run every bundle's self-check plan in both variants")
    s.add_argument("paths", nargs="+", metavar="BUILD_DIR_OR_BUNDLE")
    s.add_argument("-j", "--jobs", type=int, help="parallel processes (default: one per CPU)")
    s.add_argument("--json", action="store_true", help="machine-readable results on stdout")
    s.add_argument(
        "--out", metavar="DIR", help="write evidence frames (clean | perturbed) per task under DIR"
    )
    from wac.backends import add_backend_args

    add_backend_args(s)
    s.set_defaults(func=cmd_selfcheck)
    from .validate import register as register_validate

    register_validate(subparsers)


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point (`python -m wac.validation.selfcheck BUNDLE...`, a bundle's selfcheck.py):
    the same as `wac selfcheck`, with its exit codes (0 pass, 1 fail, 2 usage, 3 internal error)."""
    from wac.cli import main as wac_main

    return wac_main(["selfcheck", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["SelfCheckResult", "check_bundle", "find_bundles", "main", "register", "run_many"]
