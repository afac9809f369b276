"""Observable judges of viewpoint consistency: visibility behind occluders (one variant's run) and
view-dependent appearance (the same views in both worlds, from the frames)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wac.bundle.model import CompiledTask

from .capture import Run, Sample, as_array, eye_distance, focus_ids
from .readings import (
    MIN_PX,
    Reading,
    blocked_walk,
    centre_of,
    deciding_sample,
    object_label,
    object_px,
    observes,
    trigger_distances,
)
from .visual import Change, change, same_view
from .visual import mask as region_of

# --- spatial consistency --------------------------------------------------------------------------


def measure_visibility(env, task) -> dict:
    """Is each focus object geometrically in view and unobstructed (physics rays), and its render mode."""
    from wac.runtime.triggers import VIEW_RANGE_M

    w, ph = env.world, env.physics
    cam = env.camera()
    eye = as_array(cam.eye)
    f, up = cam.forward(), cam.up()
    right = np.cross(f, up)
    th = math.tan(math.radians(env.hfov) / 2)
    tv = th * env.height / env.width
    out = {}
    for oid in focus_ids(task):
        st = w.objects.get(oid)
        if st is None or not st.present:
            out[oid] = {"frustum": 0, "clear": 0}
            continue
        lo, hi = w.aabb(st)
        c = (lo + hi) / 2
        pts = [c] + [
            c + 0.8 * (as_array(k) - c)
            for k in [(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
        ]
        cand = []
        for p in pts:
            d = p - eye
            z = float(d @ f)
            if (
                z > 0.05
                and np.linalg.norm(d) <= VIEW_RANGE_M
                and abs(float(d @ right)) / z <= th
                and abs(float(d @ up)) / z <= tv
            ):
                cand.append(p)
        clear = 0
        blockers: list[str] = []
        if cand:
            for ref, frac in ph.rays([eye] * len(cand), cand):
                if ref is None or frac > 0.97 or ref.object_id == oid or ref.kind == "agent":
                    clear += 1
                elif ref.object_id:
                    blockers.append(ref.object_id)
        corners = [(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
        nearest = min(float((as_array(k) - eye) @ f) for k in corners)
        out[oid] = {
            "frustum": len(cand),
            "clear": clear,
            "blockers": sorted(set(blockers)),
            "render": st.render,
            "distance": float(np.linalg.norm(c - eye)),
            "nearest_depth": nearest,
        }
    return {"visibility": out}


@observes("visible_pixels_behind_occluder", measure=(measure_visibility,), depth=True)
def judge_visibility(run: Run, task: CompiledTask) -> Reading:
    """Any evidence view (mark or captioned action) where the target is drawn through an occluder,
    or not drawn although in plain view; otherwise the deciding view's account."""
    looks = [s for s in run.samples if s.kind in ("mark", "after")] or [deciding_sample(run)]
    for s in looks:
        r = _visibility_at(run, task, s)
        if r.anomalous:
            return r
    return _visibility_at(run, task, deciding_sample(run))


def _visibility_at(run: Run, task: CompiledTask, s: Sample) -> Reading:
    why, px_best = "the target's visibility agrees with what stands in front of it", 0.0
    unseen = False
    for oid, m in s.measure.get("visibility", {}).items():
        px = object_px(s, oid)
        px_best = max(px_best, px)
        if not m.get("frustum"):
            why, unseen = f"{object_label(task, oid)} is not in the field of view at the deciding view", True
            continue
        occluded = m["clear"] == 0
        i = s.index_of.get(oid)
        over = 0.0
        if (
            i is not None and "nearest_depth" in m and s.depth is not None
        ):  # drawn over something nearer than the target can be
            mask = s.ids == i
            over = s.px640(int(np.count_nonzero(s.depth[mask] < m["nearest_depth"] - 0.05)))
        if over >= MIN_PX:
            by = ", ".join(m["blockers"]) or "a nearer surface"
            return Reading(
                "visible_pixels_behind_occluder",
                over,
                True,
                f"{object_label(task, oid)} is drawn through {by}: {over:.0f} px lie over nearer surfaces",
                px,
            )
        if occluded and px >= MIN_PX:
            by = ", ".join(m["blockers"]) or "an occluder"
            return Reading(
                "visible_pixels_behind_occluder",
                px,
                True,
                f"{object_label(task, oid)} shows {px:.0f} px through {by}, which hides it",
                px,
            )
        if not occluded and px < 5 and m["clear"] / m["frustum"] >= 0.5:
            return Reading(
                "visible_pixels_behind_occluder",
                px,
                True,
                f"{object_label(task, oid)} is in plain view {m['distance']:.1f} m away but not drawn ({px:.0f} px)",
                px,
            )
        if m.get("render") == "flip_normals" and px >= MIN_PX:
            return Reading(
                "visible_pixels_behind_occluder",
                px,
                True,
                f"{object_label(task, oid)} is drawn inside out (back faces only; render-state check)",
                px,
            )
        why = (
            f"{object_label(task, oid)} is hidden by {', '.join(m['blockers'])} and not drawn ({px:.0f} px)"
            if occluded
            else f"{object_label(task, oid)} is in view and drawn ({px:.0f} px)"
        ) + trigger_distances(run, task, oid)
        unseen = False
    return Reading("visible_pixels_behind_occluder", px_best, False, why, px_best, unseen)


