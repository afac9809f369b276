"""The pixel rule: does a change show on screen, or is it a change on paper only?

A state differential (the target's pose, scale or material differs between the worlds) is not
evidence an auditor can use: a cylinder turned about its axis, a copy standing inside the
original, a colour swapped for one it already has, a crate raised by a centimetre all differ in
state and not in the picture.  `change` compares the same view rendered in two worlds (or the
same viewpoint before and after) over the target's **region**: the union of its segmentation
masks in both frames (where it was and where it is, so a removed object counts by its old
pixels and an added one by its new pixels).  A region pixel *changed* when its colour differs
by at least `CHANGE_DE` (CIE76 ΔE in L*a*b*); the change is *visible* when, after discarding
outlines (differences a shift of one pixel at the check's 320x240 explains, in either frame),
at least `CHANGE_PX` changed pixels remain, counted at 640x480.  docs/validation.md gives the measurement behind the two numbers.

The same rule serves the differential (the evidence must show it), necessity (the start view
and the "before" view must not), and the watched-change test (`target_px`: the target's pixels
in the frame at the firing tick).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .capture import Sample
from .pixels import lab, px640

CHANGE_DE = (
    10.0  # a pixel changed when its colour moved by this much (CIE76 dE); ~4x a just-noticeable difference
)
CHANGE_PX = 150.0  # ... and a change is visible when this many changed px (640x480) remain without outlines
SHIFT_PX = 1  # a difference a shift of this many px (320x240; 2 px at 640x480) explains is an outline
POSE_M, POSE_DEG = 0.05, 1.0  # two samples share a viewpoint within these tolerances


@dataclass(frozen=True)
class Change:
    """How two frames of one viewpoint differ over the target's region (pixel counts at 640x480)."""

    region: float  # the target's pixels in either frame
    changed: float  # region px whose colour differs by CHANGE_DE or more
    core: float  # ... that are not outlines (the whole 3x3 neighbourhood changed)
    de: float  # mean dE of the changed px
    a: Sample | None = None
    b: Sample | None = None

    @property
    def visible(self) -> bool:
        return self.core >= CHANGE_PX

    def words(self) -> str:
        return (
            f"{self.core:.0f} px changed by dE >= {CHANGE_DE:g} (of {self.changed:.0f} changed, {self.region:.0f} px "
            f"of target; needs {CHANGE_PX:g} px at 640x480, outlines not counted)"
        )


NO_CHANGE = Change(0.0, 0.0, 0.0, 0.0)


def mask(s: Sample, ids: tuple[str, ...]) -> np.ndarray:
    """The pixels of the objects `ids` in one sample's segmentation."""
    idx = [s.index_of[o] for o in ids if o in s.index_of]
    if not idx:
        return np.zeros(s.ids.shape, dtype=bool)
    return np.isin(s.ids, idx)


def same_view(a: Sample, b: Sample) -> bool:
    """Whether two samples were taken from the same viewpoint (so their frames are comparable)."""
    if a.frame.shape != b.frame.shape:
        return False
    if max(abs(u - v) for u, v in zip(a.pose[:3], b.pose[:3], strict=True)) > POSE_M:
        return False
    return all(
        abs((u - v + 180) % 360 - 180) <= POSE_DEG for u, v in zip(a.pose[3:], b.pose[3:], strict=True)
    )


def _unexplained(a: np.ndarray, b: np.ndarray, rows: np.ndarray, cols: np.ndarray, r: int) -> np.ndarray:
    """Which pixels (rows, cols) of `b` (L*a*b*) have a colour that appears nowhere within `r` px of
    them in `a`."""
    h, w = a.shape[:2]
    best = np.full(len(rows), np.inf, dtype=np.float32)
    for di in range(-r, r + 1):
        for dj in range(-r, r + 1):
            ii, jj = np.clip(rows + di, 0, h - 1), np.clip(cols + dj, 0, w - 1)
            best = np.minimum(best, np.linalg.norm(b[rows, cols] - a[ii, jj], axis=-1))
    return best >= CHANGE_DE


def change(a: Sample, b: Sample, ids: tuple[str, ...] | None) -> Change:
    """How frame `b` differs from frame `a` over the region of `ids` (None: the whole frame).

    A region pixel counts as *changed* when its colour differs by CHANGE_DE or more between the
    frames; it counts towards the visible change (`core`) only when the difference cannot be
    explained by a shift of at most SHIFT_PX (at the check's resolution) in either direction: the
    outline a sub-pixel move, a slight scale or a copy inside the original leaves is not seen,
    while a thin object that moved or vanished counts with all its pixels.
    """
    if a.frame.shape != b.frame.shape:
        return NO_CHANGE
    region = np.ones(a.ids.shape, dtype=bool) if ids is None else mask(a, ids) | mask(b, ids)
    n = int(region.sum())
    if not n:
        return Change(0.0, 0.0, 0.0, 0.0, a, b)
    rows, cols = np.nonzero(region)
    r = SHIFT_PX
    i0, i1 = max(int(rows.min()) - r, 0), min(int(rows.max()) + r + 1, region.shape[0])
    j0, j1 = max(int(cols.min()) - r, 0), min(int(cols.max()) + r + 1, region.shape[1])
    la, lb = lab(a.frame[i0:i1, j0:j1]), lab(b.frame[i0:i1, j0:j1])
    reg = region[i0:i1, j0:j1]
    de = np.linalg.norm(lb - la, axis=-1)
    hit = reg & (de >= CHANGE_DE)
    hr, hc = np.nonzero(hit)
    core = _unexplained(la, lb, hr, hc, r) | _unexplained(lb, la, hr, hc, r)
    shape = region.shape
    return Change(
        px640(n, shape),
        px640(len(hr), shape),
        px640(int(core.sum()), shape),
        float(de[hit].mean()) if hit.any() else 0.0,
        a,
        b,
    )


def best_change(pairs: list[tuple[Sample, Sample]], ids: tuple[str, ...] | None) -> Change:
    """A visible change over pairs of same-viewpoint samples (the last such pair: the plan's
    evidence comes late), else the least invisible one."""
    out = None
    for a, b in reversed(pairs):
        if not same_view(a, b):
            continue
        c = change(a, b, ids)
        if out is None or (c.core, c.changed, c.region) > (out.core, out.changed, out.region):
            out = c
        if out.visible:
            break
    return out or NO_CHANGE


def target_px(counts: dict[str, float], ids: tuple[str, ...]) -> float:
    """The target's pixels (640x480) in a frame, from per-object pixel counts."""
    return float(sum(counts.get(o, 0.0) for o in ids))
