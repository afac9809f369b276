"""The build directory is transactional: concurrent builds take turns, a build killed inside
its commit is rolled forward by the next one, a no-op build verifies what it trusts, and no lock,
staging or trash file is left beside the build.

These run `wac build` as real processes (a lock and a SIGKILL cannot be faked in-process);
`WAC_TEST_PAUSE_IN_COMMIT` holds a build inside its commit window.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial"
TASK = """import "../scenes/garden.wa"

task {name} on garden {{
    budget 30
    anomaly float {target} by {by} m
}}
"""


@pytest.fixture
def project(tmp_path) -> Path:
    shutil.copytree(TUTORIAL / "scenes", tmp_path / "scenes")
    (tmp_path / "tasks").mkdir()
    _write(tmp_path, "a", "pot_1", 0.15)
    _write(tmp_path, "b", "pot_2", 0.3)
    _write(tmp_path, "c", "bench_1", 0.3)
    return tmp_path


def _write(project: Path, name: str, target: str, by: float) -> None:
    text = TASK.format(name=f"t_{name}", target=target, by=by)
    (project / "tasks" / f"{name}.wa").write_text(text, encoding="utf-8")


def _build(project: Path, pause: Path | None = None, stderr=subprocess.PIPE) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "WAC_TEST_PAUSE_IN_COMMIT"}
    if pause is not None:
        env["WAC_TEST_PAUSE_IN_COMMIT"] = str(pause)
    return subprocess.Popen(
        [sys.executable, "-m", "wac.cli", "build", "tasks", "-o", "out", "-j", "1"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )


def _run(project: Path) -> tuple[int, str]:
    p = _build(project)
    _, err = p.communicate(timeout=120)
    return p.returncode, err


def _wait_for(path: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert proc.poll() is None, f"the build ended before its commit window: {proc.communicate()}"
        assert time.monotonic() < deadline, "the build never reached its commit window"
        time.sleep(0.05)


def _consistent(out: Path) -> dict[str, str]:
    """The index lists exactly the bundles on disk, each at its manifest's version."""
    index = json.loads((out / "index.json").read_text())
    listed = {e["id"]: e["version_id"] for e in index["tasks"]}
    on_disk = {p.name for p in out.iterdir() if p.is_dir()}
    assert set(listed) == on_disk, (listed, on_disk)
    for task_id, version in listed.items():
        manifest = json.loads((out / task_id / "manifest.json").read_text())
        assert manifest["version_id"] == version, task_id
        for rel in manifest["files"]:
            assert (out / task_id / rel).is_file(), (task_id, rel)
    return listed


def _leftovers(project: Path) -> list[str]:
    """Staging, trash and lock files beside the build: none once every build has ended."""
    return sorted(
        p.name
        for p in project.iterdir()
        if p.name.startswith((".out.tmp-", ".out.old-")) or p.name == ".out.lock"
    )


def test_a_second_build_waits_for_the_first_and_the_result_is_consistent(project):
    assert _run(project)[0] == 0
    _write(project, "a", "pot_1", 0.2)
    _write(project, "b", "pot_2", 0.35)
    marker = project / "in-commit"
    first = _build(project, pause=marker)
    _wait_for(marker, first)
    log = project / "second.err"
    with open(log, "w") as fh:
        second = _build(project, stderr=fh)
        deadline = time.monotonic() + 60
        while "waiting for another build into out" not in log.read_text():
            assert second.poll() is None, f"the second build did not wait: {log.read_text()}"
            assert time.monotonic() < deadline, "the second build never reported waiting"
            time.sleep(0.05)
        assert first.poll() is None  # still inside its commit window
        marker.unlink()  # let the first build finish its commit
        _, err1 = first.communicate(timeout=120)
        second.wait(timeout=120)
    assert first.returncode == 0, err1
    assert second.returncode == 0, log.read_text()
    assert set(_consistent(project / "out")) == {"t_a", "t_b", "t_c"}
    assert _leftovers(project) == []


def test_a_build_killed_inside_its_commit_is_rolled_forward_by_the_next(project):
    assert _run(project)[0] == 0
    before = _consistent(project / "out")
    _write(project, "a", "pot_1", 0.2)
    _write(project, "b", "pot_2", 0.35)
    marker = project / "in-commit"
    killed = _build(project, pause=marker)
    _wait_for(marker, killed)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    assert (project / "out" / ".wac-journal.json").exists()  # it really died mid-commit
    code, err = _run(project)
    assert code == 0, err
    after = _consistent(project / "out")
    assert after["t_a"] != before["t_a"] and after["t_b"] != before["t_b"]
    assert after["t_c"] == before["t_c"]
    assert _leftovers(project) == []
    code, err = _run(project)
    assert code == 0 and "up to date" in err, err


def test_a_no_op_build_checks_the_bundles_it_trusts(project):
    assert _run(project)[0] == 0
    shutil.rmtree(project / "out" / "t_b")  # a bundle lost behind the build's back
    code, err = _run(project)
    assert code == 0 and "up to date" not in err, err
    _consistent(project / "out")
    manifest = project / "out" / "t_c" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"version_id":"', '"version_id":"0'))
    code, err = _run(project)
    assert code == 0 and "up to date" not in err, err
    _consistent(project / "out")


def test_leftovers_of_killed_builds_are_removed(project):
    assert _run(project)[0] == 0
    for name in (".out.tmp-99999", ".out.old-99999"):
        (project / name / "t_x").mkdir(parents=True)
    assert _run(project)[0] == 0
    assert _leftovers(project) == []
