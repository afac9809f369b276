"""Kept self-check verdicts (validation/verdicts.py): an unchanged bundle is not checked again, and a
kept verdict is verified before it is reused (the bundle's bytes, the checker, the evidence files)."""

from __future__ import annotations

import json

import pytest
from validation_helpers import ROOT, build

from wac.bundle.integrity import write_manifest
from wac.bundle.model import CompiledTask
from wac.validation import selfcheck, verdicts
from wac.validation.selfcheck import main


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("verdicts") / "build"
    result = build([ROOT / "taxonomy" / "examples" / "scale.wa"], ROOT, out)
    assert result.ok, [d.render() for d in result.diagnostics]
    return out


@pytest.fixture
def checked(monkeypatch):
    """The bundles each `wac selfcheck` really checked (the real checks still run)."""
    runs: list[list[str]] = []
    real = selfcheck.run_many

    def spy(bundles, *a, **k):
        runs.append([b.name for b in bundles])
        return real(bundles, *a, **k)

    monkeypatch.setattr(selfcheck, "run_many", spy)
    return runs


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_an_unchanged_bundle_reuses_its_verdict_and_an_edited_one_is_checked_again(built, checked, capsys):
    assert main([str(built), "--json", "--force"]) == 0
    first = _json(capsys)
    assert checked == [["scale_demo"]] and first["reused"] == 0
    assert (built / verdicts.CACHE_FILE).is_file()

    assert main([str(built), "--json"]) == 0
    again = _json(capsys)
    assert checked == [["scale_demo"]] and again["reused"] == 1  # not checked again
    kept, fresh = again["results"][0], first["results"][0]
    assert kept.pop("reused") is True and fresh.pop("reused") is False
    assert {k: v for k, v in kept.items() if k != "seconds"} == {
        k: v for k, v in fresh.items() if k != "seconds"
    }

    assert main([str(built)]) == 0  # the table says which verdicts were reused
    out = capsys.readouterr().out
    assert "reused" in out and "1 verdict(s) reused" in out

    # an edit to the bundle (re-sealed, so that it loads) makes its verdict stale
    task = built / "scale_demo" / "task.json"
    task.write_text(task.read_text() + "\n")
    write_manifest(built / "scale_demo")
    assert main([str(built), "--json"]) == 0
    assert checked[-1] == ["scale_demo"] and _json(capsys)["reused"] == 0


def test_a_new_checker_or_force_checks_again(built, checked, capsys, monkeypatch):
    assert main([str(built), "--json"]) == 0
    capsys.readouterr()
    n = len(checked)
    assert main([str(built), "--json", "--force"]) == 0
    assert len(checked) == n + 1
    capsys.readouterr()
    monkeypatch.setattr(verdicts, "checker_digest", lambda: "another wac")
    assert main([str(built), "--json"]) == 0
    assert len(checked) == n + 2 and _json(capsys)["reused"] == 0


def test_a_kept_verdict_needs_its_evidence_files(built, checked, capsys, tmp_path):
    ev = tmp_path / "ev"
    assert main([str(built), "--json", "--out", str(ev)]) == 0
    frames = _json(capsys)["results"][0]["frames"]
    assert frames and (ev / "scale_demo" / frames[0]).is_file()
    n = len(checked)
    assert main([str(built), "--json", "--out", str(ev)]) == 0
    assert len(checked) == n and _json(capsys)["reused"] == 1
    (ev / "scale_demo" / frames[0]).unlink()  # evidence gone: checked again, frames written again
    assert main([str(built), "--json", "--out", str(ev)]) == 0
    assert len(checked) == n + 1 and (ev / "scale_demo" / frames[0]).is_file()
    capsys.readouterr()


