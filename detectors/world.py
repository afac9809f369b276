"""One world as the detectors read it: the scene's objects in their current state, with what the
runtime adds to a bundle's `SceneObject` (how each is drawn, its shadow, its mechanism, motion and
physics), the holes in the ground and the invisible colliders, the light of the scene.

`World.of(task, fired=…)` builds the clean world (`fired=()`) or the perturbed one with the given
anomalies' effects applied, as pure data: the same effects the runtime applies (runtime/effects.py),
read for what they make the world *be*, never for what the source says it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from wac.bundle import model as B
from wac.bundle.terrain import height_range
from wac.bundle.transforms import rotation
from wac.taxonomy.norms import Norm, norms

from .geometry import Rest, rest, world_bounds

# What an object rests on depends only on its own spec, the specs of what stands under it, the ground
# and the holes: the worlds of one scene's tasks share most of these (frozen models, equal by value),
# so a rest is reached once per build and process.
_RESTS: dict[tuple, Rest] = {}
_RESTS_MAX = 100_000


def _rest(spec: B.SceneObject, under: list[B.SceneObject], ground, holes: tuple, physical: bool) -> Rest:
    key = (spec, tuple(under), ground, holes, physical)
    hit = _RESTS.get(key)
    if hit is None:
        if len(_RESTS) >= _RESTS_MAX:
            _RESTS.clear()
        hit = _RESTS[key] = rest(spec, under, ground, holes, solid_only=physical)
        hit.contacts.setflags(write=False)  # shared between worlds
        hit.com.setflags(write=False)
    return hit


@dataclass(frozen=True)
class Look:
    """What the runtime does to an object beyond its `SceneObject` fields."""

    render: str | None = None  # xray | cull | flip_normals | lod_proxy
    render_normal: tuple[float, float] | None = None
    casts_shadow: bool = True
    shadow_offset: tuple[float, float] | None = None
    illuminates: bool = True  # a lamp's light reaches the scene
    appearance_scale: tuple[float, float, float] | None = None  # drawn at another size
    appearance_color: tuple[float, float, float] | None = None
    mechanism: tuple[tuple[str, float | None], ...] = ()  # (name, value)
    animation: tuple[str, float | None, float | None] | None = None  # (freeze|speed|jump, value, period)
    motion: B.SetMotion | None = None
    physics: B.SetPhysics | None = None
    flicker_s: float | None = None


@dataclass(frozen=True)
class Thing:
    """One object of the world: its bundle record (current pose, parts, flags), its norm and its look."""

    spec: B.SceneObject
    norm: Norm
    look: Look = Look()
    blocker: bool = False  # an invisible collider an anomaly added (`add_blocker`)

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def drawn(self) -> bool:
        return self.spec.visible and self.look.render != "hidden"

    @property
    def collides(self) -> bool:
        return self.spec.solid

    @property
    def label(self) -> str:
        return f"`{self.spec.id}` ({self.spec.name})"


@dataclass(frozen=True)
class World:
    """A world at one moment: its scene (settings, materials, lights), its things by id (sorted), the
    holes in the ground, the frame tint and day-night cycle; `reach` says whether a ground point is
    one the auditor can walk to (None: everywhere inside the bounds)."""

    scene: B.Scene
    exploration: B.Exploration | None
    things: dict[str, Thing]
    holes: tuple[tuple[float, float, float, float], ...] = ()
    frame_tint: B.Tint | None = None
    day_night: B.DayNight | None = None
    reach: object | None = field(default=None, compare=False)
    memo: dict = field(default_factory=dict, compare=False, repr=False)  # per-world caches (rests)

    @classmethod
    def of_scene(cls, scene: B.Scene, exploration: B.Exploration | None = None, reach=None) -> World:
        return cls(
            scene,
            exploration,
            {o.id: _thing(o) for o in sorted(scene.objects, key=lambda o: o.id)},
            day_night=scene.day_night,
            reach=reach,
        )

    @classmethod
    def of(cls, task: B.CompiledTask, fired: Iterable[int] = (), reach=None) -> World:
        """The task's world with the anomalies at the indexes `fired` in effect (none: the clean world)."""
        w = cls.of_scene(task.scene, task.exploration, reach)
        for i in fired:
            w = w.apply(task.anomalies[i].effects)
        return w

    def apply(self, effects: Iterable[B.Effect]) -> World:
        things = dict(self.things)
        holes = list(self.holes)
        tint, day = self.frame_tint, self.day_night
        for e in effects:
            if isinstance(e, B.AddHole):
                x, y, _ = e.position
                sx, sy, _ = e.size
                holes.append((x - sx / 2, y - sy / 2, x + sx / 2, y + sy / 2))
            elif isinstance(e, B.SetFrameTint):
                tint = B.Tint(color=e.color, strength=e.strength)
            elif isinstance(e, B.SetDayNight):
                base = day or B.DayNight(period_s=e.period_s or 600.0)
                day = base.model_copy(
                    update={k: v for k, v in (("period_s", e.period_s), ("transition", e.transition)) if v}
                )
            else:
                _apply_object(things, e)
        return replace(
            self,
            memo={},
            things=dict(sorted(things.items())),
            holes=tuple(holes),
            frame_tint=tint,
            day_night=day,
        )

    # --- queries -----------------------------------------------------------------------------
    @cached_property
    def objects(self) -> list[B.SceneObject]:
        return [t.spec for t in self.things.values()]

    def material(self, name: str) -> B.Material | None:
        return self.scene.materials.get(name)

    def boxes(self) -> tuple[list[Thing], np.ndarray, np.ndarray]:
        if "boxes" not in self.memo:
            things = list(self.things.values())
            lo = np.array([t.spec.aabb_min for t in things], dtype=float).reshape(-1, 3)
            hi = np.array([t.spec.aabb_max for t in things], dtype=float).reshape(-1, 3)
            self.memo["boxes"] = (things, lo, hi)
        return self.memo["boxes"]

    def near(self, t: Thing, gap: float) -> list[Thing]:
        """The other things whose bounds come within `gap` of `t`'s on every axis."""
        things, lo, hi = self.boxes()
        tlo, thi = np.asarray(t.spec.aabb_min) - gap, np.asarray(t.spec.aabb_max) + gap
        hit = np.all((lo <= thi) & (hi >= tlo), axis=1)
        own = self._index().get(t.spec.id)
        if own is not None:
            hit[own] = False
        return [things[i] for i in np.flatnonzero(hit)]

    def _index(self) -> dict[str, int]:
        """Object id -> its row in `boxes()` (kept per world)."""
        if "index" not in self.memo:
            self.memo["index"] = {x.spec.id: i for i, x in enumerate(self.boxes()[0])}
        return self.memo["index"]

    def _kept(self, kind: str, t: Thing, make):
        """`make(t.spec)`, kept per thing of this world (and for that very record)."""
        key = (kind, t.spec.id)
        got = self.memo.get(key)
        if got is None or got[0] is not t.spec:
            got = self.memo[key] = (t.spec, make(t.spec))
        return got[1]

    def _drawn_groups(self, name: str, key) -> dict[tuple, list[Thing]]:
        """The drawn things grouped by `key(thing)`, in world order (kept per world)."""
        if name not in self.memo:
            groups: dict[tuple, list[Thing]] = {}
            for x in self.things.values():
                if x.drawn:
                    groups.setdefault(key(x), []).append(x)
            self.memo[name] = groups
        return self.memo[name]

    def built_as(self, t: Thing) -> tuple:
        """What makes two things twins: their prefab (or name, for primitives) and each part's shape
        and size."""
        return self._kept(
            "built", t, lambda o: (o.prefab or o.name, tuple((p.shape, tuple(p.size)) for p in o.parts))
        )

    def built_alike(self, t: Thing) -> list[Thing]:
        """The drawn things built as `t` is (`built_as`), `t` among them, in world order."""
        return self._drawn_groups("built_alike", self.built_as).get(self.built_as(t), [])

    def near_alike(self, t: Thing, gap: float) -> list[Thing]:
        """`near(t, gap)` of the things built as `t` is (`built_alike`): its drawn twins near it."""
        things, lo, hi = self.boxes()
        index = self._index()
        alike = [x for x in self.built_alike(t) if x.spec.id != t.spec.id]
        if not alike:
            return []
        rows = [index[x.spec.id] for x in alike]
        tlo, thi = np.asarray(t.spec.aabb_min) - gap, np.asarray(t.spec.aabb_max) + gap
        hit = np.all((lo[rows] <= thi) & (hi[rows] >= tlo), axis=1)
        return [x for x, h in zip(alike, hit, strict=True) if h]

    def part_categories(self, t: Thing) -> dict[str, str | None]:
        """Part id -> the category of its material (None: no such material)."""

        def make(o) -> dict[str, str | None]:
            cats: dict[str, str | None] = {}
            for q in o.parts:
                m = self.material(q.material)
                cats.setdefault(q.id, m.category if m is not None else None)
            return cats

        return self._kept("part_categories", t, make)

    def alike(self, t: Thing) -> list[Thing]:
        """The other drawn things of the same prefab and name (what an observer takes for its kind)."""
        groups = self._drawn_groups("alike", lambda x: (x.spec.prefab, x.spec.name))
        return [x for x in groups.get((t.spec.prefab, t.spec.name), []) if x.id != t.id]

    def gap(self, t: Thing) -> float:
        """The gap under `t` as drawn; an object whose lowest point is down at the ground touches it
        (the quick answer for most of a scene, before any ray is cast)."""
        g = self.scene.ground
        lo = t.spec.aabb_min
        top = 0.0 if g.terrain is None else height_range(g, lo[:2], t.spec.aabb_max[:2])[1]
        if lo[2] <= top + 0.015 and not self.holes:
            return 0.0
        return self.rest(t).gap_m

    def rest(self, t: Thing, physical: bool = False) -> Rest:
        """What `t` rests on: as drawn (what the auditor sees), or as the physics has it (`physical`:
        solid parts onto solid surfaces, holes in the ground open)."""
        key = ("rest", t.id, physical)
        if key not in self.memo:
            things, blo, bhi = self.boxes()
            lo, hi = t.spec.aabb_min, t.spec.aabb_max
            hit = (
                (blo[:, 2] < hi[2])
                & (blo[:, 0] <= hi[0])
                & (bhi[:, 0] >= lo[0])
                & (blo[:, 1] <= hi[1])
                & (bhi[:, 1] >= lo[1])
            )
            under = [
                things[i].spec
                for i in np.flatnonzero(hit)
                if things[i].id != t.id and (things[i].collides if physical else things[i].drawn)
            ]
            holes = self.holes if physical else ()
            self.memo[key] = _rest(t.spec, under, self.scene.ground, holes, physical)
        return self.memo[key]

    def wall_between(self, a: Thing, b: Thing) -> bool:
        """Whether a drawn solid stands between two objects (a table in the next room)."""
        ca = (np.asarray(a.spec.aabb_min) + np.asarray(a.spec.aabb_max)) / 2
        cb = np.clip(ca, b.spec.aabb_min, b.spec.aabb_max)
        pts = ca + np.linspace(0.1, 0.9, 9)[:, None] * (cb - ca)
        pts[:, 2] = min(a.spec.aabb_max[2], b.spec.aabb_max[2]) * 0.5 + 0.05
        return any(
            x.id not in (a.id, b.id) and x.drawn and x.collides and inside_parts(x, pts).any()
            for x in self.near(a, float(np.linalg.norm(cb - ca)) + 0.1)
        )

    def reachable_near(self, point, within_m: float) -> bool:
        """Whether the auditor can stand within `within_m` (in plan) of `point`."""
        if self.reach is None:
            return True
        return bool(self.reach(point[0], point[1], within_m))


