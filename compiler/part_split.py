"""Pass 6a, surface halves: `part upper_half` (or `lower_half`) names half of an object's surface.

Part-level anomalies (`swap_material`, `missing_texture`, `transparent` … `part P`) act on the
parts a prefab declares.  A defect on half a surface — the upper half of a wall turned to wood —
needs a part the prefab does not have, so when an anomaly names `upper_half` or `lower_half`
and the object has no part of that name, its main part (the largest by bounding volume) is
cut horizontally in two: `lower_half` below, `upper_half` above, the
same shape, material and frame, abutting exactly.  The cut is made in the clean world too, so
both worlds hold the same geometry and only the anomaly tells them apart.  A main part that is
not a box or cylinder, hinges, spins, emits light or is pitched or rolled is not cut (E614).
"""

from __future__ import annotations

import dataclasses

from wac.bundle import model as B
from wac.compiler import nodes as N
from wac.compiler import syntax as S
from wac.compiler.assemble import Built
from wac.compiler.diagnostics import Collector

HALVES = ("lower_half", "upper_half")
CUTTABLE = ("box", "cylinder")


def _main_part(o: B.SceneObject) -> B.Part:
    """The object's largest part by bounding volume (its body: a wall's slab, a tree's crown)."""
    return max(o.parts, key=lambda p: p.size[0] * p.size[1] * p.size[2])


def _why_not(p: B.Part) -> str | None:
    if p.shape not in CUTTABLE:
        return f"its main part `{p.id}` is a {p.shape}, not a box or cylinder"
    if p.hinge or p.spin or p.emitter:
        return f"its main part `{p.id}` moves or emits light"
    if abs(p.rotation_deg[1]) > 1e-9 or abs(p.rotation_deg[2]) > 1e-9:
        return f"its main part `{p.id}` is pitched or rolled, so it has no upper half"
    return None


def cut(o: B.SceneObject) -> B.SceneObject:
    """`o` with its main part cut into `lower_half` and `upper_half` (see the module docstring)."""
    p = _main_part(o)
    x, y, z = p.position
    half = p.size[2] / 2
    lower = p.model_copy(update={"id": "lower_half", "size": (p.size[0], p.size[1], half)})
    upper = p.model_copy(
        update={"id": "upper_half", "size": (p.size[0], p.size[1], half), "position": (x, y, z + half)}
    )
    parts = []
    for q in o.parts:
        parts += [lower, upper] if q is p else [q]
    return o.model_copy(update={"parts": tuple(parts)})


def split_halves(built: Built, anomalies: list[N.Anomaly], diag: Collector) -> Built:
    """`built` (the clean world) with the objects whose half an anomaly names cut in two; `built`
    itself is left as it was."""
    objects = dict(built.objects)
    cut_ids: list[str] = []
    for a in anomalies:
        c = a.clause("part")
        if c is None or not isinstance(c.value, S.Name) or c.value.text not in HALVES or len(a.operand) != 1:
            continue
        o = objects.get(a.operand[0].text)
        if o is None or any(q.id == c.value.text for q in o.parts):
            continue  # unknown objects are reported by lowering; a declared part is used as it is
        why = _why_not(_main_part(o))
        if why:
            diag.error(
                "E614",
                f"`{o.id}` cannot be cut into halves: {why}",
                c.span,
                "name one of its parts instead (`part …`), or pick an object with a plain box or cylinder body",
            )
            continue
        objects[o.id] = cut(o)
        cut_ids.append(o.id)
    if not cut_ids:
        return built
    scene = built.scene.model_copy(update={"objects": tuple(objects[q.id] for q in built.scene.objects)})
    return dataclasses.replace(built, scene=scene, objects=objects)
