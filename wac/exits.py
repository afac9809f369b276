"""Exit codes of wac's command lines, in one place: 0 success, 1 errors in the sources or a failed
check, 2 usage errors, 3 an internal error (details in a crash file), 130 interrupted.

`run_command` parses the arguments and runs the chosen command's `func`; `wac` (wac/cli.py) and
the standalone entry of each bundle's selfcheck.py both go through it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback

from wac.errors import SourceErrors, UsageError, WacError

INTERRUPTED = 130
SETTLE_S = 5.0  # after an interrupt, how long background threads get to finish


def run_command(parser: argparse.ArgumentParser, argv: list[str] | None) -> int:
    """Parse `argv` with `parser` and run `args.func(args)`; every outcome becomes an exit code.

    An interrupted command leaves promptly: if a background thread (a process pool's manager
    whose workers were killed, say) is still alive `SETTLE_S` after the command returned, the
    process exits at once instead of waiting for it at interpreter shutdown."""
    code = _run(parser, argv)
    if code == INTERRUPTED:
        _leave_promptly(code)
    return code


def _leave_promptly(code: int) -> None:
    import threading
    import time

    deadline = time.monotonic() + SETTLE_S
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    for t in others:
        t.join(max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() for t in others):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _run(parser: argparse.ArgumentParser, argv: list[str] | None) -> int:
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else 2
    try:
        return int(args.func(args) or 0)
    except SourceErrors as exc:
        for d in exc.diagnostics:
            print(d.render(), file=sys.stderr)
        return 1
    except UsageError as exc:
        print(f"wac: error: {exc}", file=sys.stderr)
        return 2
    except WacError as exc:
        print(f"wac: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `wac taxonomy | head`: the reader left, which is no error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("wac: interrupted", file=sys.stderr)
        return INTERRUPTED
    except Exception:
        with tempfile.NamedTemporaryFile("w", prefix="wac-crash-", suffix=".txt", delete=False) as fh:
            traceback.print_exc(file=fh)
            where = fh.name
        print(
            f"wac: internal error (a bug in wac, not in your task files); details written to {where}",
            file=sys.stderr,
        )
        return 3
