"""Running an action list in one variant of a bundle and recording what the checks need.

`run_steps` drives a `WorldEnv` through plan steps (`mark` steps cost nothing), and takes a
`Sample` at the start, at every `mark`, after every captioned action and at the end.  A sample
holds the RGB frame, the segmentation and depth images, the agent's pose and the measurement the
observable asks for; a light `TickState` of the anomaly's targets is recorded every control tick
(0.05 s) so that fast changes (flicker, a door closing) are seen between actions.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from wac.bundle.model import AddObject, CompiledTask, PlanStep

FRAME_W, FRAME_H = 320, 240
HFOV_DEG = 90.0


@dataclass(frozen=True)
class Step:
    """One plan step as the runner sees it: an action (or a `mark`) and its evidence caption."""

    action: str
    args: tuple[tuple[str, object], ...] = ()
    caption: str = ""

    @staticmethod
    def of(ps: PlanStep) -> Step:
        return Step(ps.action, tuple(sorted(ps.args.items())), ps.caption)

    @property
    def kwargs(self) -> dict:
        return dict(self.args)

    def text(self) -> str:
        """The step in `wac play --actions` syntax ('' for a mark)."""
        a = self.kwargs
        if self.action == "move":
            d = f"{float(a['distance_m']):g}"
            return f"move {d}" + (" back" if a.get("direction") == "back" else "")
        if self.action in ("turn", "look"):
            return f"{self.action} {float(a['degrees']):g}"
        if self.action == "wait":
            return f"wait {float(a['seconds']):g}"
        if self.action == "interact":
            return "interact"
        return ""


def actions_text(steps: Sequence[Step]) -> str:
    return "; ".join(t for t in (s.text() for s in steps) if t)


@dataclass(frozen=True)
class TickState:
    """The anomaly's focus object(s) and the scene's light, one control tick."""

    t: float
    daylight: float
    lit: tuple[bool, ...]  # lamp_lit of each focus object
    open_frac: tuple[float, ...]
    spin: tuple[float, ...]  # spin angle of every spinning part of the focus objects
    position: tuple[tuple[float, float, float], ...]
    rotation: tuple[tuple[float, float, float], ...]
    present: tuple[bool, ...]
    agent: tuple[float, float, float]
    trigger_seen: bool = False  # the anchor trigger's "seen" flag (perturbed only)
    bottom: tuple[float, ...] = ()  # lowest point (bounding-box bottom) of each focus object


@dataclass(frozen=True)
class Sample:
    """What was captured at one evidence point."""

    index: int  # order of capture
    kind: str  # start | mark | after | end
    step: int  # actions executed so far
    caption: str
    sim_time: float
    pose: tuple[float, float, float, float, float]  # x, y, z, yaw, pitch
    frame: np.ndarray = field(repr=False)
    ids: np.ndarray = field(repr=False)
    depth: np.ndarray | None = field(repr=False)  # None unless the observable asked for it
    index_of: dict = field(repr=False, default_factory=dict)  # object id -> segmentation index
    measure: dict = field(repr=False, default_factory=dict)  # what the observable measured here
    outcome: str = ""

    def pixels(self, oid: str) -> int:
        i = self.index_of.get(oid)
        return 0 if i is None else int(np.count_nonzero(self.ids == i))

    def px640(self, n: int) -> float:
        """A pixel count scaled to a 640x480 frame."""
        return n * (640 * 480) / self.ids.size


@dataclass(frozen=True)
class StepRecord:
    """One executed action: what was asked and what happened."""

    step: int
    action: Step
    outcome: str
    moved_m: float
    start_xyz: tuple[float, float, float]
    end_xyz: tuple[float, float, float]
    contacts: tuple[str, ...]  # objects the agent touched when the action ended
    ok: bool
    t0: float = 0.0  # sim time when the action started
    ahead: tuple = ()  # after a move: (kind, object id, hit point) of colliders just ahead of the agent


@dataclass(frozen=True)
class Run:
    """Everything one variant's run produced."""

    variant: str
    samples: tuple[Sample, ...]
    steps: tuple[StepRecord, ...]
    ticks: tuple[TickState, ...]
    events: tuple = ()
    event_in_view: tuple[bool, ...] = ()  # per event: was the target in view when it was logged
    states_start: dict = field(default_factory=dict)  # object id -> signature (one-change diff)
    states_end: dict = field(default_factory=dict)
    world_start: tuple = ()
    world_end: tuple = ()
    error: str | None = None
    event_px: tuple[dict, ...] = ()  # per event: every object's px (640x480) in the frame when it was logged
    probes: dict = field(default_factory=dict)  # tick time -> every object's px (640x480), at `probe_times`
    # per event: every object's px (640x480) in the frame just before the change ({} if none)
    event_before_px: tuple[dict, ...] = ()

    def marks(self) -> list[Sample]:
        return [s for s in self.samples if s.kind == "mark"]

    def first_mark(self) -> Sample | None:
        m = self.marks()
        return m[0] if m else None


