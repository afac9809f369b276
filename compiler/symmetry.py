"""E538: an anomaly whose change is a symmetry of its target changes nothing an auditor can see.

A round bin turned about its axis, a two-bladed propeller jumping by 180°, a cross-bladed fan by
90°, a plain wheel frozen on its axle, a box crate turned over: the perturbed world holds the
change, yet every view of it is the clean one, and no plan or auditor can find it.  The
self-check reports such a task as an *invisible change* after running it; this check refuses it
at compile time, where the author can fix it.

What is compared is the target's appearance: every part's shape, size and material at its posed
vertices (boxes and wedges by their corners, round shapes by rings of points 5° apart).  Only
certain cases are refused: a part whose look a turn could change without moving its vertices (a
mesh, a bold pattern such as bricks or stripes) makes the check give up, and so does an object
that carries others (turning a square table turns what stands on it).  Fine grain and noise
textures do not count: turned, their pixels differ by less than the self-check's pixel rule
notices, as an auditor's eye would.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from wac.bundle import model as B
from wac.bundle.transforms import object_to_world, part_to_object
from wac.compiler.anomalies import Lowered
from wac.compiler.assemble import Built
from wac.compiler.diagnostics import Collector

RING = 72  # points per circle: round shapes look the same turned by any multiple of 5°
TOL_M = 0.002
# patterns a turn or a mirror cannot be told by: fine, low-contrast grain and noise (their pixels
# differ by less than the pixel rule's dE 10); bricks, tiles, checks and stripes show their turn
FINE_TEXTURES = frozenset({"none", "grain", "noise"})
SPIN_PROBE_DEG = 5.0  # a spinning part that looks the same turned by this looks the same at any angle


@lru_cache(maxsize=1024)
def _outline(shape: str, size: tuple[float, float, float]) -> np.ndarray | None:
    """Points that pin down a part's shape in its own frame (base centre at the origin), or None
    for a shape whose look they cannot capture (a mesh)."""
    sx, sy, sz = size
    rx, ry = sx / 2, sy / 2
    a = np.radians(np.arange(RING) * (360.0 / RING))
    ring = np.stack([rx * np.cos(a), ry * np.sin(a)], axis=1)

    def at(z: float, scale: float = 1.0) -> np.ndarray:
        return np.column_stack([ring * scale, np.full(RING, z)])

    if shape == "box":
        return np.array([[x, y, z] for x in (-rx, rx) for y in (-ry, ry) for z in (0.0, sz)])
    if shape == "wedge":
        return np.array(
            [(-rx, -ry, 0), (rx, -ry, 0), (rx, ry, 0), (-rx, ry, 0), (rx, -ry, sz), (rx, ry, sz)], float
        )
    if shape == "cylinder":
        return np.vstack([at(0.0), at(sz)])
    if shape == "cone":
        return np.vstack([at(0.0), [[0.0, 0.0, sz]]])
    if shape in ("sphere", "capsule"):
        r = min(rx, ry) if shape == "capsule" else 0.0
        zs = (
            (0.0, r, sz - r, sz) if shape == "capsule" else tuple(sz * f for f in (0.0, 0.25, 0.5, 0.75, 1.0))
        )
        rows = [[[0.0, 0.0, 0.0]], [[0.0, 0.0, sz]]]
        for z in zs[1:-1]:
            if shape == "sphere":
                f = np.sqrt(max(0.0, 1.0 - ((z - sz / 2) / (sz / 2)) ** 2))
            else:
                f = 1.0
            rows.append(at(z, f))
        return np.vstack(rows)
    return None


def _spin_matrix(part: B.Part, angle_deg: float) -> np.ndarray:
    """Part frame -> part frame: the part's spin by `angle_deg` (about its axis through its centre)."""
    h = part.size[2] / 2.0
    a = np.radians(angle_deg)
    c, s = np.cos(a), np.sin(a)
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[part.spin.axis]
    r = np.eye(3)
    r[i, i], r[i, j], r[j, i], r[j, j] = c, -s, s, c
    m = np.eye(4)
    m[:3, :3] = r
    m[:3, 3] = np.array([0.0, 0.0, h]) - r @ np.array([0.0, 0.0, h])
    return m


