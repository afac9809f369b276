"""`wac validate` keeps hypothesis's files in the user's cache, not in the current directory."""

from __future__ import annotations

import pytest
from hypothesis.configuration import set_hypothesis_home_dir, storage_directory
from validation_helpers import ROOT, build

from wac.validation import validate as V


@pytest.fixture
def bundle(tmp_path):
    out = tmp_path / "build"
    assert build([ROOT / "taxonomy" / "examples" / "missing_support.wa"], ROOT, out).ok
    return out / "missing_support_demo"


def test_validate_writes_no_hypothesis_directory_in_the_cwd(bundle, tmp_path, monkeypatch):
    cwd, cache = tmp_path / "work", tmp_path / "cache"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(V, "differential", lambda *a, **k: V.Outcome(True, True, None, None, ""))
    try:
        assert V.validate_bundle(bundle, examples=3).passed
        where = storage_directory("constants", intent_to_write=False).path
        assert where.is_relative_to(cache / "wac" / "hypothesis"), where
    finally:
        set_hypothesis_home_dir(None)
    assert not (cwd / ".hypothesis").exists()