def focus_ids(task: CompiledTask) -> tuple[str, ...]:
    """Object ids the anchor anomaly is about: targets, effect targets and added objects."""
    an = anchor(task)
    out: list[str] = []
    for oid in (
        list(an.targets)
        + [e.target for e in an.effects if e.target]
        + [e.object.id for e in an.effects if isinstance(e, AddObject)]
    ):
        if oid and oid not in out:
            out.append(oid)
    return tuple(out)


def anchor(task: CompiledTask):
    for an in task.anomalies:
        if an.anchor:
            return an
    return task.anomalies[0]


def anchor_index(task: CompiledTask) -> int:
    for i, an in enumerate(task.anomalies):
        if an.anchor:
            return i
    return 0


def signature(st) -> tuple:
    """A comparable summary of one object's live state (positions to 1 cm, angles to 1 deg)."""
    r = lambda v, k: tuple(round(float(x) / k) * k for x in v)  # noqa: E731
    parts = tuple(
        sorted(
            (pid, ps.material, ps.solid, r(ps.position, 0.01), r(ps.rotation_deg, 1.0))
            for pid, ps in st.parts.items()
        )
    )
    return (
        ("present", st.present),
        ("visible", st.visible),
        ("solid", st.solid),
        ("position", r(st.position, 0.01)),
        ("rotation", r(st.rotation_deg, 1.0)),
        ("scale", r(st.scale, 0.01)),
        ("parts", parts),
        ("casts_shadow", st.casts_shadow),
        ("shadow_offset", st.shadow_offset),
        ("render", st.render),
        ("lit", st.lit),
        ("illuminates", st.illuminates),
        ("glow", st.glow),
        ("mechanism", tuple(sorted(st.mechanism))),
        ("animation", bool(st.animation)),
        ("motion", bool(st.motion)),
        ("appearance", (st.appearance_scale, st.appearance_color)),
        ("mass", round(st.mass_kg, 3)),
        ("restitution", st.restitution),
        ("friction", st.friction),
    )


def world_signature(world) -> tuple:
    dn = world.day_night
    return (
        ("holes", len(world.holes)),
        ("blockers", len(world.blockers)),
        ("day_night", None if dn is None else (dn.period_s, dn.transition)),
    )


def _tick_state(env, ids: Sequence[str], anchor_i: int) -> TickState:
    w = env.world
    sts = [w.objects[i] for i in ids if i in w.objects]
    foot = env.physics.agent_position()
    seen = False
    for an in env.anomalies:
        if an.index == anchor_i:
            seen = bool(an.trig.seen)
    return TickState(
        t=round(env.sim_time, 4),
        daylight=float(w.daylight()[2]),
        lit=tuple(bool(w.lamp_lit(s)) for s in sts),
        open_frac=tuple(float(s.open_frac) for s in sts),
        spin=tuple(float(ps.spin_deg) for s in sts for ps in s.parts.values() if ps.part.spin is not None),
        position=tuple(tuple(float(v) for v in s.world_position()) for s in sts),
        rotation=tuple(tuple(float(v) for v in s.rotation_deg) for s in sts),
        present=tuple(bool(s.present) for s in sts),
        agent=(float(foot[0]), float(foot[1]), float(foot[2])),
        trigger_seen=seen,
        bottom=tuple(float(w.aabb(s)[0][2]) for s in sts),
    )


