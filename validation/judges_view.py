"""Observable judges of viewpoint consistency: visibility behind occluders and apparent size against
the object's reference.  Each judges one variant's run."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from wac.bundle.model import CompiledTask

from .capture import Run, Sample, as_array, eye_distance, focus_ids, mean_rgb
from .readings import (
    MIN_PX,
    Reading,
    blocked_walk,
    centre_of,
    deciding_sample,
    object_label,
    object_px,
    object_spec,
    trigger_distances,
)

SIZE_LOG = math.log(1.4)  # perspective estimates from oblique views are good to about 25%
COLOUR_DIST = 70.0  # shading and texture filtering alone shift a mean colour by up to ~45/255 with distance


# --- spatial consistency --------------------------------------------------------------------------


def measure_visibility(env, task) -> dict:
    """Is each focus object geometrically in view and unobstructed (physics rays), and its render mode."""
    from wac.runtime.anomaly_triggers import VIEW_RANGE_M

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


class Shape(NamedTuple):
    """A target's silhouette in one view."""

    px: int
    fill: float  # of its bounding box
    colour: np.ndarray | None  # mean RGB
    clipped: bool  # at the frame's edge
    width: int  # in pixels
    end_hidden: bool  # its left or right end meets a nearer object (`_end_hidden`)


def _shape(s: Sample, oid: str) -> Shape | None:
    """The silhouette of `oid` in a sample; None if unseen."""
    i = s.index_of.get(oid)
    if i is None:
        return None
    mask = s.ids == i
    n = int(mask.sum())
    if n < 6:
        return None
    rows, cols = np.nonzero(mask)
    fill = n / float((rows.max() - rows.min() + 1) * (cols.max() - cols.min() + 1))
    h, w = s.ids.shape
    clipped = rows.min() == 0 or cols.min() == 0 or rows.max() == h - 1 or cols.max() == w - 1
    return Shape(
        n, fill, mean_rgb(s, oid), clipped, int(cols.max() - cols.min() + 1), _end_hidden(s, mask, i)
    )


def _end_hidden(s: Sample, mask: np.ndarray, i: int) -> bool:
    """Whether the silhouette's left or right end meets another object nearer to the eye (a door
    frame, a chair in front): its width then measures the occluder, not the object.  Needs depth."""
    if s.depth is None or s.depth.shape != mask.shape:
        return False
    h, w = mask.shape
    rows = np.nonzero(mask.any(axis=1))[0]
    left = mask[rows].argmax(axis=1)
    right = w - 1 - mask[rows, ::-1].argmax(axis=1)
    for cols, step, end in ((left, -1, left.min()), (right, 1, right.max())):
        near_end = np.abs(cols - end) <= 1  # the rows that reach the extreme column
        r, c = rows[near_end], cols[near_end]
        nc = c + step
        ok = (nc >= 0) & (nc < w)
        r, c, nc = r[ok], c[ok], nc[ok]
        other = s.ids[r, nc]
        mine = s.depth[r, c]
        nearer = (other > 0) & (other != i) & (s.depth[r, nc] < mine - np.maximum(0.05, 0.02 * mine))
        if nearer.any():
            return True
    return False


def _light(s: Sample, oid: str) -> float:
    """Mean brightness of the frame outside `oid`: how lit the scene is at that moment."""
    i = s.index_of.get(oid)
    mask = np.ones(s.frame.shape[:2], dtype=bool)
    if i is not None and s.ids.shape == mask.shape:
        mask = s.ids != i
    return float(s.frame[mask].mean()) if mask.any() else 0.0


def _reference(task: CompiledTask, looks: list[Sample], oid: str) -> str | None:
    """A fixed object near the target that is seen (unclipped) in every view: the size reference."""
    spec = object_spec(task, oid)
    if spec is None:
        return None
    focus = set(focus_ids(task))
    best = None
    for o in task.scene.objects:
        if o.id in focus or o.dynamic:
            continue
        d = math.dist(o.position[:2], spec.position[:2])
        if d > 4.0:
            continue
        shapes = [_shape(s, o.id) for s in looks]
        if any(sh is None or sh.px < 20 or sh.clipped for sh in shapes):
            continue
        if best is None or d < best[0]:
            best = (d, o.id)
    return best[1] if best else None


