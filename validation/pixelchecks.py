"""Self-checks that judge pixels: is the change visible, and was it watched when it happened?

- `check_visible`: for every category whose evidence is visual, some evidence view of the plan
  must show the target's region visibly changed between the clean and perturbed worlds (the
  pixel rule of `visual.py`); a temporal category must also show it between its "before" and
  "after" views when both are taken from the same viewpoint.
- `check_watched`: a trigger that must fire unseen (revisit, look away, leave, after; and any
  trigger of an existence or static-attribute anomaly) must not fire while the target is on
  screen: the target's pixels in the frame at the firing tick, in the perturbed world (after the
  change) and in the clean world at the same tick (before it), from the segmentation render.

Each failure is a reason in words that says what the author should change.
"""

from __future__ import annotations

from wac.bundle.model import CompiledTask, SelfCheckPlan, TriggerKind
from wac.bundle.onscreen import WATCH_PX
from wac.taxonomy.registry import Category

from .capture import Run, Sample, anchor, anchor_index, focus_ids
from .visual import CHANGE_PX, Change, best_change, change, same_view, target_px

VISUAL_EVIDENCE = {"single_view", "several_views", "revisit", "time"}
# shadow and lighting anomalies show on the surfaces around the target, not on it: their
# observable already judges those pixels (`judges_appearance.judge_light_pair`)
OWN_PIXEL_JUDGE = {Category.shadow_lighting}
# a change of light shows on what the light falls on, not only on the lamp: the whole frame
LIGHT_EFFECTS = {"set_light", "set_flicker", "set_day_night"}
WATCHED_CATEGORIES = {Category.existence, Category.static_attribute}

# what to change when a change does not show, for an operator whose spec gives no `if_invisible:`
# (taxonomy/operators.yaml)
DEFAULT_IF_INVISIBLE = "make the change larger, or pick a target the plan sees from nearer"


def if_invisible(operator: str) -> str:
    """What the author should change when `operator`'s change does not show: its spec's advice."""
    from wac.taxonomy.registry import registry

    spec = registry().operator(operator)
    return (spec.if_invisible if spec is not None else "") or DEFAULT_IF_INVISIBLE


def is_visual(category: str) -> bool:
    from wac.taxonomy.registry import registry

    if category in OWN_PIXEL_JUDGE:
        return False
    return bool(set(registry().category(category).evidence) & VISUAL_EVIDENCE)


def _before_after(run: Run) -> tuple[Sample, Sample] | None:
    marks = run.marks()
    if len(marks) >= 2:
        return marks[0], marks[-1]
    if marks:
        return marks[0], run.samples[-1]
    return None


def _at(ch: Change) -> str:
    s = ch.b or ch.a
    return f" at '{s.caption}'" if s is not None and s.caption else ""


def check_visible(
    task: CompiledTask, plan: SelfCheckPlan, clean: Run, pert: Run
) -> tuple[list[str], list[str]]:
    """(reasons, notes): a visual anomaly must change the target's pixels visibly at an evidence view."""
    an = anchor(task)
    if not is_visual(an.category):
        return [], []
    ids: tuple[str, ...] | None = focus_ids(task)
    if not ids or {e.kind for e in an.effects} & LIGHT_EFFECTS:
        ids = None  # a change of light (a lamp, the day) is judged on the whole frame
    pairs = [(c, p) for c, p in zip(clean.samples, pert.samples, strict=False) if c.kind == p.kind]
    best = best_change(pairs, ids)
    what = f"{', '.join(ids)}'s" if ids else "the frame's"
    reasons, notes = [], []
    advice = if_invisible(an.operator)
    if not best.visible:
        why = (
            f"invisible change: at no evidence view do {what} pixels differ visibly between the clean and the "
            f"perturbed world; the best view{_at(best)} has {best.words()}. The change exists in the world's state "
            f"only: {advice}"
        )
        reasons.append(why)
        return reasons, notes
    notes.append(f"visible change: {best.words()}{_at(best)}")
    ev = _before_after(pert) if an.trigger.kind != TriggerKind.always else None
    if ev is not None and same_view(*ev) and an.category in WATCHED_CATEGORIES | {Category.operational_state}:
        ba = change(ev[0], ev[1], ids)
        cb = _before_after(clean)
        base = change(cb[0], cb[1], ids) if cb is not None and same_view(*cb) else None
        if not ba.visible and not (base is not None and base.visible):
            reasons.append(
                f"invisible change: the 'before' and 'after' views (same viewpoint) of the perturbed world show "
                f"{what} pixels alike, {ba.words()}; an auditor comparing them sees nothing: {advice}"
            )
    return reasons, notes


def necessity_change(task: CompiledTask, c: Sample, p: Sample) -> Change | None:
    """The target's visible change between two frames of one moment (None when not visible)."""
    ids = focus_ids(task)
    if not ids:
        return None
    ch = change(c, p, ids)
    return ch if ch.visible and same_view(c, p) else None


def check_watched(task: CompiledTask, clean: Run, pert: Run) -> list[str]:
    """A change that must happen unseen must not happen with the target on screen (segmentation)."""
    an = anchor(task)
    ai = anchor_index(task)
    kind = an.trigger.kind
    if kind == TriggerKind.always or (not kind.unseen and an.category not in WATCHED_CATEGORIES):
        return []
    ids = focus_ids(task)
    for k, e in enumerate(pert.events):
        if e.anomaly != ai or e.event not in ("fired", "deactivated"):
            continue
        after = target_px(pert.event_px[k], ids) if k < len(pert.event_px) else 0.0
        before = target_px(clean.probes.get(round(e.sim_time, 3), {}), ids)
        px = max(after, before)
        if px < WATCH_PX:
            continue
        return [
            f"trigger: the change happened in view: at {e.sim_time:.2f} s (action {e.step}) the {e.trigger} trigger "
            f"{e.event} while {px:.0f} px of {', '.join(ids)} were on screen (needs under {WATCH_PX:g} px at "
            f"640x480, from the segmentation); a long or large target stays partly in view when its centre is "
            f"not: pick a compact target, or a trigger the auditor cannot watch (a longer `away`, `leave` farther)"
        ]
    return []


__all__ = [
    "CHANGE_PX",
    "DEFAULT_IF_INVISIBLE",
    "check_visible",
    "check_watched",
    "if_invisible",
    "is_visual",
    "necessity_change",
]
