"""Category observables: what a self-check measures in a running world, and when it shows the anomaly.

Each observable has a `measure(env, task)` taken at every evidence sample (the plan's `mark`
steps, captioned actions, the start and the end) and a `judge(run, task)` that turns one
variant's run into a `Reading`: a value, whether it shows the anomaly, and a sentence saying why.
Measurements come from the running world: object poses and bounds, physics contacts and
penetration, the agent's commanded vs actual displacement, the target's pixels in the
segmentation render, its depth and colour, materials, light and mechanism state, and the
per-tick state of the target (spin angles, door opening, lamp state, daylight).

Most judges never look at the other variant: the differential property (anomalous in the
perturbed world, normal in the clean one) is checked by `selfcheck.py` from two independent
readings.  Shadow/lighting and material are judged differentially from pixels, as a reviewer
would judge them (`judge_light_pair`, `judge_material_pair`): the same evidence view rendered in
both worlds, the frames compared where the shadow should be and where it is, or over the target's
own pixels; the world's state only explains the verdict in words.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from wac.bundle.model import (
    AddBlocker,
    AddHole,
    AddObject,
    CompiledTask,
    SetLight,
    SetMaterial,
    SetMechanism,
    SetShadow,
)
from wac.bundle.terrain import height_range as terrain_height_range
from wac.bundle.transforms import rotation

from .capture import Run, Sample, anchor, as_array, eye_distance, focal_px640, focus_ids, mean_rgb
from .pixels import Footprint, View, in_sun_shadow, lab, lightness, px640, shadow_hulls

MIN_PX = 30.0  # target pixels (640x480 equivalent) for it to count as seen
GAP_M, GAP_PX = 0.02, 3.0  # a support gap must be this large, and this many pixels at the viewing distance
PENETRATION_M = 0.03
SCALE_RATIO = 1.15
TILT_DEG, YAW_DEG, RELOCATE_M = 10.0, 40.0, 0.3
MOVED_M, TURNED_DEG = 0.15, 10.0
ROT_CONTACT_DEG, LAUNCH_M, RISE_M, JITTER_M = (
    120.0,
    2.5,
    0.3,
    0.004,
)  # a normal push may tip a thing over (90 deg)
SIZE_LOG = math.log(1.4)  # perspective estimates from oblique views are good to about 25%
COLOUR_DIST = 70.0  # shading and texture filtering alone shift a mean colour by up to ~45/255 with distance
DAYLIGHT_JUMP = 0.3


@dataclass(frozen=True)
class Reading:
    """One variant's measurement: the value, whether it shows the anomaly, and why."""

    observable: str
    value: float
    anomalous: bool
    detail: str
    seen_px: float = 0.0  # the target's pixels at the deciding sample (640x480 equivalent)


# --- helpers ---------------------------------------------------------------------------------------


def _name(task: CompiledTask, oid: str) -> str:
    for o in task.scene.objects:
        if o.id == oid:
            return f"{oid} ({o.name})" if o.name and o.name != oid else oid
    for an in task.anomalies:
        for e in an.effects:
            if isinstance(e, AddObject) and e.object.id == oid:
                return f"{oid} ({e.object.name})"
    return oid


def _spec(task: CompiledTask, oid: str):
    for o in task.scene.objects:
        if o.id == oid:
            return o
    for an in task.anomalies:
        for e in an.effects:
            if isinstance(e, AddObject) and e.object.id == oid:
                return e.object
    return None


def _deciding(run: Run) -> Sample:
    """The sample an observable judges by default: the last mark (or the final view)."""
    marks = run.marks()
    return marks[-1] if marks else run.samples[-1]


def _rot(deg) -> np.ndarray:
    return rotation(*(float(v) for v in deg))


def _angle(a, b) -> float:
    return float(math.degrees(math.acos(float(np.clip(np.dot(a, b), -1.0, 1.0)))))


def _rot_delta_deg(r1, r2) -> float:
    m = _rot(r1).T @ _rot(r2)
    return float(math.degrees(math.acos(float(np.clip((np.trace(m) - 1) / 2, -1.0, 1.0)))))


def _seen(sample: Sample, oid: str) -> float:
    return sample.px640(sample.pixels(oid))


def _base(env, task) -> dict:
    """State of every focus object (present or not) now."""
    w = env.world
    out = {}
    for oid in focus_ids(task):
        st = w.objects.get(oid)
        if st is None or not st.present:
            out[oid] = {"present": False}
            continue
        lo, hi = w.aabb(st)
        out[oid] = {
            "present": True,
            "visible": bool(st.visible),
            "lo": lo.tolist(),
            "hi": hi.tolist(),
            "position": st.world_position().tolist(),
            "rotation": st.rotation_deg.tolist(),
            "scale": st.scale.tolist(),
            "appearance": st.appearance_scale,
            "render": st.render,
            "materials": {pid: ps.material for pid, ps in st.parts.items()},
            "parts": {pid: (tuple(ps.position), tuple(ps.rotation_deg)) for pid, ps in st.parts.items()},
            "casts_shadow": bool(st.casts_shadow),
            "shadow_offset": st.shadow_offset,
            "lamp_lit": bool(w.lamp_lit(st)),
            "illuminates": bool(st.illuminates),
            "has_emitter": bool(st.has_emitter),
            "glow": bool(st.glow),
            "mechanism": dict(st.mechanism),
        }
    return out


# --- static physics -------------------------------------------------------------------------------


def measure_support(env, task) -> dict:
    """Gap under each focus object (and under what rested on a removed support)."""
    w = env.world
    focus = set(focus_ids(task))
    objs = [oid for oid in focus if oid in w.objects and w.objects[oid].present]
    objs += [
        o.id
        for o in task.scene.objects
        if o.support in focus and o.id not in objs and w.objects[o.id].present
    ]
    gaps = {}
    for oid in objs:
        st = w.objects[oid]
        lo, hi = w.aabb(st)
        shrink = (hi[:2] - lo[:2]) * 0.15
        flo, fhi = lo[:2] + shrink, hi[:2] - shrink
        surface, under = terrain_height_range(task.scene.ground, flo, fhi)[1], None  # 0 on flat ground
        for other in w.objects.values():
            if other.id == oid or not other.present or other.spec.attached_to == oid:
                continue
            olo, ohi = w.aabb(other)
            if ohi[2] > lo[2] + 0.03 or (olo[:2] > fhi).any() or (ohi[:2] < flo).any():
                continue
            if float(ohi[2]) > surface:
                surface, under = float(ohi[2]), (other.id, olo, ohi)
        gap = float(lo[2] - surface)
        visible = gap
        eye = np.asarray(env.camera().eye, dtype=float)
        if (
            under is not None and eye[2] < surface
        ):  # looking up at it: the support's near edge hides part of the gap
            c = (lo[:2] + hi[:2]) / 2
            d_target = float(np.linalg.norm(c - eye[:2]))
            _, olo, ohi = under
            ex = np.clip(eye[:2], olo[:2], ohi[:2])  # nearest point of the support's top to the eye
            d_edge = max(float(np.linalg.norm(ex - eye[:2])), 0.05)
            hidden_to = eye[2] + (surface - eye[2]) * d_target / d_edge
            visible = max(0.0, float(lo[2]) - max(surface, hidden_to))
        gaps[oid] = {
            "gap": gap,
            "visible_gap": visible,
            "on": under[0] if under else "the ground",
            "bottom": [float((lo[0] + hi[0]) / 2), float((lo[1] + hi[1]) / 2), float(lo[2])],
        }
    return {"gaps": gaps}


def judge_support(run: Run, task: CompiledTask) -> Reading:
    s = _deciding(run)
    best, why, px_best = 0.0, "no support gap under the target", 0.0
    anomalous = False
    f = focal_px640()
    for oid, g in s.measure.get("gaps", {}).items():
        px = _seen(s, oid)
        gap = g["gap"]
        if gap < GAP_M:
            continue
        dist = eye_distance(s, g["bottom"])
        shown = g.get("visible_gap", gap)
        gap_px = shown * f / max(dist, 0.1)
        best, px_best = max(best, gap), px
        if px < MIN_PX:
            why = (
                f"{_name(task, oid)} floats {gap:.2f} m but is not in view at the deciding view ({px:.0f} px)"
            )
        elif shown < gap - 1e-3 and gap_px < GAP_PX:
            why = (
                f"{_name(task, oid)} floats {gap:.3f} m above {g['on']}, whose top is above eye height: from the "
                f"plan's viewpoint {dist:.1f} m away its edge hides the gap ({shown:.3f} m, {gap_px:.1f} px left), "
                f"too small to see"
            )
        elif gap_px < GAP_PX:
            why = (
                f"{_name(task, oid)} floats only {gap:.3f} m: {gap_px:.1f} px at {dist:.1f} m from the plan's "
                f"viewpoint, too small to see (needs {GAP_PX:g} px)"
            )
        else:
            anomalous = True
            why = f"{_name(task, oid)} floats {gap:.2f} m above its support ({gap_px:.0f} px at {dist:.1f} m)"
            break
    return Reading("support_gap", round(best, 4), anomalous, why, px_best)


