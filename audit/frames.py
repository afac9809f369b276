"""The frame archive of one auditor session: every frame the auditor was shown, by ref.

Refs follow the reference harness: `a0` is the start view, `a12` the final view of action 12,
`a12.f3` the third film frame recorded during action 12 (1-based, like the trajectory's
`step_012_f3.png`).  Refs are the only way tools name frames; no tool takes a file path.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wac.errors import FrameRefError  # noqa: F401 - re-exported

REF = re.compile(r"^a(\d+)(?:\.f(\d+))?$")


@dataclass(frozen=True)
class Frame:
    ref: str
    image: np.ndarray | None  # None: a film frame that was not rendered (`AuditSession(film_images=False)`)
    pose: dict | None  # {"x", "y", "z", "yaw_deg", "pitch_deg"} when known
    t_sim: float
    kind: str  # "final" | "film" | "start"
    file: Path | None = None  # the recorded PNG of exactly this frame, when there is one


def png_bytes(image: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image)).save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def crop(image: np.ndarray, region, min_width: int = 640) -> np.ndarray:
    """The normalised [x0, y0, x1, y1] region of `image`, enlarged to at least `min_width` wide."""
    from PIL import Image

    x0, y0, x1, y1 = (float(v) for v in region)
    if not (0.0 <= x0 < x1 <= 1.0 and 0.0 <= y0 < y1 <= 1.0):
        raise FrameRefError("region must be [x0, y0, x1, y1] with 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1")
    h, w = image.shape[:2]
    c0, c1 = int(np.floor(x0 * w)), max(int(np.ceil(x1 * w)), int(np.floor(x0 * w)) + 1)
    r0, r1 = int(np.floor(y0 * h)), max(int(np.ceil(y1 * h)), int(np.floor(y0 * h)) + 1)
    part = image[r0:r1, c0:c1]
    scale = max(1.0, min_width / part.shape[1])
    if scale > 1.0:
        size = (round(part.shape[1] * scale), round(part.shape[0] * scale))
        part = np.asarray(Image.fromarray(np.ascontiguousarray(part)).resize(size, Image.Resampling.LANCZOS))
    return part


class FrameArchive:
    """Frames by ref, in the order they were taken."""

    def __init__(self) -> None:
        self._frames: dict[str, Frame] = {}

    def __len__(self) -> int:
        return len(self._frames)

    def __contains__(self, ref: str) -> bool:
        return ref in self._frames

    def add(self, frame: Frame) -> None:
        self._frames[frame.ref] = frame

    def refs(self) -> list[str]:
        return list(self._frames)

    def frames(self) -> list[Frame]:
        return list(self._frames.values())

    def get(self, ref: str) -> Frame:
        ref = str(ref).strip()
        m = REF.match(ref)
        if not m:
            raise FrameRefError(
                f"{ref!r} is not a frame ref; refs look like a12 (final view of action 12) "
                f"or a12.f3 (film frame 3 of action 12)"
            )
        if ref not in self._frames:
            action = int(m.group(1))
            have = [r for r in self._frames if REF.match(r).group(1) == str(action)]
            if not have:
                last = max((int(REF.match(r).group(1)) for r in self._frames), default=0)
                raise FrameRefError(
                    f"no frame {ref}: there is no action {action} yet (frames a0..a{last} exist)"
                )
            raise FrameRefError(f"no frame {ref}; action {action} has {', '.join(have)}")
        return self._frames[ref]
