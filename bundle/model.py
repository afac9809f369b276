"""The task bundle: the one contract between the compiler and everything downstream.

All lengths are metres, angles degrees, times seconds, masses kilograms.  The world is
right-handed and z-up: x east, y north; a yaw of 0 deg faces +x and positive yaw turns
counter-clockwise seen from above.  Objects and parts are placed by the centre of their
base (the bottom of their bounding box before rotation), so a box at z = 0 stands on the
ground.  The models are frozen and reject unknown fields; `schemas/` holds the JSON Schema
generated from them (`wac schema`), and every emitted bundle is validated against it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, ClassVar, Literal, get_args

from pydantic import ConfigDict, Field, model_serializer, model_validator

from wac.bundle.base import Model, require_kind
from wac.bundle.triggers import (  # noqa: F401  (re-exported: the bundle's models are read from here)
    ALWAYS,
    TRIGGER_DEFAULTS,
    TRIGGER_TYPES,
    AfterTrigger,
    AlwaysTrigger,
    BeyondTrigger,
    ContactTrigger,
    EveryTrigger,
    InteractTrigger,
    LeaveTrigger,
    LookAwayTrigger,
    RevisitTrigger,
    Trigger,
    TriggerBase,
    TriggerDefaults,
    TriggerKind,
    WithinTrigger,
    new_trigger,
    upgrade_trigger_v1,
)

SCHEMA_VERSION = "wac.bundle/2"  # /2: the trigger is a union of one model per kind (/1: one flat model)

# What the agent climbs, declared once for the compiler's checks and the runtime's physics: an edge
# of a walkable object (a stair) up to this high, and slopes (a ramp) up to this steep.
AGENT_STEP_M = 0.25
AGENT_SLOPE_DEG = 35.0

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
RGB = tuple[float, float, float]


# --- materials and geometry -------------------------------------------------------------


class Material(Model):
    """A surface: base colour (sRGB components scaled to 0-1), PBR roughness/metallic, opacity, emission."""

    name: str
    color: RGB
    roughness: float = 0.7
    metallic: float = 0.0
    opacity: float = 1.0
    emissive: RGB = (0.0, 0.0, 0.0)
    texture: str | None = None  # procedural pattern name: "grain", "brick", "tiles", "checker", …
    category: str = "generic"  # wood, metal, stone, glass, fabric, … (material anomalies compare these)


class Hinge(Model):
    """A part that swings about a vertical axis through `pivot` (part frame) when opened."""

    pivot: Vec2
    swing_deg: float = 90.0


class Emitter(Model):
    """A part that is a light source (a bulb, a lantern flame) while its object is lit."""

    intensity: float = 1.0
    range_m: float = 8.0
    color: RGB = (1.0, 0.9, 0.7)


class Spin(Model):
    """A continuous rotation of a part about one of its local axes (fan, windmill, wheel)."""

    rate_deg_s: float
    axis: Literal["x", "y", "z"] = "z"


class Part(Model):
    """One rigid piece of an object, in the object's frame."""

    id: str
    shape: Literal["box", "cylinder", "sphere", "capsule", "cone", "wedge", "mesh"]
    # bounding size before rotation: box and wedge (x, y, z); round shapes (2r, 2r, h).  A wedge is
    # a box cut by the plane through its bottom -x edge and its top +x edge: a ramp rising to +x.
    size: Vec3
    mesh: str | None = None  # asset id (content hash) when shape == "mesh"
    position: Vec3 = (0.0, 0.0, 0.0)  # centre of the part's base, object frame
    rotation_deg: Vec3 = (0.0, 0.0, 0.0)  # yaw, pitch, roll about the base centre
    material: str
    solid: bool = True
    hinge: Hinge | None = None
    emitter: Emitter | None = None
    spin: Spin | None = None


class Interaction(StrEnum):
    open = "open"
    toggle = "toggle"
    push = "push"
    pick_up = "pick_up"


