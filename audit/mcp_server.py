"""`wac mcp BUNDLE`: one auditor session served to a native agent harness over MCP (stdio).

A harness (Claude Code, Codex CLI, Gemini CLI, any MCP client) starts this process, lists the
tools and drives one `AuditSession` through them; the harness owns the agent loop and its
history.  The tools are exactly the session's (`audit/tools.py`: names, descriptions, JSON
Schema input schemas) and every call goes to `AuditSession.call`, so the MCP agent sees what
the Python agents see.  Frames come back as PNG image content, each with a text block beside it
(ref, pose, caption), because some harnesses drop images.

Ground truth stays sealed in this process: the perturbation lives in memory, no tool takes a
path, and the episode directory (trajectory, tool log, report) is created outside the working
directory the harness gives its agent.  stdout carries nothing but the protocol: pybullet and
VTK print from C at import and at exit, so fd 1 is pointed at stderr whenever the SDK's stdio
transport is not holding it.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import shutil
import signal
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

from wac.errors import BundleError, UsageError

from .examples import bundle_target_kinds
from .mcp_setup import (  # noqa: F401 - re-exported: the setup helpers of `wac mcp`
    check_bundle,
    episode_dir,
    flush_c_stdio,
    inside,
    load_examples,
    options_from,
    stdout_to_stderr,
)
from .session import AuditSession, ToolResult, read_bundle_context

SERVER_NAME = "world_audit"

# free tools that change nothing an auditor could lose: harnesses may use this hint to skip confirmations
_READ_ONLY = frozenset({"observe", "read_example", "inspect", "history", "list_bugs"})


# --- the server ----------------------------------------------------------------------------------


def instructions(session: AuditSession) -> str:
    """The auditing rules a harness puts in front of its model: generic, with nothing of the task's ground truth."""
    names = {t.name for t in session.tools}
    film = (
        "the film frames taken during the action are shown too"
        if session.options.observation == "film"
        else "film frames taken during the action are archived for inspect"
    )
    example = (
        "read_example re-reads the in-context demonstration of this task's anomaly type (definition, images, "
        "reference answer); it is not evidence from this world. "
        if "read_example" in names
        else ""
    )
    return "\n".join(
        [
            "You are a game QA tester controlling a first-person agent in a 3D world through the tools of this "
            "server. Find the bugs in this world (things that look or behave wrong) and report each distinct one "
            "with evidence.",
            "",
            "Start by calling observe: its first call delivers your task (instructions, scene description, what you "
            "are looking for, the action budget) and the start view a0. "
            + example
            + "Call observe again at any time (for example after context compaction) to re-read the task, the "
            "current view, the remaining budget, your notes and your bug list.",
            "",
            f"Environment actions (each uses one of your {session.budget} actions and advances simulated time): "
            "move(distance_m, direction) walks forward or back and stops early at obstacles; turn(degrees) turns "
            "in place, positive = right; look(degrees) tilts the view, positive = down; interact presses, uses or "
            "opens what you are aiming at within about 3 m; wait(seconds) stands still and watches. All other "
            "tools are free and do not advance time.",
            "",
            f"Observation: after each environment action you receive the first-person view taken when it has "
            f"finished; {film}. Every frame has a ref: aN is the view after action N (a0 the start view), aN.fK the "
            "K-th film frame taken during action N. Each image comes with a text block giving its ref, pose and "
            "time; cite refs as evidence.",
            "",
            "Memory: every frame is archived. inspect(refs, region) brings up to 4 frames back at full resolution, "
            "optionally zoomed into a region; history(from_action, to_action) re-reads what you did and observed; "
            "write_notes appends durable notes that observe shows again.",
            "",
            "Bug reports: flag_bug(description, category, status, evidence) files a bug at your position and returns "
            "its id; say which object, what is wrong and how you know. update_bug changes a report or retracts it; "
            "list_bugs lists them. 'confirmed' is your own assessment, not a ground-truth verdict.",
            "",
            "Rules:",
            "- Actively test the area: walk through it, view things from more than one angle, use wait to watch "
            "things over time, use interact on mechanisms. If a move travels much less than asked while nothing "
            "solid is visibly in the way, that is evidence of an invisible blocker.",
            "- Inspect objects from 2-4 metres away so the whole object and its surroundings fit in view; use look "
            "up or down when needed. Verify every claim against the actual images.",
            "- For something that changes over time or after an interaction, describe the change and its condition.",
            "- Do not flag normal objects: not every unusual object is a bug.",
            "- Everything you need comes through these tools; they take frame refs, never file paths.",
            "- Finish with done(summary) when the inspection is complete.",
        ]
    )


