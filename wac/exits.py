"""Exit codes of wac's command lines, in one place.  Every subcommand keeps this contract:

====  ==============================================================================================
code  meaning
====  ==============================================================================================
0     success: the command did what was asked, and everything it checked passed
1     the user's inputs are wrong, or a check failed: errors in task sources (`build`, `check`, `fmt`,
      `lint`), an action list or replay script that names an unknown or out-of-range action
      (`play`, `audit`, `eval`), a bundle or run file whose contents are damaged, a failed
      self-check or validation, a failed episode, a judge error, `lint` findings, `fmt --check`
      that would reformat
2     usage: the command line cannot be run as written: an unknown option or a bad option value, a
      path that does not exist or is not what the command takes (not a bundle, a build or a run
      directory), an unknown task id, agent or reviewer, an output directory that is in use or not
      empty, a file or directory that cannot be read or written (permissions, a full disk)
3     an internal error: a bug in wac; the traceback is written to a crash file whose path is printed
130   interrupted (Ctrl-C; for `selfcheck`, `validate` and `eval` also SIGTERM, as a CI timeout
      sends it: `sigterm_interrupts`); what finished is kept and said
====  ==============================================================================================

Errors carry their code (`WacError.exit_code`: 1, `UsageError` and `NoBundle` 2, `ActionError` 1);
a command returns 0 or 1 itself for the outcome of its checks.  Every error is one `wac: error: …`
line (source errors: gcc-style diagnostics) and never a traceback.

`run_command` parses the arguments and runs the chosen command's `func`; `wac` (wac/cli.py) and
the standalone entry of each bundle's selfcheck.py both go through it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator

from wac.errors import SourceErrors, WacError

OK, FAILED, USAGE, INTERNAL, INTERRUPTED = 0, 1, 2, 3, 130
SETTLE_S = 5.0  # after an interrupt, how long background threads get to finish


def run_command(
    parser: argparse.ArgumentParser | Callable[[], argparse.ArgumentParser], argv: list[str] | None
) -> int:
    """Parse `argv` with `parser` and run `args.func(args)`; every outcome becomes an exit code.
    `parser` may be a function that makes it: an error while it is made (a taxonomy table that
    does not load, say) is then reported like any other.

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


def _parse_and_call(parser, argv: list[str] | None) -> int:
    if callable(parser):
        parser = parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse printed its usage line and the error
        return OK if exc.code in (0, None) else USAGE
    return int(args.func(args) or 0)


def _run(parser, argv: list[str] | None) -> int:
    try:
        return _parse_and_call(parser, argv)
    except SourceErrors as exc:
        for d in exc.diagnostics:
            print(d.render(), file=sys.stderr)
        return exc.exit_code
    except WacError as exc:  # UsageError and NoBundle: 2; ActionError and the rest: 1
        print(f"wac: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `wac taxonomy | head`: the reader left, which is no error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OK
    except OSError as exc:
        if exc.filename is None:  # not about a path the user can fix: a bug, reported below
            return _crashed()
        print(f"wac: error: cannot use {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return USAGE
    except KeyboardInterrupt:
        print("wac: interrupted", file=sys.stderr)
        return INTERRUPTED
    except Exception:
        return _crashed()


def _crashed() -> int:
    """Write the exception being handled to a crash file; one line on stderr says where."""
    with tempfile.NamedTemporaryFile("w", prefix="wac-crash-", suffix=".txt", delete=False) as fh:
        traceback.print_exc(file=fh)
        where = fh.name
    print(
        f"wac: internal error (a bug in wac, not in your task files); details written to {where}",
        file=sys.stderr,
    )
    return INTERNAL


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within it, SIGTERM (a CI timeout, `kill`, a scheduler's stop) stops the command like Ctrl-C,
    so it keeps and reports what finished.  Outside the main thread it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _stop(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
