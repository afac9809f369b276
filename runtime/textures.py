"""Procedural surface patterns for materials (`Material.texture`): small tileable greyscale images
that modulate the material colour, and box-projected texture coordinates for part meshes.
"""

from __future__ import annotations

import functools

import numpy as np

TILE_M = {"grain": 0.6, "brick": 0.5, "tiles": 0.6, "checker": 1.0, "noise": 1.0, "stripes": 0.5}
SIZE = 128


@functools.lru_cache(maxsize=16)
def pattern(name: str) -> np.ndarray | None:
    """A SIZE x SIZE x 3 uint8 image of the pattern (values ~0.6-1.0 of white), None if unknown/none."""
    if name not in TILE_M:
        return None
    n = SIZE
    y, x = np.mgrid[0:n, 0:n] / n
    rng = np.random.default_rng(7)  # fixed: textures are part of the look, not of the run
    if name == "grain":
        wobble = 0.04 * np.sin(2 * np.pi * (x * 2 + rng.random()))
        v = 0.88 + 0.07 * np.sin(2 * np.pi * (y + wobble) * 6) + 0.02 * rng.standard_normal((n, n))
    elif name == "brick":
        row = np.floor(y * 4)
        xs = (x * 2 + 0.5 * (row % 2)) % 1.0
        mortar = (np.abs((y * 4) % 1.0) < 0.08) | (xs < 0.04)
        v = np.where(mortar, 0.6, 0.95 - 0.08 * ((row * 7 + np.floor(x * 2 + 0.5 * (row % 2)) * 3) % 3) / 2)
    elif name == "tiles":
        grout = ((x * 4) % 1.0 < 0.05) | ((y * 4) % 1.0 < 0.05)
        v = np.where(grout, 0.65, 0.97)
    elif name == "checker":
        v = np.where((np.floor(x * 2) + np.floor(y * 2)) % 2 == 0, 1.0, 0.7)
    elif name == "noise":
        v = 0.85 + 0.1 * rng.standard_normal((n, n)).clip(-1.5, 1.5)
    else:  # stripes
        v = np.where((y * 4) % 1.0 < 0.5, 1.0, 0.75)
    g = (np.clip(v, 0, 1) * 255).astype(np.uint8)
    return np.repeat(g[:, :, None], 3, axis=2)


def box_uv(points: np.ndarray, normals: np.ndarray, tile_m: float) -> np.ndarray:
    """Texture coordinates by projecting each vertex along its normal's dominant axis (metres / tile)."""
    ax = np.abs(normals).argmax(axis=1)
    u = np.where(ax == 0, points[:, 1], points[:, 0])
    v = np.where(ax == 2, points[:, 1], points[:, 2])
    return np.c_[u, v] / tile_m
