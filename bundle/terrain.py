"""Heightfield terrain: the ground's heights from its seed, one function for every consumer.

The compiler (placing objects, walkability), the physics (a pybullet heightfield) and the
renderer (a mesh) all read heights from here, so they agree to the bit.  Heights are value
noise: random values on a lattice `scale_m` apart, smoothly interpolated, plus two finer octaves
(half and a quarter the size, half and a quarter the height), scaled to ±`amplitude_m`.  The
lattice values come from an integer hash of (seed, octave, i, j), not from a random generator,
so they do not depend on the numpy version or on the order anything is asked for.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from wac.bundle.model import Ground, Terrain

CELL_M = 0.5  # spacing of the heightfield's samples (coarser when a side would exceed MAX_SAMPLES)
MAX_SAMPLES = 1025
OCTAVES = ((1.0, 1.0), (0.5, 0.5), (0.25, 0.25))  # (size, height) of each octave, relative


def _hash(seed: int, octave: int, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """A value in [0, 1) for each lattice point (splitmix64 of its coordinates)."""
    with np.errstate(over="ignore"):
        x = (
            np.uint64(seed * 0x9E3779B1 + octave * 0x85EBCA77 + 0x632BE5AB)
            + i.astype(np.int64).astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)
            + j.astype(np.int64).astype(np.uint64) * np.uint64(0x165667B19E3779F9)
        )
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return (x >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def _noise(t: Terrain, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Height at world points (arrays of any shape)."""
    total = np.zeros(np.broadcast(x, y).shape)
    norm = sum(h for _, h in OCTAVES)
    for k, (size, h) in enumerate(OCTAVES):
        u, v = (
            np.asarray(x, dtype=float) / (t.scale_m * size),
            np.asarray(y, dtype=float) / (t.scale_m * size),
        )
        i0, j0 = np.floor(u), np.floor(v)
        fu, fv = u - i0, v - j0
        su, sv = fu * fu * (3 - 2 * fu), fv * fv * (3 - 2 * fv)  # smoothstep: no creases at the lattice
        a, b = _hash(t.seed, k, i0, j0), _hash(t.seed, k, i0 + 1, j0)
        c, d = _hash(t.seed, k, i0, j0 + 1), _hash(t.seed, k, i0 + 1, j0 + 1)
        total += h * ((a * (1 - su) + b * su) * (1 - sv) + (c * (1 - su) + d * su) * sv)
    return t.amplitude_m * (2.0 * total / norm - 1.0)


@lru_cache(maxsize=16)
def _samples(t: Terrain, gx: float, gy: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cell = max(CELL_M, max(gx, gy) / (MAX_SAMPLES - 1))  # a 10 km ground is not 400 M samples
    nx, ny = int(np.ceil(gx / cell)) + 1, int(np.ceil(gy / cell)) + 1
    xs = -gx / 2 + np.arange(nx) * (gx / (nx - 1))
    ys = -gy / 2 + np.arange(ny) * (gy / (ny - 1))
    h = np.round(_noise(t, xs[None, :], ys[:, None]), 6)
    h.flags.writeable = False
    return xs, ys, h


def samples(ground: Ground) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The heightfield over the whole ground: x (nx,), y (ny,), heights (ny, nx) with h[i, j] at
    (x[j], y[i]).  The physics and the renderer build their surfaces from these."""
    assert ground.terrain is not None
    return _samples(ground.terrain, float(ground.size[0]), float(ground.size[1]))


def height(ground: Ground, x, y):
    """Ground height at (x, y) (floats or arrays): bilinear between the samples, as the physics'
    heightfield and the rendered mesh are; 0 on flat ground and outside the ground."""
    if ground.terrain is None:
        return np.zeros(np.broadcast(x, y).shape) if np.ndim(x) or np.ndim(y) else 0.0
    xs, ys, h = samples(ground)
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    fx = np.clip((x - xs[0]) / (xs[1] - xs[0]), 0, len(xs) - 1 - 1e-9)
    fy = np.clip((y - ys[0]) / (ys[1] - ys[0]), 0, len(ys) - 1 - 1e-9)
    j, i = np.floor(fx).astype(int), np.floor(fy).astype(int)
    tx, ty = fx - j, fy - i
    z = (h[i, j] * (1 - tx) + h[i, j + 1] * tx) * (1 - ty) + (
        h[i + 1, j] * (1 - tx) + h[i + 1, j + 1] * tx
    ) * ty
    return float(z) if z.ndim == 0 else z


def height_range(ground: Ground, lo, hi) -> tuple[float, float]:
    """Lowest and highest ground under the rectangle lo..hi (x, y), sampled every half cell."""
    if ground.terrain is None:
        return 0.0, 0.0
    nx = max(2, int(np.ceil((hi[0] - lo[0]) / (CELL_M / 2))) + 1)
    ny = max(2, int(np.ceil((hi[1] - lo[1]) / (CELL_M / 2))) + 1)
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], nx), np.linspace(lo[1], hi[1], ny))
    z = height(ground, gx, gy)
    return float(z.min()), float(z.max())