def measure_penetration(env, task) -> dict:
    """Deepest interpenetration of each focus object with another object or the ground; part misalignment."""
    w, ph = env.world, env.physics
    p, cid = ph.p, ph.cid
    out = {}
    for oid in focus_ids(task):
        st = w.objects.get(oid)
        if st is None or not st.present:
            continue
        lo, hi = w.aabb(st)
        deepest, other_id = 0.0, "the ground"
        overlap, overlap_with = 0.0, ""
        if not st.is_liquid:
            deepest = max(0.0, -float(lo[2]))
        spec = st.spec
        for other in w.objects.values():
            if other.id == oid or not other.present or other.is_liquid:
                continue
            if other.spec.attached_to == oid or spec.attached_to == other.id:
                continue
            olo, ohi = w.aabb(other)
            if (olo > hi + 0.05).any() or (ohi < lo - 0.05).any():
                continue
            ov = float(np.min(np.minimum(hi, ohi) - np.maximum(lo, olo)))
            if ov > overlap:
                overlap, overlap_with = ov, other.id
            for ba, _ in ph.bodies.get(oid, []):
                for bb, _ in ph.bodies.get(other.id, []):
                    for cp in p.getClosestPoints(ba, bb, 0.0, physicsClientId=cid):
                        if -cp[8] > deepest:
                            deepest, other_id = -float(cp[8]), other.id
        misalign = 0.0
        for part in spec.parts:
            ps = st.parts.get(part.id)
            if ps is not None:
                misalign = max(
                    misalign,
                    math.dist(ps.position, part.position),
                    _rot_delta_deg(ps.rotation_deg, part.rotation_deg) / 100.0,
                )
        centre = ((lo + hi) / 2).tolist()
        out[oid] = {
            "depth": deepest,
            "with": other_id,
            "misalign": misalign,
            "centre": centre,
            "overlap": overlap,
            "overlap_with": overlap_with,
        }
    return {"penetration": out}


def judge_penetration(run: Run, task: CompiledTask) -> Reading:
    s = _deciding(run)
    best, why, anomalous, px_best = 0.0, "no object interpenetrates another", False, 0.0
    for oid, m in s.measure.get("penetration", {}).items():
        px = _seen(s, oid)
        if m["depth"] >= PENETRATION_M or m["misalign"] >= 0.05:
            what = (
                f"{_name(task, oid)} sinks {m['depth']:.2f} m into {m['with']}"
                if m["depth"] >= PENETRATION_M
                else f"a part of {_name(task, oid)} is displaced {m['misalign']:.2f} m from its place"
            )
            best, px_best = max(best, m["depth"], m["misalign"]), px
            if px < MIN_PX:
                why = f"{what}, but it is not in view at the deciding view ({px:.0f} px)"
                continue
            anomalous, why = True, what
            break
        best = max(best, m["depth"])
        if m.get("overlap", 0.0) > 0.01 and not anomalous:
            why = (
                f"{_name(task, oid)}'s bounds overlap {m['overlap_with']} by {m['overlap']:.2f} m but no parts "
                f"intersect (deepest contact {m['depth']:.3f} m)"
            )
    return Reading("penetration_depth", round(best, 4), anomalous, why, px_best)


def judge_size(run: Run, task: CompiledTask) -> Reading:
    s = _deciding(run)
    best, why, anomalous, px_best = 0.0, "the target has its normal size", False, 0.0
    for oid, m in s.measure.get("base", {}).items():
        spec = _spec(task, oid)
        if not m.get("present") or spec is None:
            continue
        now = np.abs(as_array(m["scale"])) * (m["appearance"] or 1.0)
        ratio = now / np.maximum(np.abs(as_array(spec.scale)), 1e-6)
        sibs = [
            o for o in task.scene.objects if o.id != oid and o.prefab == spec.prefab and o.name == spec.name
        ]
        if oid not in {o.id for o in task.scene.objects} and sibs:  # an added object: compare to its siblings
            ratio = now / np.maximum(np.abs(as_array(sibs[0].scale)), 1e-6)
        k = float(np.max(np.abs(np.log(np.maximum(ratio, 1e-6)))))
        px = _seen(s, oid)
        if k >= math.log(SCALE_RATIO):
            worst = float(ratio[int(np.argmax(np.abs(np.log(np.maximum(ratio, 1e-6)))))])
            rel = f"{len(sibs)} sibling(s) of the same kind" if sibs else "its normal size"
            best, px_best = max(best, k), px
            if px < MIN_PX:
                why = f"{_name(task, oid)} is scaled x{worst:.2f} but is not in view ({px:.0f} px)"
                continue
            anomalous, why = True, f"{_name(task, oid)} is scaled x{worst:.2f} against {rel}"
            break
    return Reading("size_ratio", round(math.exp(best), 3), anomalous, why, px_best)


# --- interactive physics --------------------------------------------------------------------------


def _exposing_move(run: Run, direction: str = "forward"):
    moves = [
        r
        for r in run.steps
        if r.action.action == "move" and r.action.kwargs.get("direction", "forward") == direction
    ]
    captioned = [r for r in moves if r.action.caption]
    return (captioned or moves or [None])[-1]


def _segment_hits_box(a, b, lo, hi, pad: float = 0.0) -> bool:
    for k in range(41):
        x = a[0] + (b[0] - a[0]) * k / 40
        y = a[1] + (b[1] - a[1]) * k / 40
        if lo[0] - pad <= x <= hi[0] + pad and lo[1] - pad <= y <= hi[1] + pad:
            return True
    return False


def _hole_or_blocker(task):
    an = anchor(task)
    for e in an.effects:
        if isinstance(e, AddHole | AddBlocker):
            c, sz = as_array(e.position), as_array(e.size)
            return e.kind, c - [sz[0] / 2, sz[1] / 2, 0], c + [sz[0] / 2, sz[1] / 2, sz[2]]
    return None


def _shown_open(run: Run, task: CompiledTask, oid: str, mv) -> bool:
    """Whether a door was drawn open while the agent walked through it (`open_frac` is the panel's
    opening as seen; a phantom door's panel stays shut while its collider opens)."""
    ids = [i for i in focus_ids(task) if any(o.id == i for o in task.scene.objects)]
    if oid not in ids:
        return False
    k = ids.index(oid)
    window = [t for t in run.ticks if t.t >= mv.t0 and k < len(t.open_frac)]
    return bool(window) and max(t.open_frac[k] for t in window) > 0.5


def judge_through(run: Run, task: CompiledTask) -> Reading:
    mv = _exposing_move(run)
    if mv is None:
        return Reading(
            "displacement_through", 0.0, False, "the plan has no forward move to walk through anything"
        )
    asked = float(mv.action.kwargs["distance_m"])
    a, b = mv.start_xyz, mv.end_xyz
    drop = a[2] - b[2]
    hole = _hole_or_blocker(task)
    if hole is not None and hole[0] == "add_hole":
        if drop > 0.3 or "respawned" in mv.outcome:  # a fall into the void ends in a respawn
            return Reading(
                "displacement_through",
                round(max(drop, 0.0), 3),
                True,
                f"the agent fell {drop:.2f} m through the floor where it looks solid"
                if drop > 0.3
                else "the agent fell through the floor where it looks solid and respawned",
            )
        crossed = _segment_hits_box(a, b, hole[1], hole[2])
        return Reading(
            "displacement_through",
            round(drop, 3),
            False,
            "the walk crossed the hole's area but the agent did not fall"
            if crossed
            else "the walk does not cross the hole's area",
        )
    an = anchor(task)
    if any(isinstance(e, SetMechanism) and e.mechanism == "through_walls" for e in an.effects):
        uses = [r for r in run.steps if r.action.action == "interact"]
        names = {_spec(task, t).name for t in an.targets if _spec(task, t) is not None}
        # interaction texts name no result (runtime/perception.py): read the target's state instead
        states = {(tk.lit, tk.open_frac) for tk in run.ticks}
        if uses and len(states) > 1:
            return Reading(
                "displacement_through",
                1.0,
                True,
                f"an interaction reached the {', '.join(sorted(names))} through what stands in front of it",
            )
        if uses:
            return Reading(
                "displacement_through",
                0.0,
                False,
                f"the interaction did not reach {', '.join(sorted(names))} ('{uses[0].outcome}')",
            )
        return Reading(
            "displacement_through",
            0.0,
            False,
            "the plan never interacts: reaching through a wall (interact_through) only shows on interact",
        )
    targets = [o for o in task.scene.objects if o.id in an.targets]
    crossed = [o.id for o in targets if _segment_hits_box(a, b, o.aabb_min, o.aabb_max)]
    reached = [o.id for o in targets if _segment_hits_box(a, b, o.aabb_min, o.aabb_max, pad=0.4)]
    block = ", ".join(c for c in mv.contacts if c not in an.targets) or None
    inside = [o.id for o in targets if _segment_hits_box(b, b, o.aabb_min, o.aabb_max, pad=-0.05)]
    if inside:
        return Reading(
            "displacement_through",
            round(mv.moved_m, 3),
            True,
            f"walked {mv.moved_m:.2f} m into the solid {_name(task, inside[0])} and stands inside it",
        )
    if crossed and mv.moved_m >= 0.8 * asked and _shown_open(run, task, crossed[0], mv):
        return Reading(
            "displacement_through",
            round(mv.moved_m, 3),
            False,
            f"walked {mv.moved_m:.2f} m through the open {_name(task, crossed[0])}, as a door lets one",
        )
    if crossed and mv.moved_m >= 0.8 * asked:
        return Reading(
            "displacement_through",
            round(mv.moved_m, 3),
            True,
            f"walked {mv.moved_m:.2f} m of {asked:.2f} m straight through {_name(task, crossed[0])}",
        )
    if crossed and "edge of the area" in mv.outcome:
        return Reading(
            "displacement_through",
            round(mv.moved_m, 3),
            False,
            f"the walk through {_name(task, crossed[0])} runs into the edge of the exploration area after "
            f"{mv.moved_m:.2f} m: it is not on any walkable path",
        )
    if crossed or reached:
        stop = f" against {block}" if block else f" at {_name(task, reached[0])}"
        other = (
            f": {', '.join(_name(task, t) for t in an.targets)} is not the only obstacle on the path"
            if block
            else ""
        )
        return Reading(
            "displacement_through",
            round(mv.moved_m, 3),
            False,
            f"blocked: moved {mv.moved_m:.2f} m of {asked:.2f} m{stop}{other}",
        )
    names = ", ".join(_name(task, t) for t in an.targets) or "the target"
    return Reading(
        "displacement_through",
        round(mv.moved_m, 3),
        False,
        f"the walk ({mv.moved_m:.2f} m of {asked:.2f} m) does not reach {names}: it is not on the path",
    )


