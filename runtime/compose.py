"""Images composed from a world: overview cameras, clean | perturbed shots, side-by-side pairs and
contact sheets.  `wac render`, the scene contact sheet and the self-check's evidence frames use them.
"""

from __future__ import annotations

import numpy as np


def overview_cameras(env) -> list:
    """Four high oblique views from the diagonals, framing every object of the world; they cut away
    ceilings and roofs (`Camera.cutaway`), so they look into the rooms."""
    from .render import look_at

    boxes = [env.world.aabb(st) for st in env.world.objects.values() if st.present]
    if boxes:
        lo = np.min([b[0] for b in boxes], axis=0)
        hi = np.max([b[1] for b in boxes], axis=0)
    else:
        b = np.asarray(env.task.exploration.bounds, dtype=float)
        lo, hi = np.r_[b.min(axis=0), 0.0], np.r_[b.max(axis=0), 1.0]
    c = (lo + hi) / 2
    r = max(float(np.linalg.norm(hi[:2] - lo[:2])) / 2, 2.0)
    cams = []
    for ang in (225.0, 315.0, 45.0, 135.0):
        a = np.radians(ang)
        eye = (c[0] + np.cos(a) * r * 1.5, c[1] + np.sin(a) * r * 1.5, r * 1.1 + 1.0)
        cams.append(look_at(eye, (c[0], c[1], lo[2]), 60.0, cutaway=True))
    return cams


def render_shots(bundle, width: int, height: int) -> tuple[str, dict[str, list[np.ndarray]]]:
    """Start view and four overviews of both variants: {name: [clean, perturbed]}."""
    from .env import WorldEnv

    shots: dict[str, list[np.ndarray]] = {}
    task_id = ""
    for variant in ("clean", "perturbed"):
        env = WorldEnv(bundle, variant=variant, width=width, height=height, film_interval_s=None)
        try:
            task_id = env.task.id
            shots.setdefault("start", []).append(env.observe().frame)
            for i, cam in enumerate(overview_cameras(env), start=1):
                shots.setdefault(f"overview_{i}", []).append(env.renderer.render(cam))
        finally:
            env.close()
    return task_id, shots


def contact_sheet(items: list[tuple[str, np.ndarray]], columns: int = 2) -> np.ndarray:
    """Labelled images in a grid (each a clean|perturbed pair), titled with the task id."""
    from PIL import Image, ImageDraw

    h, w = items[0][1].shape[:2]
    title = 18
    rows = (len(items) + columns - 1) // columns
    sheet = Image.new("RGB", (columns * (w + 8), rows * (h + title + 8)), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    for i, (name, img) in enumerate(items):
        x, y = (i % columns) * (w + 8), (i // columns) * (h + title + 8)
        draw.text((x + 4, y + 3), name, fill=(0, 0, 0))
        sheet.paste(Image.fromarray(img), (x, y + title))
    return np.asarray(sheet)


def side_by_side(left: np.ndarray, right: np.ndarray, labels=("clean", "perturbed")) -> np.ndarray:
    """Two frames with a white gutter, each labelled in its top-left corner."""
    from PIL import Image, ImageDraw

    h, w = left.shape[:2]
    gap = 8
    canvas = Image.new("RGB", (2 * w + gap, h), (255, 255, 255))
    canvas.paste(Image.fromarray(left), (0, 0))
    canvas.paste(Image.fromarray(right), (w + gap, 0))
    draw = ImageDraw.Draw(canvas)
    for x, text in ((0, labels[0]), (w + gap, labels[1])):
        draw.rectangle((x, 0, x + 8 * len(text) + 8, 16), fill=(0, 0, 0))
        draw.text((x + 4, 2), text, fill=(255, 255, 255))
    return np.asarray(canvas)