def image_label(ref: str, caption: str) -> str:
    """The text block that travels beside an image (harnesses that drop images keep this)."""
    return f"[image {ref}] {caption}" if not caption.startswith(ref) else f"[image] {caption}"


def to_mcp(result: ToolResult):
    """A session result as MCP content: the text, then a text block and a PNG for each image."""
    from mcp.types import CallToolResult, ImageContent, TextContent

    content: list = [TextContent(type="text", text=result.text)]
    for item in result.images:
        content.append(TextContent(type="text", text=image_label(item.ref, item.caption)))
        mime = "image/jpeg" if item.png[:3] == b"\xff\xd8\xff" else "image/png"  # protocol.py sends JPEG
        content.append(
            ImageContent(type="image", data=base64.b64encode(item.png).decode("ascii"), mime_type=mime)
        )
    if result.after:
        content.append(TextContent(type="text", text=result.after))
    return CallToolResult(content=content, is_error=result.error)


def _unquote_json_args(spec_parameters: dict, args: dict) -> dict:
    """Some clients send array arguments as JSON text (`"[\\"a3\\"]"`); parse those back, leave the rest."""
    props = spec_parameters.get("properties", {})
    out = dict(args)
    for key, value in args.items():
        if isinstance(value, str) and props.get(key, {}).get("type") in ("array", "object"):
            with contextlib.suppress(ValueError, RecursionError):
                parsed = json.loads(value)
                if isinstance(parsed, list | dict):
                    out[key] = parsed
    return out


def build_server(session: AuditSession, *, name: str = SERVER_NAME):
    """An `MCPServer` whose tools are the session's, published with their own JSON Schemas."""
    from mcp.server import MCPServer
    from mcp.server.mcpserver.tools import Tool
    from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
    from mcp.types import ToolAnnotations
    from pydantic import ConfigDict

    class RawArguments(ArgModelBase):
        """Hands the client's arguments through untouched: the session validates them against the
        published schema and answers a mistake with a clear tool error instead of a pydantic dump."""

        model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

        def model_dump_one_level(self) -> dict[str, Any]:
            return {"arguments": dict(self.model_extra or {})}

    def handler(spec):
        # Async on purpose: the SDK runs sync tools on worker threads, but the renderer's GL context
        # belongs to the thread that made it.  Calls are short and one client drives one session.
        async def call(arguments: dict) -> Any:
            try:
                result = session.call(spec.name, _unquote_json_args(spec.parameters, arguments))
            except Exception:  # a bug in wac: report it on stderr, give the agent a plain error, keep serving
                traceback.print_exc(file=sys.stderr)
                result = ToolResult(
                    f"ERROR: internal error while running {spec.name}; the server keeps "
                    "running, try another call",
                    error=True,
                )
            finally:
                flush_c_stdio()
            return to_mcp(result)

        return call

    tools = [
        Tool(
            fn=handler(spec),
            name=spec.name,
            description=spec.description,
            parameters=spec.parameters,
            fn_metadata=FuncMetadata(arg_model=RawArguments),
            is_async=True,
            annotations=ToolAnnotations(
                read_only_hint=spec.name in _READ_ONLY, destructive_hint=False, open_world_hint=False
            ),
        )
        for spec in session.tools
    ]
    text = instructions(session)
    if hasattr(session, "mcp_instructions"):  # the reference protocol (protocol.py) adds its differences
        text = session.mcp_instructions(text)
    server = MCPServer(name, instructions=text, tools=tools, log_level="WARNING")
    if hasattr(session, "mcp_instructions"):  # and answers an unknown tool itself ("ERROR: Unknown tool")
        known, call_tool = {t.name for t in session.tools}, server.call_tool

        async def call_unknown_too(tool_name, arguments, context=None, **kw):
            if tool_name not in known:
                return to_mcp(session.call(tool_name, arguments))
            return await call_tool(tool_name, arguments, context, **kw)

        server.call_tool = call_unknown_too
    return server