def judge_blocked(run: Run, task: CompiledTask) -> Reading:
    mv = _exposing_move(run)
    if mv is None:
        return Reading("blocked_distance", 0.0, False, "the plan has no forward move")
    asked = float(mv.action.kwargs["distance_m"])
    short = asked - mv.moved_m
    an = anchor(task)
    liquid = [o for o in task.scene.objects if o.id in an.targets and o.liquid_depth_m]
    if liquid:  # fake floor: walking on a liquid's surface instead of sinking into it
        o = liquid[0]
        over = _segment_hits_box(mv.end_xyz, mv.end_xyz, o.aabb_min, o.aabb_max)
        z = mv.end_xyz[2]
        if over and z > -0.05:
            return Reading(
                "blocked_distance",
                round(z, 3),
                True,
                f"the agent stands on the surface of {_name(task, o.id)} (z {z:.2f} m) instead of sinking in",
            )
        return Reading(
            "blocked_distance",
            round(z, 3),
            False,
            f"the agent sank to z {z:.2f} m in {_name(task, o.id)}"
            if over
            else f"the walk does not reach {_name(task, o.id)}",
        )
    if short < 0.3:
        return Reading(
            "blocked_distance",
            round(short, 3),
            False,
            f"walked {mv.moved_m:.2f} m of {asked:.2f} m: not blocked",
        )
    if "edge of the area" in mv.outcome:
        return Reading(
            "blocked_distance",
            round(short, 3),
            False,
            f"stopped by the edge of the exploration area after {mv.moved_m:.2f} m",
        )
    if not mv.ahead:
        return Reading(
            "blocked_distance",
            round(short, 3),
            False,
            f"walked {mv.moved_m:.2f} m of {asked:.2f} m and nothing solid touches it where it stopped",
        )
    view = next((s for s in run.samples if s.step >= mv.step and s.kind != "start"), None)
    shown = [_drawn_at(view, hit) for hit in mv.ahead] if view is not None and view.depth is not None else []
    visible = [w for w in shown if w]
    if not shown:  # no depth image: judge by the kind of collider
        visible = [obj for kind, obj, _ in mv.ahead if kind == "object" and obj]
    doors = {o.id for o in task.scene.objects if o.id in an.targets and any(p.hinge for p in o.parts)}
    if visible and visible[0] in doors:  # a door that was opened still blocks (ghost door, jammed door)
        return Reading(
            "blocked_distance",
            round(short, 3),
            True,
            f"blocked after {mv.moved_m:.2f} m of {asked:.2f} m by {_name(task, visible[0])}, which was opened",
        )
    if visible:
        return Reading(
            "blocked_distance",
            round(short, 3),
            False,
            f"blocked after {mv.moved_m:.2f} m of {asked:.2f} m by the visible {_name(task, visible[0])}",
        )
    return Reading(
        "blocked_distance",
        round(short, 3),
        True,
        f"stopped after {mv.moved_m:.2f} m of {asked:.2f} m with nothing visible in the way",
    )


def _drawn_at(s: Sample, hit) -> str | None:
    """The object drawn where a collider was hit (at or in front of it), or None when nothing is drawn there."""
    kind, obj, p = hit
    x, y, z, yaw, pitch = s.pose
    eye = np.array([x, y, z + 1.6])
    yr, pr = math.radians(yaw), math.radians(pitch)
    f = np.array([math.cos(pr) * math.cos(yr), math.cos(pr) * math.sin(yr), -math.sin(pr)])
    up = np.array([math.sin(pr) * math.cos(yr), math.sin(pr) * math.sin(yr), math.cos(pr)])
    right = np.cross(f, up)
    v = np.asarray(p) - eye
    zc = float(v @ f)
    h, w = s.ids.shape
    fpx = (w / 2) / math.tan(math.radians(45.0))
    if zc <= 0.05:
        return obj if kind == "object" else None
    col, row = int(w / 2 + fpx * float(v @ right) / zc), int(h / 2 - fpx * float(v @ up) / zc)
    if not (0 <= col < w and 0 <= row < h):  # out of frame: trust the collider's kind
        return obj if kind == "object" else None
    r0, r1, c0, c1 = max(0, row - 2), min(h, row + 3), max(0, col - 2), min(w, col + 3)
    drawn = s.depth[r0:r1, c0:c1] <= zc + 0.15
    if not drawn.any():
        return None
    names = {v: k for k, v in s.index_of.items()}
    vals = s.ids[r0:r1, c0:c1][drawn]
    vals = vals[vals > 0]
    return names.get(int(vals[0]), "object") if vals.size else "the ground"


def _obstacle_ahead(s: Sample, within_m: float = 1.2) -> tuple[float, str]:
    """Fraction of the central view strip filled by an object nearer than `within_m`, and which object."""
    h, w = s.ids.shape
    ids = s.ids[int(h * 0.3) : int(h * 0.7), int(w * 0.4) : int(w * 0.6)]
    depth = s.depth[int(h * 0.3) : int(h * 0.7), int(w * 0.4) : int(w * 0.6)]
    near = (ids > 0) & (depth < within_m)
    if not near.any():
        return 0.0, ""
    vals, counts = np.unique(ids[near], return_counts=True)
    names = {v: k for k, v in s.index_of.items()}
    return float(near.mean()), names.get(int(vals[int(np.argmax(counts))]), "object")


def judge_contact(run: Run, task: CompiledTask) -> Reading:
    """How the target moved after the agent's contact: rotation, displacement, rise, jitter."""
    ticks = run.ticks
    if not ticks or not ticks[0].position:
        return Reading("rotation_after_contact", 0.0, False, "the target is not in the world")
    p0, r0 = as_array(ticks[0].position[0]), ticks[0].rotation[0]
    pos = np.array([t.position[0] for t in ticks if t.position])
    # how far it tipped (its up axis against the start's), the most at any tick: a barrel knocked
    # onto its side and rolling stays at 90 deg, one turned over reaches 180
    up0 = _rot(r0) @ np.array([0.0, 0.0, 1.0])
    rot = max(_angle(up0, _rot(t.rotation[0]) @ np.array([0.0, 0.0, 1.0])) for t in ticks if t.rotation)
    disp = float(np.linalg.norm(pos[-1][:2] - p0[:2]))
    # rise of the lowest point: a thrown object leaves the ground, one tipped onto its side does not
    # (its base centre, `position`, goes up by half its width as it tips)
    bottoms = [t.bottom[0] for t in ticks if t.bottom]
    rise = float(max(bottoms) - bottoms[0]) if bottoms else float(pos[:, 2].max() - p0[2])
    # jitter while the agent is still far away: tremble moves an untouched object
    first = run.first_mark()
    t_first = first.sim_time if first is not None else ticks[-1].t
    far = [
        t.position[0]
        for t in ticks
        if t.position and t.t <= t_first and math.dist(t.agent[:2], t.position[0][:2]) > 1.5
    ]
    jitter = float(np.std(np.asarray(far), axis=0).max()) if len(far) > 4 else 0.0
    name = _name(task, focus_ids(task)[0])
    value = rot
    if rot >= ROT_CONTACT_DEG:
        return Reading(
            "rotation_after_contact", round(rot, 1), True, f"{name} tipped {rot:.0f} deg after a walk into it"
        )
    if rise >= RISE_M:
        return Reading(
            "rotation_after_contact", round(rot, 1), True, f"{name} rose {rise:.2f} m after contact"
        )
    if disp >= LAUNCH_M:
        return Reading(
            "rotation_after_contact", round(rot, 1), True, f"{name} was thrown {disp:.1f} m by a walk into it"
        )
    if jitter >= JITTER_M:
        return Reading(
            "rotation_after_contact",
            round(rot, 1),
            True,
            f"{name} jitters ({jitter * 1000:.0f} mm) with nothing touching it",
        )
    touched = any(name.split(" ")[0] in r.contacts for r in run.steps)
    return Reading(
        "rotation_after_contact",
        round(value, 1),
        False,
        f"{name} tipped {rot:.0f} deg, moved {disp:.2f} m, rose {rise:.2f} m"
        + ("" if touched else " (the agent never touched it)"),
    )


# --- spatial consistency --------------------------------------------------------------------------


def measure_visibility(env, task) -> dict:
    """Is each focus object geometrically in view and unobstructed (physics rays), and its render mode."""
    from wac.runtime.env import VIEW_RANGE_M

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
    looks = [s for s in run.samples if s.kind in ("mark", "after")] or [_deciding(run)]
    for s in looks:
        r = _visibility_at(run, task, s)
        if r.anomalous:
            return r
    return _visibility_at(run, task, _deciding(run))


