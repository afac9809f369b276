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
    monkeypatch.setattr(verdicts, "SAVE_EVERY_S", 0.0)
    real = selfcheck.run_many

    def interrupted(bundles, *a, **k):
        real(bundles, *a, **k)  # every verdict reached, then Ctrl-C before the run returns
        raise KeyboardInterrupt

    monkeypatch.setattr(selfcheck, "run_many", interrupted)
    with pytest.raises(KeyboardInterrupt):
        selfcheck.cmd_selfcheck(
            selfcheck.argparse.Namespace(
                paths=[str(out)], jobs=1, out=None, force=False, json=True, backend="local"
            )
        )
    monkeypatch.setattr(selfcheck, "run_many", real)
    assert main([str(out), "--json"]) == 0 and _json(capsys)["reused"] == 1