def inside_parts(x: Thing, pts: np.ndarray) -> np.ndarray:
    """Which points lie inside one of `x`'s solid parts (each part's box, in the part's own frame)."""
    out = np.zeros(len(pts), dtype=bool)
    o = x.spec
    scale = np.asarray(o.scale, dtype=float)
    # the points in the object's frame, unscaled
    local = ((np.asarray(pts, dtype=float) - np.asarray(o.position)) @ rotation(*o.rotation_deg)) / scale
    for p in o.parts:
        if not p.solid or p.shape not in ("box", "mesh", "cylinder", "wedge"):
            continue
        q = (local - np.asarray(p.position)) @ rotation(*p.rotation_deg)
        q[:, 2] -= p.size[2] / 2
        out |= np.all(np.abs(q) <= np.asarray(p.size) / 2 + 1e-6, axis=1)
    return out


def _thing(o: B.SceneObject, look: Look = Look(), blocker: bool = False) -> Thing:
    return Thing(o, norms().for_object(o.prefab, o.name, o.kind), look, blocker)


def _posed(o: B.SceneObject, **update) -> B.SceneObject:
    o = o.model_copy(update=update)
    lo, hi = world_bounds(o.parts, o.position, o.rotation_deg, o.scale)
    return o.model_copy(update={"aabb_min": lo, "aabb_max": hi})


