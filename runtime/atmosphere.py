"""Atmosphere, drawn as a post step on rendered frames: distance fog from the depth buffer, and a tint.

The renderer's shaders (VTK's, with wac's shadow replacements) have no fog term, so
`Renderer.render` reads the frame's metric depth and blends here (bundle: `Scene.fog`,
`Scene.tint`; language: `fog`, `tint`).  Object-id and depth images are not fogged.
"""

from __future__ import annotations

import numpy as np


def fogged(img: np.ndarray, depth: np.ndarray, fog, color: np.ndarray) -> np.ndarray:
    """Blend each pixel towards the fog colour by its depth (the sky, at infinite depth, is all fog)."""
    d = np.where(np.isfinite(depth), depth, 1e9).astype(np.float64)
    if fog.density is not None:
        f = 1.0 - np.exp(-fog.density * d)
    else:
        f = np.clip((d - fog.start_m) / max(fog.end_m - fog.start_m, 1e-6), 0.0, 1.0)
    out = img.astype(np.float64) * (1.0 - f[..., None]) + (color * 255.0) * f[..., None]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def tinted(img: np.ndarray, tint) -> np.ndarray:
    """Mix the tint colour into every pixel."""
    if tint is None or tint.strength <= 0:
        return img
    out = img.astype(np.float64) * (1.0 - tint.strength) + np.asarray(tint.color) * 255.0 * tint.strength
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)