def _visibility_at(run: Run, task: CompiledTask, s: Sample) -> Reading:
    why, px_best = "the target's visibility agrees with what stands in front of it", 0.0
    for oid, m in s.measure.get("visibility", {}).items():
        px = _seen(s, oid)
        px_best = max(px_best, px)
        if not m.get("frustum"):
            why = f"{_name(task, oid)} is not in the field of view at the deciding view"
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
                f"{_name(task, oid)} is drawn through {by}: {over:.0f} px lie over nearer surfaces",
                px,
            )
        if occluded and px >= MIN_PX:
            by = ", ".join(m["blockers"]) or "an occluder"
            return Reading(
                "visible_pixels_behind_occluder",
                px,
                True,
                f"{_name(task, oid)} shows {px:.0f} px through {by}, which hides it",
                px,
            )
        if not occluded and px < 5 and m["clear"] / m["frustum"] >= 0.5:
            return Reading(
                "visible_pixels_behind_occluder",
                px,
                True,
                f"{_name(task, oid)} is in plain view {m['distance']:.1f} m away but not drawn ({px:.0f} px)",
                px,
            )
        if m.get("render") == "flip_normals" and px >= MIN_PX:
            return Reading(
                "visible_pixels_behind_occluder",
                px,
                True,
                f"{_name(task, oid)} is drawn inside out (back faces only; render-state check)",
                px,
            )
        why = (
            f"{_name(task, oid)} is hidden by {', '.join(m['blockers'])} and not drawn ({px:.0f} px)"
            if occluded
            else f"{_name(task, oid)} is in view and drawn ({px:.0f} px)"
        ) + _distances(run, task, oid)
    return Reading("visible_pixels_behind_occluder", px_best, False, why, px_best)


def _shape(s: Sample, oid: str):
    """(pixels, fill of its bounding box, mean colour, clipped at the frame edge, width in pixels); None if unseen."""
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
    return n, fill, mean_rgb(s, oid), clipped, int(cols.max() - cols.min() + 1)


def _reference(task: CompiledTask, looks: list[Sample], oid: str) -> str | None:
    """A fixed object near the target that is seen (unclipped) in every view: the size reference."""
    spec = _spec(task, oid)
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
        if any(sh is None or sh[0] < 20 or sh[3] for sh in shapes):
            continue
        if best is None or d < best[0]:
            best = (d, o.id)
    return best[1] if best else None


def _centre(s: Sample, oid: str) -> np.ndarray:
    m = s.measure["base"][oid]
    return (as_array(m["lo"]) + as_array(m["hi"])) / 2


def judge_apparent(run: Run, task: CompiledTask) -> Reading:
    looks = [s for s in run.samples if s.kind in ("mark", "after")]
    if len(looks) < 2:
        return Reading("apparent_size_ratio", 1.0, False, "the plan takes fewer than two views of the target")
    for oid in focus_ids(task):
        seen = [(s, _shape(s, oid)) for s in looks]
        seen = [(s, a) for s, a in seen if a is not None and not a[3]]
        if len(seen) < 2:
            return Reading(
                "apparent_size_ratio",
                1.0,
                False,
                f"{_name(task, oid)} is seen whole in {len(seen)} of the {len(looks)} views (needs two)",
            )
        ref = _reference(task, [s for s, _ in seen], oid)
        (s0, a0) = seen[0]
        for s1, a1 in seen[1:]:
            c0, c1 = _centre(s0, oid), _centre(s1, oid)
            # horizontal extent x distance: steady under perspective, and under the foreshortening of flat objects
            ratio = a1[4] * eye_distance(s1, c1) / max(a0[4] * eye_distance(s0, c0), 1e-6)
            against = "corrected for distance"
            if (
                ref is not None
            ):  # the same estimate for a fixed neighbour cancels most of the viewing-angle error
                r0, r1 = _shape(s0, ref), _shape(s1, ref)
                rc = (as_array(_spec(task, ref).aabb_min) + as_array(_spec(task, ref).aabb_max)) / 2
                ref_ratio = r1[4] * eye_distance(s1, rc) / max(r0[4] * eye_distance(s0, rc), 1e-6)
                if (
                    abs(math.log(ref_ratio)) < SIZE_LOG
                ):  # a reference that itself "changes" is occluded: skip it
                    ratio /= ref_ratio
                    against = f"against {ref}"
            fill = abs(a1[1] - a0[1])
            col = float(np.linalg.norm(a1[2] - a0[2])) if a0[2] is not None and a1[2] is not None else 0.0
            if abs(math.log(ratio)) >= SIZE_LOG:
                return Reading(
                    "apparent_size_ratio",
                    round(ratio, 3),
                    True,
                    f"{_name(task, oid)}'s size {against} changes x{ratio:.2f} between "
                    f"'{s0.caption}' and '{s1.caption}'",
                    a1[0],
                )
            if fill >= 0.2:
                return Reading(
                    "apparent_size_ratio",
                    round(ratio, 3),
                    True,
                    f"{_name(task, oid)}'s outline changes (fills {a0[1]:.0%} then {a1[1]:.0%} of its box) "
                    f"between views at different distances",
                    a1[0],
                )
            if col >= COLOUR_DIST:
                return Reading(
                    "apparent_size_ratio",
                    round(ratio, 3),
                    True,
                    f"{_name(task, oid)}'s colour changes by {col:.0f}/255 between views at different "
                    f"distances",
                    a1[0],
                )
        return Reading(
            "apparent_size_ratio",
            1.0,
            False,
            f"{_name(task, oid)} keeps its size ({'against ' + ref if ref else 'corrected for distance'}), "
            f"outline and colour over {len(seen)} views"
            + _distances(run, task, oid)
            + _blocked(run, all_moves=True),
        )
    return Reading("apparent_size_ratio", 1.0, False, "no target")


# --- shadow / lighting and material: differential, from pixels ------------------------------------
#
# Both observables compare what a reviewer would compare: the same evidence view (a start, mark
# or captioned-action sample, at the same pose in both runs) rendered in the clean and in the
# perturbed world.  The pixels decide; the world's state (shadow offset, lamp state, materials)
# only explains the decision in words.  A pair judge returns the (perturbed, clean) readings.

LUM_STEP = 2.0  # L* change that marks a pixel as changed (8-bit rounding is under 0.5 L*; renders are exact)
SEEN_DL = 5.0  # L* change that a viewer sees on a textured surface (counts towards visible evidence)
SHADOW_PX = 150.0  # a shadow missing or misplaced: this many visibly changed px (re-bake jitter: < 60)
# The renderer's shadow maps blur a shadow's edges and draw it a little off the sun's prediction
# (shorter and turned by a few degrees; more so far from the caster): the sun's outline of the
# target is grown by SHADOW_MARGIN_M plus SHADOW_SLACK per metre from its base.
SHADOW_MARGIN_M, SHADOW_SLACK = 0.3, 0.15
AGREE_MARGIN = 0.15  # sun agreement must differ this much to say from pixels alone which frame is wrong
SHADOW_FIT = 0.2  # a frame's own shadow is shaped like the target's when they overlap this much (IoU)
NEAR_M = 2.0  # "around the target": within this distance of its bounds
GLOW_DL = 20.0  # a glow: the target's own pixels this much brighter on average (L*)
GLOW_SPILL = 0.25  # ... while its surroundings brighten over at most this fraction of its area
LIGHT_PX = 600.0  # a lamp that lights nothing: this many px of surface visibly darker
LAMP_DIM = 5.0  # ... while the lamp's brightest pixels are at most this much dimmer (it still glows)
MAT_DE, MAT_PX = 10.0, 150.0  # a material change: px of the target whose colour differs by dE76 >= MAT_DE


def measure_light(env, task) -> dict:
    """The camera, the direction to the sun and the outline each focus object shows the sun."""
    w = env.world
    cam = env.camera()
    az, el, day = w.daylight()
    sun, casters = None, {}
    if w.scene.sun is not None and el > 0.5 and day > 0:  # the renderer's condition for a sun light
        a, e = math.radians(az), math.radians(el)
        sun = [math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)]
        for oid in focus_ids(task):
            st = w.objects.get(oid)
            if st is None or not st.present:
                continue
            parts = []
            for ps in st.parts.values():
                m = w.part_world(st, ps)
                parts.append(np.asarray(w.mesh(ps).vertices) @ m[:3, :3].T + m[:3, 3])
            casters[oid] = shadow_hulls(np.asarray(sun), parts)
    return {
        "light": {
            "camera": {
                "eye": list(cam.eye),
                "yaw_deg": cam.yaw_deg,
                "pitch_deg": cam.pitch_deg,
                "hfov_deg": cam.hfov_deg,
            },
            "sun": sun,
            "casters": casters,
        }
    }


def _evidence_pairs(pert: Run, clean: Run) -> list[tuple[Sample, Sample]]:
    """(clean, perturbed) samples of the same evidence view at the same pose: the marks (last first),
    then the captioned actions and the start view, then the final view."""
    out, steps = [], set()
    for c, p in zip(clean.samples, pert.samples, strict=False):
        if c.kind != p.kind or c.step != p.step or (c.kind == "end" and c.step in steps):
            continue  # (the final view repeats the last evidence view when no action followed it)
        if max(abs(a - b) for a, b in zip(c.pose[:3], p.pose[:3], strict=True)) > 0.02:
            continue  # the agent ended somewhere else: the frames are not comparable
        if abs(_wrap(c.pose[3] - p.pose[3])) > 0.5 or abs(c.pose[4] - p.pose[4]) > 0.5:
            continue
        out.append((c, p))
        steps.add(c.step)
    rank = {"mark": 0, "after": 1, "start": 2, "end": 3}
    return sorted(out, key=lambda cp: (rank.get(cp[0].kind, 4), -cp[0].index))


