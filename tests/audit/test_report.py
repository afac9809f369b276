"""`wac report`: Markdown, JSON and charts of a run, byte-stable; comparisons; pipeline-check labels."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from wac.audit.metrics import PIPELINE_LABEL, run_metrics
from wac.audit.report import CHARTS, compact, print_summary, write_report
from wac.cli import main

TASKS = {  # task id -> (pose x, y, yaw of the only frame, judged score)
    "market_03": (-8.9, 1.3, 0.0, 1),
    "living_01": (4.0, 0.0, -90.0, 0),
    "city_10": (0.0, -8.5, 90.0, 0),
}


def make_run(built: Path, run: Path, agent: str = "sweep", pipeline_check: bool = False) -> Path:
    for tid, (x, y, yaw, score) in TASKS.items():
        d = run / "tasks" / tid
        (d / "trajectory").mkdir(parents=True)
        (d / "trajectory/trajectory.jsonl").write_text(
            json.dumps(
                {
                    "step": 0,
                    "action": "start",
                    "args": {},
                    "sim_time": 0.0,
                    "frame": "step_000.png",
                    "film": [],
                    "pose": {"x": x, "y": y, "z": 0.0, "yaw_deg": yaw, "pitch_deg": 0.0},
                }
            )
            + "\n"
        )
        (d / "episode.json").write_text(json.dumps({"task_id": tid, "bundle": str(built / tid)}))
        (d / "report.json").write_text(
            json.dumps(
                {
                    "task_id": tid,
                    "paradigm": "interactive",
                    "done": True,
                    "bugs": [],
                    "actions_used": 5,
                    "budget": 40,
                    "tool_calls": 7,
                }
            )
        )
        sha = hashlib.sha256((d / "report.json").read_bytes()).hexdigest()
        (d / "judgment.json").write_text(
            json.dumps(
                {
                    "format": "wac.judgment/1",
                    "backend": "keyword",
                    "model": "wac-keyword/1",
                    "report_sha256": sha,
                    "entries": [{"anchor": True, "category": "x", "score": score}],
                    "success": score == 1,
                    "all_success": score == 1,
                    "error": None,
                }
            )
        )
    (run / "run.json").write_text(
        json.dumps(
            {
                "format": "wac.run/1",
                "agent": agent,
                "paradigm": "interactive",
                "explorer": None,
                "options": {"seed": 0},
                "build": str(built),
                "tasks": list(TASKS),
                "pipeline_check": pipeline_check,
            }
        )
    )
    return run


def _bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_report_writes_markdown_json_and_charts_reproducibly(built, tmp_path):
    run = make_run(built, tmp_path / "run")
    out, (m,) = write_report([run])
    assert out == run / "report"
    assert sorted(p.name for p in out.iterdir()) == sorted(["report.md", "report.json", *CHARTS])
    for c in CHARTS:
        assert (out / c).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((out / "report.json").read_text())
    assert data == json.loads(json.dumps(run_metrics(run)))
    md = (out / "report.md").read_text()
    for section in (
        "## Overall",
        "## By family",
        "## By category",
        "## By scene type",
        "## Tasks",
        "geometric coverage",
        "market_03",
        "![sr_by_family](sr_by_family.png)",
    ):
        assert section in md
    assert "33.3% (1/3)" in md and "precision (matched / flagged bugs)" in md and "PIPELINE CHECK" not in md
    first = _bytes(out)
    write_report([run])
    assert _bytes(out) == first  # no wall clock anywhere: the same run gives the same bytes


def test_pipeline_check_runs_are_labelled_everywhere(built, tmp_path, capsys):
    run = make_run(built, tmp_path / "run", agent="oracle", pipeline_check=True)
    out, (m,) = write_report([run], tmp_path / "out")
    assert PIPELINE_LABEL in (out / "report.md").read_text()
    assert json.loads((out / "report.json").read_text())["run"]["label"] == PIPELINE_LABEL
    assert "[pipeline check]" in compact([m]) and PIPELINE_LABEL in compact([m])
    print_summary(run)
    assert "oracle (interactive) [pipeline check]" in capsys.readouterr().out


def test_several_runs_make_a_comparison(built, tmp_path):
    a = make_run(built, tmp_path / "a", agent="sweep")
    b = make_run(built, tmp_path / "b", agent="oracle", pipeline_check=True)
    shutil.copytree(a, tmp_path / "c")  # the same agent twice: labels say which run
    out, ms = write_report([a, b, tmp_path / "c"], tmp_path / "cmp")
    md = (out / "report.md").read_text()
    assert "# wac evaluation: comparison" in md and "oracle (interactive) [pipeline check]" in md
    assert "sweep (interactive) [a]" in md and "sweep (interactive) [c]" in md and "## SR by family" in md
    data = json.loads((out / "report.json").read_text())
    assert data["format"] == "wac.comparison/1" and len(data["runs"]) == 3
    assert all((out / c).is_file() for c in CHARTS)
    table = compact(ms)
    assert table.splitlines()[0].split()[:3] == ["agent", "tasks", "judged"] and "33.3% (1)" in table


def test_cli_report_and_user_mistakes(built, tmp_path, capsys):
    run = make_run(built, tmp_path / "run")
    assert main(["report", str(run)]) == 0
    cap = capsys.readouterr()
    assert (
        "sweep (interactive)" in cap.out
        and "static physics" in cap.out
        and (run / "report/report.md").is_file()
    )
    assert main(["report", str(run), str(run)]) == 2  # a comparison needs --out
    assert main(["report", str(tmp_path)]) == 2
    assert main(["report", str(tmp_path / "missing")]) == 2
    meta = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**meta, "build": str(tmp_path / "nobuild")}))
    for ep in (run / "tasks").glob("*/episode.json"):
        ep.unlink()
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "not a run directory" in err and "no bundle for task" in err
    assert "Traceback" not in err and all(
        line.startswith("wac: error: ") for line in err.strip().splitlines()
    )


@pytest.mark.parametrize("bad", ["{", "[1]", '{"format": "other/1"}'])
def test_a_broken_run_file_is_a_usage_error(tmp_path, bad, capsys):
    (tmp_path / "run.json").write_text(bad)
    assert main(["report", str(tmp_path)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_chart_bars_say_their_n_and_an_all_zero_chart_is_not_blank():
    from wac.audit.report import _figure

    fig = _figure(
        "SR", ["spatial", "temporal"], [("sweep", [0.0, None], [4, 0]), ("oracle", [0.0, 0.0], [4, 2])]
    )
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert {"0% (n=4)", "n/a (n=0)", "0% (n=2)"} <= set(texts)
    assert "every value is 0% or n/a" in texts  # otherwise the chart is an empty frame
    fig = _figure("SR", ["spatial"], [("sweep", [0.5], [6])], horizontal=True)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "50% (n=6)" in texts and "every value is 0% or n/a" not in texts
    assert min(t.get_fontsize() for t in fig.axes[0].texts) >= 9  # readable at the page's size