def test_a_failing_verdict_is_kept_too_but_not_an_error(tmp_path, checked, capsys):
    out = tmp_path / "build"
    assert build([ROOT / "taxonomy" / "examples" / "scale.wa"], ROOT, out).ok
    bundle = out / "scale_demo"
    plan = (bundle / "selfcheck.json").read_text()
    (bundle / "selfcheck.json").write_text("{}")  # unreadable plan: a check that cannot run
    write_manifest(bundle)
    assert main([str(out), "--json"]) == 1
    assert _json(capsys)["results"][0]["error"]
    assert not (out / verdicts.CACHE_FILE).exists()  # nothing kept
    assert main([str(out), "--json"]) == 1 and len(checked) == 2  # an error is never reused
    capsys.readouterr()
    # a real failure: the task with its anomaly stripped (the clean world posing as the perturbed one)
    (bundle / "selfcheck.json").write_text(plan)
    task = CompiledTask.model_validate_json((bundle / "task.json").read_text())
    stripped = task.model_copy(
        update={"anomalies": tuple(a.model_copy(update={"effects": ()}) for a in task.anomalies)}
    )
    (bundle / "task.json").write_text(stripped.model_dump_json())
    write_manifest(bundle)
    assert main([str(out), "--json"]) == 1 and len(checked) == 3
    first = _json(capsys)["results"][0]
    assert main([str(out), "--json"]) == 1 and len(checked) == 3  # kept: the same bytes fail the same way
    again = _json(capsys)["results"][0]
    assert again["reused"] and again["reasons"] == first["reasons"] and not again["passed"]


def test_an_interrupted_run_keeps_what_it_finished(tmp_path, monkeypatch, capsys):
    out = tmp_path / "build"
    assert build([ROOT / "taxonomy" / "examples" / "scale.wa"], ROOT, out).ok
    real = selfcheck.run_many

    def interrupted(bundles, *a, **k):
        real(bundles, *a, **k)  # every verdict reached, then Ctrl-C before the run returns
        raise KeyboardInterrupt

    monkeypatch.setattr(selfcheck, "run_many", interrupted)
    # the verdicts are written on the interrupt, not only every SAVE_EVERY_S seconds
    code = selfcheck.cmd_selfcheck(
        selfcheck.argparse.Namespace(
            paths=[str(out)], jobs=1, out=None, force=False, json=True, backend="local"
        )
    )
    assert code == 130
    assert "wac: interrupted: 1 passed, 0 failed, 0 not checked" in capsys.readouterr().err
    monkeypatch.setattr(selfcheck, "run_many", real)
    assert main([str(out), "--json"]) == 0 and _json(capsys)["reused"] == 1


# Ctrl-C in a real `wac selfcheck`: the second bundle's check blocks (after a marker file says so)
# until the test interrupts it, so the first one has surely finished
INTERRUPTED_RUN = """
import sys, time
from pathlib import Path
import wac.validation.pool as pool
marker, real, calls = Path(sys.argv[1]), pool.safe_check, []
def blocking(bundle, out=None):
    calls.append(bundle)
    if len(calls) == 2:
        marker.write_text("checking the second bundle")
        time.sleep(600)
    return real(bundle, out)
pool.safe_check = blocking
from wac.cli import main
raise SystemExit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])  # Ctrl-C; a CI timeout or `kill`
def test_ctrl_c_in_wac_selfcheck_prints_what_finished_and_the_next_run_reuses_it(tmp_path, stop):
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "build"
    examples = ROOT / "taxonomy" / "examples"
    sources = [examples / f"{n}.wa" for n in ("scale", "missing_support", "improper_configuration")]
    assert build(sources, ROOT, out).ok
    marker = tmp_path / "marker"
    proc = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_RUN, str(marker), "selfcheck", str(out), "-j", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a foreground job
    )
    deadline = time.monotonic() + 120
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), proc.communicate()
    proc.send_signal(getattr(signal, stop))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "wac: interrupted: 1 passed, 0 failed, 2 not checked" in err
    assert "1 finished verdict(s) kept" in err and "Traceback" not in err
    first = sorted(p.name for p in out.iterdir() if (p / "selfcheck.json").is_file())[0]
    kept = json.loads((out / verdicts.CACHE_FILE).read_text())["bundles"]
    assert list(kept) == [first]  # on disk: the finished verdict, and only it

    again = subprocess.run(
        [sys.executable, "-m", "wac.cli", "selfcheck", str(out), "-j", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["reused"] == 1 and report["total"] == 3
    assert [r["task_id"] for r in report["results"] if r["reused"]] == [first]