def _size_ratio(task: CompiledTask, oid: str, ref: str | None, first, later) -> tuple[float, str]:
    """The target's apparent width times its distance, later view over first, and what it is
    measured against: corrected for distance alone, or against a fixed neighbour's own ratio."""
    (s0, a0), (s1, a1) = first, later
    c0, c1 = centre_of(s0, oid), centre_of(s1, oid)
    # horizontal extent x distance: steady under perspective, and under the foreshortening of flat objects
    ratio = a1.width * eye_distance(s1, c1) / max(a0.width * eye_distance(s0, c0), 1e-6)
    if ref is None:
        return ratio, "corrected for distance"
    # the same estimate for a fixed neighbour cancels most of the viewing-angle error
    r0, r1 = _shape(s0, ref), _shape(s1, ref)
    spec = object_spec(task, ref)
    rc = (as_array(spec.aabb_min) + as_array(spec.aabb_max)) / 2
    ref_ratio = r1.width * eye_distance(s1, rc) / max(r0.width * eye_distance(s0, rc), 1e-6)
    if abs(math.log(ref_ratio)) >= SIZE_LOG:  # a reference that itself "changes" is occluded: skip it
        return ratio, "corrected for distance"
    return ratio / ref_ratio, f"against {ref}"


def judge_apparent(run: Run, task: CompiledTask) -> Reading:
    looks = [s for s in run.samples if s.kind in ("mark", "after")]
    if len(looks) < 2:
        return Reading("apparent_size_ratio", 1.0, False, "the plan takes fewer than two views of the target")
    for oid in focus_ids(task):
        seen = [(s, _shape(s, oid)) for s in looks]
        seen = [(s, a) for s, a in seen if a is not None and not a.clipped]
        if len(seen) < 2:
            return Reading(
                "apparent_size_ratio",
                1.0,
                False,
                f"{object_label(task, oid)} is seen whole in {len(seen)} of the {len(looks)} views (needs two)",
                unseen=True,
            )
        ref = _reference(task, [s for s, _ in seen], oid)
        # sizes are compared between views whose width no nearer object cuts short
        first_whole = next(((s, a) for s, a in seen if not a.end_hidden), None)
        (s0, a0) = seen[0]
        for s1, a1 in seen[1:]:
            ratio, against, base = 1.0, "corrected for distance", s0
            if first_whole is not None and not a1.end_hidden and s1.index > first_whole[0].index:
                ratio, against = _size_ratio(task, oid, ref, first_whole, (s1, a1))
                base = first_whole[0]
            fill = abs(a1.fill - a0.fill)
            col = 0.0
            if a0.colour is not None and a1.colour is not None:
                # under a day-night cycle the light itself changes between the views: the target's colour
                # is compared at the first view's light (the rest of the frame darkens alike)
                gain = (
                    _light(s0, oid) / max(_light(s1, oid), 1.0) if task.scene.day_night is not None else 1.0
                )
                col = float(np.linalg.norm(a1.colour * gain - a0.colour))
            if abs(math.log(ratio)) >= SIZE_LOG:
                return Reading(
                    "apparent_size_ratio",
                    round(ratio, 3),
                    True,
                    f"{object_label(task, oid)}'s size {against} changes x{ratio:.2f} between "
                    f"'{base.caption}' and '{s1.caption}'",
                    a1.px,
                )
            if fill >= 0.2:
                return Reading(
                    "apparent_size_ratio",
                    round(ratio, 3),
                    True,
                    f"{object_label(task, oid)}'s outline changes (fills {a0.fill:.0%} then {a1.fill:.0%} of its box) "
                    f"between views at different distances",
                    a1.px,
                )
            if col >= COLOUR_DIST:
                return Reading(
                    "apparent_size_ratio",
                    round(ratio, 3),
                    True,
                    f"{object_label(task, oid)}'s colour changes by {col:.0f}/255 between views at different "
                    f"distances",
                    a1.px,
                )
        cut = sum(1 for _, a in seen if a.end_hidden)
        kept = (
            f"keeps its size ({'against ' + ref if ref else 'corrected for distance'}), outline and colour "
            f"over {len(seen)} views"
            + (f"; a nearer object cuts its width short in {cut} of them" if cut else "")
            if len(seen) - cut >= 2
            else f"keeps its outline and colour over {len(seen)} views; its size is not compared: a nearer "
            f"object cuts its width short in {cut} of them"
        )
        return Reading(
            "apparent_size_ratio",
            1.0,
            False,
            f"{object_label(task, oid)} {kept}"
            + trigger_distances(run, task, oid)
            + blocked_walk(run, all_moves=True),
        )
    return Reading("apparent_size_ratio", 1.0, False, "no target")
