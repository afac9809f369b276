"""The live world state of a running bundle: what physics, render, effects and triggers share.

A `World` is built from a `CompiledTask` and owns one mutable `ObjectState` per object.  Effects
change these states, physics and motion update poses, and the renderer draws whatever they say.
Nothing here imports pybullet or VTK.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from wac.bundle.model import CompiledTask, Material, Part, SceneObject
from wac.errors import BundleError

from .geometry import PartPose, box_corners, object_matrix, part_matrix, part_mesh

LIQUID_KINDS = frozenset({"liquid", "water"})


def _liquid(spec: SceneObject) -> bool:
    """Water or a pit: `liquid_depth_m` set (older bundles: kind/tag "liquid")."""
    return spec.liquid_depth_m is not None or spec.kind in LIQUID_KINDS or "liquid" in spec.tags


@dataclass
class PartState:
    """Live state of one part: pose override, material, solidity, hinge and spin angles."""

    part: Part
    position: tuple[float, float, float]
    rotation_deg: tuple[float, float, float]
    material: str
    solid: bool
    hinge_deg: float = 0.0
    spin_deg: float = 0.0
    # the world object this part belongs to: told of every assignment (see `ObjectState.__setattr__`)
    owner: ObjectState | None = field(default=None, init=False, repr=False, compare=False)

    def __setattr__(self, name: str, value) -> None:
        object.__setattr__(self, name, value)
        owner = self.__dict__.get("owner")
        if owner is not None:
            owner.changed()

    def pose(self) -> PartPose:
        return PartPose(self.position, self.rotation_deg, self.hinge_deg, self.spin_deg)


@dataclass(frozen=True, slots=True)
class MechanismState:
    """What the runtime tracks about an object's mechanisms between ticks (set by effects and the
    env, never read from the bundle).  Frozen: change it with `ObjectState.update_mechanism_state`, so an
    effect's undo snapshot keeps the state it saw."""

    one_way_normal: tuple[float, float] | None = None  # a one-way solid's entry side (unit, world xy)
    trapped: bool = False  # the agent has stepped inside a one-way solid: it stays solid from within
    passable: tuple[bool, int] | None = None  # agent collision last set in physics, at this shape version
    opened_at: float | None = None  # sim time an autoclose door finished opening


@dataclass
class ObjectState:
    """Live state of one object (clean values until an effect or physics changes them)."""

    spec: SceneObject
    index: int  # segmentation id (>= 1); 0 is sky, the ground is reported as -1 separately
    position: np.ndarray
    rotation_deg: np.ndarray
    scale: np.ndarray
    parts: dict[str, PartState]
    present: bool = True
    visible: bool = True
    solid: bool = True
    keeps_collision: bool = True  # while invisible
    casts_shadow: bool = True
    shadow_offset: tuple[float, float] | None = None
    render: str | None = None  # xray | cull | flip_normals | lod_proxy
    render_normal: tuple[float, float] | None = None
    lit: bool | None = None
    illuminates: bool = True
    glow: bool = False  # lit although it has no emitter: every part glows
    lit_override: bool | None = None  # set by interaction when a day-night cycle drives lamps
    open_frac: float = 0.0  # 0 closed .. 1 open (doors)
    door_target: float = 0.0
    door_speed: float = 1.0  # fraction per second
    collider_frac: float | None = None  # ghost/phantom: collider swing differs from the visual one
    motion: dict | None = None
    motion_offset: np.ndarray = field(default_factory=lambda: np.zeros(3))
    mechanism: dict[str, float | None] = field(default_factory=dict)  # name (SetMechanism, flicker) -> value
    mechanism_state: MechanismState = field(default_factory=MechanismState)
    animation: dict | None = None
    appearance_scale: float | None = None
    appearance_color: tuple[float, float, float] | None = None
    mass_kg: float = 0.0
    restitution: float | None = None
    friction: float | None = None
    held: bool = False  # picked up by the agent
    frozen: bool = False  # placed by a static anomaly: kept exactly there (not simulated)
    shape_version: int = 0  # bumped whenever collision geometry must be rebuilt
    pending: list = field(default_factory=list)  # (sim_time, callable) delayed interactions
    # the parts that hinge, spin, or do either, in `parts` order (an object's parts never change)
    hinged_parts: tuple[PartState, ...] = field(default=(), init=False, repr=False, compare=False)
    spinning_parts: tuple[PartState, ...] = field(default=(), init=False, repr=False, compare=False)
    moving_parts: tuple[PartState, ...] = field(default=(), init=False, repr=False, compare=False)
    # the world's change sets (`World.watch`); None outside a world (a copy made to measure a pose)
    watchers: list[set[str]] | None = field(default=None, init=False, repr=False, compare=False)

    def __setattr__(self, name: str, value) -> None:
        """Every assignment to an object's state (or one of its parts') marks it changed in the sets of
        the world's consumers, which then redo their work for the objects that changed only.  Runtime
        code assigns state, never mutates it in place (arrays, dicts and tuples are replaced whole)."""
        object.__setattr__(self, name, value)
        self.changed()

    def changed(self) -> None:
        """Mark the object changed for the world's consumers (a part was assigned)."""
        watchers = self.__dict__.get("watchers")
        if watchers:
            oid = self.spec.id
            for s in watchers:
                s.add(oid)

    def __post_init__(self) -> None:
        parts = tuple(self.parts.values())
        self.hinged_parts = tuple(ps for ps in parts if ps.part.hinge)
        self.spinning_parts = tuple(ps for ps in parts if ps.part.spin is not None)
        self.moving_parts = tuple(ps for ps in parts if ps.part.hinge or ps.part.spin)

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def is_liquid(self) -> bool:
        return _liquid(self.spec)

    @property
    def liquid_depth(self) -> float | None:
        """How deep the agent sinks below the liquid's surface (None: not a liquid)."""
        if self.spec.liquid_depth_m is not None:
            return float(self.spec.liquid_depth_m)
        return 0.8 if self.is_liquid else None

    @property
    def is_door(self) -> bool:
        return self.spec.open is not None or bool(self.hinged_parts)

    @property
    def has_emitter(self) -> bool:
        return any(p.part.emitter for p in self.parts.values())

    @property
    def simulated(self) -> bool:
        """Whether physics moves it (dynamic, has mass, not frozen by a static anomaly)."""
        return self.spec.dynamic and self.mass_kg > 0 and not self.frozen

    def world_position(self) -> np.ndarray:
        return self.position + self.motion_offset

    def matrix(self) -> np.ndarray:
        """Object frame -> world, scale included."""
        return object_matrix(self.world_position(), self.rotation_deg, self.scale)

    def is_solid_part(self, ps: PartState) -> bool:
        if not self.present or self.held or not self.solid or not ps.solid:
            return False
        if not self.visible and not self.keeps_collision:
            return False
        return True

    def bump(self) -> None:
        self.shape_version += 1

    def update_mechanism_state(self, **changes) -> None:
        self.mechanism_state = replace(self.mechanism_state, **changes)


