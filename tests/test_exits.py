"""Exit codes (wac/exits.py): an interrupted command leaves promptly even when a background
thread would hold interpreter shutdown (a process pool's manager thread whose workers were
killed can wait forever)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

SCRIPT = textwrap.dedent(
    """
    import argparse, threading
    from wac.exits import run_command

    def func(args):
        threading.Thread(target=threading.Event().wait).start()  # never finishes, not a daemon
        raise KeyboardInterrupt

    p = argparse.ArgumentParser()
    p.set_defaults(func=func)
    raise SystemExit(run_command(p, []))
    """
)


def test_an_interrupted_command_does_not_wait_for_a_stuck_thread():
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 130, proc.stderr
    assert "wac: interrupted" in proc.stderr
    assert time.monotonic() - t0 < 30
