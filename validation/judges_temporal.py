"""Observable judges of change over time (presence, pose, lighting/animation/mechanism continuity) and
of semantic consistency (orientation against up, era).  Each judges one variant's run."""

from __future__ import annotations

import math

import numpy as np

from wac.bundle.model import CompiledTask

from .capture import Run, anchor, as_array, focus_ids
from .readings import (
    MIN_PX,
    SCALE_RATIO,
    Reading,
    angle_deg,
    blocked_walk,
    deciding_sample,
    object_label,
    object_px,
    object_spec,
    observes,
    rotation_delta_deg,
    rotation_of,
    wrap_deg,
)

TILT_DEG, YAW_DEG, RELOCATE_M = 10.0, 40.0, 0.3
MOVED_M, TURNED_DEG = 0.15, 10.0
DAYLIGHT_JUMP = 0.3


# --- temporal consistency -------------------------------------------------------------------------


def _before_after(run: Run):
    marks = run.marks()
    if len(marks) >= 2:
        return marks[0], marks[-1]
    if marks:
        return marks[0], run.samples[-1]
    return run.samples[0], run.samples[-1]


@observes("presence_before_after")
def judge_presence(run: Run, task: CompiledTask) -> Reading:
    b, a = _before_after(run)
    if b is a:
        return Reading("presence_before_after", 0.0, False, "the plan takes no before/after views")
    for oid in focus_ids(task):
        pb, pa = object_px(b, oid), object_px(a, oid)
        inb = b.measure.get("base", {}).get(oid, {}).get("present", False)
        ina = a.measure.get("base", {}).get(oid, {}).get("present", False)
        if inb and pb >= MIN_PX and (not ina or pa < 5):
            return Reading(
                "presence_before_after",
                pb - pa,
                True,
                f"{object_label(task, oid)} was there before ({pb:.0f} px) and is gone after returning ({pa:.0f} px)",
                pb,
            )
        if (not inb or pb < 5) and ina and pa >= MIN_PX:
            return Reading(
                "presence_before_after",
                pa - pb,
                True,
                f"{object_label(task, oid)} was absent before ({pb:.0f} px) and is there after returning ({pa:.0f} px)",
                pa,
            )
        if inb != ina:
            return Reading(
                "presence_before_after",
                abs(pa - pb),
                False,
                f"{object_label(task, oid)} {'vanished' if inb else 'appeared'} but the views do not show it "
                f"({pb:.0f} px before, {pa:.0f} px after)" + blocked_walk(run),
                unseen=True,
            )
    return Reading(
        "presence_before_after", 0.0, False, "the same objects are there before and after" + blocked_walk(run)
    )


@observes("pose_before_after")
def judge_pose(run: Run, task: CompiledTask) -> Reading:
    b, a = _before_after(run)
    if b is a:
        return Reading("pose_before_after", 0.0, False, "the plan takes no before/after views")
    tb = [t for t in run.ticks if t.t >= b.sim_time - 1e-6]
    mats = task.scene.materials
    for k, oid in enumerate(focus_ids(task)):
        mb, ma = b.measure.get("base", {}).get(oid, {}), a.measure.get("base", {}).get(oid, {})
        if not (mb.get("present") and ma.get("present")):
            continue
        pb, pa = object_px(b, oid), object_px(a, oid)
        moved = max(
            (math.dist(t.position[k], mb["position"]) for t in tb if len(t.position) > k), default=0.0
        )
        turned = rotation_delta_deg(mb["rotation"], ma["rotation"])
        scale = float(
            np.max(
                np.abs(
                    np.log(
                        np.maximum(np.abs(as_array(ma["scale"])), 1e-6)
                        / np.maximum(np.abs(as_array(mb["scale"])), 1e-6)
                    )
                )
            )
        )
        recol = [
            p
            for p, n in ma["materials"].items()
            if mb["materials"].get(p) != n
            and (
                mats.get(n) is None
                or mats.get(mb["materials"].get(p)) is None
                or mats[n].color != mats[mb["materials"][p]].color
                or mats[n].category != mats[mb["materials"][p]].category
            )
        ]
        what = None
        if moved >= MOVED_M:
            what = f"{object_label(task, oid)} moved {moved:.2f} m between the views"
        elif turned >= TURNED_DEG:
            what = f"{object_label(task, oid)} turned {turned:.0f} deg between the views"
        elif scale >= math.log(SCALE_RATIO):
            what = f"{object_label(task, oid)} changed size x{math.exp(scale):.2f} between the views"
        elif recol:
            what = f"{object_label(task, oid)} changed material/colour ({recol[0]}) between the views"
        if what:
            if max(pb, pa) < MIN_PX:
                return Reading(
                    "pose_before_after",
                    moved,
                    False,
                    f"{what}, but it is not in view ({pb:.0f}/{pa:.0f} px)",
                    unseen=True,
                )
            return Reading("pose_before_after", round(max(moved, turned / 100), 3), True, what, max(pb, pa))
    return Reading(
        "pose_before_after",
        0.0,
        False,
        "the target keeps its position, facing, size and material" + blocked_walk(run),
    )