def _mask_of(s: Sample, oid: str) -> np.ndarray:
    i = s.index_of.get(oid)
    return np.zeros(s.ids.shape, dtype=bool) if i is None else s.ids == i


def _box_distance(points: np.ndarray, lo, hi) -> np.ndarray:
    lo, hi = as_array(lo), as_array(hi)
    return np.linalg.norm(np.maximum(np.maximum(lo - points, 0.0), points - hi), axis=1)


@dataclass(frozen=True)
class _LightView:
    """One evidence view in both variants, for shadows and lights."""

    clean: Sample
    pert: Sample
    view: View | None
    d: np.ndarray  # L* perturbed - clean, whole frame
    l_clean: np.ndarray
    l_pert: np.ndarray
    target: np.ndarray  # the target's own pixels (same in both)
    around: np.ndarray  # other surfaces: same object in both frames, no focus object, no sky
    ground: np.ndarray  # `around` pixels of the ground
    near: np.ndarray  # `around` pixels within NEAR_M of the target's bounds
    in_shadow: np.ndarray  # changed `around` pixels where the sun puts a focus object's shadow (grown)
    core: np.ndarray  # `around` pixels where the sun puts the target's shadow (not grown)
    weight: np.ndarray  # per pixel, 1 / (1 + horizontal metres from the target's base): near counts most
    xy: np.ndarray  # world x, y of every pixel (nan where unknown)
    sun: bool
    sel: np.ndarray  # `around` pixels with a depth
    points: np.ndarray  # their world points (n x 3)

    def px(self, mask: np.ndarray) -> float:
        return px640(int(np.count_nonzero(mask)), mask.shape)

    def surface(self, mask: np.ndarray) -> str:
        n = np.count_nonzero(mask)
        return "ground" if n and np.count_nonzero(mask & self.ground) >= n / 2 else "surface"

    def shadow_in_view(self, tid: str, offset=(0.0, 0.0)) -> float:
        """Px of other surfaces where the sun puts the target's shadow (moved by `offset` on the ground)."""
        m = self.clean.measure.get("light", {})
        hulls = m.get("casters", {}).get(tid)
        if not hulls or m.get("sun") is None or not len(self.points):
            return 0.0
        shift = np.array([offset[0], offset[1], 0.0])
        return px640(int(in_sun_shadow(self.points - shift, m["sun"], hulls).sum()), self.sel.shape)


def _light_view(c: Sample, p: Sample, task: CompiledTask, tid: str) -> _LightView:
    lc, lp = lightness(c.frame), lightness(p.frame)
    same = c.ids == p.ids
    focus = np.zeros(same.shape, dtype=bool)
    for oid in focus_ids(task):
        focus |= _mask_of(c, oid) | _mask_of(p, oid)
    target = same & _mask_of(c, tid)
    around = same & ~focus & (c.ids != 0)
    m = c.measure.get("light", {})
    xy = np.full(same.shape + (2,), np.nan)
    near = np.zeros(same.shape, dtype=bool)
    in_shadow = np.zeros(same.shape, dtype=bool)
    core = np.zeros(same.shape, dtype=bool)
    weight = np.zeros(same.shape)
    view = None
    base = c.measure.get("base", {}).get(tid, {})
    sel, pts = np.zeros(same.shape, dtype=bool), np.zeros((0, 3))
    if c.depth is not None and "camera" in m:
        view = View.of(m["camera"], same.shape)
        sel = around & np.isfinite(c.depth)
        pts = view.points(sel, c.depth)
        xy[sel] = pts[:, :2]
        if base.get("present"):
            near[sel] = _box_distance(pts, base["lo"], base["hi"]) <= NEAR_M
        hulls = [h for hs in m.get("casters", {}).values() for h in hs]
        if base.get("present"):
            lo, hi = as_array(base["lo"]), as_array(base["hi"])
            from_base = np.linalg.norm(
                np.maximum(np.maximum(lo[:2] - pts[:, :2], 0.0), pts[:, :2] - hi[:2]), axis=1
            )
            weight[sel] = 1.0 / (1.0 + from_base)
            if m.get("sun") is not None and hulls:  # only changed pixels are ever asked about
                changed = np.abs(lp - lc)[sel] > LUM_STEP
                got = np.zeros(len(pts), dtype=bool)
                margin = SHADOW_MARGIN_M + SHADOW_SLACK * from_base[changed]
                got[changed] = in_sun_shadow(pts[changed], m["sun"], hulls, margin)
                in_shadow[sel] = got
                if m.get("casters", {}).get(tid):
                    core[sel] = in_sun_shadow(pts, m["sun"], m["casters"][tid])
    ground = around & (c.ids == -1)
    sun = m.get("sun") is not None
    return _LightView(
        c, p, view, lp - lc, lc, lp, target, around, ground, near, in_shadow, core, weight, xy, sun, sel, pts
    )


@dataclass(frozen=True)
class _Finding:
    """One light/shadow test on one variant: whether it shows the anomaly, the px of evidence, the words."""

    test: str
    fired: bool
    px: float
    detail: str


def _shadow_finding(
    lv: _LightView,
    name: str,
    tid: str,
    dv: np.ndarray,
    lit: np.ndarray,
    dark: np.ndarray,
    variant: str,
    other: str,
    agree: dict[str, float],
) -> _Finding:
    """A shadow missing where the sun puts the target's, or one where the sun puts none.

    The surfaces dark only in one frame are that frame's own shadow; `agree` says how well it
    matches where the sun puts the target's shadow, over all evidence views (`_agreement`).  The frame that matches better agrees with
    the sun; only the other one can show the anomaly: its surfaces lit where the first frame's
    shadow lies inside the sun's shadow (a missing shadow; only when that shadow is shaped like the
    target's, not a lamp's light spread far and wide) and its own shadow outside it (a misplaced
    one).  Only visibly changed pixels (SEEN_DL) count as evidence.
    """
    seen = np.abs(dv) >= SEEN_DL
    here, there = agree[variant], agree[other]
    shadow_like = there >= SHADOW_FIT and lv.px(lit & lv.in_shadow) >= lv.px(lit & ~lv.in_shadow)
    missing = lit & lv.in_shadow & seen if shadow_like else np.zeros_like(lit)
    stray = dark & ~lv.in_shadow & seen
    both = missing | stray
    px, pm, ps = lv.px(both), lv.px(missing), lv.px(stray)
    dl = float(np.abs(dv[both]).mean()) if both.any() else 0.0
    base = (lv.pert if variant == "perturbed" else lv.clean).measure.get("base", {}).get(tid, {})
    # which frame carries the change: the one whose shadow agrees less with the sun, when that is
    # decisive; thin casters (poles) leave too few shadow pixels for that, so then the world says
    world_says = bool(base.get("shadow_offset")) or base.get("casts_shadow") is False
    decisive = abs(here - there) >= AGREE_MARGIN
    fired = px >= SHADOW_PX and ((here < there) if decisive else world_says)
    off = _where_it_went(lv, tid, dark & ~lv.in_shadow) if ps >= SHADOW_PX / 2 else None
    moved = (
        f"{name}'s shadow falls {float(np.linalg.norm(off)):.1f} m from where the sun puts it "
        f"({lv.view.words(off)})"
        if off is not None and lv.view is not None
        else None
    )
    lit_words = (
        f"{pm:.0f} px of {lv.surface(missing)} where the sun puts it are lit in the {variant} frame and in "
        f"shadow in the {other} one"
    )
    dark_words = (
        f"{ps:.0f} px of {lv.surface(stray)} are dark in the {variant} frame and lit in the {other} one"
    )
    if moved:
        head, words = moved, f"{lit_words}, and {dark_words}" if pm >= SHADOW_PX / 2 else dark_words
    elif pm >= ps:
        head, words = f"{name} casts no shadow where the sun puts it", lit_words
    else:
        head, words = "a shadow lies where the sun puts none", dark_words
    what = f"{head}: {words}"
    faint = lv.px(((lit & lv.in_shadow) if shadow_like else (dark & ~lv.in_shadow)) & ~seen)
    if fired:
        detail = f"{what} (L* {dl:.0f} apart on average)"
    elif px >= SHADOW_PX and not decisive:
        detail = (
            f"{what}, but this frame's world draws the shadow where the sun puts it (the frames' shadows agree "
            f"with the sun about equally: {here:.0%} vs {there:.0%})"
        )
    elif px >= SHADOW_PX:
        detail = (
            f"{what}, but the shadow in this frame agrees with the sun {'better than' if here > there else 'as well as'} the {other} frame's "
            f"({here:.0%} vs {there:.0%} overlap with where the sun puts {name}'s shadow, over the evidence views)"
        )
    elif px == 0 and faint < SHADOW_PX:
        near = lv.px(lv.near & lv.ground)
        detail = f"no shadow of {name} differs from the {other} frame" + (
            f" (only {near:.0f} px of ground within {NEAR_M:g} m of it are in view)"
            if near < SHADOW_PX
            else ""
        )
    elif faint >= SHADOW_PX:
        detail = (
            f"{head}, but too faintly to see: {faint:.0f} px differ from the {other} frame by less than "
            f"L* {SEEN_DL:g} ({px:.0f} px by more, needs {SHADOW_PX:g})"
        )
    else:
        detail = f"{what}: too small to see ({px:.0f} px, needs {SHADOW_PX:g})"
    if not fired and px < SHADOW_PX:  # say whether the view shows where the shadows should and do fall
        shown = f"this view shows {lv.shadow_in_view(tid):.0f} px where the sun puts its shadow"
        if base.get("shadow_offset"):
            shown += f" and {lv.shadow_in_view(tid, base['shadow_offset']):.0f} px where the world draws it"
        detail += f"; {shown}"
    return _Finding("shadow", fired, px, detail)