class SceneObject(Model):
    id: str
    name: str  # human name, used in rubrics ("grain sack")
    synonyms: tuple[str, ...] = ()
    prefab: str | None = None  # prefab or primitive it was built from
    kind: str = "object"  # semantic kind tag: furniture, container, vegetation, …
    era: str = "any"
    tags: tuple[str, ...] = ()
    position: Vec3  # base centre in world space
    rotation_deg: Vec3 = (0.0, 0.0, 0.0)  # yaw, pitch, roll
    scale: Vec3 = (1.0, 1.0, 1.0)
    parts: tuple[Part, ...]
    solid: bool = True
    dynamic: bool = False
    mass_kg: float = 0.0  # 0 for static bodies
    support: str | None = None  # id of the object it rests on; None = the ground
    attached_to: str | None = (
        None  # set into or fixed to this object (a window in a wall): may touch or overlap it
    )
    interactions: tuple[Interaction, ...] = ()
    lit: bool | None = None  # None: has no light; else whether its emitters are on
    open: bool | None = None  # None: cannot open; else initial state
    open_time_s: float = 1.0
    visible: bool = True
    liquid_depth_m: float | None = None  # water or a pit: the agent sinks this deep into it
    upright: bool = True  # has a natural up side (inverting or tilting it is a defect)
    # the agent walks on its top (ramps, stairs): it steps onto it and climbs its slopes
    walkable: bool = False
    # a ceiling or roof: cameras that cut away (overview shots) leave it out to show what is under it;
    # the agent's camera always draws it
    cutaway: bool = False
    aabb_min: Vec3  # world-space bounds, for checks, coverage and metrics
    aabb_max: Vec3

    @model_serializer(mode="wrap")
    def _omit_defaults(self, handler):
        """Objects that are neither walkable nor cut away serialise exactly as before those fields
        existed."""
        d = handler(self)
        for key in ("walkable", "cutaway"):
            if not getattr(self, key):
                d.pop(key, None)
        return d


# --- scene ---------------------------------------------------------------------------------


class SceneType(StrEnum):
    indoor = "indoor"
    urban = "urban"
    historical = "historical"
    industrial = "industrial"
    natural = "natural"


class Sun(Model):
    azimuth_deg: float = 135.0  # compass-free: measured like yaw, from +x counter-clockwise
    elevation_deg: float = 50.0
    intensity: float = 1.0
    color: RGB = (1.0, 0.97, 0.92)


class PointLight(Model):
    id: str
    position: Vec3
    color: RGB = (1.0, 0.9, 0.7)
    intensity: float = 1.0
    range_m: float = 8.0
    on: bool = True


class DayNight(Model):
    """A day-night cycle: the sun circles once per `period_s`; lamps light up at dusk."""

    period_s: float
    transition: Literal["gradual", "abrupt"] = "gradual"
    phase: float = 0.25  # fraction of the period at t = 0 (0.25 = noon)


class Terrain(Model):
    """Uneven ground: a heightfield of value noise, the same from the same seed everywhere
    (`wac.bundle.terrain` computes it for the compiler, the physics and the renderer)."""

    kind: Literal["heightfield"] = "heightfield"
    seed: int
    amplitude_m: float  # heights run from -amplitude to +amplitude
    scale_m: float  # size of the largest hills


class Ground(Model):
    material: str
    size: Vec2
    terrain: Terrain | None = None  # None: flat at z = 0

    @model_serializer(mode="wrap")
    def _flat_as_before(self, handler):
        """Flat ground serialises exactly as before terrain existed."""
        d = handler(self)
        if self.terrain is None:
            d.pop("terrain", None)
        return d


class Fog(Model):
    """Distance fog: a pixel at depth d takes the fog colour by f = (d - start) / (end - start)
    (linear, clamped) or f = 1 - exp(-density * d) (exponential); the sky is all fog."""

    color: RGB | None = None  # None: the sky colour of the moment (day or night)
    density: float | None = None
    start_m: float = 0.0
    end_m: float | None = None


class Tint(Model):
    """A colour mixed into every frame: rgb = rgb * (1 - strength) + color * strength."""

    color: RGB
    strength: float = 0.3


class Benign(Model):
    """A deliberate oddity of the clean scene that checks and rubrics treat as normal."""

    object: str
    reason: str


class Environment(Model):
    """The environment a scene belongs to (the paper's 13 environments comprise 27 scenes)."""

    name: str
    coverage_m: float | None = None  # App. E distance limit for this environment; None: by scene type