@dataclass(frozen=True)
class _View:
    """One view the plan takes of the target, in both worlds."""

    clean: Sample
    pert: Sample
    change: Change  # the perturbed frame against the clean one over the target's pixels
    px: float  # the target's pixels (640x480) in the frame that shows more of it
    distance_m: float  # from the eye to the target's centre


def _views(pert: Run, clean: Run, ids: tuple[str, ...]) -> list[_View]:
    """The plan's views of the target (its marks, the views after its captioned steps) taken from
    the same pose in both runs."""
    out = []
    for c, p in zip(clean.samples, pert.samples, strict=False):
        if c.kind not in ("mark", "after") or (p.kind, p.step) != (c.kind, c.step) or not same_view(c, p):
            continue
        px = max(c.px640(int(region_of(c, ids).sum())), p.px640(int(region_of(p, ids).sum())))
        at = next((s for s in (p, c) if s.measure.get("base", {}).get(ids[0], {}).get("present")), None)
        far = eye_distance(at, centre_of(at, ids[0])) if at is not None else math.nan
        out.append(_View(c, p, change(c, p, ids), px, far))
    return out


@observes("apparent_size_ratio", pair=True)
def judge_apparent_pair(pert: Run, clean: Run, task: CompiledTask) -> tuple[Reading, Reading]:
    """View- or distance-dependent appearance, from the frames.  At each view the plan takes of the
    target the perturbed frame is compared with the clean one over the target's pixels (the pixel
    rule, `visual.change`).  The anomaly shows when the target looks as it does in the clean world
    from one view and visibly differs from another: its look depends on where it is seen from.

    Widths, outlines and colours compared within one run depend on the viewing angle, the light
    and whatever stands in front (a doorway's frame cuts a table's width short); the same view in
    the two worlds differs only by the anomaly."""
    ids = focus_ids(task)
    name = object_label(task, ids[0])
    ref = Reading("apparent_size_ratio", 0.0, False, f"the clean frames are the reference for {name}")
    views = _views(pert, clean, ids)
    seen = [v for v in views if v.px >= MIN_PX]
    if len(seen) < 2:
        why = f"{name} is in view in {len(seen)} of the {len(views)} views the plan takes (needs two)"
        return Reading("apparent_size_ratio", 0.0, False, why, unseen=True), ref
    differ = [v for v in seen if v.change.visible]
    same = [v for v in seen if not v.change.visible]
    at = trigger_distances(pert, task, ids[0])
    if differ and same:
        d = max(differ, key=lambda v: v.change.core)
        s1 = min(same, key=lambda v: abs(v.pert.index - d.pert.index))
        why = (
            f"{name} looks as in the clean world at '{s1.pert.caption}' ({s1.distance_m:.1f} m) but not at "
            f"'{d.pert.caption}' ({d.distance_m:.1f} m): {d.change.words()}"
        )
        return Reading("apparent_size_ratio", round(d.change.core, 1), True, why + at, d.px), ref
    if differ:
        why = (
            f"{name} differs from the clean world at every view ({len(differ)}, "
            f"{min(v.distance_m for v in differ):.1f}-{max(v.distance_m for v in differ):.1f} m): its look does "
            f"not depend on where it is seen from"
        )
        return Reading("apparent_size_ratio", 0.0, False, why + at), ref
    best = max(seen, key=lambda v: v.change.core)
    why = f"{name} looks as in the clean world at all {len(seen)} views (the most: {best.change.words()})"
    return Reading("apparent_size_ratio", 0.0, False, why + at + blocked_walk(pert, all_moves=True)), ref