def _agreement(views: list[_LightView], variant: str) -> float:
    """How well a frame's own shadow (surfaces dark only in it) matches where the sun puts the
    target's, over all evidence views: its intersection with the sun's shadow (grown) over its
    union with the part of the sun's shadow in view (not grown), 1 for the same shape in the same
    place, 0 for none.  Pixels count the more the nearer they are to the target's base: a shadow
    starts there, and there the renderer draws it closest to the sun's prediction."""
    inter = union = 0.0
    for lv in views:
        dark = lv.around & ((lv.d < -LUM_STEP) if variant == "perturbed" else (lv.d > LUM_STEP))
        inter += float(lv.weight[dark & lv.in_shadow].sum())
        union += float(lv.weight[dark | lv.core].sum())
    return inter / union if union > 0 else 0.0


def _where_it_went(lv: _LightView, tid: str, dark: np.ndarray) -> np.ndarray | None:
    """The ground offset that moves the target's sun shadow onto the dark patch (None: no fit)."""
    m = lv.clean.measure.get("light", {})
    base = lv.clean.measure.get("base", {}).get(tid, {})
    if m.get("sun") is None or not m.get("casters", {}).get(tid) or not base.get("present"):
        return None
    foot = Footprint.of(m["sun"], m["casters"][tid], float(base["lo"][2]))
    if foot is None:
        return None
    unchanged = lv.sel & ~dark & (np.abs(lv.d) <= LUM_STEP)
    return foot.offset(lv.xy[dark & lv.sel], lv.xy[unchanged])


def _glow_finding(
    lv: _LightView, name: str, dv: np.ndarray, lit: np.ndarray, variant: str, other: str
) -> _Finding:
    """The target's own pixels brighter here, its surroundings not: it glows but lights nothing."""
    tpx = lv.px(lv.target)
    g = float(dv[lv.target].mean())
    spill = lv.px(lit & lv.near & (np.abs(dv) >= SEEN_DL))
    fired = g >= GLOW_DL and spill <= GLOW_SPILL * tpx
    if fired:
        detail = (
            f"{name} glows: its {tpx:.0f} px are L* {g:+.0f} brighter in the {variant} frame than in the {other} "
            f"one, yet {'nothing' if spill < 1 else f'only {spill:.0f} px'} around it is brighter: it lights nothing"
        )
    elif g >= GLOW_DL:
        detail = (
            f"{name} is L* {g:+.0f} brighter, but {spill:.0f} px around it brighten too: a light, not a glow"
        )
    else:
        detail = f"{name}'s own pixels are L* {g:+.1f} brighter than in the {other} frame (a glow needs {GLOW_DL:g})"
    return _Finding("glow", fired, tpx if g > LUM_STEP else 0.0, detail)


def _light_finding(
    lv: _LightView, name: str, tid: str, dv: np.ndarray, dark: np.ndarray, variant: str, other: str
) -> _Finding:
    """Surfaces darker here (not in a sun shadow) while the lamp's brightest pixels keep their
    brightness: the lamp glows but its light reaches nothing."""
    l_here, l_there = (lv.l_pert, lv.l_clean) if variant == "perturbed" else (lv.l_clean, lv.l_pert)
    unlit = dark & ~lv.in_shadow & (np.abs(dv) >= SEEN_DL)  # (no sun: nothing is in a sun shadow)
    px = lv.px(unlit)
    dl = float(-dv[unlit].mean()) if unlit.any() else 0.0
    hi_here = float(np.percentile(l_here[lv.target], 95))
    hi_there = float(np.percentile(l_there[lv.target], 95))
    glowing = hi_here >= hi_there - LAMP_DIM
    fired = px >= LIGHT_PX and glowing
    reach = ""
    base = lv.clean.measure.get("base", {}).get(tid, {})
    pts = lv.xy[unlit & lv.sel]
    if len(pts) and base.get("present"):
        centre = (as_array(base["lo"]) + as_array(base["hi"]))[:2] / 2
        reach = f" up to {float(np.percentile(np.linalg.norm(pts - centre, axis=1), 90)):.1f} m from it"
    if fired:
        detail = (
            f"{name} glows as brightly as in the {other} frame (its brightest pixels L* {hi_here:.0f} vs "
            f"{hi_there:.0f}), yet {px:.0f} px of {lv.surface(unlit)}{reach} are darker (L* {dl:.0f} on average): "
            f"its light reaches nothing"
        )
    elif px >= LIGHT_PX:
        detail = (
            f"{px:.0f} px around {name} are darker, but the lamp itself is dimmer too "
            f"(L* {hi_here:.0f} vs {hi_there:.0f})"
        )
    else:
        detail = (
            f"{px:.0f} px around {name} are visibly darker than in the {other} frame "
            f"(a lamp that lights nothing darkens {LIGHT_PX:g} px)"
        )
    return _Finding("light", fired, px, detail)


def _light_tests(
    lv: _LightView,
    task: CompiledTask,
    tid: str,
    variant: str,
    which: tuple[str, ...],
    agree: dict[str, float],
) -> dict[str, _Finding]:
    """The light/shadow anomalies named in `which`, tested on `variant` against the other frame."""
    other = "clean" if variant == "perturbed" else "perturbed"
    name = _name(task, tid)
    dv = lv.d if variant == "perturbed" else -lv.d  # L* of this variant minus the other's
    lit = lv.around & (dv > LUM_STEP)  # lit here, darker in the other frame
    dark = lv.around & (dv < -LUM_STEP)
    tpx = lv.px(lv.target)
    out = {}
    for test in which:
        if test == "shadow":
            out[test] = (
                _shadow_finding(lv, name, tid, dv, lit, dark, variant, other, agree)
                if lv.sun
                else _Finding(
                    test, False, 0.0, "the scene has no sun in this view, so there is no sun shadow"
                )
            )
        elif tpx < MIN_PX:
            out[test] = _Finding(test, False, 0.0, f"{name} is not in view ({tpx:.0f} px)")
        elif test == "glow":
            out[test] = _glow_finding(lv, name, dv, lit, variant, other)
        else:
            out[test] = _light_finding(lv, name, tid, dv, dark, variant, other)
    return out


def _light_state(task: CompiledTask, m: dict) -> str | None:
    """The world's own account of a light/shadow anomaly on one object (words only: pixels decide)."""
    if not m.get("present"):
        return None
    if m["shadow_offset"] is not None and math.hypot(*m["shadow_offset"]) > 1e-6:
        dx, dy = m["shadow_offset"]
        return f"its shadow is displaced by ({dx:g}, {dy:g}) m"
    if not m["casts_shadow"]:
        return "it casts no shadow"
    if m["lamp_lit"] and m["has_emitter"] and not m["illuminates"]:
        return "it is lit but lights nothing"
    if m["glow"] or (not m["has_emitter"] and _emissive(task, m)):
        return "it glows with no light source in it"
    return None


def _claimed_light(task: CompiledTask) -> tuple[str, ...]:
    """The light/shadow anomalies the task claims, from its effects: the pixels are asked about these
    only (a shadowless car need not glow); all three when the effects name none of them."""
    claimed = []
    mats = task.scene.materials
    for e in anchor(task).effects:
        if isinstance(e, SetShadow):
            claimed.append("shadow")
        elif isinstance(e, SetLight) and e.illuminates is False:
            claimed.append("light")
        elif isinstance(e, SetLight) or (
            isinstance(e, SetMaterial) and e.material in mats and sum(mats[e.material].emissive) > 0.05
        ):
            claimed.append("glow")
    return tuple(dict.fromkeys(claimed)) or ("shadow", "light", "glow")


def _emissive(task: CompiledTask, m: dict) -> bool:
    mats = task.scene.materials
    return any(sum(mats[n].emissive) > 0.05 for n in m["materials"].values() if n in mats)


def judge_light_pair(pert: Run, clean: Run, task: CompiledTask) -> tuple[Reading, Reading]:
    """Shadow offset / no shadow / glow without light / light without glow, seen in the frames.

    At each evidence view, pixels of other surfaces (not the focus objects, not the sky) that are
    lit in one variant and in shadow in the other are split by the sun: inside the shadow the sun
    throws from the target's parts (a missing shadow) or outside it (a misplaced one); the
    target's own pixels brighter with nothing around brighter is a glow; surfaces darker away from
    any sun shadow while the lamp's brightest pixels keep their brightness is a lamp that lights
    nothing.  A variant shows the anomaly when the one the task claims (`_claimed_light`) holds for
    it against the other frame, in any evidence view; the reading names the view.
    """
    tid = focus_ids(task)[0] if focus_ids(task) else ""
    order = _claimed_light(task)
    views = [_light_view(c, p, task, tid) for c, p in _evidence_pairs(pert, clean)]
    agree = {v: _agreement(views, v) for v in ("perturbed", "clean")} if "shadow" in order else {}
    out = []
    for variant in ("perturbed", "clean"):
        if not views:
            out.append(Reading("shadow_offset", 0.0, False, "no evidence view is shared by the two runs"))
            continue
        best: tuple | None = None
        for lv in views:
            tests = _light_tests(lv, task, tid, variant, order, agree)
            for k, name in enumerate(order):
                f = tests[name]
                key = (f.fired, -k, f.px)
                if best is None or key > best[0]:
                    best = (key, f, lv)
        _, f, lv = best
        s = lv.pert if variant == "perturbed" else lv.clean
        state = _light_state(task, s.measure.get("base", {}).get(tid, {}))
        why = f"{f.detail} at '{s.caption}'" + (f" (world: {state})" if state else "")
        if not f.fired and variant == "clean":
            why = f"the clean frame agrees with the sun and the lights (nearest miss: {f.detail})"
        out.append(Reading("shadow_offset", round(f.px, 1), f.fired, why, lv.px(lv.target)))
    return out[0], out[1]


