"""The self-check's checks of one anomaly, each a list of failure reasons in words (see selfcheck.py):
necessity, one change from clean, trigger, and what can be said without running anything."""

from __future__ import annotations

import numpy as np

from wac.bundle.model import AddObject, CompiledTask, SelfCheckPlan, TriggerKind
from wac.runtime.triggers import Missed, why_not_fired

from .capture import Run, Sample, anchor, anchor_index, focus_ids
from .pixelchecks import WATCHED_CATEGORIES, necessity_change

FRAME_DIFF = 24  # a pixel differs when a channel differs by more than this (0-255)
DIFF_FRACTION = 0.002  # frames differ when more than this fraction of pixels do
CONTINUOUS = {"set_motion", "set_animation", "set_day_night", "set_flicker"}
PHYSICAL = {"set_physics", "set_solid", "add_blocker", "add_hole", "set_motion", "set_mechanism", "set_pose"}


def frames_differ(a: Sample, b: Sample, ignore: tuple[str, ...] = ()) -> tuple[bool, str]:
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
    continuous = (an.trigger.kind.static or an.trigger.kind.periodic) and {
        e.kind for e in an.effects
    } <= CONTINUOUS
    reasons, notes = [], []
    points = [("the start view", clean.samples[0], pert.samples[0])]
    strict = bool(ev & {"interaction", "revisit", "time"})
    if strict:
        cm, pm = clean.first_mark(), pert.first_mark()
        if cm is not None and pm is not None:
            points.append((f"the first evidence view ('{cm.caption}', before the exposing actions)", cm, pm))
    need = "/".join(sorted(ev - {"single_view"}))
    others = other_ids(task)
    for label, c, p in points:
        differ, where = frames_differ(c, p, others)
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


def other_ids(task: CompiledTask) -> tuple[str, ...]:
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
    contact_physics = any(an.trigger.kind.by_touch for an in task.anomalies) and bool(kinds & PHYSICAL)
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
    once = not (kind.static or kind.level)  # fires once (unless it repeats)
    if once and not an.trigger.repeats and n != 1:
        return n, [f"trigger: the {kind.value} trigger fired {n} times (expected exactly once)"]
    if first is not None and once and fired[0].step <= first.step:
        return n, [
            f"trigger: the {kind.value} trigger fired at action {fired[0].step}, before the 'before' view "
            f"(action {first.step}): the change is already there when the auditor first looks"
        ]
    witnessed = [
        e
        for e, seen in zip(pert.events, pert.event_in_view, strict=False)
        if seen and e.anomaly == ai and e.event in ("fired", "deactivated")
    ]
    if witnessed and an.category in WATCHED_CATEGORIES:
        e = witnessed[0]
        return n, [
            f"trigger: the change happened in view ({e.trigger} trigger {e.event} at {e.sim_time:.1f} s, action "
            f"{e.step}): the auditor can watch it happen instead of comparing before and after"
        ]
    return n, []


def _never_why(task: CompiledTask, pert: Run) -> str:
    tr = anchor(task).trigger
    if any(e.anomaly == anchor_index(task) and e.event == "deferred" for e in pert.events):
        return (
            ": it was due, but waited for the target to leave the view, and the target stayed on screen "
            "(30 px or more at 640x480) until the plan ended: a target that fills the view whichever way the "
            "plan turns (a carpet under the viewpoint, a wall beside it) never leaves it; pick a smaller target"
        )
    seen = any(t.trigger_seen for t in pert.ticks)
    return why_not_fired(tr, Missed(seen, tuple(_target_distances(task, pert)), pert.samples[-1].sim_time))


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


# the trigger kinds that wait until their target is out of view, for messages
_UNSEEN = [k.value for k in TriggerKind if k.unseen]
_UNSEEN_WORDS = ", ".join(_UNSEEN[:-1]) + " or " + _UNSEEN[-1]


def static_checks(task: CompiledTask, plan: SelfCheckPlan) -> list[str]:
    """What can be said without running anything."""
    reasons = []
    budget = task.exploration.budget_actions
    if plan.actions_needed > budget:
        reasons.append(f"budget: the plan needs {plan.actions_needed} actions, the budget is {budget}")
    an = anchor(task)
    tr = an.trigger
    if an.category in WATCHED_CATEGORIES and tr.kind.level:
        reasons.append(
            f"trigger: the {tr.kind.value} trigger does not wait until the target is out of view, so the "
            f"{an.category.replace('_', ' ')} can happen while the auditor watches (use {_UNSEEN_WORDS})"
        )
    b = np.asarray(task.exploration.bounds, dtype=float)
    why = tr.never_fires_within(max(float(np.linalg.norm(p - q)) for p in b for q in b))
    if why:
        reasons.append(f"trigger: {why}")
    return reasons
