"""The reference launcher's episode config as `wac mcp` settings (`wac mcp --config FILE`).

WorldAuditBench's launcher (`agent/vlm/native/launch.py`, `prepare`) writes one
`episode-config.json` per run and starts its server as `server.py --config FILE`; `wac mcp --config
FILE` reads the same file unchanged.  Every key the launcher writes is accepted, with the
reference server's default when it is absent (`agent/vlm/mcp/server.py`, `Episode.__init__`): no
in-context example unless `icl.enabled`, 400 tool calls, no full-budget guard, unlimited inspect,
on-demand observation, seed 0.  wac's own additions (`build`, `width`, `height`, `image_format`,
`move_extras`) are optional and change nothing when absent.  The keys that name the reference's
own backends (`environment_url`, `browser_*`, `page_sha256`, `upstream`, `icl_directory`) are
accepted and unused: wac serves its own world of the task.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

from wac.bundle.reader import Bundle
from wac.errors import UsageError

from .protocol import MAX_TOOL_CALLS, ProtocolOptions

# what launch.py's `prepare` writes (every run, then vla-replay and threejs extras)
LAUNCHER_KEYS = frozenset({
    "upstream", "run_dir", "environment", "environment_url", "task", "instruction", "max_actions",
    "max_tool_calls", "require_full_budget", "seed", "observation", "inspect_budget", "icl",
    "icl_directory", "subcategory", "scene_description", "allow_icl_overlap",
    "replay_dir", "preview_every", "replay_mode", "inline_full_res", "recording",
    "browser_root", "browser_page", "browser_case", "page_sha256",
})  # fmt: skip
WAC_KEYS = frozenset({"build", "width", "height", "image_format", "move_extras"})
# the reference's backends, all served by wac's own world of the task; "wac" names it explicitly
ENVIRONMENTS = ("wac", "fake", "unreal-http", "threejs", "vla-replay")
BUILD_ENV = "WAC_BUILD"  # where a bare task id is looked up when the config has no `build`


def _task_bundle(config: dict, path) -> Path:
    """The bundle the config's `task` names: a bundle directory, or a task id under `build` (a
    config key) or under $WAC_BUILD (the launcher writes only the task id)."""
    task = path(config["task"])
    if Bundle.exists(task):
        return task
    for build in (config.get("build"), os.environ.get(BUILD_ENV)):
        if build and Bundle.exists(path(build) / str(config["task"])):
            return path(build) / str(config["task"])
    if "build" in config:
        return path(config["build"]) / str(config["task"])
    return task


def _icl_enabled(icl) -> bool:
    """The reference's rule: examples only when the launch manifest says `enabled` (absent: off)."""
    if isinstance(icl, dict):
        return bool(icl.get("enabled", False))
    return bool(icl)


