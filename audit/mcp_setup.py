"""What an MCP server needs before it serves: a checked bundle, an episode directory outside the
agent's reach, the session options from the flags, the in-context examples, and a stdout kept
for the protocol.  Shared by `wac mcp` (mcp_server.py) and its replay paradigm (replay_mcp.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile
from pathlib import Path

from wac.bundle.reader import CONTEXT, TASK, Bundle, where_instead
from wac.errors import UsageError

from .session import SessionOptions

# --- stdout hygiene ------------------------------------------------------------------------------


def flush_c_stdio() -> None:
    """Flush C's stdio buffers: pybullet's printf output would otherwise leave at exit, onto the wire."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def stdout_to_stderr():
    """Send everything written to stdout, from Python or from C, to stderr for the duration."""
    sys.stdout.flush()
    flush_c_stdio()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        flush_c_stdio()
        os.dup2(saved, 1)
        os.close(saved)


# --- setup -----------------------------------------------------------------------------------------


def load_examples(build_dir: Path, options: SessionOptions, category: str | None, avoid=frozenset()):
    """The taxonomy's in-context examples from the demo bundles in `build_dir`, with this task's example
    (one sharing no target kind with `avoid`, the task's) already rendered; None (and a note on
    stderr) when the run has none or it cannot be made."""
    if not options.example or not category:
        return None
    try:
        from .examples import ExampleLibrary

        library = ExampleLibrary(build_dir=build_dir, width=options.width, height=options.height)
        if (
            library.get(category, avoid=avoid) is None
        ):  # rendered now, so the first observe is quick and cannot fail on it
            raise LookupError(f"no demonstration for category {category!r}")
    except Exception as exc:  # the example is guidance, not the task: serve without it rather than not at all
        print(
            f"wac mcp: note: no in-context example ({type(exc).__name__}: {exc}); serving without one",
            file=sys.stderr,
        )
        return None
    return library


def inside(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def episode_dir(out: str | None, cwd: Path) -> Path:
    """Where the episode is recorded: never inside the working directory the agent is given."""
    if out:
        path = Path(out)
        if inside(path, cwd):
            raise UsageError(
                f"--out {out} lies inside the current directory, the agent's working directory; "
                "record the episode elsewhere so the agent cannot read it"
            )
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise UsageError(f"--out {out} must be a new or empty directory")
        path.mkdir(parents=True, exist_ok=True)
        return path.resolve()
    path = Path(tempfile.mkdtemp(prefix="wac-mcp-"))
    if inside(path, cwd):
        path.rmdir()
        raise UsageError(
            f"the temporary directory {path.parent} lies inside the current directory; "
            "pass --out DIR outside it"
        )
    return path


def check_bundle(bundle: str) -> Path:
    path = Path(bundle)
    if not path.exists():
        raise UsageError(f"no such bundle: {bundle}{where_instead(bundle)}")
    if not path.is_dir() or not Bundle.exists(path):
        raise UsageError(
            f"{bundle} is not a task bundle (a directory with {TASK}; build one with `wac build`)"
        )
    if not Bundle(path).has(CONTEXT):
        raise UsageError(f"{bundle} has no {CONTEXT}; rebuild it with `wac build`")
    return path.resolve()


def options_from(args) -> SessionOptions:
    return SessionOptions(
        example=not args.no_example and not args.no_hint,
        hint=not args.no_hint,
        budget_multiplier=args.budget_multiplier,
        closer_start=args.closer_start,
        observation=args.observation,
        seed=args.seed,
        width=args.width,
        height=args.height,
        timing=getattr(args, "timing", None) or "wac",  # `wac mcp` picks the protocol's (mcp_server.cmd_mcp)
    )
