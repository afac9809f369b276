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
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer

SCHEMA_VERSION = "wac.bundle/1"

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
RGB = tuple[float, float, float]


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


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
    shape: Literal["box", "cylinder", "sphere", "capsule", "cone", "mesh"]
    size: Vec3  # bounding size before rotation: box (x, y, z); round shapes (2r, 2r, h)
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
    aabb_min: Vec3  # world-space bounds, for checks, coverage and metrics
    aabb_max: Vec3


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


class Ground(Model):
    material: str
    size: Vec2


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


class TriggerKind(StrEnum):
    always = "always"  # static: applied when the world loads
    revisit = "revisit"  # seen, then out of view >= away_s or moved >= leave_m; fires while unseen
    look_away = "look_away"  # fires on the seen -> out-of-view transition
    leave = "leave"  # agent came within enter_m, then went beyond exit_m
    after = "after"  # at sim time after_s, deferred while the target is in view
    every = "every"  # toggles on and off every period_s
    beyond = "beyond"  # active while the agent is farther than distance_m
    within = "within"  # active while the agent is nearer than distance_m
    contact = "contact"  # on the agent's contact with the target
    interact = "interact"  # when the agent interacts with the target


class Trigger(Model):
    kind: TriggerKind = TriggerKind.always
    away_s: float | None = None
    leave_m: float | None = None
    seen_within_m: float | None = None
    enter_m: float | None = None
    exit_m: float | None = None
    after_s: float | None = None
    period_s: float | None = None
    distance_m: float | None = None
    repeat: bool = False  # revisit/look_away/leave: re-arm and toggle each time
    only_unseen: bool = True  # existence/attribute changes happen only out of view


class Effect(Model):
    """One primitive change the runtime applies to the perturbed world.

    `kind` selects which fields matter (see docs/bundle.md):
      set_pose        target, position, rotation_deg, scale          (whole object)
      set_part_pose   target, part, position, rotation_deg            (one part)
      set_solid       target, [part], solid
      add_object      object                                          (a full SceneObject)
      remove_object   target
      set_visible     target, visible, [casts_shadow], [keeps_collision]
      set_render      target, render: xray | cull | flip_normals | lod_proxy, [normal]
      set_material    target, [part], material (name in scene.materials)
      set_shadow      target, casts_shadow, [shadow_offset]
      set_light       target, lit (emitters glow), illuminates (light reaches the scene)
      set_physics     target, [mass_kg], [restitution], [friction], [impulse], [torque_deg];
                      `impulse` is in N s, world frame, except under a contact trigger where +x
                      points from the agent to the target (horizontal) and +z up; `torque_deg`
                      tips the object about the horizontal axis across that direction
      set_motion      target, motion: drift | tremble, axis, range_m, speed_m_s, amplitude_m
      set_mechanism   target, mechanism: ghost | autoclose | delay | speed | jam | dead |
                      through_walls | one_way (with `normal`: the world-frame side it can
                      be entered from), value
      set_animation   target, animation: freeze | speed | jump, value, [period_s]
      set_day_night   period_s, transition
      set_flicker     target, period_s
      add_hole        position, size                                  (ground loses collision)
      add_blocker     position, size, rotation_deg                    (invisible solid box)
      set_appearance  target, scale (distance-dependent size), [color]
    """

    kind: str
    target: str | None = None
    part: str | None = None
    position: Vec3 | None = None
    rotation_deg: Vec3 | None = None
    scale: Vec3 | None = None
    size: Vec3 | None = None
    solid: bool | None = None
    visible: bool | None = None
    casts_shadow: bool | None = None
    keeps_collision: bool | None = None
    render: str | None = None
    normal: Vec2 | None = None
    material: str | None = None
    color: RGB | None = None
    shadow_offset: Vec2 | None = None
    lit: bool | None = None
    illuminates: bool | None = None
    mass_kg: float | None = None
    restitution: float | None = None
    friction: float | None = None
    impulse: Vec3 | None = None
    torque_deg: float | None = None
    motion: str | None = None
    axis: Vec3 | None = None
    range_m: float | None = None
    speed_m_s: float | None = None
    amplitude_m: float | None = None
    mechanism: str | None = None
    animation: str | None = None
    value: float | None = None
    period_s: float | None = None
    transition: str | None = None
    object: SceneObject | None = None


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
    schema_version: Literal["wac.bundle/1"] = SCHEMA_VERSION
    id: str
    source: str  # task file, relative to the project root
    scene: Scene
    exploration: Exploration
    anomalies: tuple[Anomaly, ...]
    assets: tuple[Asset, ...] = ()
    meta: TaskMeta


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
