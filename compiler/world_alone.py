"""Passes 5 and 6c judged as the auditor sees one world (issue 27; `wac.detectors`).

The auditor never sees the clean twin, so the differential checks are not enough:

* pass 5, **the clean world holds no anomaly**: every detector runs on the clean scene (once per
  scene and build); a finding is an error at the object's declaration — E501 (floats), E502
  (interpenetrates), E504 (any other category).  `benign` excuses an oddity that is normal in this
  world, never a defect of physics (E505), and never one of the task's own category (E505 again,
  found once the anomalies are lowered: the auditor looking for that category would report it);
* pass 6c, **the perturbed world shows its anomaly on its own, and no other**: the category's
  detector must find each anomaly's target in the perturbed world (E550, with the detector's reason
  why not: a relocated chair that is still a usable chair, a boulder scaled among boulders that vary
  as much), and no detector may find anything the anomalies do not account for (E551: a loose barrel
  over a dug hole drops into it, a scaled crate now pierces the fence beside it).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from wac.bundle import model as B
from wac.compiler.anomalies import Lowered
from wac.compiler.assemble import Built
from wac.compiler.diagnostics import Collector
from wac.detectors import Finding, Timeline, World, detect
from wac.detectors.evident import Change, judge
from wac.taxonomy.registry import Category, registry

CODES = {Category.missing_support: "E501", Category.intersection: "E502"}


def _key(built: Built) -> tuple:
    if not built.task_local:
        return ("clean-findings", built.scene_key)
    local = tuple(sorted(built.objects[i].model_dump_json() for i in built.task_local))
    return ("clean-findings", built.scene_key, hash(local))


def clean_findings(built: Built, memo: dict | None) -> tuple[Finding, ...]:
    """What the detectors find in the clean world of a task (the scene's are found once per build)."""
    key = _key(built)
    if memo is not None and key in memo:
        return memo[key]
    found = tuple(detect(Timeline((World.of_scene(built.scene, built.exploration),))))
    if memo is not None:
        memo[key] = found
    return found


def _span(built: Built, f: Finding, default):
    for oid in f.objects:
        thing = built.things.get(oid)
        if thing is not None:
            return thing.span
    return default


def check_clean_world(built: Built, diag: Collector, span, memo: dict | None = None) -> None:
    """Pass 5: no detector finds anything in the clean world, but for a `benign` oddity that is no
    defect of physics."""
    benign = {b.object: b.reason for b in built.scene.benign}
    for f in clean_findings(built, memo):
        excused = [o for o in f.objects if o in benign]
        cat = registry().category(f.category.value)
        if excused and not f.physical:
            continue
        if excused:
            reason = f" ({benign[excused[0]]})" if benign[excused[0]] else ""
            diag.error(
                "E505",
                f"`benign {excused[0]}`{reason} cannot excuse a defect of physics ({cat.name.lower()}): "
                f"in the clean scene {f.evidence}",
                _span(built, f, span),
                "fix the scene so that it stands, rests and collides as it should; `benign` is for things "
                "that look odd but are normal",
            )
            continue
        code = CODES.get(f.category, "E504")
        diag.error(
            code,
            f"{f.evidence} in the clean scene"
            if code != "E504"
            else f"the clean scene holds an anomaly ({cat.name.lower()}): {f.evidence}",
            _span(built, f, span),
            _clean_hint(f),
        )


def _clean_hint(f: Finding) -> str:
    if f.category == Category.missing_support:
        if "attached to" in f.evidence and f.refs:
            return f"move it against `{f.refs[0]}` so that it touches it, or rest it on something"
        if f.refs:
            return f"rest it on that object (`on {f.refs[0]}`) or lower it by {f.measure:.2f} m"
        return "put it on the ground (drop the z coordinate) or rest it `on` another object it can stand on"
    if f.category == Category.intersection:
        return "move them apart (an `attached_to` fixing may sit at most 5 cm into its host)"
    tail = "" if f.physical else '; if it is normal in this world, mark it `benign OBJ reason "…"`'
    return "an auditor who finds it reports it and is marked wrong: fix the scene" + tail


# --- the perturbed world ------------------------------------------------------------------------


def _reach(grid) -> Callable[[float, float, float], bool]:
    """Whether the auditor can stand within `within` (in plan) of a point: a reachable grid cell."""
    ys, xs = np.nonzero(grid.reach)
    px = grid.x0 + (xs + 0.5) * grid.cell
    py = grid.y0 + (ys + 0.5) * grid.cell

    def reach(x: float, y: float, within: float) -> bool:
        if len(px) == 0:
            return False
        return bool(np.any((px - x) ** 2 + (py - y) ** 2 <= within * within))

    return reach


def check_evident(
    built: Built,
    lowered: list[Lowered],
    materials: dict[str, B.Material],
    grid,
    span_of,
    diag: Collector,
    memo: dict | None = None,
) -> None:
    """Pass 6c: each anomaly is found in the perturbed world by its category's detector (E550); nothing
    else is found there that the clean world did not already hold (E551) (`wac.detectors.evident`).
    `span_of(low)` is the anomaly statement's span."""
    scene = built.scene.model_copy(update={"materials": dict(materials)})
    clean = World.of_scene(scene, built.exploration, _reach(grid))
    changes = [
        Change(
            low.spec.name,
            Category(low.category),
            low.trigger,
            low.targets,
            low.effects,
            low.affects,
            tuple(o.id for o in low.new_objects),
        )
        for low in lowered
    ]
    for p in judge(clean, changes, clean_findings(built, memo)):
        low = lowered[p.index]
        if p.kind == "missing":
            diag.error("E550", p.message, span_of(low), _evident_hint(Category(low.category)))
        else:
            diag.error(
                "E551",
                p.message,
                span_of(low),
                "an auditor who reports it is marked wrong: change the anomaly (or the scene) so that it "
                "changes nothing else, or declare the consequence with `affects [OBJ]`",
            )


_HINTS = {
    Category.scale: "the auditor never sees the clean size: make it a size no such object has, or one far from "
    "the like objects beside it",
    Category.improper_configuration: "a configuration is a defect when the object could not hold it (upside "
    "down, leaning past what wear explains, balanced where it would topple) or could not serve in it "
    "(facing into a wall, standing on a table, its back to the table it serves)",
    Category.historical: "pick an object whose kind came into use after the scene's era",
    Category.operational_state: "show the process breaking: a twin beside it that works, or a change the "
    "auditor sees happen",
    Category.shadow_lighting: "a glow a lamp nearby explains is no defect: pick an object away from lamps or "
    "a colour no lamp gives",
    Category.abnormal_trajectory: "the response must be one no object of its kind gives: a mass far from "
    "its kind's, an impulse, a bounce",
    Category.material: "pick a material its kind is never made of",
    Category.missing_collision: "pick an object a person expects to stop them",
}


def _evident_hint(cat: Category) -> str:
    return (
        "the auditor never sees the clean world: the defect must show in the perturbed world alone; "
        + _HINTS.get(cat, "make the change one that shows on its own")
    )


def check_benign_category(built: Built, lowered: list[Lowered], diag: Collector, memo: dict | None) -> None:
    """E505: a `benign` oddity the detectors find in the clean world cannot be of the task's own
    category: the auditor looking for that category would report it."""
    benign = {b.object: b.reason for b in built.scene.benign}
    if not benign:
        return
    cats = {Category(low.category) for low in lowered}
    for f in clean_findings(built, memo):
        excused = [o for o in f.objects if o in benign]
        if not excused or f.physical or f.category not in cats:
            continue
        name = registry().category(f.category.value).name.lower()
        diag.error(
            "E505",
            f"`benign {excused[0]}` cannot excuse an oddity of the task's own category ({name}): in the "
            f"clean scene {f.evidence}, and an auditor looking for {name} would report it",
            built.things[excused[0]].span if excused[0] in built.things else lowered[0].span,
            "pick a task of another category on this scene, or fix the oddity in the scene",
        )
