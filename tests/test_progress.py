"""Progress reaches a log as well as a terminal (`wac.progress`): a line every so often with what is
done, what failed and how long is left, when the output is not a terminal; `wac build`, `wac
validate` and `wac render` with their output piped print those lines."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wac.progress import Progress


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_a_log_gets_a_line_every_interval_with_done_failed_and_time_left() -> None:
    out, clock = io.StringIO(), _Clock()
    with Progress(10, "selfcheck", stream=out, every_s=30.0, clock=clock) as p:
        clock.t = 10.0
        p.update(True)  # before the interval: nothing yet
        assert out.getvalue() == ""
        clock.t = 40.0
        p.update(False)
        clock.t = 50.0
        p.update(True)  # within 30 s of the last line
        clock.t = 76.0
        for _ in range(7):
            p.update(True)  # a line at the first; none at the last: the command's summary follows
    assert out.getvalue().splitlines() == [
        "selfcheck: 2/10 tasks done, 1 failed, 40 s elapsed, about 2 min 40 s left",
        "selfcheck: 4/10 tasks done, 1 failed, 1 min 16 s elapsed, about 1 min 54 s left",
    ]


def test_a_terminal_gets_a_bar_and_no_lines(monkeypatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(out, "isatty", lambda: True)
    clock = _Clock()
    with Progress(3, "selfcheck", stream=out, every_s=1.0, clock=clock) as p:
        for _ in range(3):
            clock.t += 5.0
            p.update(True)
    assert "done," not in out.getvalue()


# -- the commands, their output piped as in a log or CI --------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def _piped(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "WAC_PROGRESS_S": "0"}  # a line per finished item
    return subprocess.run(
        [sys.executable, "-m", "wac.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_wac_build_piped_prints_progress_lines(tmp_path) -> None:
    src = ROOT / "taxonomy" / "examples"
    files = sorted(str(p) for p in src.glob("*.wa"))[:3]
    proc = _piped("build", *files, "--root", str(ROOT), "-o", str(tmp_path / "b"), "-j", "1")
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("build: ")]
    assert lines and lines[0].startswith("build: 1/3 files done, 0 failed"), proc.stderr


@pytest.fixture(scope="module")
def two_bundles(tmp_path_factory) -> Path:
    src = ROOT / "taxonomy" / "examples"
    files = [str(src / "abnormal_trajectory.wa"), str(src / "existence.wa")]
    out = tmp_path_factory.mktemp("progress") / "b"
    assert _piped("build", *files, "--root", str(ROOT), "-o", str(out)).returncode == 0
    return out


def test_wac_validate_piped_prints_progress_lines(two_bundles) -> None:
    proc = _piped("validate", str(two_bundles), "--examples", "1", "-j", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "validate: 1/2 tasks done, 0 failed" in proc.stderr, proc.stderr


def test_wac_render_piped_prints_progress_lines(two_bundles, tmp_path) -> None:
    bundles = sorted(str(d) for d in two_bundles.iterdir() if d.is_dir())
    proc = _piped("render", *bundles, "--out", str(tmp_path / "shots"), "--width", "64", "--height", "48")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "render: 1/2 tasks done, 0 failed" in proc.stderr, proc.stderr