class Scene(Model):
    name: str
    description: str
    scene_type: SceneType
    era: str = "any"
    ground: Ground
    sky_color: RGB = (0.62, 0.74, 0.88)
    ambient: float = 0.35
    sun: Sun | None = Sun()
    day_night: DayNight | None = None
    lights: tuple[PointLight, ...] = ()
    materials: dict[str, Material]
    objects: tuple[SceneObject, ...]
    benign: tuple[Benign, ...] = ()
    fog: Fog | None = None
    tint: Tint | None = None
    environment: Environment | None = None

    @model_serializer(mode="wrap")
    def _without_unset_atmosphere(self, handler):
        """Scenes without fog, tint or environment serialise exactly as before those fields existed."""
        data = handler(self)
        for key in ("fog", "tint", "environment"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


# --- exploration ---------------------------------------------------------------------------


class Pose(Model):
    position: Vec2
    yaw_deg: float = 0.0
    pitch_deg: float = 0.0  # positive looks down, as the look tool


class Exploration(Model):
    bounds: tuple[Vec2, ...]  # polygon, counter-clockwise, not closed
    start: Pose
    budget_actions: int = 40
    agent_radius_m: float = 0.3
    eye_height_m: float = 1.6


# --- the anomaly ---------------------------------------------------------------------------


class EffectBase(Model):
    """One primitive change the runtime applies to the perturbed world (see docs/bundle.md, §5).

    `Effect` is the union of the subclasses below, told apart by `kind`; each declares exactly the
    fields its kind takes, so a misspelt kind or a field of another kind is rejected when the
    bundle is read, not when a trigger fires.  Every subclass needs a runtime apply function
    (`wac.runtime.effects.APPLY`); tests/taxonomy/test_registry_consistency.py holds them together.
    Optional fields default to None (omitted from task.json); `kind` is always written.
    """

    model_config = ConfigDict(json_schema_extra=require_kind)

    kind: str

    @model_serializer(mode="wrap")
    def _always_kind(self, handler):
        data = handler(self)
        data["kind"] = self.kind  # task.json leaves out defaults; the tag must stay
        return data


class _Untargeted:
    """Mixin for effects on the world rather than one object: `target` reads None."""

    target: ClassVar[None] = None


class SetPose(EffectBase):
    """Move, turn or rescale the whole object (absolute values, world frame); a negative scale
    component mirrors it."""

    kind: Literal["set_pose"] = "set_pose"
    target: str
    position: Vec3 | None = None
    rotation_deg: Vec3 | None = None
    scale: Vec3 | None = None


class SetPartPose(EffectBase):
    """Move or turn one part, in the object's frame."""

    kind: Literal["set_part_pose"] = "set_part_pose"
    target: str
    part: str
    position: Vec3 | None = None
    rotation_deg: Vec3 | None = None


class SetSolid(EffectBase):
    """Remove (or restore) the collision of the object or one part, keeping its look."""

    kind: Literal["set_solid"] = "set_solid"
    target: str
    part: str | None = None
    solid: bool


class AddObject(EffectBase):
    """Add a whole object to the world (`target` repeats its id)."""

    kind: Literal["add_object"] = "add_object"
    target: str | None = None
    object: SceneObject


class RemoveObject(EffectBase):
    """Remove the object (look and collision).  `keep_in_place`: objects that then stay exactly where
    they are instead of being simulated (what the removed object held up)."""

    kind: Literal["remove_object"] = "remove_object"
    target: str
    keep_in_place: tuple[str, ...] = ()


class SetVisible(EffectBase):
    """Stop drawing the object; when hidden it keeps its shadow / collision only as the flags say
    (default False)."""

    kind: Literal["set_visible"] = "set_visible"
    target: str
    visible: bool | None = None
    casts_shadow: bool | None = None
    keeps_collision: bool | None = None


RenderMode = Literal["xray", "cull", "flip_normals", "lod_proxy"]


class SetRender(EffectBase):
    """xray: drawn over occluders; cull: not drawn while the camera is on the side the horizontal
    `normal` points to (default +x); flip_normals: only back faces drawn; lod_proxy: drawn as a
    flat-coloured bounding box."""

    kind: Literal["set_render"] = "set_render"
    target: str
    render: RenderMode
    normal: Vec2 | None = None


class SetMaterial(EffectBase):
    """Give the object (or one part) a material named in `scene.materials`."""

    kind: Literal["set_material"] = "set_material"
    target: str
    part: str | None = None
    material: str


class SetShadow(EffectBase):
    """Stop casting a shadow, or cast it displaced by `shadow_offset` (x, y metres)."""

    kind: Literal["set_shadow"] = "set_shadow"
    target: str
    casts_shadow: bool | None = None
    shadow_offset: Vec2 | None = None


class SetLight(EffectBase):
    """`lit`: whether its emitters glow (every part glows on an object without emitters);
    `illuminates`: whether its light reaches the scene."""

    kind: Literal["set_light"] = "set_light"
    target: str
    lit: bool | None = None
    illuminates: bool | None = None


class SetPhysics(EffectBase):
    """Change the physical response.  `impulse` is in N s, world frame, except under a contact
    trigger where +x points from the agent to the target (horizontal) and +z up; `torque_deg`
    tips the object about the horizontal axis across that direction."""

    kind: Literal["set_physics"] = "set_physics"
    target: str
    mass_kg: float | None = None
    restitution: float | None = None
    friction: float | None = None
    impulse: Vec3 | None = None
    torque_deg: float | None = None


class SetMotion(EffectBase):
    """drift: slide back and forth along `axis` over +-`range_m` at `speed_m_s`; tremble: jitter
    with `amplitude_m`."""

    kind: Literal["set_motion"] = "set_motion"
    target: str
    motion: Literal["drift", "tremble"]
    axis: Vec3 | None = None
    range_m: float | None = None
    speed_m_s: float | None = None
    amplitude_m: float | None = None


Mechanism = Literal[
    "phantom", "ghost", "autoclose", "delay", "speed", "jam", "dead", "through_walls", "one_way"
]


class SetMechanism(EffectBase):
    """Change how a door or interactive object works (values: autoclose/delay seconds, speed factor,
    jam open fraction); one_way takes `normal`, the world-frame side it can be entered from."""

    kind: Literal["set_mechanism"] = "set_mechanism"
    target: str
    normal: Vec2 | None = None
    mechanism: Mechanism
    value: float | None = None


class SetAnimation(EffectBase):
    """freeze | speed (x `value`) | jump (`value` deg every `period_s`), on `part` or every spinning part."""

    kind: Literal["set_animation"] = "set_animation"
    target: str
    part: str | None = None
    animation: Literal["freeze", "speed", "jump"]
    value: float | None = None
    period_s: float | None = None


class SetDayNight(_Untargeted, EffectBase):
    """Replace the scene's day-night cycle; `period_s` is a whole day and night."""

    kind: Literal["set_day_night"] = "set_day_night"
    period_s: float | None = None
    transition: Literal["gradual", "abrupt"] | None = None


class SetFlicker(EffectBase):
    """Switch the lamp on and off every `period_s`."""

    kind: Literal["set_flicker"] = "set_flicker"
    target: str
    period_s: float | None = None


class AddHole(_Untargeted, EffectBase):
    """The ground loses collision over the `size` x/y rectangle centred on `position`."""

    kind: Literal["add_hole"] = "add_hole"
    position: Vec3
    size: Vec3


class AddBlocker(EffectBase):
    """An invisible solid box, `position` its base centre; `target` the object it stands in for."""

    kind: Literal["add_blocker"] = "add_blocker"
    target: str | None = None
    position: Vec3
    rotation_deg: Vec3 | None = None
    size: Vec3


class SetAppearance(EffectBase):
    """A visual-only change: scale about the base centre (distance-dependent size), optional colour."""

    kind: Literal["set_appearance"] = "set_appearance"
    target: str
    scale: Vec3 | None = None
    color: RGB | None = None


class SetFrameTint(_Untargeted, EffectBase):
    """A translucent colour drawn over every rendered frame (a corrupted frame): rgb = rgb * (1 -
    strength) + color * strength, on top of the scene's own `tint`."""

    kind: Literal["set_frame_tint"] = "set_frame_tint"
    color: RGB
    strength: float = Field(gt=0.0, lt=1.0)


Effect = Annotated[
    SetPose
    | SetPartPose
    | SetSolid
    | AddObject
    | RemoveObject
    | SetVisible
    | SetRender
    | SetMaterial
    | SetShadow
    | SetLight
    | SetPhysics
    | SetMotion
    | SetMechanism
    | SetAnimation
    | SetDayNight
    | SetFlicker
    | AddHole
    | AddBlocker
    | SetAppearance
    | SetFrameTint,
    Field(discriminator="kind"),
]
# every variant, and each by its `kind` (the runtime's apply table is checked against these)
EFFECT_TYPES: tuple[type[EffectBase], ...] = get_args(get_args(Effect)[0])
EFFECT_KINDS: dict[str, type[EffectBase]] = {t.model_fields["kind"].default: t for t in EFFECT_TYPES}


class Anomaly(Model):
    operator: str  # the language's operator, e.g. "float", "remove_collision"
    category: str  # taxonomy category id, e.g. "missing_support"
    family: str  # taxonomy family id, e.g. "static_physics"
    targets: tuple[str, ...]  # object ids the anomaly is about (may be new objects)
    params: dict[str, float | str | bool | tuple[float, ...] | tuple[str, ...]]
    trigger: Trigger
    effects: tuple[Effect, ...]
    anchor: bool = True  # the main anomaly; False for the extra ones of a multi-anomaly task
    # other objects the anomaly changes as a consequence, declared with `affects` (a barrel that
    # drops into an added hole); written only when the task declares some
    affects: tuple[str, ...] = ()

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler):
        d = handler(self)
        if not self.affects:
            d.pop("affects", None)
        return d