def _material_state(task: CompiledTask, oid: str, m: dict) -> list[tuple[str, str, str]]:
    """(part, declared material, material now) for every part whose material departs from the scene."""
    spec = _spec(task, oid)
    if spec is None or not m.get("present"):
        return []
    return [
        (part.id, part.material, m["materials"][part.id])
        for part in spec.parts
        if m["materials"].get(part.id, part.material) != part.material
    ]


@dataclass(frozen=True)
class _MaterialView:
    """The target's pixels in one evidence view, clean vs perturbed (px scaled to 640x480)."""

    oid: str
    clean: Sample
    pert: Sample
    px: float  # the target's pixels in both frames
    changed: float = 0.0  # ... whose colour differs by MAT_DE or more
    de: float = 0.0  # their mean colour difference
    colour: float = 0.0  # the difference of the target's mean colours
    spread: tuple[float, float] = (0.0, 0.0)  # the spread of L* (texture), clean and perturbed

    @staticmethod
    def of(oid: str, c: Sample, p: Sample) -> _MaterialView:
        mask = _mask_of(c, oid) & _mask_of(p, oid) & (c.ids == p.ids)
        n = px640(int(mask.sum()), mask.shape)
        if n < MIN_PX:
            return _MaterialView(oid, c, p, n)
        a, b = lab(c.frame[mask]), lab(p.frame[mask])
        de = np.linalg.norm(b - a, axis=1)
        hit = de >= MAT_DE
        return _MaterialView(
            oid,
            c,
            p,
            n,
            px640(int(hit.sum()), mask.shape),
            float(de[hit].mean()) if hit.any() else 0.0,
            float(np.linalg.norm(b.mean(axis=0) - a.mean(axis=0))),
            (float(a[:, 0].std()), float(b[:, 0].std())),
        )


def judge_material_pair(pert: Run, clean: Run, task: CompiledTask) -> tuple[Reading, Reading]:
    """The material at the target, seen in the frames: its visible pixels change colour or texture.

    At each evidence view the target's pixels (its segmentation mask, the same in both frames) are
    compared in CIE L*a*b*: the px whose colour differs by at least MAT_DE (CIE76) must cover
    MAT_PX (640x480 px) in one view.  The variant that departs from the scene's declared materials
    (world state: the explanation) is the one that shows the change; the other frame is its
    reference.
    """
    looks = [_MaterialView.of(oid, c, p) for c, p in _evidence_pairs(pert, clean) for oid in focus_ids(task)]
    if not looks:
        r = Reading("material_at_target", 0.0, False, "no evidence view is shared by the two runs")
        return r, r
    mv = max(looks, key=lambda v: (v.px >= MIN_PX, v.changed, v.px))
    name = _name(task, mv.oid)
    departs = {
        v: _material_state(task, mv.oid, s.measure.get("base", {}).get(mv.oid, {}))
        for v, s in (("perturbed", mv.pert), ("clean", mv.clean))
    }
    side = "clean" if departs["clean"] and not departs["perturbed"] else "perturbed"
    other = "clean" if side == "perturbed" else "perturbed"
    world = ""
    if departs[side]:
        pid, was, now = departs[side][0]
        more = len(departs[side]) - 1
        world = (
            f" (world: part {pid} is {now} instead of {was}" + (f", +{more} part(s)" if more else "") + ")"
        )
    at = f" at '{(mv.clean if side == 'clean' else mv.pert).caption}'"
    sc, sp = mv.spread
    visible = mv.px >= MIN_PX and mv.changed >= MAT_PX
    if mv.px < MIN_PX:
        why = f"{name} is not in view at any evidence view ({mv.px:.0f} px)"
    elif visible:
        why = (
            f"{name} looks different: {mv.changed:.0f} of its {mv.px:.0f} px differ from the {other} frame by "
            f"dE {mv.de:.0f} on average (mean colour dE {mv.colour:.0f}; texture, the spread of L*, {sc:.1f} clean "
            f"vs {sp:.1f} perturbed){at}"
        )
    else:
        why = (
            f"{name}'s change is too subtle to see: {mv.changed:.0f} of its {mv.px:.0f} px differ from the {other} "
            f"frame by dE {MAT_DE:g} or more (needs {MAT_PX:g}; mean colour dE {mv.colour:.1f}, spread of L* "
            f"{sc:.1f} clean vs {sp:.1f} perturbed){at}"
        )
    shows = Reading("material_at_target", round(mv.changed, 1), visible, why + world, mv.px)
    ref = Reading(
        "material_at_target",
        0.0,
        False,
        f"the {other} frame is the reference: {name} has its declared materials there",
        mv.px,
    )
    return (shows, ref) if side == "perturbed" else (ref, shows)


# --- temporal consistency -------------------------------------------------------------------------


def _before_after(run: Run):
    marks = run.marks()
    if len(marks) >= 2:
        return marks[0], marks[-1]
    if marks:
        return marks[0], run.samples[-1]
    return run.samples[0], run.samples[-1]


def judge_presence(run: Run, task: CompiledTask) -> Reading:
    b, a = _before_after(run)
    if b is a:
        return Reading("presence_before_after", 0.0, False, "the plan takes no before/after views")
    for oid in focus_ids(task):
        pb, pa = _seen(b, oid), _seen(a, oid)
        inb = b.measure.get("base", {}).get(oid, {}).get("present", False)
        ina = a.measure.get("base", {}).get(oid, {}).get("present", False)
        if inb and pb >= MIN_PX and (not ina or pa < 5):
            return Reading(
                "presence_before_after",
                pb - pa,
                True,
                f"{_name(task, oid)} was there before ({pb:.0f} px) and is gone after returning ({pa:.0f} px)",
                pb,
            )
        if (not inb or pb < 5) and ina and pa >= MIN_PX:
            return Reading(
                "presence_before_after",
                pa - pb,
                True,
                f"{_name(task, oid)} was absent before ({pb:.0f} px) and is there after returning ({pa:.0f} px)",
                pa,
            )
        if inb != ina:
            return Reading(
                "presence_before_after",
                abs(pa - pb),
                False,
                f"{_name(task, oid)} {'vanished' if inb else 'appeared'} but the views do not show it "
                f"({pb:.0f} px before, {pa:.0f} px after)" + _blocked(run),
            )
    return Reading(
        "presence_before_after", 0.0, False, "the same objects are there before and after" + _blocked(run)
    )


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
        pb, pa = _seen(b, oid), _seen(a, oid)
        moved = max(
            (math.dist(t.position[k], mb["position"]) for t in tb if len(t.position) > k), default=0.0
        )
        turned = _rot_delta_deg(mb["rotation"], ma["rotation"])
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
            what = f"{_name(task, oid)} moved {moved:.2f} m between the views"
        elif turned >= TURNED_DEG:
            what = f"{_name(task, oid)} turned {turned:.0f} deg between the views"
        elif scale >= math.log(SCALE_RATIO):
            what = f"{_name(task, oid)} changed size x{math.exp(scale):.2f} between the views"
        elif recol:
            what = f"{_name(task, oid)} changed material/colour ({recol[0]}) between the views"
        if what:
            if max(pb, pa) < MIN_PX:
                return Reading(
                    "pose_before_after", moved, False, f"{what}, but it is not in view ({pb:.0f}/{pa:.0f} px)"
                )
            return Reading("pose_before_after", round(max(moved, turned / 100), 3), True, what, max(pb, pa))
    return Reading(
        "pose_before_after",
        0.0,
        False,
        "the target keeps its position, facing, size and material" + _blocked(run),
    )


def _distances(run: Run, task: CompiledTask, oid: str) -> str:
    """'; viewed from d1 to d2 m' over the marks and captioned views (for distance triggers)."""
    tr = anchor(task).trigger
    if tr.distance_m is None:
        return ""
    ds = [
        math.dist(s.pose[:2], _centre(s, oid)[:2])
        for s in run.samples
        if s.kind in ("mark", "after") and s.measure.get("base", {}).get(oid, {}).get("present")
    ]
    if not ds:
        return ""
    return (
        f"; the views are {min(ds):.1f}-{max(ds):.1f} m from it, the {tr.kind.value} trigger switches at "
        f"{tr.distance_m:g} m"
    )


def _blocked(run: Run, all_moves: bool = False) -> str:
    """'; the walk ... was blocked by X' when a move after the first mark stopped short."""
    first = run.first_mark()
    for r in run.steps:
        if first is not None and r.step <= first.step and not all_moves:
            continue
        if r.action.action == "move" and r.moved_m < 0.8 * float(r.action.kwargs["distance_m"]):
            by = f" by {', '.join(r.contacts)}" if r.contacts else ""
            return (
                f"; the walk at action {r.step} was blocked{by} after {r.moved_m:.2f} of "
                f"{float(r.action.kwargs['distance_m']):.2f} m, so the after view is taken from elsewhere"
            )
    return ""


def _wrap(d: float) -> float:
    return (d + 180.0) % 360.0 - 180.0