def _daylight_jump(ticks) -> Reading | None:
    """An abrupt day-night: daylight jumping within one tick."""
    dl = np.array([t.daylight for t in ticks])
    dt = np.diff([t.t for t in ticks])
    jumps = np.abs(np.diff(dl))[dt <= 0.11] if len(dt) else np.array([])
    if jumps.size and jumps.max() >= DAYLIGHT_JUMP:
        n = int((jumps >= DAYLIGHT_JUMP).sum())
        return Reading(
            "lighting_continuity",
            float(jumps.max()),
            True,
            f"daylight jumps by {jumps.max():.2f} within 0.05 s ({n} jump(s))",
        )
    return None


def _lamp_switches(task: CompiledTask, ticks, ids, t_int) -> Reading | None:
    """A lamp switching by itself (not at dusk or dawn, not as the answer to an interaction)."""
    for k, oid in enumerate(ids):
        flips, late = 0, []
        for t0, t1 in zip(ticks, ticks[1:], strict=False):
            if len(t0.lit) > k and len(t1.lit) > k and t0.lit[k] != t1.lit[k]:
                night_changed = (t0.daylight < 0.25) != (t1.daylight < 0.25)
                since = [t1.t - ti for ti in t_int if t1.t >= ti]
                if since and min(since) < 0.6:
                    continue  # the answer to an interaction
                if since and min(since) < 10.0 and not night_changed:
                    late.append(min(since))
                elif not night_changed:
                    flips += 1
        if late and not flips:
            return Reading(
                "lighting_continuity",
                round(late[0], 2),
                True,
                f"{object_label(task, oid)} switches only {late[0]:.1f} s after it was used",
            )
        if flips:
            return Reading(
                "lighting_continuity",
                float(flips),
                True,
                f"{object_label(task, oid)} switched {'on and off ' + str(flips) + ' times' if flips > 1 else 'state'} "
                f"by itself",
            )
    return None


def _spin_change(task: CompiledTask, ticks, ids) -> Reading | None:
    """A spinning part frozen, racing or jumping."""
    spins = [
        (o.id, p) for oid in ids for o in [object_spec(task, oid)] if o is not None for p in o.parts if p.spin
    ]
    if spins and ticks[0].spin:
        arr = np.array([t.spin for t in ticks if len(t.spin) == len(ticks[0].spin)])
        times = np.array([t.t for t in ticks if len(t.spin) == len(ticks[0].spin)])
        for j, (oid, part) in enumerate(spins[: arr.shape[1]]):
            d = np.array([wrap_deg(x) for x in np.diff(arr[:, j])])
            span = times[-1] - times[0]
            rate = abs(d.sum()) / max(span, 1e-6)
            want = abs(part.spin.rate_deg_s)
            step_max = float(np.abs(d).max()) if d.size else 0.0
            still = float(np.mean(np.abs(d) < 0.5)) if d.size else 1.0
            if want > 1 and still > 0.5 and step_max >= 10.0:
                return Reading(
                    "lighting_continuity",
                    round(step_max, 1),
                    True,
                    f"{object_label(task, oid)}'s {part.id} stands still and then jumps {step_max:.0f} deg at once "
                    f"(it should turn steadily at {want:.0f} deg/s)",
                )
            if want > 1 and rate < 0.2 * want:
                return Reading(
                    "lighting_continuity",
                    round(rate, 1),
                    True,
                    f"{object_label(task, oid)}'s {part.id} is frozen ({rate:.0f} deg/s instead of {want:.0f})",
                )
            if want > 1 and rate > 1.5 * want:
                return Reading(
                    "lighting_continuity",
                    round(rate, 1),
                    True,
                    f"{object_label(task, oid)}'s {part.id} races at {rate:.0f} deg/s instead of {want:.0f}",
                )
            if step_max > max(20.0, 4 * want * 0.05):
                return Reading(
                    "lighting_continuity",
                    round(step_max, 1),
                    True,
                    f"{object_label(task, oid)}'s {part.id} jumps {step_max:.0f} deg at once",
                )
    return None


