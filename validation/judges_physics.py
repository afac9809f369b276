"""Observable judges of the physics families: static (support gap, penetration, size) and interactive
(passing through, blocked walks, response to contact).  Each judges one variant's run, except the
response to contact, which is judged against the same contact in the other world."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wac.bundle.actions import CROSSED_SHARE, PASSED_SLACK_M
from wac.bundle.model import AddBlocker, AddHole, CompiledTask, SetMechanism
from wac.bundle.terrain import height_range as terrain_height_range

from .capture import Run, Sample, anchor, as_array, eye_distance, focal_px640, focus_ids
from .readings import (
    MIN_PX,
    SCALE_RATIO,
    Reading,
    angle_deg,
    deciding_sample,
    object_label,
    object_px,
    object_spec,
    observes,
    rotation_delta_deg,
    rotation_of,
)

GAP_M, GAP_PX = 0.02, 3.0  # a support gap must be this large, and this many pixels at the viewing distance
PENETRATION_M = 0.03
ROT_CONTACT_DEG, LAUNCH_M, RISE_M, JITTER_M = (
    120.0,
    2.5,
    0.3,
    0.004,
)  # a normal push may tip a thing over (90 deg)
# beyond the other world's motion under the same contact: a half turn more than a tip onto its
# side, or thrown a metre farther than a shove sends it
ROT_MORE_DEG, LAUNCH_MORE_M = 60.0, 1.0


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


@observes("support_gap", measure=(measure_support,))
def judge_support(run: Run, task: CompiledTask) -> Reading:
    s = deciding_sample(run)
    best, why, px_best = 0.0, "no support gap under the target", 0.0
    anomalous = unseen = False
    f = focal_px640()
    for oid, g in s.measure.get("gaps", {}).items():
        px = object_px(s, oid)
        gap = g["gap"]
        if gap < GAP_M:
            continue
        dist = eye_distance(s, g["bottom"])
        shown = g.get("visible_gap", gap)
        gap_px = shown * f / max(dist, 0.1)
        best, px_best = max(best, gap), px
        unseen = px < MIN_PX
        if unseen:
            why = f"{object_label(task, oid)} floats {gap:.2f} m but is not in view at the deciding view ({px:.0f} px)"
        elif shown < gap - 1e-3 and gap_px < GAP_PX:
            why = (
                f"{object_label(task, oid)} floats {gap:.3f} m above {g['on']}, whose top is above eye height: from the "
                f"plan's viewpoint {dist:.1f} m away its edge hides the gap ({shown:.3f} m, {gap_px:.1f} px left), "
                f"too small to see"
            )
        elif gap_px < GAP_PX:
            why = (
                f"{object_label(task, oid)} floats only {gap:.3f} m: {gap_px:.1f} px at {dist:.1f} m from the plan's "
                f"viewpoint, too small to see (needs {GAP_PX:g} px)"
            )
        else:
            anomalous = True
            why = f"{object_label(task, oid)} floats {gap:.2f} m above its support ({gap_px:.0f} px at {dist:.1f} m)"
            break
    return Reading("support_gap", round(best, 4), anomalous, why, px_best, unseen and not anomalous)


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
                    rotation_delta_deg(ps.rotation_deg, part.rotation_deg) / 100.0,
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


@observes("penetration_depth", measure=(measure_penetration,))
def judge_penetration(run: Run, task: CompiledTask) -> Reading:
    s = deciding_sample(run)
    best, why, anomalous, px_best = 0.0, "no object interpenetrates another", False, 0.0
    unseen = False
    for oid, m in s.measure.get("penetration", {}).items():
        px = object_px(s, oid)
        if m["depth"] >= PENETRATION_M or m["misalign"] >= 0.05:
            what = (
                f"{object_label(task, oid)} sinks {m['depth']:.2f} m into {m['with']}"
                if m["depth"] >= PENETRATION_M
                else f"a part of {object_label(task, oid)} is displaced {m['misalign']:.2f} m from its place"
            )
            best, px_best = max(best, m["depth"], m["misalign"]), px
            if px < MIN_PX:
                why, unseen = f"{what}, but it is not in view at the deciding view ({px:.0f} px)", True
                continue
            anomalous, why = True, what
            break
        best = max(best, m["depth"])
        if m.get("overlap", 0.0) > 0.01 and not anomalous:
            why = (
                f"{object_label(task, oid)}'s bounds overlap {m['overlap_with']} by {m['overlap']:.2f} m but no parts "
                f"intersect (deepest contact {m['depth']:.3f} m)"
            )
    return Reading("penetration_depth", round(best, 4), anomalous, why, px_best, unseen and not anomalous)


@observes("size_ratio")
def judge_size(run: Run, task: CompiledTask) -> Reading:
    s = deciding_sample(run)
    best, why, anomalous, px_best = 0.0, "the target has its normal size", False, 0.0
    unseen = False
    for oid, m in s.measure.get("base", {}).items():
        spec = object_spec(task, oid)
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
        px = object_px(s, oid)
        if k >= math.log(SCALE_RATIO):
            worst = float(ratio[int(np.argmax(np.abs(np.log(np.maximum(ratio, 1e-6)))))])
            rel = f"{len(sibs)} sibling(s) of the same kind" if sibs else "its normal size"
            best, px_best = max(best, k), px
            if px < MIN_PX:
                why = f"{object_label(task, oid)} is scaled x{worst:.2f} but is not in view ({px:.0f} px)"
                unseen = True
                continue
            anomalous, why = True, f"{object_label(task, oid)} is scaled x{worst:.2f} against {rel}"
            break
    return Reading("size_ratio", round(math.exp(best), 3), anomalous, why, px_best, unseen and not anomalous)


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
    if _reaches_through_walls(an):
        uses = [r for r in run.steps if r.action.action == "interact"]
        names = {object_spec(task, t).name for t in an.targets if object_spec(task, t) is not None}
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
            f"walked {mv.moved_m:.2f} m into the solid {object_label(task, inside[0])} and stands inside it",
        )
    if crossed and mv.moved_m >= CROSSED_SHARE * asked and _shown_open(run, task, crossed[0], mv):
        return Reading(
            "displacement_through",
            round(mv.moved_m, 3),
            False,
            f"walked {mv.moved_m:.2f} m through the open {object_label(task, crossed[0])}, as a door lets one",
        )
    if crossed and mv.moved_m >= CROSSED_SHARE * asked:
        return Reading(
            "displacement_through",
            round(mv.moved_m, 3),
            True,
            f"walked {mv.moved_m:.2f} m of {asked:.2f} m straight through {object_label(task, crossed[0])}",
        )
    if crossed and "edge of the area" in mv.outcome:
        return Reading(
            "displacement_through",
            round(mv.moved_m, 3),
            False,
            f"the walk through {object_label(task, crossed[0])} runs into the edge of the exploration area after "
            f"{mv.moved_m:.2f} m: it is not on any walkable path",
        )
    if crossed or reached:
        stop = f" against {block}" if block else f" at {object_label(task, reached[0])}"
        other = (
            f": {', '.join(object_label(task, t) for t in an.targets)} is not the only obstacle on the path"
            if block
            else ""
        )
        return Reading(
            "displacement_through",
            round(mv.moved_m, 3),
            False,
            f"blocked: moved {mv.moved_m:.2f} m of {asked:.2f} m{stop}{other}",
        )
    names = ", ".join(object_label(task, t) for t in an.targets) or "the target"
    return Reading(
        "displacement_through",
        round(mv.moved_m, 3),
        False,
        f"the walk ({mv.moved_m:.2f} m of {asked:.2f} m) does not reach {names}: it is not on the path",
    )


@observes("displacement_through", pair=True, alone=judge_through)
def judge_through_pair(pert: Run, clean: Run, task: CompiledTask) -> tuple[Reading, Reading]:
    """`judge_through` of each run; and the clean world's walk must be stopped by the target: one
    that goes on about as far as a crossing would without crossing it (it slid off a narrow gate
    into the gap beside it, round a post) never shows the target blocking."""
    rp, rc = judge_through(pert, task), judge_through(clean, task)
    if rc.anomalous or (past := went_past(clean, task)) is None:
        return rp, rc
    return rp, Reading(
        "displacement_through",
        rc.value,
        True,
        f"{rc.detail}: the walk goes on past {past} in the clean world ({_exposing_move(clean).moved_m:.2f} m), "
        f"so it never shows {past} blocking",
    )


def _reaches_through_walls(an) -> bool:
    """Whether the anomaly lets interactions reach through walls (interact_through): its evidence is
    an interaction, not a walk."""
    return any(isinstance(e, SetMechanism) and e.mechanism == "through_walls" for e in an.effects)


def went_past(run: Run, task: CompiledTask) -> str | None:
    """The target a walk through it went on past without crossing it (None if it did not): it
    covered `CROSSED_SHARE` of its distance, as a crossing would, beside the target's box."""
    mv = _exposing_move(run)
    hole = _hole_or_blocker(task)
    an = anchor(task)
    if mv is None or (hole is not None and hole[0] == "add_hole"):
        return None
    if _reaches_through_walls(an):
        return None
    if mv.moved_m < CROSSED_SHARE * float(mv.action.kwargs["distance_m"]):
        return None
    targets = [o for o in task.scene.objects if o.id in an.targets]
    if not targets or any(
        _segment_hits_box(mv.start_xyz, mv.end_xyz, o.aabb_min, o.aabb_max) for o in targets
    ):
        return None
    return ", ".join(object_label(task, o.id) for o in targets)