def config_options(config: dict, base_dir: Path) -> dict:
    """`wac mcp --config FILE`: the launcher's keys (see LAUNCHER_KEYS) and wac's (WAC_KEYS) as
    `wac mcp` settings.  Relative paths are relative to the config file."""
    if not isinstance(config, dict):
        raise UsageError("the config must be a JSON object")
    known = LAUNCHER_KEYS | WAC_KEYS
    unknown = sorted(set(config) - known)
    if unknown:
        raise UsageError(f"unknown config key(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    environment = config.get("environment", "wac")
    if environment not in ENVIRONMENTS:
        raise UsageError(f"environment must be one of {', '.join(ENVIRONMENTS)}, got {environment!r}")
    replay = environment == "vla-replay"
    if replay and not config.get("replay_dir"):
        raise UsageError("environment vla-replay needs replay_dir: an explorer's episode directory")
    if "task" not in config:
        raise UsageError("the config needs `task`: a bundle directory, or a task id with `build`")

    def path(value) -> Path:
        p = Path(str(value))
        return p if p.is_absolute() else base_dir / p

    observation = {"on-demand": "final", "final": "final", "film": "film"}.get(
        config.get("observation", "on-demand")
    )
    if observation is None:
        raise UsageError(f"observation must be on-demand, final or film, got {config.get('observation')!r}")
    inspect_budget = config.get("inspect_budget")
    return {
        "bundle": str(_task_bundle(config, path)),
        "out": str(path(config["run_dir"])) if config.get("run_dir") else None,
        "budget_actions": int(config["max_actions"]) if config.get("max_actions") else None,
        "observation": observation,
        "example": _icl_enabled(config.get("icl", {"enabled": False})),
        "subcategory": config.get("subcategory"),
        "seed": int(config.get("seed") or 0),
        "replay_dir": str(path(config["replay_dir"])) if replay else None,
        "replay_mode": str(config.get("replay_mode") or "play"),
        "preview_every": float(config.get("preview_every") or 5.0),
        "width": int(config.get("width", 960)),
        "height": int(config.get("height", 576)),
        "protocol": ProtocolOptions(
            max_tool_calls=int(config.get("max_tool_calls") or MAX_TOOL_CALLS),
            require_full_budget=bool(config.get("require_full_budget", False)),
            inspect_budget=None if inspect_budget is None else int(inspect_budget),
            move_extras=bool(config.get("move_extras", False)),
            image_format=str(config.get("image_format", "jpeg")),
        ),
    }


# --- `wac mcp` options ---------------------------------------------------------------------------


def add_arguments(p) -> None:
    """`wac mcp`'s reference-protocol options (mcp_server.register calls this)."""
    p.add_argument(
        "--config",
        metavar="FILE",
        help="the reference launcher's episode-config.json, unchanged (docs/mcp.md); implies "
        "--protocol reference, 960x576 JPEG images",
    )
    p.add_argument(
        "--protocol",
        choices=("wac", "reference"),
        default=None,
        help="reference (default): the reference harness's protocol, 960x576 JPEG frames (docs/mcp.md, "
        "'Coming from WorldAuditBench'); wac: wac's result texts, 640x480 PNG frames",
    )
    p.add_argument("--image-format", choices=("jpeg", "png"), default=None, help="reference protocol: images")
    p.add_argument(
        "--max-tool-calls", type=int, default=None, help=f"reference protocol: call cap ({MAX_TOOL_CALLS})"
    )
    p.add_argument(
        "--require-full-budget",
        action="store_true",
        default=None,
        help="refuse done before the budget is used",
    )
    p.add_argument(
        "--inspect-budget", type=int, default=None, help="inspect calls allowed (0: no inspect tool)"
    )
    p.add_argument(
        "--move-extras", action="store_true", default=None, help="wac's (blocked)/dropped after a move"
    )
    p.add_argument(
        "--timing",
        choices=("wac", "reference"),
        default=None,
        help="simulated seconds per action and film sampling (default: the protocol's; see docs/mcp.md)",
    )
    p.add_argument(
        "--replay",
        metavar="EXPLORE_DIR",
        help="the replay paradigm: review this explorer episode (its trajectory/) instead of acting; "
        "implies --protocol reference",
    )
    p.add_argument(
        "--replay-mode",
        choices=("play", "all", "vqa"),
        default=None,
        help="play: play(from_s, to_s) segments (default); all: the whole recording with observe; "
        "vqa: the whole recording and one report(bugs, summary)",
    )


def _read_config(name: str) -> dict:
    try:
        return json.loads(Path(name).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the config {name}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{name} is not valid JSON: {exc}") from None


def apply_config(args):
    """Fill `args` from `--config` (explicit flags win); returns the protocol options or None for wac's."""
    args.subcategory = None
    if args.config:
        c = config_options(_read_config(args.config), Path(args.config).parent)
        if args.bundle and Path(args.bundle).resolve() != Path(c["bundle"]).resolve():
            raise UsageError("give the bundle either as BUNDLE or as the config's `task`, not both")
        args.bundle = c["bundle"]
        args.out = args.out or c["out"]
        for key in ("observation", "seed", "subcategory"):
            setattr(args, key, c[key])
        args.width = args.width or c["width"]
        args.height = args.height or c["height"]
        args.no_example = args.no_example or not c["example"]
        args.budget_actions = c["budget_actions"]
        args.replay = args.replay or c["replay_dir"]
        args.replay_mode = args.replay_mode or c["replay_mode"]
        args.preview_every = c["preview_every"]
        proto = c["protocol"]
        args.protocol = args.protocol or "reference"
    else:
        proto = ProtocolOptions()
        args.budget_actions = None
        args.preview_every = 5.0
    if not args.bundle:
        raise UsageError("give a BUNDLE (or --config FILE with a `task`)")
    if args.replay:
        args.protocol = "reference"  # the replay paradigm's tools exist only in the reference protocol
    args.protocol = args.protocol or "reference"  # the paper's protocol unless wac's is asked for
    reference = args.protocol == "reference"
    args.width = args.width or (960 if reference else 640)
    args.height = args.height or (576 if reference else 480)
    if not reference:
        return None
    updates = {
        k: v
        for k, v in {
            "image_format": args.image_format,
            "max_tool_calls": args.max_tool_calls,
            "require_full_budget": args.require_full_budget,
            "inspect_budget": args.inspect_budget,
            "move_extras": args.move_extras,
        }.items()
        if v is not None
    }
    return replace(proto, **updates)


def note_subcategory(bundle: str | Path, subcategory: str | None) -> None:
    """The launcher names the task's subcategory; wac's example is the bundle's own category's.
    A mismatch is worth a note on stderr (it is not an error: the bundle is the truth)."""
    if not subcategory or not Bundle.exists(Path(bundle)):
        return
    from wac.taxonomy.reference import CODES

    from .session import read_bundle_context

    mine = CODES.get(read_bundle_context(Path(bundle))[0].example or "")
    if mine and str(subcategory).strip().upper() != mine:
        print(
            f"wac mcp: note: the config's subcategory {subcategory} is not this task's ({mine}); "
            f"read_example serves {mine}",
            file=sys.stderr,
        )


def budget_multiplier(bundle: str | Path, budget_actions: int | None, current: float) -> float:
    """The multiplier that gives exactly `budget_actions` (the config's max_actions)."""
    if budget_actions is None:
        return current
    if budget_actions < 1:
        raise UsageError("max_actions must be at least 1")
    from .session import read_bundle_context

    base = read_bundle_context(Path(bundle))[0].budget_actions
    mult = budget_actions / base
    if not 0 < mult <= 20:
        raise UsageError(f"max_actions {budget_actions} is more than 20 times the task's budget of {base}")
    return mult