class Asset(Model):
    id: str  # sha256 of the file's bytes
    file: str  # path inside the bundle (assets/<hash>.<ext>)
    format: Literal["obj", "stl", "ply", "glb"]
    source: str  # path as written in the task source, relative to the project root


class TaskMeta(Model):
    hint: str  # anomaly-type hint shown to the auditor
    difficulty: Literal["easy", "medium", "hard"] | None = None
    tags: tuple[str, ...] = ()
    example: bool = False  # an in-context demonstration task, excluded from evaluation
    multi_anomaly: bool = False


class CompiledTask(Model):
    schema_version: Literal["wac.bundle/2"] = SCHEMA_VERSION
    id: str
    source: str  # task file, relative to the project root
    scene: Scene
    exploration: Exploration
    anomalies: tuple[Anomaly, ...]
    assets: tuple[Asset, ...] = ()
    meta: TaskMeta

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data):
        """A `wac.bundle/1` document (exported datasets, older builds) read as /2: see `upgrade_v1`."""
        if isinstance(data, dict) and data.get("schema_version") == "wac.bundle/1":
            data = upgrade_v1(data)
        return data


def upgrade_v1(task: dict) -> dict:
    """A /1 task document as /2: only the triggers changed (`upgrade_trigger_v1`)."""
    anomalies = [
        dict(an, trigger=upgrade_trigger_v1(an.get("trigger") or {})) for an in task.get("anomalies", ())
    ]
    return dict(task, schema_version=SCHEMA_VERSION, anomalies=anomalies)


