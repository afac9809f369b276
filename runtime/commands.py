"""The runtime's CLI sub-commands, `wac play` and `wac render`, for the top-level `wac` parser.

`register(subparsers)` adds both; each sets `func` (args -> exit code) via `set_defaults`.
A BUNDLE is a directory holding `task.json` (a CompiledTask), or that file itself.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from wac.errors import UsageError


def register(subparsers) -> None:
    """Add `play` and `render` to an argparse sub-parser collection."""
    p = subparsers.add_parser(
        "play", help="run a scripted action list in a bundle; write frames and the trajectory"
    )
    p.add_argument("bundle", help="bundle directory (with task.json) or task.json")
    p.add_argument("--variant", choices=("clean", "perturbed"), default="perturbed")
    p.add_argument(
        "--actions", required=True, help='actions separated by ";", e.g. "move 3; turn 135; wait 5"'
    )
    p.add_argument("--out", required=True, help="trajectory directory to write")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--width", type=int, default=640)
    p.add_argument("--height", type=int, default=480)
    p.add_argument(
        "--film-interval", type=float, default=0.5, help="simulated seconds between film frames (0: none)"
    )
    p.set_defaults(func=cmd_play)

    r = subparsers.add_parser(
        "render", help="start view and overview shots, clean and perturbed side by side"
    )
    r.add_argument(
        "bundle",
        nargs="+",
        help="bundle directory (with task.json) or task.json; with several, each "
        "gets OUT/<task id>/ and OUT/contact_sheet.png shows all start views",
    )
    r.add_argument("--out", required=True, help="directory for the PNG files")
    r.add_argument("--width", type=int, default=640)
    r.add_argument("--height", type=int, default=480)
    r.set_defaults(func=cmd_render)


def split_actions(text: str) -> list[str]:
    return [a.strip() for a in text.replace("\n", ";").split(";") if a.strip()]


def cmd_play(args: argparse.Namespace) -> int:
    from .env import Action, WorldEnv

    actions = [Action.parse(a) for a in split_actions(args.actions)]
    if not actions:
        raise UsageError("--actions is empty")
    env = WorldEnv(
        args.bundle,
        variant=args.variant,
        seed=args.seed,
        width=args.width,
        height=args.height,
        film_interval_s=args.film_interval or None,
        record_dir=args.out,
    )
    try:
        _print_step(env.history[0], "start")
        for a in actions:
            res = env.try_step(a)
            _print_step(res, a.describe())
    finally:
        env.close()
    print(f"trajectory written to {args.out}")
    return 0


def _print_step(res, what: str) -> None:
    p = res.pose

    def z(v: float) -> float:  # no "-0.00"
        return 0.0 if abs(v) < 0.005 else v

    print(
        f"[{res.step:3d}] {what:<24} pos ({z(p.x):6.2f}, {z(p.y):6.2f}, {z(p.z):5.2f}) yaw {z(p.yaw_deg):6.1f} "
        f"pitch {p.pitch_deg:5.1f} | t {res.sim_time:6.2f} s | budget {res.budget_left:3d} | {res.outcome}"
    )
    sys.stdout.flush()


def overview_cameras(env) -> list:
    """Four high oblique views from the diagonals, framing every object of the world."""
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
        cams.append(look_at(eye, (c[0], c[1], lo[2]), 60.0))
    return cams


def cmd_render(args: argparse.Namespace) -> int:
    from .trajectory import save_png

    out = Path(args.out)
    bundles = list(args.bundle)
    starts = []
    for b in bundles:
        task_id, shots = render_shots(b, args.width, args.height)
        folder = out / task_id if len(bundles) > 1 else out
        folder.mkdir(parents=True, exist_ok=True)
        for name, (clean, pert) in shots.items():
            save_png(folder / f"{name}.png", side_by_side(clean, pert))
            print(folder / f"{name}.png")
        starts.append((task_id, side_by_side(*shots["start"])))
    if len(bundles) > 1:
        path = out / "contact_sheet.png"
        save_png(path, contact_sheet(starts))
        print(path)
    return 0


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


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (`python -m wac.runtime.commands play ...`) until the top-level CLI wires it in."""
    from wac.errors import WacError

    parser = argparse.ArgumentParser(prog="wac")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except WacError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
