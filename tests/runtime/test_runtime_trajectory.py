"""Trajectory directories (record, read, replay) and the play/render sub-commands."""

from __future__ import annotations

import argparse
import json

import numpy as np
from rt_scenes import anomaly, box, showcase, task

from wac.bundle.model import RemoveObject, TriggerKind, new_trigger
from wac.runtime import commands
from wac.runtime.env import WorldEnv
from wac.runtime.replay import replay
from wac.runtime.trajectory import read_trajectory


def _bundle(tmp_path, t):
    d = tmp_path / "bundle"
    d.mkdir()
    (d / "task.json").write_text(t.model_dump_json(), encoding="utf-8")
    from wac.bundle.integrity import write_manifest

    write_manifest(d)  # bundles are verified against their manifest on load
    return d


def _hide_task():
    crate = box("crate", (0.6, 0.6, 0.6), (5.0, 0.0, 0.0), material="wood")
    return task(
        [crate],
        anomalies=[
            anomaly(
                [RemoveObject(target="crate")],
                ["crate"],
                new_trigger(kind=TriggerKind.look_away),
                operator="hide",
            )
        ],
    )


def test_record_read_and_replay(tmp_path):
    t = _hide_task()
    out = tmp_path / "run"
    env = WorldEnv(t, "perturbed", width=160, height=120, film_interval_s=0.5, record_dir=out)
    for a in ("move 2", "turn 150", "wait 1"):
        env.step(a)
    env.close()
    tr = read_trajectory(out)
    assert [s["step"] for s in tr.steps] == [0, 1, 2, 3]
    assert tr.steps[1]["action"] == "move" and tr.steps[1]["frame"] == "step_001.png"
    assert tr.steps[1]["film"][0]["file"] == "step_001_f1.png" and (out / "step_001_f1.png").exists()
    assert tr.frame(2).shape == (120, 160, 3)
    assert tr.fired() == 1  # the hidden event log says the trigger fired exactly once
    assert "fired" not in (out / "trajectory.jsonl").read_text()  # nothing about triggers in the agent's log
    assert json.loads((out / "meta.json").read_text())["variant"] == "perturbed"
    again, same = replay(out, t, tmp_path / "again")
    assert same
    assert all((again.frame(i) == tr.frame(i)).all() for i in range(4))


def test_a_recording_keeps_every_frame_even_when_step_images_are_off(tmp_path):
    """`step_images=False` skips frames nobody looks at; a recording looks at all of them."""
    out = tmp_path / "run"
    env = WorldEnv(
        _hide_task(),
        "perturbed",
        width=160,
        height=120,
        film_interval_s=None,
        record_dir=out,
        step_images=False,
    )
    env.step("turn 30")
    env.close()
    tr = read_trajectory(out)
    assert [s["frame"] for s in tr.steps] == ["step_000.png", "step_001.png"]
    assert tr.frame(0).shape == tr.frame(1).shape == (120, 160, 3)


def test_events_say_whether_the_target_was_in_view_when_the_trigger_fired(tmp_path):
    # look_away fires once the crate is out of view; an `after` trigger fires in plain view
    seen = task(
        [box("crate", (0.6, 0.6, 0.6), (5.0, 0.0, 0.0), material="wood")],
        anomalies=[
            anomaly(
                [RemoveObject(target="crate")],
                ["crate"],
                new_trigger(kind=TriggerKind.after, after_s=0.5, only_unseen=False),
                operator="hide",
            )
        ],
    )
    runs = {}
    for name, t, acts in (
        ("away", _hide_task(), ("move 2", "turn 150", "wait 1")),
        ("seen", seen, ("wait 1",)),
    ):
        out = tmp_path / name
        env = WorldEnv(t, "perturbed", width=160, height=120, film_interval_s=None, record_dir=out)
        for a in acts:
            env.step(a)
        env.close()
        runs[name] = [e for e in read_trajectory(out).events if e["event"] == "fired"]
        assert [e.target_in_view for e in env.events if e.event == "fired"] == [
            e["target_in_view"] for e in runs[name]
        ]
    assert [e["target_in_view"] for e in runs["away"]] == [False]  # an existence change out of view
    assert [e["target_in_view"] for e in runs["seen"]] == [True]


def test_play_command(tmp_path, capsys):
    b = _bundle(tmp_path, _hide_task())
    rc = commands.main(
        [
            "play",
            str(b),
            "--variant",
            "clean",
            "--actions",
            "move 3; turn 135; wait 1",
            "--out",
            str(tmp_path / "p"),
            "--width",
            "160",
            "--height",
            "120",
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0
    assert "move forward 3.00 m" in text and "ERROR" not in text
    assert len(read_trajectory(tmp_path / "p").steps) == 4


def test_play_rejects_wrong_actions_before_the_world_starts(tmp_path, capsys):
    """The user's actions are wrong: exit 1 (wac/exits.py), the bad one named, nothing written."""
    b = _bundle(tmp_path, _hide_task())
    for actions, says in (
        (
            "move 3; turn 999",
            "action 2 of --actions ('turn 999'): turn: 'degrees' must be between -180 and 180",
        ),
        ("mvoe 3", "unknown action 'mvoe'; did you mean `move`?"),
    ):
        rc = commands.main(["play", str(b), "--actions", actions, "--out", str(tmp_path / "q")])
        assert rc == 1 and says in capsys.readouterr().err
        assert not (tmp_path / "q").exists()


def test_play_exits_1_when_an_action_is_refused_and_writes_a_fresh_folder_by_default(
    tmp_path, capsys, monkeypatch
):
    b = _bundle(tmp_path, _hide_task())
    monkeypatch.chdir(tmp_path)
    small = ["--width", "64", "--height", "48", "--film-interval", "0"]
    rc = commands.main(["play", str(b), "--actions", "; ".join(["turn 10"] * 41), *small])  # budget 40
    out, err = capsys.readouterr()
    assert rc == 1 and "ERROR" in out and "1 of 41 action(s) refused" in err
    assert "trajectory written to play-bundle-1" in out and (tmp_path / "play-bundle-1").is_dir()
    assert commands.main(["play", str(b), "--actions", "turn 10", *small]) == 0
    assert "trajectory written to play-bundle-2" in capsys.readouterr().out


def test_render_command(tmp_path):
    b = _bundle(tmp_path, showcase())
    parser = argparse.ArgumentParser()
    commands.register(parser.add_subparsers(dest="cmd"))
    args = parser.parse_args(
        ["render", str(b), "--out", str(tmp_path / "r"), "--width", "160", "--height", "120"]
    )
    assert args.func(args) == 0
    names = sorted(p.name for p in (tmp_path / "r").glob("*.png"))
    assert names == ["overview_1.png", "overview_2.png", "overview_3.png", "overview_4.png", "start.png"]
    from PIL import Image

    assert np.asarray(Image.open(tmp_path / "r" / "start.png")).shape == (120, 328, 3)