def appearance(
    o: B.SceneObject,
    materials,
    position=None,
    rotation=None,
    scale=None,
    spin: dict[str, float] | None = None,
) -> list[tuple[tuple, np.ndarray]] | None:
    """(shape, size, material) and posed world points of every part of `o`, or None when the
    points cannot stand for the look (a mesh part, a bold pattern)."""
    out = []
    for p in o.parts:
        pts = _outline(p.shape, tuple(p.size))
        mat = materials.get(p.material)
        if pts is None or mat is None or (mat.texture or "none") not in FINE_TEXTURES:
            return None
        if spin and p.id in spin and p.spin is not None:
            m = _spin_matrix(p, spin[p.id])
            pts = pts @ m[:3, :3].T + m[:3, 3]
        local = part_to_object(pts, p.position, p.rotation_deg)
        world = object_to_world(
            local,
            o.position if position is None else position,
            o.rotation_deg if rotation is None else rotation,
            o.scale if scale is None else scale,
        )
        out.append(((p.shape, tuple(round(v, 4) for v in p.size), p.material, p.solid), world))
    return out


def _same_set(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    d = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=2)
    return bool((d.min(axis=1) <= TOL_M).all() and (d.min(axis=0) <= TOL_M).all())


def same_look(a, b) -> bool:
    """Whether two appearances match part for part (any part may stand in for an identical one)."""
    if a is None or b is None or len(a) != len(b):
        return False
    free = list(range(len(b)))
    for key, pts in a:
        hit = next((j for j in free if b[j][0] == key and _same_set(pts, b[j][1])), None)
        if hit is None:
            return False
        free.remove(hit)
    return True


def _carries_others(built: Built, oid: str) -> bool:
    """Whether anything rests on or is attached to the object (it moves with it)."""
    return any(o.support == oid or o.attached_to == oid for o in built.objects.values())


def _pose_unchanged(built: Built, e: B.SetPose, materials) -> bool:
    o = built.objects.get(e.target)
    if o is None or _carries_others(built, o.id):
        return False
    return same_look(appearance(o, materials), appearance(o, materials, e.position, e.rotation_deg, e.scale))


def _animation_unchanged(built: Built, e: B.SetAnimation, materials) -> float | None:
    """The angle by which the animated parts look the same, when the change cannot show: the jump
    (`jump`) or any turn at all (`freeze`, `speed`)."""
    o = built.objects.get(e.target)
    if o is None:
        return None
    parts = [p.id for p in o.parts if p.spin is not None and (e.part is None or p.id == e.part)]
    if not parts:
        return None
    angle = float(e.value) if e.animation == "jump" and e.value is not None else SPIN_PROBE_DEG
    turned = appearance(o, materials, spin={pid: angle for pid in parts})
    return angle if same_look(appearance(o, materials), turned) else None


def _unseen(built: Built, e: B.Effect, materials) -> str | None:
    """Why effect `e` cannot show (None when it can, or when that is not certain)."""
    if isinstance(e, B.SetPose) and (e.rotation_deg is not None or e.scale is not None):
        if _pose_unchanged(built, e, materials):
            return f"`{e.target}` looks exactly as it did: its shape is symmetric under the change"
    elif isinstance(e, B.SetAnimation):
        angle = _animation_unchanged(built, e, materials)
        if angle is not None and e.animation == "jump":
            return f"the turning parts of `{e.target}` look the same turned by {angle:g} deg"
        if angle is not None:
            return f"the turning parts of `{e.target}` look the same at every angle (round about their axis)"
    return None


def check_visible_change(built: Built, lowered: list[Lowered], materials, diag: Collector) -> None:
    """E538 for an anomaly whose every effect is a turn, mirror or animation change that leaves its
    target looking the same (an anomaly with any other effect is left to the self-check)."""
    for low in lowered:
        if not low.effects or not all(isinstance(e, (B.SetPose, B.SetAnimation)) for e in low.effects):
            continue
        why = [_unseen(built, e, materials) for e in low.effects]
        if any(w is None for w in why):
            continue
        jump = any(isinstance(e, B.SetAnimation) and e.animation == "jump" for e in low.effects)
        spin = any(isinstance(e, B.SetAnimation) for e in low.effects)
        if jump:
            hint = "jump by an angle that is not a symmetry of the turning parts (45 deg for a cross of four blades)"
        elif spin:
            hint = "pick an animated object whose turning parts are not round about their axis (blades, spokes, sails)"
        else:
            hint = (
                low.spec.if_invisible
                or "pick an object whose look the change alters, or change it another way"
            )
        diag.error(
            "E538", f"`{low.spec.name}` cannot be seen: {why[0]}, so no view can show it", low.span, hint
        )