def _mechanism_response(task: CompiledTask, ticks, ids, an, interacts, t_int) -> Reading | None:
    """A door or toggle: closing by itself, not answering its use, answering late, too fast, swinging
    back or stopping half-way."""
    for k, oid in enumerate(ids):
        spec = object_spec(task, oid)
        if spec is None or spec.open is None:
            continue
        of = np.array([t.open_frac[k] if len(t.open_frac) > k else 0.0 for t in ticks])
        times = np.array([t.t for t in ticks])
        if not interacts:
            drops = np.diff(of) < -1e-3
            if drops.any():
                return Reading(
                    "lighting_continuity", 1.0, True, f"{object_label(task, oid)} closes by itself"
                )
            if any(e.kind == "set_mechanism" for e in an.effects):
                return Reading(
                    "lighting_continuity",
                    0.0,
                    False,
                    f"the plan never interacts with {object_label(task, oid)}: its mechanism cannot show",
                )
            continue
        ti = t_int[0]
        after = of[times >= ti]
        ta = times[times >= ti]
        start = after[0] if after.size else of[-1]
        moved = np.abs(after - start) > 0.02
        if not moved.any():
            return Reading(
                "lighting_continuity", 0.0, True, f"{object_label(task, oid)} does not respond to interaction"
            )
        first = float(ta[np.argmax(moved)] - ti)
        if first > 1.0:
            return Reading(
                "lighting_continuity",
                first,
                True,
                f"{object_label(task, oid)} responds only {first:.1f} s after use",
            )
        goal = 1.0 if start < 0.5 else 0.0
        done = np.abs(after - goal) < 0.02
        if done.any():
            took = float(ta[np.argmax(done)] - ti)
            if took < 0.4 * spec.open_time_s:
                return Reading(
                    "lighting_continuity",
                    took,
                    True,
                    f"{object_label(task, oid)} swings in {took:.2f} s instead of {spec.open_time_s:.1f} s",
                )
            back = np.abs(after[np.argmax(done) :] - goal) > 0.05
            if back.any():
                return Reading(
                    "lighting_continuity", took, True, f"{object_label(task, oid)} swings back by itself"
                )
        else:
            return Reading(
                "lighting_continuity",
                float(after[-1]),
                True,
                f"{object_label(task, oid)} stops at {abs(after[-1] - start) * 100:.0f}% of its swing",
            )
    return None


@observes("lighting_continuity")
def judge_continuity(run: Run, task: CompiledTask) -> Reading:
    """Light, animation and mechanisms over the run's ticks: an abrupt day-night, a lamp switching by
    itself, a spinning part frozen, racing or jumping, a door that does not answer its use as it
    should; the first that shows decides."""
    ticks = run.ticks
    if len(ticks) < 3:
        return Reading("lighting_continuity", 0.0, False, "the run is too short to watch anything change")
    an = anchor(task)
    interacts = [(r.step, r) for r in run.steps if r.action.action == "interact"]
    t_int = _interact_times(run)
    ids = focus_ids(task)
    found = (
        _daylight_jump(ticks)
        or _lamp_switches(task, ticks, ids, t_int)
        or _spin_change(task, ticks, ids)
        or _mechanism_response(task, ticks, ids, an, interacts, t_int)
    )
    if found is not None:
        return found
    if any(e.kind == "set_mechanism" for e in an.effects) and not interacts:
        return Reading(
            "lighting_continuity",
            0.0,
            False,
            "the plan never interacts with the target: its mechanism cannot show",
        )
    return Reading("lighting_continuity", 0.0, False, "light, animation and mechanisms change smoothly")


