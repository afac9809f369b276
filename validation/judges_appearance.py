"""Observable judges of shadow/lighting and material, judged differentially from pixels as a reviewer
would: the same evidence view rendered in the clean and the perturbed world, compared where the
shadow should be and where it is, or over the target's own pixels.  The world's state only explains
the verdict in words."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wac.bundle.model import CompiledTask, SetLight, SetMaterial, SetShadow

from .capture import Run, Sample, anchor, as_array, focus_ids
from .pixels import Footprint, View, in_sun_shadow, lab, lightness, px640, shadow_hulls
from .readings import MIN_PX, Reading, object_label, object_spec, observes, wrap_deg

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
        if abs(wrap_deg(c.pose[3] - p.pose[3])) > 0.5 or abs(c.pose[4] - p.pose[4]) > 0.5:
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
    name = object_label(task, tid)
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


@observes("shadow_offset", measure=(measure_light,), pair=True, depth=True)
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
    spec = object_spec(task, oid)
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


@observes("material_at_target", pair=True)
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
    name = object_label(task, mv.oid)
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
    shows = Reading(
        "material_at_target", round(mv.changed, 1), visible, why + world, mv.px, unseen=mv.px < MIN_PX
    )
    ref = Reading(
        "material_at_target",
        0.0,
        False,
        f"the {other} frame is the reference: {name} has its declared materials there",
        mv.px,
    )
    return (shows, ref) if side == "perturbed" else (ref, shows)
