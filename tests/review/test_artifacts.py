"""The task page's rendered parts: the auditor's context exactly as a session gives it, and the evidence."""

from __future__ import annotations

import json

from wac.audit.runner import _examples
from wac.audit.session import AuditSession, SessionOptions
from wac.review.artifacts import Artifacts
from wac.review.catalog import read_build


def test_context_and_evidence_match_what_auditor_and_selfcheck_give(project, tmp_path, monkeypatch):
    monkeypatch.setenv("WAC_CACHE_DIR", str(tmp_path / "examples"))
    task = read_build(project / "build")[0]
    arts = Artifacts(tmp_path / "cache", project / "build")
    try:
        assert arts.state(task.id, task.version_id, task.bundle) == "pending"
        arts.wait(task.id, task.version_id, timeout=600)
        assert arts.state(task.id, task.version_id, task.bundle) == "ready"
        got = arts.read(task.id, task.version_id)
    finally:
        arts.shutdown()
    options = SessionOptions()
    examples = _examples(project / "build", options)
    session = AuditSession(task.bundle, None, options, examples)
    try:
        first = session.initial_input()
    finally:
        session.close()
        examples.close()
    assert got["context"]["text"] == first.text
    assert [(i["ref"], i["caption"]) for i in got["context"]["images"]] == [
        (i.ref, i.caption) for i in first.images
    ]
    d = arts.dir(task.id, task.version_id)
    for item, shown in zip(first.images, got["context"]["images"], strict=True):
        assert (d / shown["file"]).read_bytes() == item.png
    assert got["context"]["images"][-1]["ref"] == "a0"  # the start view comes last
    rubric = json.loads((task.bundle / "rubric.json").read_text())
    assert rubric["entries"][0]["expected"] not in got["context"]["text"]
    assert got["selfcheck"]["passed"] is True
    assert got["evidence"] and all(
        arts.file(task.id, task.version_id, f"evidence/{f['file']}") for f in got["evidence"]
    )
    assert got["evidence"][0]["left"] == "clean" and got["evidence"][0]["right"] == "perturbed"
    assert arts.file(task.id, task.version_id, "../" + task.version_id + "/context_00.png") is None
