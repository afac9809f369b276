"""The bundle's trigger is one model per kind (wac.bundle/2, issue 29): a field of another kind is
refused when the bundle is read, and a wac.bundle/1 bundle (one flat trigger model) still reads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from wac.bundle import model as B
from wac.bundle.reader import Bundle
from wac.errors import BundleError

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "bundles"
TRIGGER = TypeAdapter(B.Trigger)


@pytest.mark.parametrize("kind", list(B.TriggerKind))
def test_each_kind_reads_back_as_its_own_model(kind):
    trig = B.new_trigger(kind)
    doc = json.loads(TRIGGER.dump_json(trig, exclude_defaults=True))
    assert doc == ({} if kind is B.TriggerKind.always else {"kind": kind.value})  # the tag stays
    back = TRIGGER.validate_python(doc)
    assert type(back) is B.TRIGGER_TYPES[kind] and back == trig


@pytest.mark.parametrize(
    "doc",
    [
        {"kind": "revisit", "distance_m": 5.0},  # a beyond's field on a revisit
        {"kind": "beyond", "only_unseen": False},  # /1 wrote this; /2 refuses it
        {"kind": "after", "repeat": True},
        {"away_s": 2.0},  # no kind: always, which takes nothing
        {"kind": "sometimes"},
    ],
)
def test_a_field_of_another_kind_is_refused(doc):
    with pytest.raises(ValidationError):
        TRIGGER.validate_python(doc)


def _as_v1(task: dict) -> dict:
    """A /2 task document as the /1 compiler wrote it (its flat trigger's extra fields included)."""
    v1 = dict(task, schema_version="wac.bundle/1")
    anomalies = []
    for an in task["anomalies"]:
        trig = dict(an["trigger"])
        kind = trig.get("kind", "always")
        if kind in ("beyond", "within", "contact", "interact", "every"):
            trig["only_unseen"] = False
        trig.setdefault("repeat", False)
        anomalies.append(dict(an, trigger=trig))
    v1["anomalies"] = anomalies
    return v1


@pytest.mark.parametrize("category", ["existence", "view_dependent", "abnormal_trajectory", "visibility"])
def test_a_v1_bundle_reads_as_the_same_task(tmp_path, category):
    src = GOLDEN / category
    dst = tmp_path / category
    shutil.copytree(src, dst)
    task = json.loads((src / "task.json").read_text())
    (dst / "task.json").write_text(json.dumps(_as_v1(task)))
    old = Bundle.open(dst).task()
    assert old == Bundle.open(src).task()
    assert old.schema_version == B.SCHEMA_VERSION  # upgraded as read


def test_a_v1_trigger_that_says_something_its_kind_cannot_is_a_bundle_error(tmp_path):
    dst = tmp_path / "b"
    shutil.copytree(GOLDEN / "existence", dst)
    task = _as_v1(json.loads((dst / "task.json").read_text()))
    task["anomalies"][0]["trigger"]["distance_m"] = 4.0  # a revisit with a beyond's distance
    (dst / "task.json").write_text(json.dumps(task))
    with pytest.raises(BundleError, match="malformed task.json"):
        Bundle.open(dst).task()


def test_a_revisit_left_farther_than_the_area_allows_can_never_fire():
    # a hand-made bundle's revisit with no time away must be left by `leave_m`: the self-check's
    # static checks reject one the exploration area is too small for
    assert "can never fire" in B.RevisitTrigger(leave_m=50.0).never_fires_within(20.0)
    assert B.RevisitTrigger(leave_m=50.0, away_s=2.0).never_fires_within(20.0) is None
    assert B.RevisitTrigger(leave_m=10.0).never_fires_within(20.0) is None
    assert B.AfterTrigger(after_s=5.0).never_fires_within(1.0) is None
