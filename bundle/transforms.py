"""Rigid transforms shared by the compiler and the runtime (part of the bundle contract).

A rotation (yaw, pitch, roll) in degrees is R = Rz(yaw) @ Ry(pitch) @ Rx(roll), applied to
points in the local frame; objects and parts rotate about the centre of their base.  An
object's points are scaled first, then rotated, then translated to its position.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np


def rotation(yaw_deg: float, pitch_deg: float = 0.0, roll_deg: float = 0.0) -> np.ndarray:
    """The 3x3 rotation matrix, read-only: it is shared by every call with the same angles (a
    scene's objects repeat a few rotations many times)."""
    return _rotation(float(yaw_deg), float(pitch_deg), float(roll_deg))


@lru_cache(maxsize=4096)
def _rotation(yaw_deg: float, pitch_deg: float, roll_deg: float) -> np.ndarray:
    y, p, r = (math.radians(v) for v in (yaw_deg, pitch_deg, roll_deg))
    cy, sy, cp, sp, cr, sr = math.cos(y), math.sin(y), math.cos(p), math.sin(p), math.cos(r), math.sin(r)
    rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    rx = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    m = rz @ ry @ rx
    m.flags.writeable = False
    return m


def box_corners(size) -> np.ndarray:
    """The 8 corners of a part's bounding box in its own frame (base centre at the origin)."""
    sx, sy, sz = size
    xs, ys, zs = (-sx / 2, sx / 2), (-sy / 2, sy / 2), (0.0, sz)
    return np.array([[x, y, z] for x in xs for y in ys for z in zs])


def part_to_object(points: np.ndarray, position, rotation_deg) -> np.ndarray:
    return points @ rotation(*rotation_deg).T + np.asarray(position, dtype=float)


def object_to_world(points: np.ndarray, position, rotation_deg, scale) -> np.ndarray:
    return (points * np.asarray(scale, dtype=float)) @ rotation(*rotation_deg).T + np.asarray(
        position, dtype=float
    )


def part_corners_world(part, obj_position, obj_rotation, obj_scale) -> np.ndarray:
    local = part_to_object(box_corners(part.size), part.position, part.rotation_deg)
    return object_to_world(local, obj_position, obj_rotation, obj_scale)


def wedge_mesh(sx: float, sy: float, sz: float):
    """A ramp rising to +x as a trimesh: the box (sx, sy, sz) standing on its base centre, cut by
    the plane through its bottom -x edge and its top +x edge."""
    import trimesh

    x0, x1, y0, y1 = -sx / 2, sx / 2, -sy / 2, sy / 2
    v = [(x0, y0, 0), (x1, y0, 0), (x1, y1, 0), (x0, y1, 0), (x1, y0, sz), (x1, y1, sz)]
    f = [(0, 2, 1), (0, 3, 2), (1, 2, 5), (1, 5, 4), (0, 1, 4), (3, 5, 2), (0, 4, 5), (0, 5, 3)]
    return trimesh.Trimesh(vertices=np.asarray(v, dtype=float), faces=np.asarray(f), process=False)