def _interact_times(run: Run) -> list[float]:
    """Sim times at which interact actions started (from the tick log)."""
    out = []
    for r in run.steps:
        if r.action.action == "interact":
            out.append(r.t0)
    return out


# --- semantic consistency -------------------------------------------------------------------------


@observes("orientation_vs_up")
def judge_orientation(run: Run, task: CompiledTask) -> Reading:
    s = deciding_sample(run)
    z = np.array([0.0, 0.0, 1.0])
    for oid, m in s.measure.get("base", {}).items():
        spec = object_spec(task, oid)
        if not m.get("present") or spec is None:
            continue
        px = object_px(s, oid)
        up_now, up_spec = rotation_of(m["rotation"]) @ z, rotation_of(spec.rotation_deg) @ z
        tilt = angle_deg(up_now, up_spec)
        sgn_now = np.sign(np.prod(as_array(m["scale"])))
        sgn_spec = np.sign(np.prod(as_array(spec.scale)))
        yaw = abs(wrap_deg(m["rotation"][0] - spec.rotation_deg[0]))
        moved = math.dist(m["position"], spec.position)
        what = None
        if tilt >= TILT_DEG:
            what = (
                f"{object_label(task, oid)} is tilted {tilt:.0f} deg from upright"
                if tilt < 150
                else f"{object_label(task, oid)} is upside down"
            )
        elif sgn_now != sgn_spec:
            what = f"{object_label(task, oid)} is mirrored"
        elif yaw >= YAW_DEG:
            what = f"{object_label(task, oid)} faces {yaw:.0f} deg away from its proper direction"
        elif moved >= RELOCATE_M:
            what = f"{object_label(task, oid)} stands {moved:.1f} m from its proper place"
        if what:
            if px < MIN_PX:
                return Reading(
                    "orientation_vs_up", tilt, False, f"{what}, but it is not in view ({px:.0f} px)", px, True
                )
            return Reading("orientation_vs_up", round(tilt, 1), True, what, px)
    return Reading("orientation_vs_up", 0.0, False, "the target stands the right way up and in place")


def measure_era(env, task) -> dict:
    """Per present object: its prefab's era and, in a scene with an era, why it is out of that era
    ("" when it is not), by the historical detector's rule (the kind's years of use)."""
    from wac.detectors.semantic import era_verdict
    from wac.taxonomy.norms import ERA_YEARS, norms

    era = task.scene.era
    eras = {}
    for oid, st in env.world.objects.items():
        if st.present:
            o = st.spec
            why = ""
            if era in ERA_YEARS:
                why, _ = era_verdict(norms().for_object(o.prefab, o.name, o.kind), o.era, o.name or oid, era)
            eras[oid] = (o.era, why)
    return {"eras": eras}


@observes("era_mismatch", measure=(measure_era,))
def judge_era(run: Run, task: CompiledTask) -> Reading:
    s = deciding_sample(run)
    era = task.scene.era
    benign = {b.object for b in task.scene.benign}
    if era in ("any", "", None):
        return Reading("era_mismatch", 0.0, False, "the scene has no era to clash with")
    odd = []
    for oid, (_, why) in s.measure.get("eras", {}).items():
        if why and oid not in benign:
            px = object_px(s, oid)
            if px >= MIN_PX:
                odd.append((oid, why, px))
    if odd:
        oid, why, px = odd[0]
        return Reading(
            "era_mismatch", float(len(odd)), True, f"{object_label(task, oid)} is in view: {why}", px
        )
    # the anomaly's object is in the world but not in this view: the run is no evidence either way
    eras = s.measure.get("eras", {})
    hidden = [(oid, object_px(s, oid)) for oid in focus_ids(task) if oid in eras]
    hidden = [(oid, px) for oid, px in hidden if px < MIN_PX]
    if hidden:
        oid, px = hidden[0]
        return Reading(
            "era_mismatch",
            0.0,
            False,
            f"every object in view fits the {era} era; {object_label(task, oid)} is out of view ({px:.0f} px)",
            px,
            unseen=True,
        )
    return Reading("era_mismatch", 0.0, False, f"every object in view fits the {era} era")