class World:
    """All object states of one running variant plus global scene state (time, holes, sky)."""

    def __init__(self, task: CompiledTask, bundle_dir: Path | None = None) -> None:
        self.task = task
        self.scene = task.scene
        self.bundle_dir = Path(bundle_dir) if bundle_dir else None
        self.asset_files = {a.id: a.file for a in task.assets}
        self.materials: dict[str, Material] = dict(task.scene.materials)
        self.objects: dict[str, ObjectState] = {}
        self.holes: list[tuple[np.ndarray, np.ndarray]] = []  # (centre xyz, size xyz)
        self.blockers: list[tuple[tuple, tuple, tuple]] = []  # (position, size, rotation)
        self.day_night = task.scene.day_night
        self.sim_time = 0.0
        self.version = 0  # bumped when objects are added or removed or ground changes
        self._next_index = 1
        self._watchers: list[set[str]] = []
        self._boxes: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # object id -> bounds (`aabb`)
        self._reboxed = self.watch()
        self._selections: dict[Callable, Callable[[], list[ObjectState]]] = {}  # `selection`
        for spec in task.scene.objects:
            self.add(spec)
        # every object assigned since the world was loaded (never emptied): the rest are as the scene
        # declares them, which lets a renderer carry their actors over from an equal world (render_reuse)
        self.touched: set[str] = self.watch()

    # --- objects -------------------------------------------------------------------------
    def add(self, spec: SceneObject) -> ObjectState:
        if spec.id in self.objects:
            raise BundleError(f"duplicate object id {spec.id!r}")
        for p in spec.parts:
            if p.material not in self.materials:
                raise BundleError(f"object {spec.id!r} part {p.id!r}: unknown material {p.material!r}")
        parts = {
            p.id: PartState(p, tuple(p.position), tuple(p.rotation_deg), p.material, p.solid)
            for p in spec.parts
        }
        st = ObjectState(
            spec=spec,
            index=self._next_index,
            position=np.array(spec.position, dtype=float),
            rotation_deg=np.array(spec.rotation_deg, dtype=float),
            scale=np.array(spec.scale, dtype=float),
            parts=parts,
            visible=spec.visible,
            solid=spec.solid and not _liquid(spec),
            lit=spec.lit,
            mass_kg=spec.mass_kg if spec.dynamic else 0.0,
        )
        st.watchers = self._watchers
        for ps in parts.values():
            ps.owner = st
        if spec.open:
            st.open_frac = st.door_target = 1.0
        st.door_speed = 1.0 / max(spec.open_time_s, 1e-3)
        self._next_index += 1
        self.objects[spec.id] = st
        self.version += 1
        return st

    def watch(self) -> set[str]:
        """A set that collects the ids of the objects whose state is assigned from now on: a consumer
        (physics, the renderer) redoes its work for those only, emptying the set as it catches up."""
        s: set[str] = set()
        self._watchers.append(s)
        return s

    def selection(self, pred: Callable[[ObjectState], bool]) -> Callable[[], list[ObjectState]]:
        """The objects for which `pred` holds, in world order, kept up to date as objects change:
        `pred` may read only the object's own state (what its assignments change).  For per-tick
        loops that concern a few objects of hundreds (mechanisms, one-way solids); one per `pred`."""
        if pred in self._selections:
            return self._selections[pred]
        changed = self.watch()
        state: list = [-1, []]  # world version, the objects

        def objects() -> list[ObjectState]:
            if state[0] != self.version:
                state[0], state[1] = self.version, [st for st in self.objects.values() if pred(st)]
                changed.clear()
            elif changed:
                ids = {st.id for st in state[1]}
                for oid in changed:
                    st = self.objects.get(oid)
                    if st is not None and pred(st):
                        ids.add(oid)
                    else:
                        ids.discard(oid)
                changed.clear()
                state[1] = sorted((self.objects[o] for o in ids), key=lambda st: st.index)
            return state[1]

        self._selections[pred] = objects
        return objects

    def get(self, oid: str) -> ObjectState:
        try:
            return self.objects[oid]
        except KeyError:
            raise BundleError(f"unknown object {oid!r}") from None

    def part_world(self, st: ObjectState, ps: PartState) -> np.ndarray:
        return st.matrix() @ part_matrix(ps.part, ps.pose())

    def mesh(self, ps: PartState):
        return part_mesh(ps.part, self.bundle_dir, self.asset_files)

    def aabb(self, st: ObjectState) -> tuple[np.ndarray, np.ndarray]:
        """Current world bounds of an object (from its live pose; kept until the object changes)."""
        if self.objects.get(st.id) is not st:  # a copy outside the world (a pose being measured)
            return self._bounds(st)
        if self._reboxed:
            for oid in self._reboxed:
                self._boxes.pop(oid, None)
            self._reboxed.clear()
        box = self._boxes.get(st.id)
        if box is None:
            box = self._boxes[st.id] = self._bounds(st)
        return box[0].copy(), box[1].copy()

    def _bounds(self, st: ObjectState) -> tuple[np.ndarray, np.ndarray]:
        pts = []
        for ps in st.parts.values():
            lo, hi = self.mesh(ps).bounds
            pts.append((self.part_world(st, ps) @ np.c_[box_corners(lo, hi), np.ones(8)].T).T[:, :3])
        if not pts:
            p = st.world_position()
            return p.copy(), p.copy()
        a = np.vstack(pts)
        return a.min(axis=0), a.max(axis=0)

    def material(self, name: str) -> Material:
        try:
            return self.materials[name]
        except KeyError:
            raise BundleError(f"unknown material {name!r}") from None

    # --- lighting and time ---------------------------------------------------------------
    def daylight(self) -> tuple[float, float, float]:
        """(sun azimuth deg, sun elevation deg, daylight factor 0..1) at the current time.

        Without a sun (indoor scenes) the factor is 1 (fully "day": normal sky colour and
        ambient) unless a day-night cycle drives it; the renderer then simply has no sun light.
        """
        sun = self.scene.sun
        az = sun.azimuth_deg if sun else 135.0
        el = sun.elevation_deg if sun else 50.0
        dn = self.day_night
        if dn is None or dn.period_s <= 0:
            return az, el, 1.0
        f = dn.phase + self.sim_time / dn.period_s
        s = float(np.sin(2 * np.pi * f))
        if dn.transition == "abrupt":
            return az, el, 1.0 if s > 0 else 0.0
        return az + 360.0 * (f - 0.25), el * s, float(np.clip(s * 4.0, 0.0, 1.0))

    def is_night(self) -> bool:
        return self.day_night is not None and self.daylight()[2] < 0.25

    def lamp_lit(self, st: ObjectState) -> bool:
        """Whether an object's emitters glow now."""
        if st.glow:
            return True
        if st.lit is None:
            return False
        if st.lit_override is not None:
            return st.lit_override
        if (
            self.day_night is not None
            and st.has_emitter
            and st.spec.lit is not None
            and "flicker" not in st.mechanism
        ):
            return self.is_night() or st.lit
        return st.lit
