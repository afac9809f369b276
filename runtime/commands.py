"""The runtime's CLI sub-commands, `wac play` and `wac render`, for the top-level `wac` parser.

`register(subparsers)` adds both; each sets `func` (args -> exit code) via `set_defaults`.
A BUNDLE is a directory holding `task.json` (a CompiledTask), or that file itself.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wac.bundle.reader import Bundle
from wac.errors import ActionError, UsageError

from .compose import contact_sheet, render_shots, side_by_side


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
    p.add_argument(
        "--out",
        help="trajectory directory to write (default: a new play-<bundle>-<n> in the current directory)",
    )
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


def parse_actions(text: str) -> list:
    """The actions of `--actions`, each checked (name, arguments, ranges) before the world starts;
    ActionError (exit 1: the user's actions are wrong) naming the first bad one."""
    from .actions import Action, validate

    texts = split_actions(text)
    if not texts:
        raise UsageError("--actions is empty")
    actions = []
    for i, t in enumerate(texts, start=1):
        try:
            actions.append(validate(Action.parse(t)))
        except ActionError as exc:
            raise ActionError(f"action {i} of --actions ({t!r}): {exc}") from None
    return actions


def fresh_dir(parent: Path, stem: str) -> Path:
    """A new, empty directory `parent/stem-N` (the first N free), created now."""
    n = 1
    while True:
        path = parent / f"{stem}-{n}"
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            n += 1


def _check_size(args: argparse.Namespace) -> None:
    if args.width < 16 or args.height < 16:
        raise UsageError("--width and --height must be at least 16 pixels")


def cmd_play(args: argparse.Namespace) -> int:
    """Exit 0 when every action ran, 1 when an action was refused (e.g. past the budget)."""
    from .env import WorldEnv

    _check_size(args)
    actions = parse_actions(args.actions)
    # NoBundle (exit 2) or a damaged bundle (exit 1) before anything is written
    bundle = Bundle.open(args.bundle, verify=Path(args.bundle).is_dir())
    out = Path(args.out) if args.out else fresh_dir(Path("."), f"play-{bundle.path.resolve().name}")
    env = WorldEnv(
        args.bundle,
        variant=args.variant,
        seed=args.seed,
        width=args.width,
        height=args.height,
        film_interval_s=args.film_interval or None,
        record_dir=out,
    )
    refused = 0
    try:
        _print_step(env.history[0], "start")
        for a in actions:
            res = env.try_step(a)
            refused += not res.ok
            _print_step(res, a.describe())
    finally:
        env.close()
    print(f"trajectory written to {out}")
    if refused:
        print(f"wac: {refused} of {len(actions)} action(s) refused (the ERROR lines above)", file=sys.stderr)
        return 1
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


def cmd_render(args: argparse.Namespace) -> int:
    from wac.progress import Progress

    from .trajectory import save_png

    _check_size(args)
    out = Path(args.out)
    bundles = list(args.bundle)
    for b in bundles:
        Bundle.open(b)  # NoBundle (exit 2) before anything is rendered
    starts = []
    with Progress(len(bundles), "render") as bar:  # a bar on a terminal, a line every 30 s in a log
        for b in bundles:
            task_id, shots = render_shots(b, args.width, args.height)
            folder = out / task_id if len(bundles) > 1 else out
            folder.mkdir(parents=True, exist_ok=True)
            for name, (clean, pert) in shots.items():
                save_png(folder / f"{name}.png", side_by_side(clean, pert))
                print(folder / f"{name}.png", flush=True)
            starts.append((task_id, side_by_side(*shots["start"])))
            bar.update(True)
    if len(bundles) > 1:
        path = out / "contact_sheet.png"
        save_png(path, contact_sheet(starts))
        print(path)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (`python -m wac.runtime.commands play ...`), with `wac`'s exit codes."""
    from wac.exits import run_command

    parser = argparse.ArgumentParser(prog="wac")
    register(parser.add_subparsers(dest="command", required=True))
    return run_command(parser, argv)


if __name__ == "__main__":
    raise SystemExit(main())
