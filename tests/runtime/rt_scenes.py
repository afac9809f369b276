"""Test fixtures for the runtime: small CompiledTask scenes built directly from the bundle model."""

from __future__ import annotations

from wac.bundle.model import (
    Anomaly,
    CompiledTask,
    Emitter,
    Exploration,
    Ground,
    Hinge,
    Material,
    Part,
    Pose,
    Scene,
    SceneObject,
    SceneType,
    Sun,
    TaskMeta,
    new_trigger,
)

MATERIALS = {
    "grass": Material(name="grass", color=(0.35, 0.55, 0.25), texture="noise", category="vegetation"),
    "wood": Material(name="wood", color=(0.55, 0.35, 0.18), texture="grain", category="wood"),
    "stone": Material(name="stone", color=(0.6, 0.6, 0.62), texture="brick", category="stone"),
    "metal": Material(name="metal", color=(0.3, 0.3, 0.32), roughness=0.3, metallic=0.8, category="metal"),
    "red": Material(name="red", color=(0.8, 0.15, 0.12), category="plastic"),
    "glass": Material(name="glass", color=(0.7, 0.85, 0.9), opacity=0.3, roughness=0.1, category="glass"),
    "bulb": Material(name="bulb", color=(1.0, 0.9, 0.6), emissive=(0.0, 0.0, 0.0), category="glass"),
    "water": Material(name="water", color=(0.2, 0.4, 0.7), opacity=0.6, roughness=0.1, category="liquid"),
    "magenta": Material(name="magenta", color=(1.0, 0.0, 1.0), category="missing"),
}


def _aabb(position, parts, scale=(1, 1, 1)):
    """Rough world AABB (no rotation) for fixtures."""
    los, his = [], []
    for p in parts:
        sx, sy, sz = p.size
        x, y, z = p.position
        los.append((x - sx / 2, y - sy / 2, z))
        his.append((x + sx / 2, y + sy / 2, z + sz))
    lo = [position[i] + min(v[i] for v in los) * scale[i] for i in range(3)]
    hi = [position[i] + max(v[i] for v in his) * scale[i] for i in range(3)]
    return tuple(lo), tuple(hi)


def obj(oid, parts, position, name=None, **kw) -> SceneObject:
    lo, hi = _aabb(position, parts, kw.get("scale", (1, 1, 1)))
    return SceneObject(
        id=oid, name=name or oid, position=position, parts=tuple(parts), aabb_min=lo, aabb_max=hi, **kw
    )


def box(oid, size, position, material="stone", **kw) -> SceneObject:
    return obj(oid, [Part(id="body", shape="box", size=size, material=material)], position, **kw)


def chair(oid, position, yaw=0.0, **kw) -> SceneObject:
    legs = [
        Part(id=f"leg{i}", shape="box", size=(0.04, 0.04, 0.41), position=(x, y, 0), material="wood")
        for i, (x, y) in enumerate([(0.19, 0.19), (0.19, -0.19), (-0.19, 0.19), (-0.19, -0.19)])
    ]
    parts = legs + [
        Part(id="seat", shape="box", size=(0.44, 0.44, 0.04), position=(0, 0, 0.41), material="wood"),
        Part(id="back", shape="box", size=(0.04, 0.44, 0.45), position=(-0.2, 0, 0.45), material="wood"),
    ]
    return obj(oid, parts, position, name="chair", kind="furniture", rotation_deg=(yaw, 0, 0), **kw)


def fence(oid, position, length=4.0, yaw=0.0) -> SceneObject:
    n = int(length / 1.0) + 1
    posts = [
        Part(
            id=f"post{i}",
            shape="cylinder",
            size=(0.1, 0.1, 1.1),
            position=(0, -length / 2 + i * length / (n - 1), 0),
            material="wood",
        )
        for i in range(n)
    ]
    rails = [
        Part(id=f"rail{j}", shape="box", size=(0.05, length, 0.08), position=(0, 0, z), material="wood")
        for j, z in enumerate((0.4, 0.85))
    ]
    return obj(oid, posts + rails, position, name="fence", kind="structure", rotation_deg=(yaw, 0, 0))


def lamp(oid, position, lit=True) -> SceneObject:
    parts = [
        Part(id="pole", shape="cylinder", size=(0.12, 0.12, 2.6), material="metal"),
        Part(
            id="bulb",
            shape="sphere",
            size=(0.3, 0.3, 0.3),
            position=(0, 0, 2.6),
            material="bulb",
            emitter=Emitter(intensity=1.5, range_m=8.0),
        ),
    ]
    return obj(oid, parts, position, name="street lamp", kind="lamp", lit=lit, interactions=("toggle",))


