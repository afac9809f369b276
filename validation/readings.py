"""What every observable judge shares: the `Reading` a judge returns, the `@observes` registration of
an observable's judge, the state measured of each focus object at every sample (`base_state`), and
small helpers over runs and samples."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from wac.bundle.model import AddObject, CompiledTask
from wac.bundle.transforms import rotation

from .capture import Run, Sample, anchor, as_array, focus_ids

MIN_PX = 30.0  # target pixels (640x480 equivalent) for it to count as seen
SCALE_RATIO = 1.15


@dataclass(frozen=True)
class Reading:
    """One variant's measurement: the value, whether it shows the anomaly, and why."""

    observable: str
    value: float
    anomalous: bool
    detail: str
    seen_px: float = 0.0  # the target's pixels at the deciding sample (640x480 equivalent)
    # the anomaly is there but the run's views do not show the target (out of view, or not whole
    # where a whole view is needed): the run is no evidence either way
    unseen: bool = False


@dataclass(frozen=True)
class Observable:
    """A category's measurement: `judge` reads one run; a differential one has `pair` instead, which
    reads both runs (the same evidence views in the two worlds) and returns both readings, and may
    have `alone`, its perturbed run judged by itself (the world-alone stage)."""

    name: str
    measure: Callable
    judge: Callable | None = None
    depth: bool = False  # needs the depth image at each sample (one more render per sample)
    pair: Callable | None = None
    alone: Callable | None = None

    def readings(self, pert: Run, clean: Run, task: CompiledTask) -> tuple[Reading, Reading]:
        """(perturbed, clean) readings."""
        if self.pair is not None:
            return self.pair(pert, clean, task)
        assert self.judge is not None
        return self.judge(pert, task), self.judge(clean, task)


# every registered observable by name; validation/observables.py checks it against the taxonomy's
OBSERVED: dict[str, Observable] = {}


def observes(
    name: str,
    *,
    measure: tuple[Callable, ...] = (),
    depth: bool = False,
    pair: bool = False,
    alone: Callable | None = None,
) -> Callable[[Callable], Callable]:
    """Register the decorated function as the judge of observable `name` (`pair`: it reads both runs);
    `measure` adds to what every sample records (`base_state`)."""

    def register(fn: Callable) -> Callable:
        if name in OBSERVED:
            raise TypeError(f"two judges registered for observable {name!r}")
        OBSERVED[name] = Observable(
            name,
            _measure_with(*measure),
            judge=None if pair else fn,
            depth=depth,
            pair=fn if pair else None,
            alone=alone,
        )
        return fn

    return register


def _measure_with(*extra: Callable) -> Callable:
    def measure(env, task) -> dict:
        out = {"base": base_state(env, task)}
        for fn in extra:
            out.update(fn(env, task))
        return out

    return measure


# --- helpers ---------------------------------------------------------------------------------------


def object_label(task: CompiledTask, oid: str) -> str:
    """An object's id with its name, for readings' sentences (added objects too)."""
    for o in task.scene.objects:
        if o.id == oid:
            return f"{oid} ({o.name})" if o.name and o.name != oid else oid
    for an in task.anomalies:
        for e in an.effects:
            if isinstance(e, AddObject) and e.object.id == oid:
                return f"{oid} ({e.object.name})"
    return oid


def object_spec(task: CompiledTask, oid: str):
    """An object's scene spec, or the one an anomaly adds (None: unknown id)."""
    for o in task.scene.objects:
        if o.id == oid:
            return o
    for an in task.anomalies:
        for e in an.effects:
            if isinstance(e, AddObject) and e.object.id == oid:
                return e.object
    return None


def deciding_sample(run: Run) -> Sample:
    """The sample an observable judges by default: the last mark (or the final view)."""
    marks = run.marks()
    return marks[-1] if marks else run.samples[-1]


def rotation_of(deg) -> np.ndarray:
    """Rotation matrix of Euler angles in degrees."""
    return rotation(*(float(v) for v in deg))


def angle_deg(a, b) -> float:
    """Angle between two unit vectors, in degrees."""
    return float(math.degrees(math.acos(float(np.clip(np.dot(a, b), -1.0, 1.0)))))


def rotation_delta_deg(r1, r2) -> float:
    """The angle of the rotation taking one orientation (Euler degrees) to another."""
    m = rotation_of(r1).T @ rotation_of(r2)
    return float(math.degrees(math.acos(float(np.clip((np.trace(m) - 1) / 2, -1.0, 1.0)))))


def object_px(sample: Sample, oid: str) -> float:
    """An object's pixels in a sample's segmentation (640x480 equivalent)."""
    return sample.px640(sample.pixels(oid))


def base_state(env, task) -> dict:
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


def centre_of(s: Sample, oid: str) -> np.ndarray:
    """Centre of an object's bounds as measured at a sample."""
    m = s.measure["base"][oid]
    return (as_array(m["lo"]) + as_array(m["hi"])) / 2


def trigger_distances(run: Run, task: CompiledTask, oid: str) -> str:
    """'; viewed from d1 to d2 m' over the marks and captioned views (for distance triggers)."""
    tr = anchor(task).trigger
    if not tr.kind.viewpoint or tr.distance_m is None:
        return ""
    ds = [
        math.dist(s.pose[:2], centre_of(s, oid)[:2])
        for s in run.samples
        if s.kind in ("mark", "after") and s.measure.get("base", {}).get(oid, {}).get("present")
    ]
    if not ds:
        return ""
    return (
        f"; the views are {min(ds):.1f}-{max(ds):.1f} m from it, the {tr.kind.value} trigger switches at "
        f"{tr.distance_m:g} m"
    )


def blocked_walk(run: Run, all_moves: bool = False) -> str:
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


def wrap_deg(d: float) -> float:
    """An angle in degrees wrapped to [-180, 180)."""
    return (d + 180.0) % 360.0 - 180.0