# --- examples, episode directory, command line ----------------------------------------------------


def open_session(args) -> AuditSession:
    """The episode's session, made before the protocol starts so that bad input fails with a plain error."""
    bundle = check_bundle(args.bundle)
    if args.width < 16 or args.height < 16:
        raise UsageError("--width and --height must be at least 16 pixels")
    options = options_from(args)
    cwd = Path.cwd()
    if inside(bundle, cwd):
        print(
            "wac mcp: warning: the bundle lies inside the current directory; an agent working here can read "
            "its ground truth (start the harness in another directory)",
            file=sys.stderr,
        )
    build = Path(args.build) if args.build else bundle.parent
    out = episode_dir(args.out, cwd)
    examples = None
    try:
        with stdout_to_stderr():
            examples = load_examples(
                build, options, read_bundle_context(bundle)[0].example, bundle_target_kinds(bundle)
            )
            return AuditSession(bundle, out, options, examples)
    except BaseException as exc:
        if examples is not None:
            examples.close()
        if args.out is None:  # our own temporary directory: leave nothing behind
            shutil.rmtree(out, ignore_errors=True)
        if isinstance(exc, BundleError):
            raise UsageError(str(exc)) from exc
        raise


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _stop_code(signum: int) -> int:
    return 130 if signum == signal.SIGINT else 0


def _finish(session: AuditSession) -> None:
    """End the episode once: stdout back to stderr, the report written, the example renderer closed."""
    if getattr(session, "_mcp_finished", False):
        return
    session._mcp_finished = True
    # the protocol is over: whatever the libraries print from here on goes to stderr
    sys.stdout.flush()
    flush_c_stdio()
    os.dup2(2, 1)
    session.close()
    if hasattr(session.examples, "close"):
        session.examples.close()
    flush_c_stdio()
    state = "done" if session.done else "ended without done"
    print(f"wac mcp: episode {state}; report in {session.out / 'report.json'}", file=sys.stderr)


def _finish_and_exit(session: AuditSession, signum: int) -> NoReturn:
    """Write the report and leave at once.  Nothing is raised through the transport: an exception
    thrown into anyio's task group, an import or the event loop at an arbitrary instant can
    corrupt their state (an internal error instead of a report), and the transport's stdin reader
    thread would hold up a normal exit anyway."""
    _hold([])  # a second stop must not cut the report short
    try:
        _finish(session)
    finally:
        sys.stderr.flush()
        os._exit(_stop_code(signum))


def _install(handler) -> None:
    for s in STOP_SIGNALS:
        signal.signal(s, handler)
        signal.siginterrupt(s, False)  # other threads' system calls restart instead of failing