def door(oid, position, open_time=1.0) -> SceneObject:
    """A door in a wall segment: frame posts plus a panel hinged at its -y edge (faces +x)."""
    parts = [
        Part(id="post_l", shape="box", size=(0.2, 0.2, 2.4), position=(0, -0.6, 0), material="stone"),
        Part(id="post_r", shape="box", size=(0.2, 0.2, 2.4), position=(0, 0.6, 0), material="stone"),
        Part(
            id="panel",
            shape="box",
            size=(0.06, 1.0, 2.1),
            position=(0, 0, 0),
            material="wood",
            hinge=Hinge(pivot=(0.0, -0.5), swing_deg=90.0),
        ),
    ]
    return obj(
        oid,
        parts,
        position,
        name="door",
        kind="door",
        open=False,
        open_time_s=open_time,
        interactions=("open",),
    )


def wall(oid, position, size=(0.2, 4.0, 2.5)) -> SceneObject:
    return box(oid, size, position, material="stone", name="wall", kind="structure")


def bin_(oid, position, mass=8.0) -> SceneObject:
    parts = [Part(id="body", shape="cylinder", size=(0.5, 0.5, 0.8), material="red")]
    return obj(
        oid, parts, position, name="bin", kind="container", dynamic=True, mass_kg=mass, interactions=("push",)
    )


def fan(oid, position) -> SceneObject:
    from wac.bundle.model import Spin

    parts = [
        Part(id="mast", shape="cylinder", size=(0.1, 0.1, 2.0), material="metal"),
        Part(
            id="blades",
            shape="box",
            size=(0.05, 1.2, 0.12),
            position=(0.1, 0, 1.94),
            material="wood",
            solid=False,
            spin=Spin(rate_deg_s=90.0, axis="x"),
        ),
    ]
    return obj(oid, parts, position, name="fan", kind="machine")


def pond(oid, position, size=(3.0, 3.0, 0.02), depth=0.8) -> SceneObject:
    """A flat sheet of water on the ground that the agent sinks `depth` into (as the compiler emits)."""
    parts = [Part(id="water", shape="box", size=size, material="water", solid=False)]
    return obj(
        oid,
        parts,
        (position[0], position[1], 0.0),
        name="pond",
        kind="water",
        solid=False,
        liquid_depth_m=depth,
    )


def task(
    objects,
    anomalies=(),
    start=((0.0, 0.0), 0.0),
    budget=40,
    sun=None,
    day_night=None,
    task_id="t",
    ground=(40.0, 40.0),
    lights=(),
) -> CompiledTask:
    sun = sun or Sun()
    scene = Scene(
        name="test",
        description="a test scene",
        scene_type=SceneType.urban,
        ground=Ground(material="grass", size=ground),
        sun=sun,
        day_night=day_night,
        materials=MATERIALS,
        objects=tuple(objects),
        lights=tuple(lights),
    )
    h = ground[0] / 2 - 1, ground[1] / 2 - 1
    return CompiledTask(
        id=task_id,
        source="tests/runtime",
        scene=scene,
        exploration=Exploration(
            bounds=((-h[0], -h[1]), (h[0], -h[1]), (h[0], h[1]), (-h[0], h[1])),
            start=Pose(position=start[0], yaw_deg=start[1]),
            budget_actions=budget,
        ),
        anomalies=tuple(anomalies),
        meta=TaskMeta(hint="test"),
    )


def anomaly(effects, targets=(), trigger=None, operator="test", category="test") -> Anomaly:
    return Anomaly(
        operator=operator,
        category=category,
        family="test",
        targets=tuple(targets),
        params={},
        trigger=trigger or new_trigger(),
        effects=tuple(effects),
    )


def showcase() -> CompiledTask:
    """A small street with one of everything, used for render checks and the bench."""
    objs = [
        chair("chair_1", (4.0, 1.0, 0.0), yaw=180.0),
        chair("chair_2", (4.0, -1.0, 0.0), yaw=180.0),
        fence("fence_1", (8.0, 0.0, 0.0), length=6.0),
        lamp("lamp_1", (5.0, 3.0, 0.0)),
        door("door_1", (6.0, -4.0, 0.0)),
        wall("wall_1", (6.0, -6.6, 0.0), size=(0.2, 4.0, 2.5)),
        bin_("bin_1", (3.0, -2.5, 0.0)),
        box("crate_1", (0.6, 0.6, 0.6), (5.0, -1.5, 0.0), material="wood", name="crate"),
        box("table_1", (1.0, 0.7, 0.75), (6.0, 2.0, 0.0), material="wood", name="table"),
        fan("fan_1", (7.0, 4.0, 0.0)),
        pond("pond_1", (3.0, 6.0)),
    ]
    return task(objs, start=((0.0, 0.0), 0.0), task_id="showcase")