# --- agent-visible context, rubric, self-check plan, manifest ------------------------------


class AgentContext(Model):
    """Everything the auditor is given: nothing here may reveal the target or the rubric."""

    task_id: str
    instructions: str
    scene_description: str
    # always empty (kept for the format): a per-task list of interactive objects can single out the
    # target; what can be used is in task.json (ground truth) and found by the agent by trying
    interactive_objects: tuple[str, ...]
    hint: str | None
    example: str | None  # in-context example id (taxonomy category), resolved by the runner
    budget_actions: int
    anomaly_count: int = 1


class RubricEntry(Model):
    target: str
    expected: str
    inspection: str
    category: str
    category_name: str
    family: str
    object_names: tuple[str, ...]  # human name and synonyms of the target object(s)
    defect_terms: tuple[str, ...]  # words an acceptable report uses for the defect
    dynamic: bool  # the judge requires the change and its condition to be described
    anchor: bool = True
    # a dynamic anomaly's change and the condition that produces it, spelled out (None when static)
    condition: str | None = None
    # an anomaly of no object (an invisible wall, a hole, the whole scene's lighting): what a finding
    # must locate instead of naming an object (None when `object_names` are given)
    place: str | None = None


class Rubric(Model):
    task_id: str
    entries: tuple[RubricEntry, ...]


class PlanStep(Model):
    action: Literal["move", "turn", "look", "interact", "wait", "mark"]
    args: dict[str, float | str] = {}
    caption: str = ""  # evidence caption, in the style of the paper's in-context examples


class SelfCheckPlan(Model):
    """Actions from the start pose that expose the anomaly, and what to measure."""

    task_id: str
    category: str
    observable: str  # e.g. "support_gap", "blocked_distance", "presence_before_after"
    expect: str  # what differs between clean and perturbed, in words
    steps: tuple[PlanStep, ...]
    actions_needed: int
    view_point: Vec2  # where the exposing view is taken from
    target_point: Vec3  # what it looks at
    # a multi-anomaly task: one plan per further anomaly (its index in `task.anomalies`), each from
    # the start pose; written only when there are some
    anomaly: int = 0
    others: tuple[SelfCheckPlan, ...] = ()

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler):
        d = handler(self)
        if not self.others:
            d.pop("others", None)
        if not self.anomaly:
            d.pop("anomaly", None)
        return d


class Manifest(Model):
    task_id: str
    version_id: str  # derived from the content hashes below
    wac_version: str
    files: dict[str, str]  # bundle-relative path -> sha256


AnyBundleFile = Annotated[CompiledTask | AgentContext | Rubric | SelfCheckPlan | Manifest, Field()]