def _sample(
    env, task: CompiledTask, measure, depth: bool, index: int, kind: str, caption: str, images=None
) -> Sample:
    """One evidence sample of the running world: its frame, segmentation (and depth), pose and the
    observable's measurements; `images` (frame, ids, depth), when given, are this world's already."""
    if images is not None:
        frame, ids_img, depth_img = images
    else:
        frame = env.view()
        if depth:
            ids_img, depth_img = env.render_ids(with_depth=True)
        else:
            ids_img, depth_img = env.render_ids(), None
    p = env.pose()
    return Sample(
        index=index,
        kind=kind,
        step=env.steps,
        caption=caption,
        sim_time=round(env.sim_time, 4),
        pose=(p.x, p.y, p.z, p.yaw_deg, p.pitch_deg),
        frame=frame,
        ids=ids_img,
        depth=depth_img,
        index_of={oid: st.index for oid, st in env.world.objects.items() if st.present},
        measure=measure(env, task) if measure else {},
        outcome=env.history[-1].outcome,
    )


class _Samples(list):
    """A run's samples, taken with `take`.  A sample with no action since the one before (a mark,
    the final view after a captioned last step: `still`) shows what that one drew, and takes its
    images; images are read-only, as samples and runs share them."""

    def __init__(self, env, task: CompiledTask, measure, depth: bool) -> None:
        super().__init__()
        self.env, self.task, self.measure, self.depth = env, task, measure, depth
        self.still = False  # no action since the last sample: the world and the view are as it drew them

    def images(self, i: int) -> tuple:
        return (self[i].frame, self[i].ids, self[i].depth)

    def take(self, kind: str, caption: str, images=None) -> None:
        if images is None and self.still:
            images = self.images(-1)
        self.append(_sample(self.env, self.task, self.measure, self.depth, len(self), kind, caption, images))
        for a in self.images(-1):
            if a is not None:
                a.flags.writeable = False
        self.still = True


def _act(env, s: Step):
    """Take one plan step in the world: (its record, the env's result)."""
    before = env.physics.agent_position()
    t0 = env.sim_time
    res = env.try_step({"action": s.action, **s.kwargs})
    after = env.physics.agent_position()
    rec = StepRecord(
        env.steps,
        s,
        res.outcome,
        float(res.moved_m),
        tuple(float(v) for v in before),
        tuple(float(v) for v in after),
        tuple(sorted(env.physics.agent_contacts())),
        res.ok,
        t0,
    )
    if s.action == "move" and res.ok:
        rec = dataclasses.replace(rec, ahead=_ahead(env, s.kwargs.get("direction", "forward")))
    return rec, res


