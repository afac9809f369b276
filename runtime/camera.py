"""Cameras of the renderer: a pin-hole `Camera` (eye, yaw, pitch, field of view), `look_at`, and the
clipping range every frame and depth read uses."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NEAR, FAR = 0.05, 250.0


@dataclass(frozen=True)
class Camera:
    """A pin-hole camera: eye position, yaw (deg, ccw from +x), pitch (deg, positive = down).
    `cutaway`: a view from outside the world (an overview shot), which leaves out its `cutaway`
    objects (ceilings, roofs) to show the rooms under them; the agent's camera never cuts away."""

    eye: tuple[float, float, float]
    yaw_deg: float
    pitch_deg: float
    hfov_deg: float = 90.0
    cutaway: bool = False

    def forward(self) -> np.ndarray:
        y, p = np.radians(self.yaw_deg), np.radians(self.pitch_deg)
        return np.array([np.cos(p) * np.cos(y), np.cos(p) * np.sin(y), -np.sin(p)])

    def up(self) -> np.ndarray:
        y, p = np.radians(self.yaw_deg), np.radians(self.pitch_deg)
        return np.array([np.sin(p) * np.cos(y), np.sin(p) * np.sin(y), np.cos(p)])

    def vfov_deg(self, width: int, height: int) -> float:
        return float(np.degrees(2 * np.arctan(np.tan(np.radians(self.hfov_deg) / 2) * height / width)))


def look_at(eye, target, hfov_deg: float = 60.0, cutaway: bool = False) -> Camera:
    """A camera at `eye` looking at `target`."""
    d = np.asarray(target, dtype=float) - np.asarray(eye, dtype=float)
    yaw = float(np.degrees(np.arctan2(d[1], d[0])))
    pitch = float(np.degrees(np.arctan2(-d[2], np.hypot(d[0], d[1]))))
    return Camera(tuple(float(v) for v in eye), yaw, pitch, hfov_deg, cutaway)
