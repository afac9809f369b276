"""A contact sheet of a build's scenes: per scene, an overview and the start view (clean world).

    python -m wac.runtime.scene_sheet BUILD -o docs/contact_sheet.png [--columns 3]

One evaluation task represents each scene (the first single-anomaly one by id, so the start
view is a task's real start); the images are the clean variant, so no anomaly shows.  `wac
render BUNDLE...` makes the per-task sheet (clean | perturbed start views) instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from wac.bundle.reader import INDEX, is_build, read_index
from wac.errors import BundleError


def scene_bundles(build: Path) -> list[tuple[str, Path]]:
    """(label, bundle) for each scene of the build, sorted by environment and scene."""
    index = read_index(build)
    by_scene: dict[str, dict] = {}
    for e in sorted(index, key=lambda e: (e.get("anomalies", 1), e["id"])):
        if not e.get("example"):  # the demonstrations' small scenes are not part of the corpus
            by_scene.setdefault(e["scene"], e)
    rows = sorted(by_scene.values(), key=lambda e: (e.get("environment") or e["scene"], e["scene"]))
    return [
        (f"{e.get('environment') or e['scene']} / {e['scene']} ({e['id']})", build / e["id"]) for e in rows
    ]


def scene_pair(bundle: Path, width: int, height: int) -> np.ndarray:
    """The overview (first overview camera) and the start view of the clean world, side by side."""
    from .compose import overview_cameras, side_by_side
    from .env import WorldEnv

    env = WorldEnv(bundle, variant="clean", width=width, height=height, film_interval_s=None)
    try:
        start = env.observe().frame
        overview = env.renderer.render(overview_cameras(env)[0])
    finally:
        env.close()
    return side_by_side(overview, start, labels=("overview", "start view"))


def make_sheet(build: Path, width: int = 320, height: int = 240, columns: int = 2) -> np.ndarray:
    from .compose import contact_sheet

    items = [(label, scene_pair(b, width, height)) for label, b in scene_bundles(build)]
    if not items:
        raise BundleError(f"{build}: no tasks in {INDEX}")
    return contact_sheet(items, columns=columns)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m wac.runtime.scene_sheet", description=__doc__.split("\n")[0])
    p.add_argument("build", type=Path)
    p.add_argument("-o", "--output", type=Path, default=Path("contact_sheet.png"))
    p.add_argument("--width", type=int, default=320)
    p.add_argument("--height", type=int, default=240)
    p.add_argument("--columns", type=int, default=2)
    a = p.parse_args(argv)
    if not is_build(a.build):
        print(f"{a.build}: not a wac build directory (no {INDEX})", file=sys.stderr)
        return 2
    from .trajectory import save_png

    a.output.parent.mkdir(parents=True, exist_ok=True)
    try:
        sheet = make_sheet(a.build, a.width, a.height, a.columns)
    except BundleError as exc:
        print(exc, file=sys.stderr)
        return 1
    save_png(a.output, sheet)
    print(a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
