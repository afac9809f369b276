"""Pixel measurements for the differential observables: what an auditor could see, clean vs perturbed.

The shadow/lighting and material observables do not trust the world's state: they compare the
same evidence view rendered in both variants (`capture.Sample`: RGB frame, segmentation, depth).
This module holds the measuring tools they share: CIE L*a*b* colour of sRGB pixels, the camera
of a sample (pixel -> world point through the depth image), and the sun-shadow test (is a world
point in the shadow the sun throws from an object's parts?), plus the words for a displacement
seen from the viewpoint ("2.1 m to the right").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# sRGB (D65) -> CIE XYZ, and the D65 white point
_RGB_TO_XYZ = np.array(
    [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]]
)
_WHITE = np.array([0.95047, 1.0, 1.08883])


def _linear(rgb: np.ndarray) -> np.ndarray:
    c = np.asarray(rgb, dtype=np.float32) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _f(t: np.ndarray) -> np.ndarray:
    return np.where(t > 0.008856, np.cbrt(t), 7.787 * t + 16.0 / 116.0)


def lab(rgb: np.ndarray) -> np.ndarray:
    """CIE L*a*b* (L* 0-100) of sRGB pixels (uint8, shape (..., 3))."""
    xyz = _linear(rgb) @ _RGB_TO_XYZ.T.astype(np.float32) / _WHITE.astype(np.float32)
    fx, fy, fz = _f(xyz[..., 0]), _f(xyz[..., 1]), _f(xyz[..., 2])
    return np.stack([116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)], axis=-1)


def lightness(rgb: np.ndarray) -> np.ndarray:
    """CIE L* (0-100) of sRGB pixels: equal steps look equally different, whatever the brightness."""
    y = _linear(rgb) @ _RGB_TO_XYZ[1].astype(np.float32)
    return 116.0 * _f(y) - 16.0


@dataclass(frozen=True)
class View:
    """The pin-hole camera of one sample, for turning pixels into world points."""

    eye: np.ndarray
    forward: np.ndarray
    right: np.ndarray
    up: np.ndarray
    focal_px: float  # in pixels of this frame
    width: int
    height: int

    @staticmethod
    def of(cam: dict, shape: tuple[int, ...]) -> View:
        """From the camera a measure recorded ({eye, yaw_deg, pitch_deg, hfov_deg}) and the frame shape."""
        y, p = math.radians(cam["yaw_deg"]), math.radians(cam["pitch_deg"])
        fwd = np.array([math.cos(p) * math.cos(y), math.cos(p) * math.sin(y), -math.sin(p)])
        up = np.array([math.sin(p) * math.cos(y), math.sin(p) * math.sin(y), math.cos(p)])
        h, w = shape[:2]
        f = (w / 2) / math.tan(math.radians(cam["hfov_deg"]) / 2)
        return View(np.asarray(cam["eye"], dtype=float), fwd, np.cross(fwd, up), up, f, w, h)

    def points(self, mask: np.ndarray, depth: np.ndarray) -> np.ndarray:
        """World points (n x 3) of the pixels in `mask`, from eye-space depth (metres along the view axis)."""
        rows, cols = np.nonzero(mask)
        z = depth[rows, cols].astype(float)
        x = (cols + 0.5 - self.width / 2) / self.focal_px
        y = (self.height / 2 - rows - 0.5) / self.focal_px
        rays = self.forward[None, :] + x[:, None] * self.right[None, :] + y[:, None] * self.up[None, :]
        return self.eye[None, :] + z[:, None] * rays

    def words(self, d_xy) -> str:
        """A horizontal world displacement as the viewer sees it: '2.1 m to the right and 0.4 m farther'."""
        d = np.asarray(d_xy, dtype=float)[:2]
        r = float(d @ self.right[:2] / max(np.linalg.norm(self.right[:2]), 1e-9))
        fw = self.forward[:2] / max(np.linalg.norm(self.forward[:2]), 1e-9)
        a = float(d @ fw)
        parts = []
        if abs(r) >= 0.1:
            parts.append(f"{abs(r):.1f} m to the {'right' if r > 0 else 'left'}")
        if abs(a) >= 0.1:
            parts.append(f"{abs(a):.1f} m {'farther' if a > 0 else 'nearer'}")
        return " and ".join(parts) or "in the same place"


def sun_basis(sun: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors perpendicular to the direction towards the sun: the sun's 'image plane'."""
    d = np.asarray(sun, dtype=float)
    a = np.array([0.0, 0.0, 1.0]) if abs(d[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    u = np.cross(d, a)
    u /= np.linalg.norm(u)
    return u, np.cross(d, u)


def shadow_hulls(sun: np.ndarray, parts: list[np.ndarray]) -> list[dict]:
    """Per part (world vertices), the convex outline it shows the sun and how near the sun it reaches.

    A point is in the part's sun shadow when it falls inside the outline in the sun's image plane
    and lies farther from the sun than the part's sun-most point.
    """
    from scipy.spatial import ConvexHull, QhullError

    u, w = sun_basis(sun)
    out = []
    for v in parts:
        v = np.asarray(v, dtype=float)
        if len(v) < 3:
            continue
        q = np.c_[v @ u, v @ w]
        try:
            hull = q[ConvexHull(q).vertices]  # counter-clockwise in 2-D
        except (QhullError, ValueError):  # a part seen edge-on by the sun: its bounding rectangle
            lo, hi = q.min(axis=0), q.max(axis=0)
            hull = np.array([lo, [hi[0], lo[1]], hi, [lo[0], hi[1]]])
        out.append({"hull": hull.round(4).tolist(), "top": float((v @ np.asarray(sun, dtype=float)).max())})
    return out


def in_sun_shadow(points: np.ndarray, sun, hulls: list[dict], margin_m=0.0) -> np.ndarray:
    """Which world points lie in the sun shadow of the parts, the outlines grown by `margin_m` (one
    margin, or one per point)."""
    n = len(points)
    inside = np.zeros(n, dtype=bool)
    if n == 0 or not hulls:
        return inside
    margin = np.broadcast_to(np.asarray(margin_m, dtype=float), (n,))
    d = np.asarray(sun, dtype=float)
    u, w = sun_basis(d)
    q = np.c_[points @ u, points @ w]
    depth = points @ d
    for h in hulls:
        poly = np.asarray(h["hull"], dtype=float)
        if len(poly) < 3:
            continue
        lo, hi = poly.min(axis=0), poly.max(axis=0)
        cand = np.flatnonzero(
            ~inside
            & (q[:, 0] >= lo[0] - margin)
            & (q[:, 0] <= hi[0] + margin)
            & (q[:, 1] >= lo[1] - margin)
            & (q[:, 1] <= hi[1] + margin)
            & (depth <= h["top"] + margin)
        )
        if not len(cand):
            continue
        a, b = poly, np.roll(poly, -1, axis=0)
        e = b - a
        length = np.maximum(np.linalg.norm(e, axis=1), 1e-9)
        qc = q[cand]
        # signed distance of each point to each edge's line (positive inside a counter-clockwise polygon)
        cross = e[None, :, 0] * (qc[:, None, 1] - a[None, :, 1]) - e[None, :, 1] * (
            qc[:, None, 0] - a[None, :, 0]
        )
        inside[cand[(cross / length[None, :] >= -margin[cand, None]).all(axis=1)]] = True
    return inside


def px640(n: int | float, shape: tuple[int, ...]) -> float:
    """A pixel count scaled to a 640x480 frame."""
    return float(n) * (640 * 480) / (shape[0] * shape[1])


def pixel_counts(ids_img: np.ndarray, index_of: dict[str, int]) -> dict[str, float]:
    """Pixels (640x480) of every object in a segmentation image."""
    counts = np.bincount(ids_img.ravel().astype(np.int64).clip(min=0))
    scale = (640 * 480) / ids_img.size
    return {
        oid: float(counts[i]) * scale for oid, i in index_of.items() if 0 <= i < len(counts) and counts[i]
    }


def ground_outlines(sun, hulls: list[dict], z: float) -> list[np.ndarray]:
    """The sun shadow of each part on the horizontal plane at height `z`: convex polygons (n x 2)."""
    d = np.asarray(sun, dtype=float)
    u, w = sun_basis(d)
    out = []
    for h in hulls:
        q = np.asarray(h["hull"], dtype=float)
        p = q[:, :1] * u[None, :] + q[:, 1:] * w[None, :]
        t = (z - p[:, 2]) / d[2]
        out.append((p + t[:, None] * d[None, :])[:, :2])
    return out


@dataclass(frozen=True)
class Footprint:
    """The parts' sun shadow on a horizontal plane, rasterised on a grid of `cell_m` cells.

    Frames are compared with it cell by cell, not pixel by pixel: near cells hold many more pixels
    than far ones.
    """

    image: np.ndarray  # bool (nx, ny)
    lo: np.ndarray  # world x, y of the grid's corner
    cell_m: float

    @staticmethod
    def of(sun, hulls: list[dict], z: float, cell_m: float = 0.1) -> Footprint | None:
        polys = [p for p in ground_outlines(sun, hulls, z) if len(p) >= 3]
        if not polys:
            return None
        allp = np.vstack(polys)
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        nx, ny = int(np.ceil((hi[0] - lo[0]) / cell_m)) + 1, int(np.ceil((hi[1] - lo[1]) / cell_m)) + 1
        gx, gy = np.meshgrid(
            lo[0] + (np.arange(nx) + 0.5) * cell_m, lo[1] + (np.arange(ny) + 0.5) * cell_m, indexing="ij"
        )
        cells = np.c_[gx.ravel(), gy.ravel()]
        foot = np.zeros(len(cells), dtype=bool)
        for poly in polys:
            a, b = poly, np.roll(poly, -1, axis=0)
            e = b - a
            cross = e[None, :, 0] * (cells[:, None, 1] - a[None, :, 1]) - e[None, :, 1] * (
                cells[:, None, 0] - a[None, :, 0]
            )
            area = float(np.sum(a[:, 0] * b[:, 1] - b[:, 0] * a[:, 1]))  # the polygon's orientation
            foot |= (cross * np.sign(area or 1.0) >= 0).all(axis=1)
        img = foot.reshape(nx, ny)
        return Footprint(img, lo, cell_m) if img.any() else None

    def raster(self, xy: np.ndarray, reach_m: float) -> np.ndarray:
        """Cells holding any of the points, on the footprint's grid widened by `reach_m` each side."""
        r = int(np.ceil(reach_m / self.cell_m))
        shape = (self.image.shape[0] + 2 * r, self.image.shape[1] + 2 * r)
        img = np.zeros(shape, dtype=bool)
        ij = np.floor(
            (np.asarray(xy, dtype=float).reshape(-1, 2) - (self.lo - r * self.cell_m)) / self.cell_m
        )
        ij = ij[np.isfinite(ij).all(axis=1)].astype(int)
        ok = (ij[:, 0] >= 0) & (ij[:, 0] < shape[0]) & (ij[:, 1] >= 0) & (ij[:, 1] < shape[1])
        img[ij[ok, 0], ij[ok, 1]] = True
        return img

    def overlap(self, img: np.ndarray, reach_m: float) -> np.ndarray:
        """For every ground offset within reach, the cells of `img` the moved footprint covers."""
        r = int(np.ceil(reach_m / self.cell_m))
        g = img.astype(float)
        fs = np.fft.rfft2(g) * np.conj(np.fft.rfft2(self.image.astype(float), s=g.shape))
        return np.fft.irfft2(fs, s=g.shape)[: 2 * r + 1, : 2 * r + 1]

    def offsets(self, reach_m: float) -> np.ndarray:
        r = int(np.ceil(reach_m / self.cell_m))
        i, j = np.meshgrid(np.arange(2 * r + 1), np.arange(2 * r + 1), indexing="ij")
        return np.stack([i, j], axis=-1) * self.cell_m - r * self.cell_m

    def offset(self, dark_xy: np.ndarray, seen_xy: np.ndarray, reach_m: float = 10.5) -> np.ndarray | None:
        """Where a misplaced shadow went: the ground offset of the footprint that best covers the dark
        patch (`dark_xy`: world x, y of pixels dark in one frame only) and least covers the surfaces
        seen not darkened (`seen_xy`).  Works when only part of either is in view; None when nothing fits.
        """
        dark = self.raster(dark_xy, reach_m)
        if not dark.any():
            return None
        seen = self.raster(seen_xy, reach_m) & ~dark
        score = self.overlap(dark, reach_m) - self.overlap(seen, reach_m)
        best = float(score.max())
        if best <= 0.5:
            return None
        offs = self.offsets(reach_m)[score >= best - 0.5]
        return offs[int(np.argmin(np.linalg.norm(offs, axis=1)))]