def clean_walk_passes(task: CompiledTask, observable: str) -> bool:
    """Whether the plan's walk must pass in the clean world: its anomaly blocks a way that is open
    there (an opened door, a path across an invisible wall), not a liquid the agent should sink into."""
    if observable != "blocked_distance":
        return False
    targets = set(anchor(task).targets)
    return not any(o.id in targets and o.liquid_depth_m for o in task.scene.objects)


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
                f"the agent stands on the surface of {object_label(task, o.id)} (z {z:.2f} m) instead of sinking in",
            )
        return Reading(
            "blocked_distance",
            round(z, 3),
            False,
            f"the agent sank to z {z:.2f} m in {object_label(task, o.id)}"
            if over
            else f"the walk does not reach {object_label(task, o.id)}",
        )
    if short < PASSED_SLACK_M:
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
            f"blocked after {mv.moved_m:.2f} m of {asked:.2f} m by {object_label(task, visible[0])}, which was opened",
        )
    if visible:
        return Reading(
            "blocked_distance",
            round(short, 3),
            False,
            f"blocked after {mv.moved_m:.2f} m of {asked:.2f} m by the visible {object_label(task, visible[0])}",
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


@dataclass(frozen=True)
class _Motion:
    """How the target moved in one run: most tip (deg), displacement (m), rise of its lowest point
    (m), jitter while the agent was far (m), and whether the agent touched it."""

    rot: float
    disp: float
    rise: float
    jitter: float
    touched: bool

    @staticmethod
    def of(run: Run, oid: str) -> _Motion | None:
        ticks = [t for t in run.ticks if t.position and t.rotation]
        if not ticks:
            return None
        p0 = as_array(ticks[0].position[0])
        pos = np.array([t.position[0] for t in ticks])
        # how far it tipped (its up axis against the start's), the most at any tick: a barrel
        # knocked onto its side and rolling stays at 90 deg, one turned over reaches 180
        z = np.array([0.0, 0.0, 1.0])
        up0 = rotation_of(ticks[0].rotation[0]) @ z
        rot = max(angle_deg(up0, rotation_of(t.rotation[0]) @ z) for t in ticks)
        disp = float(np.linalg.norm(pos[-1][:2] - p0[:2]))
        # rise of the lowest point: a thrown object leaves the ground, one tipped onto its side
        # does not (its base centre, `position`, goes up by half its width as it tips)
        bottoms = [t.bottom[0] for t in ticks if t.bottom]
        rise = float(max(bottoms) - bottoms[0]) if bottoms else float(pos[:, 2].max() - p0[2])
        # jitter while the agent is still far away: tremble moves an untouched object
        first = run.first_mark()
        t_first = first.sim_time if first is not None else ticks[-1].t
        far = [
            t.position[0] for t in ticks if t.t <= t_first and math.dist(t.agent[:2], t.position[0][:2]) > 1.5
        ]
        jitter = float(np.std(np.asarray(far), axis=0).max()) if len(far) > 4 else 0.0
        # touched: in contact when an action ended, or it moved at all (a shove ends out of reach)
        touched = any(oid in r.contacts for r in run.steps) or disp > 0.02 or rot > 2.0 or rise > 0.02
        return _Motion(rot, disp, rise, jitter, touched)

    def beyond(self, other: _Motion) -> list[str]:
        """The ways this motion is out of proportion to `other`, the same contact in the other world."""
        out = []
        if self.rise >= RISE_M and self.rise >= other.rise + RISE_M:
            out.append(f"rose {self.rise:.2f} m (the other world's: {other.rise:.2f} m)")
        if self.disp >= LAUNCH_M and self.disp >= other.disp + LAUNCH_MORE_M:
            out.append(f"was thrown {self.disp:.1f} m (the other world's: {other.disp:.1f} m)")
        if self.rot >= ROT_CONTACT_DEG and self.rot >= other.rot + ROT_MORE_DEG:
            out.append(f"tipped {self.rot:.0f} deg (the other world's: {other.rot:.0f} deg)")
        if self.jitter >= JITTER_M and self.jitter >= 2.0 * other.jitter:
            out.append(
                f"jitters {self.jitter * 1000:.0f} mm with nothing touching it "
                f"(the other world's: {other.jitter * 1000:.0f} mm)"
            )
        return out

    def alone(self) -> list[str]:
        """The ways this motion is out of proportion to any contact a walk makes, with no other world
        to compare: it rose, was thrown far, turned over, or jitters untouched."""
        out = []
        if self.rise >= RISE_M:
            out.append(f"rose {self.rise:.2f} m")
        if self.disp >= LAUNCH_M:
            out.append(f"was thrown {self.disp:.1f} m")
        if self.rot >= ROT_CONTACT_DEG:
            out.append(f"tipped {self.rot:.0f} deg")
        if self.jitter >= JITTER_M:
            out.append(f"jitters {self.jitter * 1000:.0f} mm with nothing touching it")
        return out

    def said(self) -> str:
        return f"tipped {self.rot:.0f} deg, moved {self.disp:.2f} m, rose {self.rise:.2f} m" + (
            "" if self.touched else " (the agent never touched it)"
        )


@observes("blocked_distance", pair=True, depth=True, alone=judge_blocked)
def judge_blocked_pair(pert: Run, clean: Run, task: CompiledTask) -> tuple[Reading, Reading]:
    """`judge_blocked` of each run; and the clean world's walk must pass: a walk that stops there
    too (at the edge of the area, against a visible obstacle, an open door's leaf) never shows the way
    open, so being stopped in the perturbed world proves nothing."""
    rp, rc = judge_blocked(pert, task), judge_blocked(clean, task)
    if rc.anomalous or not clean_walk_passes(task, "blocked_distance"):
        return rp, rc
    mv = _exposing_move(clean)
    if mv is not None and float(mv.action.kwargs["distance_m"]) - mv.moved_m >= PASSED_SLACK_M:
        names = ", ".join(object_label(task, t) for t in anchor(task).targets) or "the anomaly's place"
        rc = Reading(
            "blocked_distance",
            rc.value,
            True,
            f"{rc.detail}: the walk is stopped before it passes {names} in the clean world too, so it "
            "never shows the way open",
        )
    return rp, rc


def motion_alone(run: Run, task: CompiledTask) -> Reading:
    """The response to contact in one run, against the fixed thresholds alone (the world-alone stage)."""
    oid = focus_ids(task)[0]
    name = object_label(task, oid)
    m = _Motion.of(run, oid)
    if m is None:
        return Reading("rotation_after_contact", 0.0, False, f"{name} is not in the world")
    cues = m.alone()
    return Reading(
        "rotation_after_contact", round(m.rot, 1), bool(cues), f"{name} " + ("; ".join(cues) or m.said())
    )


@observes("rotation_after_contact", pair=True, alone=motion_alone)
def judge_contact_pair(pert: Run, clean: Run, task: CompiledTask) -> tuple[Reading, Reading]:
    """How the target moved after the agent's contact, against the same contact in the other world
    (C.5: "judge it against what the same contact would normally do from the same starting state").

    Both runs take the same steps from the same state, so a light object that a walk knocks over
    or shoves ahead moves alike in both; the perturbed run shows the anomaly when its target tips,
    rises, is thrown or jitters beyond fixed thresholds *and* beyond the clean run's by a margin.
    """
    oid = focus_ids(task)[0]
    name = object_label(task, oid)
    mp, mc = _Motion.of(pert, oid), _Motion.of(clean, oid)
    if mp is None or mc is None:
        r = Reading("rotation_after_contact", 0.0, False, f"{name} is not in the world")
        return r, r

    def reading(m: _Motion, cues: list[str]) -> Reading:
        if cues:
            return Reading("rotation_after_contact", round(m.rot, 1), True, f"{name} " + "; ".join(cues))
        return Reading("rotation_after_contact", round(m.rot, 1), False, f"{name} {m.said()}")

    # the clean run is the reference; it shows an anomaly only when the worlds look swapped (the
    # clean target out of proportion to a perturbed one that moved normally).  Once the perturbed
    # target has flown off, the two contacts differ and the clean one's motion is no evidence.
    shown = mp.beyond(mc)
    return reading(mp, shown), reading(mc, [] if shown else mc.beyond(mp))