def _hold(held: list[int]) -> None:
    """Hold a stop in `held` instead of acting on it.  The main thread blocks the signals (its C
    code, the renderer's and the physics', sees no EINTR; threads it starts inherit the block);
    a thread started earlier may still take one, and the handler then records it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    _install(lambda signum, frame: held.append(signum))


def _held_stop(held: list[int]) -> int | None:
    """The first stop held, by the handler or blocked and waiting in the kernel."""
    waiting = signal.sigpending()
    return next(iter(held), None) or next((s for s in STOP_SIGNALS if s in waiting), None)


def cmd_mcp(args: argparse.Namespace) -> int:
    from .protocol import ReferenceSession
    from .reference_config import apply_config, budget_multiplier, note_subcategory

    protocol = apply_config(args)  # --config, --protocol reference
    args.budget_multiplier = budget_multiplier(args.bundle, args.budget_actions, args.budget_multiplier)
    if protocol is not None and not args.no_example:
        note_subcategory(args.bundle, args.subcategory)
    # the reference runtime's seconds per action under its protocol (runtime/timing.py)
    args.timing = args.timing or ("reference" if protocol is not None else "wac")
    # A stop that arrives while the session opens (its episode directory already on disk) is held
    # until the session can write its report: the default action would kill the process with none,
    # and a handler that acted at once would interrupt the session's set-up halfway.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    held: list[int] = []
    _hold(held)
    try:
        if args.replay:  # the reference's replay paradigm (replay_mcp.py)
            from .replay_mcp import open_replay

            session = open_replay(args, protocol)
        else:
            session = open_session(args)
            if protocol is not None:
                session = ReferenceSession(session, protocol)
    except BaseException:
        for s, handler in previous.items():
            signal.signal(s, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    # from here on a stop writes the report and exits, whether idle or inside a tool call
    _install(lambda signum, frame: _finish_and_exit(session, signum))
    if held:
        _finish_and_exit(session, held[0])
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # one blocked meanwhile arrives now
    print(
        f"wac mcp: serving {len(session.tools)} tools on stdio; recording the episode to {session.out}",
        file=sys.stderr,
    )
    try:
        import anyio

        from .mcp_stdio import serve_stdio

        anyio.run(serve_stdio, build_server(session))  # the SDK's transport, messages bounded
    finally:
        _hold(held)  # a stop now waits for the report
        _finish(session)
    stop = _held_stop(held)
    if stop is not None:
        sys.stderr.flush()
        os._exit(_stop_code(stop))
    for s, handler in previous.items():
        signal.signal(s, handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return 0


def register(subparsers) -> None:
    """Add `mcp` to an argparse sub-parser collection."""
    p = subparsers.add_parser(
        "mcp",
        help="serve one auditor session over MCP (stdio) to an agent harness",
        description="Serve one auditing episode of BUNDLE to an MCP client over stdio "
        "(Claude Code, Codex CLI, Gemini CLI, ...). See docs/mcp.md.",
    )
    p.add_argument(
        "bundle", metavar="BUNDLE", nargs="?", help="compiled task bundle directory (build/<task id>)"
    )
    p.add_argument(
        "--out",
        metavar="EPISODE_DIR",
        help="new or empty episode directory outside the working directory (default: a fresh "
        "temporary directory, printed on stderr)",
    )
    p.add_argument("--no-example", action="store_true", help="ablation: no in-context example")
    p.add_argument("--no-hint", action="store_true", help="ablation: no example and no anomaly-type hint")
    p.add_argument(
        "--budget-multiplier",
        type=float,
        default=1.0,
        metavar="X",
        help="scale the task's action budget (default 1)",
    )
    p.add_argument("--closer-start", action="store_true", help="ablation: start at the exposing view point")
    p.add_argument(
        "--observation",
        choices=("final", "film"),
        default="final",
        help="final: the final view inline, film frames archived for inspect (default); film: both inline",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--width", type=int, default=None, help="frame width (default 960; 640 with --protocol wac)"
    )
    p.add_argument(
        "--height", type=int, default=None, help="frame height (default 576; 480 with --protocol wac)"
    )
    p.add_argument(
        "--build",
        metavar="BUILD_DIR",
        help="where the demo bundles for the in-context example live (default: the bundle's parent)",
    )
    from .reference_config import add_arguments

    add_arguments(p)  # --config, --protocol reference and its run settings (protocol.py)
    p.set_defaults(func=cmd_mcp)