def judge_continuity(run: Run, task: CompiledTask) -> Reading:
    ticks = run.ticks
    if len(ticks) < 3:
        return Reading("lighting_continuity", 0.0, False, "the run is too short to watch anything change")
    an = anchor(task)
    # scene light: abrupt day-night
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
    interacts = [(r.step, r) for r in run.steps if r.action.action == "interact"]
    t_int = _interact_times(run)
    ids = focus_ids(task)
    # lamps switching by themselves (not at dusk/dawn, not after an interaction)
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
                f"{_name(task, oid)} switches only {late[0]:.1f} s after it was used",
            )
        if flips:
            return Reading(
                "lighting_continuity",
                float(flips),
                True,
                f"{_name(task, oid)} switched {'on and off ' + str(flips) + ' times' if flips > 1 else 'state'} "
                f"by itself",
            )
    # spinning parts: frozen, racing or jumping
    spins = [(o.id, p) for oid in ids for o in [_spec(task, oid)] if o is not None for p in o.parts if p.spin]
    if spins and ticks[0].spin:
        arr = np.array([t.spin for t in ticks if len(t.spin) == len(ticks[0].spin)])
        times = np.array([t.t for t in ticks if len(t.spin) == len(ticks[0].spin)])
        for j, (oid, part) in enumerate(spins[: arr.shape[1]]):
            d = np.array([_wrap(x) for x in np.diff(arr[:, j])])
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
                    f"{_name(task, oid)}'s {part.id} stands still and then jumps {step_max:.0f} deg at once "
                    f"(it should turn steadily at {want:.0f} deg/s)",
                )
            if want > 1 and rate < 0.2 * want:
                return Reading(
                    "lighting_continuity",
                    round(rate, 1),
                    True,
                    f"{_name(task, oid)}'s {part.id} is frozen ({rate:.0f} deg/s instead of {want:.0f})",
                )
            if want > 1 and rate > 1.5 * want:
                return Reading(
                    "lighting_continuity",
                    round(rate, 1),
                    True,
                    f"{_name(task, oid)}'s {part.id} races at {rate:.0f} deg/s instead of {want:.0f}",
                )
            if step_max > max(20.0, 4 * want * 0.05):
                return Reading(
                    "lighting_continuity",
                    round(step_max, 1),
                    True,
                    f"{_name(task, oid)}'s {part.id} jumps {step_max:.0f} deg at once",
                )
    # doors and toggles: response to interaction
    for k, oid in enumerate(ids):
        spec = _spec(task, oid)
        if spec is None or spec.open is None:
            continue
        of = np.array([t.open_frac[k] if len(t.open_frac) > k else 0.0 for t in ticks])
        times = np.array([t.t for t in ticks])
        if not interacts:
            drops = np.diff(of) < -1e-3
            if drops.any():
                return Reading("lighting_continuity", 1.0, True, f"{_name(task, oid)} closes by itself")
            if any(e.kind == "set_mechanism" for e in an.effects):
                return Reading(
                    "lighting_continuity",
                    0.0,
                    False,
                    f"the plan never interacts with {_name(task, oid)}: its mechanism cannot show",
                )
            continue
        ti = t_int[0]
        after = of[times >= ti]
        ta = times[times >= ti]
        start = after[0] if after.size else of[-1]
        moved = np.abs(after - start) > 0.02
        if not moved.any():
            return Reading(
                "lighting_continuity", 0.0, True, f"{_name(task, oid)} does not respond to interaction"
            )
        first = float(ta[np.argmax(moved)] - ti)
        if first > 1.0:
            return Reading(
                "lighting_continuity",
                first,
                True,
                f"{_name(task, oid)} responds only {first:.1f} s after use",
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
                    f"{_name(task, oid)} swings in {took:.2f} s instead of {spec.open_time_s:.1f} s",
                )
            back = np.abs(after[np.argmax(done) :] - goal) > 0.05
            if back.any():
                return Reading("lighting_continuity", took, True, f"{_name(task, oid)} swings back by itself")
        else:
            return Reading(
                "lighting_continuity",
                float(after[-1]),
                True,
                f"{_name(task, oid)} stops at {abs(after[-1] - start) * 100:.0f}% of its swing",
            )
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


def judge_orientation(run: Run, task: CompiledTask) -> Reading:
    s = _deciding(run)
    z = np.array([0.0, 0.0, 1.0])
    for oid, m in s.measure.get("base", {}).items():
        spec = _spec(task, oid)
        if not m.get("present") or spec is None:
            continue
        px = _seen(s, oid)
        up_now, up_spec = _rot(m["rotation"]) @ z, _rot(spec.rotation_deg) @ z
        tilt = _angle(up_now, up_spec)
        sgn_now = np.sign(np.prod(as_array(m["scale"])))
        sgn_spec = np.sign(np.prod(as_array(spec.scale)))
        yaw = abs(_wrap(m["rotation"][0] - spec.rotation_deg[0]))
        moved = math.dist(m["position"], spec.position)
        what = None
        if tilt >= TILT_DEG:
            what = (
                f"{_name(task, oid)} is tilted {tilt:.0f} deg from upright"
                if tilt < 150
                else f"{_name(task, oid)} is upside down"
            )
        elif sgn_now != sgn_spec:
            what = f"{_name(task, oid)} is mirrored"
        elif yaw >= YAW_DEG:
            what = f"{_name(task, oid)} faces {yaw:.0f} deg away from its proper direction"
        elif moved >= RELOCATE_M:
            what = f"{_name(task, oid)} stands {moved:.1f} m from its proper place"
        if what:
            if px < MIN_PX:
                return Reading(
                    "orientation_vs_up", tilt, False, f"{what}, but it is not in view ({px:.0f} px)", px
                )
            return Reading("orientation_vs_up", round(tilt, 1), True, what, px)
    return Reading("orientation_vs_up", 0.0, False, "the target stands the right way up and in place")


def measure_era(env, task) -> dict:
    return {"eras": {oid: (st.spec.era, st.spec.name) for oid, st in env.world.objects.items() if st.present}}


def judge_era(run: Run, task: CompiledTask) -> Reading:
    s = _deciding(run)
    era = task.scene.era
    benign = {b.object for b in task.scene.benign}
    if era in ("any", "", None) and anchor(task).operator != "extra_asset":
        return Reading("era_mismatch", 0.0, False, "the scene has no era to clash with")
    odd = []
    for oid, (e, _) in s.measure.get("eras", {}).items() if era not in ("any", "", None) else ():
        if e not in ("any", era) and oid not in benign:
            px = _seen(s, oid)
            if px >= MIN_PX:
                odd.append((oid, e, px))
    if odd:
        oid, e, px = odd[0]
        return Reading(
            "era_mismatch", float(len(odd)), True, f"{_name(task, oid)} ({e}) is in view in a {era} scene", px
        )
    # extra_asset: the compiler established that the added object does not belong in this kind of
    # scene (its prefab's scene types); seeing it is the evidence
    an = anchor(task)
    if an.operator == "extra_asset":
        for e in an.effects:
            if isinstance(e, AddObject) and _seen(s, e.object.id) >= MIN_PX:
                return Reading(
                    "era_mismatch", 1.0, True, f"{_name(task, e.object.id)} is in view, out of place"
                )
    return Reading("era_mismatch", 0.0, False, f"every object in view fits the {era} era")


# --- registry --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Observable:
    """A category's measurement: `judge` reads one run; a differential one has `pair` instead, which
    reads both runs (the same evidence views in the two worlds) and returns both readings."""

    name: str
    measure: Callable
    judge: Callable | None = None
    depth: bool = False  # needs the depth image at each sample (one more render per sample)
    pair: Callable | None = None

    def readings(self, pert: Run, clean: Run, task: CompiledTask) -> tuple[Reading, Reading]:
        """(perturbed, clean) readings."""
        if self.pair is not None:
            return self.pair(pert, clean, task)
        assert self.judge is not None
        return self.judge(pert, task), self.judge(clean, task)


def _measure_with(*extra: Callable) -> Callable:
    def measure(env, task) -> dict:
        out = {"base": _base(env, task)}
        for fn in extra:
            out.update(fn(env, task))
        return out

    return measure


OBSERVABLES: dict[str, Observable] = {
    "support_gap": Observable("support_gap", _measure_with(measure_support), judge_support),
    "penetration_depth": Observable(
        "penetration_depth", _measure_with(measure_penetration), judge_penetration
    ),
    "size_ratio": Observable("size_ratio", _measure_with(), judge_size),
    "displacement_through": Observable("displacement_through", _measure_with(), judge_through),
    "blocked_distance": Observable("blocked_distance", _measure_with(), judge_blocked, depth=True),
    "rotation_after_contact": Observable("rotation_after_contact", _measure_with(), judge_contact),
    "visible_pixels_behind_occluder": Observable(
        "visible_pixels_behind_occluder", _measure_with(measure_visibility), judge_visibility, depth=True
    ),
    "apparent_size_ratio": Observable("apparent_size_ratio", _measure_with(), judge_apparent),
    "shadow_offset": Observable(
        "shadow_offset", _measure_with(measure_light), pair=judge_light_pair, depth=True
    ),
    "material_at_target": Observable("material_at_target", _measure_with(), pair=judge_material_pair),
    "presence_before_after": Observable("presence_before_after", _measure_with(), judge_presence),
    "pose_before_after": Observable("pose_before_after", _measure_with(), judge_pose),
    "lighting_continuity": Observable("lighting_continuity", _measure_with(), judge_continuity),
    "orientation_vs_up": Observable("orientation_vs_up", _measure_with(), judge_orientation),
    "era_mismatch": Observable("era_mismatch", _measure_with(measure_era), judge_era),
}


def observable(name: str) -> Observable:
    try:
        return OBSERVABLES[name]
    except KeyError:
        raise KeyError(f"unknown observable {name!r} (known: {', '.join(sorted(OBSERVABLES))})") from None