def _apply_object(things: dict[str, Thing], e: B.Effect) -> None:
    """One effect on the things (the per-object variants; see runtime/effects.py for their meaning)."""
    if isinstance(e, B.AddObject):
        things[e.object.id] = _thing(e.object)
        return
    if isinstance(e, B.AddBlocker):
        n = sum(1 for t in things.values() if t.blocker)
        part = B.Part(id="body", shape="box", size=e.size, material="blocker")
        rot = e.rotation_deg or (0.0, 0.0, 0.0)
        lo, hi = world_bounds((part,), e.position, rot, (1.0, 1.0, 1.0))
        spec = B.SceneObject(
            id=f"#blocker{n + 1}",
            name="invisible collider",
            position=e.position,
            rotation_deg=rot,
            parts=(part,),
            visible=False,
            aabb_min=lo,
            aabb_max=hi,
        )
        things[spec.id] = Thing(spec, norms().kinds.get("object") or _thing(spec).norm, Look(), True)
        return
    t = things.get(e.target) if e.target else None
    if t is None:
        return
    o, look = t.spec, t.look
    if isinstance(e, B.RemoveObject):
        del things[e.target]
        return
    if isinstance(e, B.SetPose):
        o = _posed(
            o,
            position=e.position or o.position,
            rotation_deg=e.rotation_deg or o.rotation_deg,
            scale=e.scale or o.scale,
        )
    elif isinstance(e, B.SetPartPose):
        parts = tuple(
            p.model_copy(
                update={
                    "position": e.position or p.position,
                    "rotation_deg": e.rotation_deg or p.rotation_deg,
                }
            )
            if p.id == e.part
            else p
            for p in o.parts
        )
        o = _posed(o, parts=parts)
    elif isinstance(e, B.SetSolid):
        if e.part is None:
            parts = tuple(p.model_copy(update={"solid": e.solid}) for p in o.parts)
            o = o.model_copy(update={"solid": e.solid, "parts": parts})
        else:
            parts = tuple(p.model_copy(update={"solid": e.solid}) if p.id == e.part else p for p in o.parts)
            o = o.model_copy(update={"parts": parts, "solid": any(p.solid for p in parts)})
    elif isinstance(e, B.SetVisible):
        hidden = e.visible is False
        upd: dict = {}
        if e.visible is not None:
            upd["visible"] = e.visible
        keeps = e.keeps_collision if e.keeps_collision is not None else not hidden
        if hidden and not keeps:
            upd["solid"] = False
            upd["parts"] = tuple(p.model_copy(update={"solid": False}) for p in o.parts)
        o = o.model_copy(update=upd)
        shadow = e.casts_shadow if e.casts_shadow is not None else (not hidden and look.casts_shadow)
        look = replace(look, casts_shadow=shadow)
    elif isinstance(e, B.SetRender):
        look = replace(look, render=e.render, render_normal=e.normal)
    elif isinstance(e, B.SetMaterial):
        parts = tuple(
            p.model_copy(update={"material": e.material}) if e.part in (None, p.id) else p for p in o.parts
        )
        o = o.model_copy(update={"parts": parts})
    elif isinstance(e, B.SetShadow):
        look = replace(
            look,
            casts_shadow=look.casts_shadow if e.casts_shadow is None else e.casts_shadow,
            shadow_offset=e.shadow_offset or look.shadow_offset,
        )
    elif isinstance(e, B.SetLight):
        if e.lit is not None:
            o = o.model_copy(update={"lit": e.lit})
        if e.illuminates is not None:
            look = replace(look, illuminates=e.illuminates)
    elif isinstance(e, B.SetPhysics):
        if e.mass_kg is not None:
            o = o.model_copy(update={"mass_kg": e.mass_kg, "dynamic": True})
        look = replace(look, physics=e)
    elif isinstance(e, B.SetMotion):
        look = replace(look, motion=e)
    elif isinstance(e, B.SetMechanism):
        look = replace(look, mechanism=(*look.mechanism, (e.mechanism, e.value)))
    elif isinstance(e, B.SetAnimation):
        look = replace(look, animation=(e.animation, e.value, e.period_s))
    elif isinstance(e, B.SetFlicker):
        look = replace(look, flicker_s=e.period_s or 1.0)
    elif isinstance(e, B.SetAppearance):
        look = replace(look, appearance_scale=e.scale, appearance_color=e.color)
    things[o.id] = replace(t, spec=o, look=look)
