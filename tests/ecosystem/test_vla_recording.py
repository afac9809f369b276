"""A reference VLA recording (meta.json, poses.jsonl, f*.jpg) reviewed in the two-stage paradigm:
with `wac audit --paradigm two-stage --recording DIR` and over MCP (`wac mcp --replay DIR`, or the
launcher's `vla-replay` config), then judged like any run (issue 30)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("pybullet")

from wac.audit.vla_recording import is_vla_recording, load_vla_recording  # noqa: E402
from wac.errors import UsageError  # noqa: E402

TASK = "city_02"
FRAMES = 7  # 3 s of recording, a frame every 0.5 s


@pytest.fixture()
def vla(tmp_path):
    """A three.js VLA recording in the reference explorer's layout, walking 0.4 m per frame along z."""
    d = tmp_path / "vla"
    d.mkdir()
    names = []
    for k in range(FRAMES):
        name = f"f{k * 10:04d}.jpg"
        img = np.full((48, 80, 3), 40 + 30 * k, np.uint8)
        Image.fromarray(img).save(d / name, quality=90)
        names.append(name)
    poses = [{"t": t, "pos": [1.0, 1.7, 0.04 * t], "yaw": 90.0, "pitch": 0.0, "moved": 0.04,
              "keys": ["KeyW"]} for t in range((FRAMES - 1) * 10 + 1)]  # fmt: skip
    (d / "poses.jsonl").write_text("".join(json.dumps(p) + "\n" for p in poses))
    meta = {"kind": "vla_explore", "model": "vla-x", "task": "S02", "dt_ms": 50, "record_every": 10,
            "frames": names, "sim_seconds": 3.0}  # fmt: skip
    (d / "meta.json").write_text(json.dumps(meta))
    return d


def test_the_recording_reads_as_frames_every_half_second(vla, tmp_path):
    assert is_vla_recording(vla) and not is_vla_recording(tmp_path)
    rec = load_vla_recording(vla, TASK)
    assert [f.ref for f in rec.frames] == ["a0", *(f"a0.f{k}" for k in range(1, FRAMES))]
    assert [f.t_sim for f in rec.frames] == [k * 0.5 for k in range(FRAMES)] and rec.interval_s == 0.5
    last = rec.frames[-1]
    assert last.pose["y"] == pytest.approx(2.4) and last.pose["z"] == pytest.approx(1.7)  # [x, y_up, z]
    assert last.image.shape == (48, 80, 3) and last.file == vla / "f0060.jpg"
    (vla / "f0030.jpg").unlink()
    with pytest.raises(UsageError, match="1 recorded frame"):
        load_vla_recording(vla, TASK)


def test_wac_audit_reviews_a_vla_recording_and_judges_it(built, vla, tmp_path):
    from wac.audit.runner import RunConfig, run_eval
    from wac.audit.session import SessionOptions

    script = tmp_path / "review.txt"
    script.write_text("flag intersection confirmed two bins overlap\ndone reviewed\n")
    with pytest.raises(UsageError, match="two-stage"):
        RunConfig(agent=f"replay:{script}", recording=str(vla))
    config = RunConfig(
        agent=f"replay:{script}",
        paradigm="two-stage",
        recording=str(vla),
        options=SessionOptions(width=160, height=96, example=False),
    )
    run = tmp_path / "run"
    assert all(s["ok"] for s in run_eval(built, run, config, only=[TASK]))
    report = json.loads((run / "tasks" / TASK / "report.json").read_text())
    assert report["paradigm"] == "two-stage" and report["done"]
    assert report["bugs"][0]["evidence"] == [f"a0.f{FRAMES - 1}"]  # the recording's last frame
    assert json.loads((run / "run.json").read_text())["recording"] == str(vla)
    from wac.audit.judge import judge_run

    (status,) = judge_run(run, backend="keyword")
    assert status["task_id"] == TASK and "success" in status


def test_wac_mcp_replays_a_vla_recording(built, vla, tmp_path):
    from wac.audit.reference_config import apply_config
    from wac.audit.replay_mcp import open_replay
    from wac.cli import parser

    args = parser().parse_args(
        ["mcp", str(built / TASK), "--replay", str(vla), "--out", str(tmp_path / "ep"), "--no-example"]
    )
    args.width, args.height = 160, 96
    session = open_replay(args, apply_config(args))
    try:
        first = session.call("observe", {})
        assert not first.error and any(i.ref == "a0" for i in first.images), first.text
        seg = session.call("play", {"from_s": 0.5, "to_s": 2.0})
        assert seg.text.startswith("a1 play 0.5-2.0s -> moved ") and "a0.f3 (final)" in seg.text, seg.text
        assert not session.call("inspect", {"refs": ["a0.f0", "a0.f3"]}).error
        flag = session.call(
            "flag_bug",
            {
                "description": "bins overlap",
                "category": "geometry",
                "status": "suspect",
                "evidence": ["a0.f3"],
            },
        )
        assert flag.text.startswith("Recorded b1 [suspect] (geometry)"), flag.text
        assert not session.call("done", {"summary": "reviewed"}).error
    finally:
        session.close()
    meta = json.loads((tmp_path / "ep" / "meta.json").read_text())
    assert meta["status"] == "completed" and meta["flags"][0]["evidence"] == ["a0.f3"]


def test_the_launchers_vla_replay_config_is_read_as_written(built, vla, tmp_path):
    """launch.py's vla-replay config (replay_dir, preview_every, replay_mode, inline_full_res, recording)."""
    from wac.audit.reference_config import config_options

    config = {
        "upstream": "/opt/WorldAuditBench", "run_dir": str(tmp_path / "run/episode"), "environment": "vla-replay",
        "environment_url": None, "task": str(built / TASK), "instruction": "Inspect.", "max_actions": 40,
        "max_tool_calls": 400, "require_full_budget": False, "seed": 0, "observation": "on-demand",
        "inspect_budget": None, "icl": {"enabled": False}, "icl_directory": None, "subcategory": None,
        "scene_description": "A city.", "allow_icl_overlap": False, "replay_dir": str(vla), "preview_every": 5.0,
        "replay_mode": "play", "inline_full_res": True,
        "recording": {"kind": "vla_explore", "explorer": "vla-x", "task": "S02", "frames": FRAMES,
                      "sim_seconds": 3.0, "frame_source": "recorded jpeg"},
    }  # fmt: skip
    c = config_options(config, tmp_path)
    assert c["replay_dir"] == str(vla) and c["replay_mode"] == "play" and c["example"] is False
    assert c["bundle"] == str(built / TASK) and c["budget_actions"] == 40
