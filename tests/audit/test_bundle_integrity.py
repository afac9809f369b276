"""Bundle integrity (issue 14): manifest hashes verified on load, assets stay inside the bundle,
cached example figures verified by content hash."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from wac.audit.examples import ExampleLibrary
from wac.audit.session import AuditSession, SessionOptions
from wac.bundle import Bundle
from wac.bundle.integrity import verify_bundle
from wac.cli import main
from wac.errors import BundleError
from wac.runtime.env import load_task

TASK = "city_02"
SMALL = SessionOptions(example=False, width=64, height=48)


@pytest.fixture
def copy(built, tmp_path) -> Path:
    b = tmp_path / TASK
    shutil.copytree(built / TASK, b)
    return b


def _rehash(bundle: Path, rel: str) -> None:
    """Make the manifest agree with an edited file (what a careful forger would do)."""
    mf = json.loads((bundle / "manifest.json").read_text())
    mf["files"][rel] = hashlib.sha256((bundle / rel).read_bytes()).hexdigest()
    (bundle / "manifest.json").write_text(json.dumps(mf))


def test_an_intact_bundle_loads(copy):
    assert "task.json" in verify_bundle(copy)
    assert load_task(copy)[0].id == TASK


def test_the_reader_opens_a_bundle_from_its_directory_or_files(copy):
    for member in ("task.json", "selfcheck.json", "selfcheck.py"):
        assert Bundle.open(copy / member).path == copy
    b = Bundle.open(copy, verify=True)
    assert b.task().id == b.context().task_id == b.plan().task_id == b.rubric().task_id == TASK
    with pytest.raises(BundleError, match="not a bundle"):
        Bundle.open(copy / "agent")
    (copy / "selfcheck.json").write_text("{}")
    with pytest.raises(BundleError, match="malformed selfcheck.json"):
        b.plan()


@pytest.mark.parametrize("rel", ["task.json", "agent/context.json", "selfcheck.json", "rubric.json"])
def test_an_edited_file_is_refused(copy, tmp_path, rel, capsys):
    f = copy / rel
    f.write_text(f.read_text().replace('"', '"', 1) + " ")
    with pytest.raises(BundleError, match=f"{rel} does not match the bundle's manifest"):
        AuditSession(copy, tmp_path / "ep", SMALL)
    assert main(["audit", str(copy), "--agent", "random", "--out", str(tmp_path / "ep2")]) != 0
    err = capsys.readouterr().err
    assert "does not match" in err and "Traceback" not in err


def test_a_missing_manifest_or_file_is_refused(copy):
    (copy / "selfcheck.py").unlink()
    with pytest.raises(BundleError, match="selfcheck.py is missing"):
        load_task(copy)
    (copy / "manifest.json").unlink()
    with pytest.raises(BundleError, match="no manifest.json"):
        load_task(copy)


@pytest.mark.parametrize("rel", ["../outside.json", "/etc/hostname", "assets/../../x.obj", "a\\b.obj"])
def test_asset_files_must_stay_inside_the_bundle(copy, rel):
    (copy.parent / "outside.json").write_text("{}")
    task = json.loads((copy / "task.json").read_text())
    task["assets"] = [{"id": "0" * 64, "file": rel, "format": "obj", "source": "x.obj"}]
    (copy / "task.json").write_text(json.dumps(task))
    _rehash(copy, "task.json")
    with pytest.raises(BundleError, match="inside the bundle|outside the bundle"):
        load_task(copy)


def test_manifest_entries_must_stay_inside_the_bundle(copy):
    (copy.parent / "secret.txt").write_text("x")
    mf = json.loads((copy / "manifest.json").read_text())
    mf["files"]["../secret.txt"] = hashlib.sha256(b"x").hexdigest()
    (copy / "manifest.json").write_text(json.dumps(mf))
    with pytest.raises(BundleError, match="not a path inside the bundle"):
        verify_bundle(copy)


def test_an_asset_must_be_listed_in_the_manifest(copy):
    (copy / "assets").mkdir()
    (copy / "assets" / "m.obj").write_text("v 0 0 0\n")
    task = json.loads((copy / "task.json").read_text())
    task["assets"] = [{"id": "f" * 64, "file": "assets/m.obj", "format": "obj", "source": "m.obj"}]
    (copy / "task.json").write_text(json.dumps(task))
    _rehash(copy, "task.json")
    with pytest.raises(BundleError, match="not listed in the manifest"):
        verify_bundle(copy)
    _rehash(copy, "assets/m.obj")
    assert "assets/m.obj" in verify_bundle(copy)
    (copy / "assets" / "m.obj").write_text("v 1 1 1\n")
    with pytest.raises(BundleError, match="assets/m.obj does not match"):
        verify_bundle(copy)


def test_a_tampered_cached_figure_is_rendered_again(built, tmp_path):
    cache = tmp_path / "cache"
    first = ExampleLibrary(built, cache_dir=cache, width=64, height=48)
    good = first.get("historical").figures
    slot = next((cache / "historical_demo").iterdir())
    (slot / "figure_1.png").write_bytes(b"not the figure")
    again = ExampleLibrary(built, cache_dir=cache, width=64, height=48)
    assert again.get("historical").figures == good and again.rendered == len(good)
    assert (slot / "figure_1.png").read_bytes() == good[0][1]