def run_steps(
    task_or_bundle,
    variant: str,
    steps: Sequence[Step],
    measure: Callable | None = None,
    seed: int = 0,
    width: int = FRAME_W,
    height: int = FRAME_H,
    shadows: bool = True,
    depth: bool = True,
    probe_times: Collection[float] = (),
    focus: CompiledTask | None = None,
    starts: dict | None = None,
) -> Run:
    """Run `steps` in one variant; `measure(env, task)` -> dict is called at every sample.

    Every logged trigger event and every tick at one of `probe_times` (seconds, to 1 ms) also
    renders the segmentation and records each object's pixels: where the target was on screen
    when a change happened (after it, and just before it: `Run.event_before_px`).  `focus` is the bundle's task with the anomaly under check as its
    anchor (a multi-anomaly task is checked one anomaly at a time).  `starts` keeps the start
    view's images between runs of one bundle (the plans of a multi-anomaly task start in the same
    worlds): a run whose world and frame settings were seen takes them from there, undrawn.
    """
    from wac.runtime.env import WorldEnv

    from .pixels import pixel_counts

    env = WorldEnv(
        task_or_bundle,
        variant=variant,
        seed=seed,
        width=width,
        height=height,
        film_interval_s=None,
        hfov_deg=HFOV_DEG,
        shadows=shadows,
        step_images=False,  # only the frames of the samples are looked at: rendered in `take`
    )
    task = focus if focus is not None else env.task
    ids = focus_ids(task)
    ai = anchor_index(task)
    ticks: list[TickState] = []

    def tick() -> None:
        ticks.append(_tick_state(env, ids, ai))

    seen_events: list[bool] = [False] * len(env.events)  # logged at load
    event_px: list[dict] = [{} for _ in env.events]
    probes: dict[float, dict] = {}
    wanted = {round(float(t), 3) for t in probe_times}

    def counts() -> dict:
        return pixel_counts(
            env.render_ids(), {o: st.index for o, st in env.world.objects.items() if st.present}
        )

    def tick_and_events() -> None:
        tick()
        new = env.events[len(seen_events) :]
        now = counts() if any(e.event in ("fired", "deactivated") for e in new) else {}
        while len(seen_events) < len(env.events):  # a trigger switched: was the change witnessed?
            ev = env.events[len(seen_events)]
            an = next((a for a in env.anomalies if a.index == ev.anomaly), None)
            seen_events.append(bool(an is not None and env.target_in_view(an)))
            event_px.append(now)
        t = round(env.sim_time, 3)
        if t in wanted and t not in probes:
            probes[t] = counts()

    env.add_tick_listener(tick_and_events)
    before_px: dict[int, dict] = {}  # event index -> pixels just before its change (the world unchanged yet)
    env.add_switch_listener(lambda an, on: before_px.setdefault(len(env.events), counts()))
    samples = _Samples(env, task, measure, depth)
    records: list[StepRecord] = []
    error = None
    try:
        states_start = {oid: signature(st) for oid, st in env.world.objects.items()}
        world_start = world_signature(env.world)
        ticks.append(_tick_state(env, ids, ai))
        key = (variant, seed, width, height, shadows, depth)
        samples.take("start", "Start view.", starts.get(key) if starts is not None else None)
        if starts is not None:
            starts.setdefault(key, samples.images(0))
        for s in steps:
            if s.action == "mark":
                samples.take("mark", s.caption)
                continue
            rec, res = _act(env, s)
            samples.still = False
            records.append(rec)
            if not res.ok:
                error = f"action '{s.text()}' was refused: {res.outcome.removeprefix('ERROR: ')}"
                break
            if s.caption:
                samples.take("after", s.caption)
        samples.take("end", "Final view.")
        states_end = {oid: signature(st) for oid, st in env.world.objects.items()}
        world_end = world_signature(env.world)
        events = tuple(env.events)
        while len(seen_events) < len(events):
            seen_events.append(False)  # logged at load, before the first tick
            event_px.append({})
    finally:
        env.close()
    return Run(
        variant,
        tuple(samples),
        tuple(records),
        tuple(ticks),
        events,
        tuple(seen_events),
        states_start,
        states_end,
        world_start,
        world_end,
        error,
        tuple(event_px),
        probes,
        tuple(before_px.get(k, {}) for k in range(len(events))),
    )


def _ahead(env, direction: str) -> tuple:
    """Colliders the agent's capsule touches after a move, on the side it was moving to (physics rays).

    Rays go out from the capsule's axis at three heights, straight ahead and up to 90 deg to
    either side, 0.1 m beyond its radius: a wall met at a slant, along which the agent slid,
    counts as well as one met head on.
    """
    from wac.runtime.physics_bodies import RAY_SOLID

    sign = 1.0 if direction == "forward" else -1.0
    foot = env.physics.agent_position()
    reach = env.task.exploration.agent_radius_m + 0.1
    starts, ends = [], []
    for off in (0.0, -45.0, 45.0, -90.0, 90.0):
        yaw = math.radians(env.yaw + off)
        d = np.array([math.cos(yaw), math.sin(yaw), 0.0]) * sign
        for h in (0.3, 0.8, 1.3):
            a = foot + [0.0, 0.0, h]
            starts.append(a)
            ends.append(a + d * reach)
    out = []
    for (ref, frac), a, b in zip(env.physics.rays(starts, ends, RAY_SOLID), starts, ends, strict=True):
        if ref is not None and ref.kind not in ("agent", "ground"):
            out.append((ref.kind, ref.object_id, tuple(float(v) for v in a + (b - a) * frac)))
    return tuple(out)


def eye_distance(sample: Sample, point) -> float:
    x, y, z = sample.pose[0], sample.pose[1], sample.pose[2] + 1.6
    return math.dist((x, y, z), tuple(float(v) for v in point))


def focal_px640(hfov_deg: float = HFOV_DEG) -> float:
    """Focal length in pixels of a 640-wide frame."""
    return 320.0 / math.tan(math.radians(hfov_deg) / 2)


def mean_rgb(sample: Sample, oid: str) -> np.ndarray | None:
    i = sample.index_of.get(oid)
    if i is None:
        return None
    mask = sample.ids == i
    if mask.shape != sample.frame.shape[:2] or not mask.any():
        return None
    return sample.frame[mask].reshape(-1, 3).mean(axis=0)


def as_array(v) -> np.ndarray:
    return np.asarray(v, dtype=float)
