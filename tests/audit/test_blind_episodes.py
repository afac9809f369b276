"""Agents that read no images (sweep, random, oracle) run without film images: same episode, same
metrics, same judgment; only the film PNGs nobody looks at are missing.  Agents that look still
get every frame."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wac.audit.agents.sweep import SweepAgent
from wac.audit.judge import judge_run
from wac.audit.metrics import run_metrics
from wac.audit.runner import RunConfig, run_eval
from wac.audit.session import AuditSession, SessionOptions

TASK = "city_02"
SMALL = SessionOptions(example=False, width=160, height=120, budget_actions=8)


@pytest.fixture(scope="module")
def task(built):
    assert (built / TASK).is_dir(), "the shipped corpus lost a task this test uses"
    return TASK


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _without_timing(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in ("ms", "env_ms")} for r in rows]


def _without_film_files(steps: list[dict]) -> list[dict]:
    return [{**s, "film": [{k: v for k, v in f.items() if k != "file"} for f in s["film"]]} for s in steps]


def _run(built: Path, out: Path, agent: str, options: SessionOptions = SMALL, task: str = TASK) -> Path:
    statuses = run_eval(built, out, RunConfig(agent=agent, options=options), only=[task])
    assert all(s["ok"] for s in statuses), statuses
    judge_run(out)
    return out / "tasks" / task


# living_05: a random walk whose final frames 13-16 depend on shadow maps re-baked at film frames
@pytest.mark.parametrize(
    ("agent", "tid", "budget"), [("sweep", TASK, 8), ("random", TASK, 8), ("random", "living_05", 16)]
)
def test_a_blind_agent_gets_the_same_episode_without_film_images(
    built, tmp_path, monkeypatch, agent, tid, budget
):
    assert (built / tid).is_dir(), "the shipped corpus lost a task this test uses"
    opts = SessionOptions(example=False, width=160, height=120, budget_actions=budget)
    blind = _run(built, tmp_path / "blind", agent, opts, tid)
    from wac.audit.agents import agent_class

    monkeypatch.setattr(agent_class(agent), "reads_images", True)  # as if it looked: every frame rendered
    full = _run(built, tmp_path / "full", agent, opts, tid)

    bt, ft = (
        _lines(blind / "trajectory" / "trajectory.jsonl"),
        _lines(full / "trajectory" / "trajectory.jsonl"),
    )
    assert sum(len(s["film"]) for s in ft) > 0, (
        "the episode must have film frames for this test to mean anything"
    )
    assert _without_film_files(bt) == _without_film_files(ft) and all(
        "file" not in f for s in bt for f in s["film"]
    )
    assert all((full / "trajectory" / f["file"]).is_file() for s in ft for f in s["film"])
    assert not list((blind / "trajectory").glob("step_*_f*.png"))
    # every final frame is still rendered, pixel for pixel the same
    for s in ft:
        assert (blind / "trajectory" / s["frame"]).read_bytes() == (
            full / "trajectory" / s["frame"]
        ).read_bytes()
    assert json.loads((blind / "trajectory" / "meta.json").read_text())["film_images"] is False
    assert "film_images" not in json.loads((full / "trajectory" / "meta.json").read_text())
    for name in ("events.jsonl",):
        assert (blind / "trajectory" / name).read_text() == (full / "trajectory" / name).read_text()
    assert _without_timing(_lines(blind / "tools.jsonl")) == _without_timing(_lines(full / "tools.jsonl"))
    rb, rf = (json.loads((d / "report.json").read_text()) for d in (blind, full))
    rb.pop("overhead_ms_median"), rf.pop("overhead_ms_median")
    assert rb == rf
    jb, jf = (json.loads((d / "judgment.json").read_text()) for d in (blind, full))
    jb.pop("report_sha256"), jf.pop("report_sha256")  # report.json holds the run's own timings
    assert jb == jf
    mb, mf = (run_metrics(d.parent.parent)["tasks"][0] for d in (blind, full))
    assert mb == mf and mb["coverage"]["frames"] > len(ft)  # film frames count for coverage


def test_an_agent_that_reads_images_gets_every_film_frame(built, task, tmp_path, monkeypatch):
    steps = tmp_path / "actions.txt"
    steps.write_text("move 2 forward\nturn 90\ndone looked\n", encoding="utf-8")
    d = _run(built, tmp_path / "run", f"replay:{steps}")
    film = [f for s in _lines(d / "trajectory" / "trajectory.jsonl") for f in s["film"]]
    assert film and all((d / "trajectory" / f["file"]).is_file() for f in film)
    # a blind agent whose run shows film frames inline gets them rendered too
    shown = SessionOptions(example=False, width=160, height=120, budget_actions=3, observation="film")
    d = _run(built, tmp_path / "film", "sweep", shown)
    film = [f for s in _lines(d / "trajectory" / "trajectory.jsonl") for f in s["film"]]
    assert film and all((d / "trajectory" / f["file"]).is_file() for f in film)


def test_inspecting_a_film_frame_that_was_not_rendered_is_an_error_result(built, task, tmp_path):
    with AuditSession(built / task, tmp_path / "ep", SMALL, film_images=False) as s:
        s.call("observe")
        res = s.call("move", {"distance_m": 2.0, "direction": "forward"})
        assert not res.error and "a1.f1" in res.text and len(res.images) == 1  # the final frame
        bad = s.call("inspect", {"refs": ["a1.f1"]})
        assert bad.error and "not rendered" in bad.text
        ok = s.call("inspect", {"refs": ["a1"]})
        assert not ok.error and len(ok.images) == 1
    assert isinstance(SweepAgent.reads_images, bool) and not SweepAgent.reads_images
