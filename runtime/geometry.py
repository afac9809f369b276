"""Runtime geometry: part meshes (trimesh) and object/part transforms, shared by physics and render.

Conventions (bundle/model.py): z up, placement by the centre of the base, rotations given as
(yaw, pitch, roll) degrees applied as R = Rz(yaw) @ Ry(pitch) @ Rx(roll) about the base centre.
A yaw of 0 faces +x and positive yaw is counter-clockwise seen from above; a positive pitch tips
the +x side down.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh

from wac.bundle.model import Part
from wac.bundle.transforms import wedge_mesh
from wac.errors import BundleError

_ROTATIONS: dict[bytes, np.ndarray] = {}  # (yaw, pitch, roll) bytes -> rotation: poses repeat a lot
_ROTATIONS_MAX = 8192
_EYE4 = np.eye(4)


def rotation_matrix(rotation_deg) -> np.ndarray:
    """3x3 rotation for (yaw, pitch, roll) degrees: Rz(yaw) @ Ry(pitch) @ Rx(roll) (a new array)."""
    a = np.asarray(rotation_deg, dtype=float)
    key = a.tobytes()
    got = _ROTATIONS.get(key)
    if got is None:
        if len(_ROTATIONS) >= _ROTATIONS_MAX:
            _ROTATIONS.clear()
        got = _ROTATIONS[key] = _rotation(a)
    return got.copy()


def _rotation(rotation_deg: np.ndarray) -> np.ndarray:
    yaw, pitch, roll = np.radians(rotation_deg)
    cz, sz, cy, sy, cx, sx = (
        np.cos(yaw),
        np.sin(yaw),
        np.cos(pitch),
        np.sin(pitch),
        np.cos(roll),
        np.sin(roll),
    )
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    return rz @ ry @ rx


def euler_from_matrix(r: np.ndarray) -> tuple[float, float, float]:
    """Inverse of `rotation_matrix`: (yaw, pitch, roll) degrees."""
    pitch = np.arcsin(np.clip(-r[2, 0], -1.0, 1.0))
    if abs(np.cos(pitch)) > 1e-6:
        yaw = np.arctan2(r[1, 0], r[0, 0])
        roll = np.arctan2(r[2, 1], r[2, 2])
    else:  # gimbal lock: fold roll into yaw
        yaw = np.arctan2(-r[0, 1], r[1, 1])
        roll = 0.0
    return tuple(float(v) for v in np.degrees([yaw, pitch, roll]))


def transform(position=(0.0, 0.0, 0.0), rotation_deg=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0)) -> np.ndarray:
    """4x4 matrix T(position) @ R(rotation) @ S(scale)."""
    m = _EYE4.copy()
    m[:3, :3] = rotation_matrix(rotation_deg) * np.asarray(scale, dtype=float)[None, :]
    m[:3, 3] = position
    return m


def translation(v) -> np.ndarray:
    m = _EYE4.copy()
    m[:3, 3] = v
    return m


def axis_rotation(axis: str, angle_deg: float) -> np.ndarray:
    """4x4 rotation about a local x/y/z axis."""
    a = np.radians(angle_deg)
    c, s = np.cos(a), np.sin(a)
    m = np.eye(4)
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


@dataclass(frozen=True)
class PartPose:
    """A part's placement in its object's frame plus its live hinge and spin angles."""

    position: tuple[float, float, float]
    rotation_deg: tuple[float, float, float]
    hinge_deg: float = 0.0
    spin_deg: float = 0.0


def part_matrix(part: Part, pose: PartPose) -> np.ndarray:
    """Part frame -> object frame (unscaled), including hinge swing and spin."""
    m = transform(pose.position, pose.rotation_deg)
    if part.hinge is not None and pose.hinge_deg:
        px, py = part.hinge.pivot
        m = m @ translation((px, py, 0.0)) @ axis_rotation("z", pose.hinge_deg) @ translation((-px, -py, 0.0))
    if part.spin is not None and pose.spin_deg:
        h = part.size[2] / 2.0
        m = (
            m
            @ translation((0, 0, h))
            @ axis_rotation(part.spin.axis, pose.spin_deg)
            @ translation((0, 0, -h))
        )
    return m


def object_matrix(position, rotation_deg, scale=(1.0, 1.0, 1.0)) -> np.ndarray:
    """Object frame -> world."""
    return transform(position, rotation_deg, scale)


@functools.lru_cache(maxsize=512)
def _primitive(shape: str, sx: float, sy: float, sz: float) -> trimesh.Trimesh:
    if shape == "box":
        m = trimesh.creation.box(extents=(sx, sy, sz))
    elif shape == "cylinder":
        m = trimesh.creation.cylinder(radius=0.5, height=1.0, sections=24)
        m.apply_scale((sx, sy, sz))
    elif shape == "sphere":
        m = trimesh.creation.icosphere(subdivisions=2, radius=0.5)
        m.apply_scale((sx, sy, sz))
    elif shape == "capsule":
        r = min(sx, sy) / 2.0
        h = max(sz - 2 * r, 0.0)
        m = trimesh.creation.capsule(height=h, radius=r, count=(16, 16))
        m.apply_scale((sx / (2 * r), sy / (2 * r), 1.0))
    elif shape == "cone":
        m = trimesh.creation.cone(radius=0.5, height=1.0, sections=24)
        m.apply_translation((0, 0, -0.5))
        m.apply_scale((sx, sy, sz))
    elif shape == "wedge":
        m = wedge_mesh(sx, sy, sz)
    else:
        raise BundleError(f"unknown part shape {shape!r}")
    # centre the bounding box on (0, 0, h/2): base centre at the origin
    lo, hi = m.bounds
    m.apply_translation((-(lo[0] + hi[0]) / 2, -(lo[1] + hi[1]) / 2, -lo[2]))
    return m


@functools.lru_cache(maxsize=128)
def _asset(path: str) -> trimesh.Trimesh:
    try:
        loaded = trimesh.load(path, force="mesh")
    except Exception as exc:  # noqa: BLE001 - any loader failure is a bad bundle
        raise BundleError(f"cannot load mesh asset {path}: {exc}") from exc
    return loaded


def part_mesh(
    part: Part, bundle_dir: Path | None = None, asset_files: dict[str, str] | None = None
) -> trimesh.Trimesh:
    """The part's mesh in its own frame (base centre at the origin, fitted to `part.size`)."""
    if part.shape != "mesh":
        return _primitive(part.shape, *(float(v) for v in part.size))
    if part.mesh is None or bundle_dir is None:
        raise BundleError(f"part {part.id!r} is a mesh without an asset or bundle directory")
    rel = (asset_files or {}).get(part.mesh, f"assets/{part.mesh}")
    m = _asset(str(Path(bundle_dir) / rel)).copy()
    lo, hi = m.bounds
    ext = np.maximum(hi - lo, 1e-9)
    m.apply_translation((-(lo[0] + hi[0]) / 2, -(lo[1] + hi[1]) / 2, -lo[2]))
    m.apply_scale(np.asarray(part.size, dtype=float) / ext)
    return m


def box_corners(lo, hi) -> np.ndarray:
    """The 8 corners of an axis-aligned box."""
    return trimesh.bounds.corners(np.array([lo, hi], dtype=float))


def corner_points(lo, hi) -> list[tuple]:
    """The eight corners of the box lo..hi."""
    return [(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]


def box_grid(lo, hi, spacing_m: float = 1.0, most: int = 6) -> list[np.ndarray]:
    """Points spread over a box (ends and faces included, a hair inside), about `spacing_m`
    apart and at most `most` a side: the parts of a long or tall target."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    inset = (hi - lo) * 0.01
    axes = [
        np.linspace(a + e, b - e, int(min(most, max(2, math.ceil((b - a) / spacing_m) + 1))))
        for a, b, e in zip(lo, hi, inset, strict=True)
    ]
    return [np.array((x, y, z)) for x in axes[0] for y in axes[1] for z in axes[2]]
