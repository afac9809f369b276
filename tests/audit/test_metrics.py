"""Metrics: App. E geometric coverage at its boundaries, exposure, targets, SR aggregation, §6.2."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from wac.audit.metrics import (
    DISTANCE_LIMIT_M,
    HALF_HFOV_DEG,
    PIPELINE_LABEL,
    Target,
    ViewFrame,
    anomaly_target,
    coverage,
    covers,
    run_metrics,
    task_metrics,
)
from wac.bundle.model import CompiledTask, Rubric
from wac.errors import UsageError

EYE = 1.6


def pose(x=0.0, y=0.0, yaw=0.0, pitch=0.0, z=0.0) -> dict:
    return {"x": x, "y": y, "z": z, "yaw_deg": yaw, "pitch_deg": pitch}


def at(distance, azimuth_deg=0.0, elevation_deg=0.0) -> tuple[float, float, float]:
    """A point seen from the origin's eye at this horizontal distance, azimuth and elevation."""
    a = math.radians(azimuth_deg)
    return (
        distance * math.cos(a),
        distance * math.sin(a),
        EYE + distance * math.tan(math.radians(elevation_deg)),
    )


# --- the per-frame test of App. E ------------------------------------------------------------------


def test_the_limits_are_the_papers():
    assert round(HALF_HFOV_DEG, 1) == 41.4
    assert set(DISTANCE_LIMIT_M.values()) <= {7.0, 12.0, 14.0, 16.0}
    assert min(DISTANCE_LIMIT_M.values()) == 7.0 and max(DISTANCE_LIMIT_M.values()) == 16.0


@pytest.mark.parametrize(
    "azimuth, seen",
    [(0.0, True), (41.0, True), (-41.0, True), (41.8, False), (-42.0, False), (90.0, False), (180.0, False)],
)
def test_horizontal_boundary(azimuth, seen):
    assert covers(pose(), at(5.0, azimuth), EYE, 14.0) is seen


@pytest.mark.parametrize(
    "distance, seen", [(0.5, True), (13.9, True), (14.0, True), (14.1, False), (30.0, False)]
)
def test_distance_boundary(distance, seen):
    assert covers(pose(), at(distance), EYE, 14.0) is seen
    assert covers(pose(), at(distance * 0.5), EYE, 7.0) is (distance * 0.5 <= 7.0)


@pytest.mark.parametrize(
    "elevation, pitch, seen",
    [
        (31.5, 0.0, True),
        (32.5, 0.0, False),
        (-31.5, 0.0, True),
        (-32.5, 0.0, False),
        (-51.0, 20.0, True),
        (-53.0, 20.0, False),
        (11.0, 20.0, True),
        (13.0, 20.0, False),  # pitch > 0 looks down
        (40.0, -15.0, True),
        (48.0, -15.0, False),
    ],
)
def test_vertical_boundary_follows_the_pitch(elevation, pitch, seen):
    assert covers(pose(pitch=pitch), at(4.0, 0.0, elevation), EYE, 14.0) is seen


def test_heading_position_and_eye_height():
    target = (3.0, 7.0, 1.0)
    assert covers(pose(3.0, 2.0, yaw=90.0), target, EYE, 14.0)  # yaw is counter-clockwise from +x
    assert not covers(pose(3.0, 2.0, yaw=-90.0), target, EYE, 14.0)
    assert not covers(pose(3.0, 7.0), target, EYE, 14.0)  # standing on it: no direction to it
    high = (4.0, 0.0, 4.0)  # 2.4 m above a 1.6 m eye at 4 m: 31 deg; from a 0.4 m eye: 47 deg
    assert covers(pose(), high, EYE, 14.0) and not covers(pose(), high, 0.4, 14.0)
    assert covers(pose(z=1.2), high, 0.4, 14.0)  # the pose's z is the feet (a raised floor)


# --- coverage over an episode, exposure -----------------------------------------------------------


def frames(spec) -> list[ViewFrame]:
    return [ViewFrame(ref, t, pose(x, y, yaw), action) for ref, t, x, y, yaw, action in spec]


def test_coverage_needs_one_frame_and_exposure_counts_them():
    target = Target((5.0, 0.0, 1.0), 0.3, "object")
    fs = frames(
        [
            ("a0", 0.0, 0, 0, 180, "start"),
            ("a1.f1", 0.5, 0, 0, 90, "turn"),
            ("a1", 0.7, 0, 0, 0, "turn"),
            ("a2", 1.0, 0, 0, 90, "turn"),
        ]
    )
    cov = coverage(fs, target, EYE, 14.0)
    assert cov.covered and cov.covered_frames == 1 and cov.frames == 4 and cov.exposure == 0.25
    assert cov.first_ref == "a1" and cov.min_distance_m == 5.0 and cov.exposed
    none = coverage(fs[:2], target, EYE, 14.0)
    assert not none.covered and none.first_ref is None and none.exposure == 0.0 and not none.exposed
    far = coverage(fs, target, EYE, 4.0)  # the same views from beyond the limit
    assert not far.covered


def test_exposed_follows_the_categorys_evidence():
    target = Target((5.0, 0.0, 1.0), 0.3, "object")
    seen_once = frames([("a0", 0.0, 0, 0, 0, "start"), ("a1", 0.5, 0, 0, 0, "wait")])
    revisit = seen_once + frames(
        [("a2", 1.5, 0, 0, 180, "turn"), ("a3", 2.0, 0, 0, 180, "wait"), ("a4", 2.8, 0, 0, 0, "turn")]
    )
    assert coverage(seen_once, target, EYE, 14.0, ("revisit",)).exposed is False
    assert coverage(revisit, target, EYE, 14.0, ("revisit",)).exposed is True
    assert coverage(seen_once, target, EYE, 14.0, ("time",)).exposed is False
    watched = seen_once + frames([("a2", 3.0, 0, 0, 0, "wait")])
    assert coverage(watched, target, EYE, 14.0, ("time",)).exposed is True
    assert coverage(seen_once, target, EYE, 14.0, ("several_views",)).exposed is False
    two_sides = seen_once + frames([("a2", 4.0, 5, -4, 90, "move")])  # seen from the south as well
    assert coverage(two_sides, target, EYE, 14.0, ("several_views",)).exposed is True
    near_far = seen_once + frames([("a2", 4.0, 3.5, 0, 0, "move")])  # 5 m, then 1.5 m away
    assert coverage(near_far, target, EYE, 14.0, ("several_views",)).exposed is True
    assert coverage(seen_once, target, EYE, 14.0, ("interaction",)).exposed is False
    walked_in = seen_once + frames([("a2", 4.0, 4.4, 0, 0, "move")])
    assert coverage(walked_in, target, EYE, 14.0, ("interaction",)).exposed is True
    used = frames([("a0", 0.0, 2.5, 0, 0, "start"), ("a1", 0.5, 2.5, 0, 0, "interact")])
    assert coverage(used, target, EYE, 14.0, ("interaction",)).exposed is True
    scene_wide = Target(None, 0.0, "global")
    assert coverage(watched, scene_wide, EYE, 14.0, ("time",)).covered is True
    assert coverage(seen_once, scene_wide, EYE, 14.0, ("time",)).exposed is False


def test_targets_from_objects_added_objects_effects_and_the_scene(built):
    def task(tid):
        return CompiledTask.model_validate_json((built / tid / "task.json").read_text())

    t = anomaly_target(task("market_03"), 0)
    assert t.source == "object" and t.point == pytest.approx((-4.9, 1.3, 0.365))
    spawn = task("city_05")
    obj = next(e.object for e in spawn.anomalies[0].effects if e.kind == "add_object")
    t = anomaly_target(spawn, 0)
    assert t.source == "object" and t.point[:2] == pytest.approx(tuple(obj.position[:2]), abs=1e-6)
    wall = task("market_05")
    t = anomaly_target(wall, 0)
    assert t.source == "effect" and t.point[:2] == pytest.approx((-3.0, -1.0)) and t.point[2] > 0
    assert anomaly_target(task("meadow_13"), 0).source == "global"


# --- a run directory -------------------------------------------------------------------------------


def write_episode(
    run: Path,
    tid: str,
    bundle: Path,
    poses,
    *,
    scores=None,
    judge_error=None,
    episode_error=None,
    usage=None,
    paradigm="interactive",
):
    d = run / "tasks" / tid
    traj = d / ("explore/trajectory" if paradigm == "two-stage" else "trajectory")
    traj.mkdir(parents=True)
    lines = []
    for n, (x, y, yaw, pitch) in enumerate(poses):
        lines.append(
            json.dumps(
                {
                    "step": n,
                    "action": "start" if n == 0 else "turn",
                    "args": {},
                    "sim_time": n * 0.5,
                    "pose": pose(x, y, yaw, pitch),
                    "frame": f"step_{n:03d}.png",
                    "film": [],
                }
            )
        )
    (traj / "trajectory.jsonl").write_text("\n".join(lines) + "\n")
    (d / "episode.json").write_text(json.dumps({"task_id": tid, "bundle": str(bundle), "paradigm": paradigm}))
    if episode_error:
        (d / "error.json").write_text(json.dumps({"kind": episode_error, "message": "boom"}))
    report = {
        "format": "wac.report/1",
        "task_id": tid,
        "paradigm": paradigm,
        "done": True,
        "summary": "",
        "bugs": [],
        "retracted": [],
        "actions_used": len(poses) - 1,
        "budget": 40,
        "tool_calls": len(poses) + 1,
        "usage": usage or {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0},
    }
    (d / "report.json").write_text(json.dumps(report))
    if scores is not None or judge_error:
        sha = __import__("hashlib").sha256((d / "report.json").read_bytes()).hexdigest()
        entries = [
            {
                "anchor": i == 0,
                "category": "x",
                "score": s,
                "reason": "r",
                "matched_bug": None,
                "evidence_frames": [],
            }
            for i, s in enumerate(scores or [None])
        ]
        ok = judge_error is None
        (d / "judgment.json").write_text(
            json.dumps(
                {
                    "format": "wac.judgment/1",
                    "task_id": tid,
                    "backend": "keyword",
                    "model": "wac-keyword/1",
                    "report_sha256": sha,
                    "entries": entries,
                    "error": judge_error,
                    "success": entries[0]["score"] == 1 if ok else None,
                    "all_success": all(e["score"] == 1 for e in entries) if ok else None,
                }
            )
        )


def facing(target, distance=4.0):
    """A pose `distance` m west of the target, looking at it (east)."""
    return (target[0] - distance, target[1], 0.0, 0.0)


def multi_bundle(built: Path, dest: Path) -> Path:
    """market_03 with a second, non-anchor anomaly: a multi-anomaly task."""
    b = dest / "multi_sacks"
    shutil.copytree(built / "market_03", b)
    task = json.loads((b / "task.json").read_text())
    extra = {**task["anomalies"][0], "anchor": False}
    task.update(id="multi_sacks", anomalies=[task["anomalies"][0], extra])
    task["meta"]["multi_anomaly"] = True
    (b / "task.json").write_text(json.dumps(task))
    rubric = json.loads((b / "rubric.json").read_text())
    rubric.update(
        task_id="multi_sacks", entries=[rubric["entries"][0], {**rubric["entries"][0], "anchor": False}]
    )
    (b / "rubric.json").write_text(json.dumps(rubric))
    return b


@pytest.fixture()
def run_dir(built, tmp_path) -> Path:
    run = tmp_path / "run"
    extra = multi_bundle(built, tmp_path / "extra")
    sacks = (-4.9, 1.3)
    write_episode(
        run,
        "market_03",
        built / "market_03",
        [facing(sacks), (-8.9, 1.3, 180, 0)],
        scores=[1],
        usage={"prompt_tokens": 1000, "completion_tokens": 100, "calls": 2},
    )
    write_episode(
        run,
        "living_01",
        built / "living_01",
        [(4.0, 0.0, -90.0, 0.0)] * 3,
        scores=[0],
    )
    write_episode(run, "city_10", built / "city_10", [(0.0, -8.5, 90, 0)], judge_error="HTTP 500")
    write_episode(run, "factory_06", built / "factory_06", [(0.0, -9.0, 90, 0)], episode_error="crash")
    write_episode(run, "meadow_04", built / "meadow_04", [(0.0, -9.0, 90, 0)], scores=[1])
    write_episode(run, "multi_sacks", extra, [facing(sacks, 3.0)], scores=[1, 0])
    tasks = [
        "market_03",
        "living_01",
        "city_10",
        "factory_06",
        "meadow_04",
        "multi_sacks",
    ]
    (run / "run.json").write_text(
        json.dumps(
            {
                "format": "wac.run/1",
                "agent": "sweep",
                "paradigm": "interactive",
                "explorer": None,
                "options": {"example": True},
                "build": str(built),
                "tasks": tasks,
                "pipeline_check": False,
            }
        )
    )
    return run


def test_run_metrics_aggregate_sr_and_keep_errors_apart(run_dir):
    m = run_metrics(run_dir)
    assert m["format"] == "wac.metrics/1" and m["run"]["agent"] == "sweep" and m["run"]["label"] is None
    s = m["summary"]
    assert (s["tasks"], s["judged"], s["success"], s["episode_error"], s["judge_error"]) == (6, 4, 3, 1, 1)
    # a judge error counts in the denominator (a failed judgment never improves the SR)
    assert s["sr"] == 0.6 and s["sr_all_tasks"] == 0.5
    fam = m["by_family"]
    assert list(fam) == ["static_physics", "interactive_physics", "temporal_consistency"]
    assert fam["static_physics"] == {
        **fam["static_physics"],
        "tasks": 4,
        "judged": 3,
        "success": 3,
        "sr": 1.0,
    }
    assert fam["interactive_physics"]["sr"] == 0.0 and fam["temporal_consistency"]["sr"] == 0.0
    assert m["by_category"]["missing_support"]["judged"] == 3 and m["by_category"]["existence"]["sr"] == 0.0
    scenes = m["by_scene_type"]
    assert list(scenes) == ["indoor", "urban", "historical", "industrial", "natural"]
    assert (
        scenes["historical"]["sr"] == 1.0 and scenes["indoor"]["sr"] == 0.0 and scenes["urban"]["sr"] == 0.0
    )
    rows = {r["task_id"]: r for r in m["tasks"]}
    assert rows["city_10"]["status"] == "judge_error" and rows["city_10"]["success"] is None
    assert rows["factory_06"]["status"] == "episode_error"
    assert s["tokens"] == {"prompt": 1000, "completion": 100, "tasks_reporting": 1, "mean_per_task": 1100.0}
    assert (
        s["actions_mean"] == pytest.approx((1 + 2 + 0 + 0 + 0 + 0) / 6, abs=1e-3) and s["actions_median"] == 0
    )


def test_run_metrics_coverage_and_multi_anomaly(run_dir):
    m = run_metrics(run_dir)
    rows = {r["task_id"]: r for r in m["tasks"]}
    sacks = rows["market_03"]["coverage"]
    assert (
        sacks["covered"] and sacks["first_ref"] == "a0" and sacks["frames"] == 2 and sacks["exposure"] == 0.5
    )
    assert sacks["limit_m"] == 14.0 and rows["living_01"]["coverage"]["covered"] is False
    assert rows["living_01"]["coverage"]["limit_m"] == 7.0
    assert rows["meadow_04"]["coverage"]["limit_m"] == 16.0
    assert len(rows["multi_sacks"]["anomaly_coverage"]) == 2
    s = m["summary"]
    assert s["coverage_known"] == 6 and s["judged_covered"] + s["judged_uncovered"] == 5
    multi = m["multi_anomaly"]
    assert multi["2"] == {"runs": 1, "anchor_sr": 1.0, "all_anomaly_sr": 0.0, "target_recall": 0.5}
    assert multi["1"]["runs"] == 3 and multi["1"]["anchor_sr"] == pytest.approx(2 / 3, abs=1e-4)


def test_stale_and_missing_judgments_count_as_unjudged(run_dir):
    rep = run_dir / "tasks/market_03/report.json"
    rep.write_text(rep.read_text().replace('"summary": ""', '"summary": "changed"'))
    (run_dir / "tasks/meadow_04/judgment.json").unlink()
    s = run_metrics(run_dir)["summary"]
    assert s["unjudged"] == 2 and s["judged"] == 2


def test_pipeline_check_is_labelled_and_missing_bundles_are_usage_errors(run_dir, tmp_path):
    meta = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**meta, "agent": "oracle", "pipeline_check": True}))
    m = run_metrics(run_dir)
    assert m["run"]["pipeline_check"] is True and m["run"]["label"] == PIPELINE_LABEL
    (run_dir / "run.json").write_text(
        json.dumps({**meta, "build": str(tmp_path / "gone"), "tasks": ["nowhere"]})
    )
    with pytest.raises(UsageError, match="no bundle for task 'nowhere'"):
        run_metrics(run_dir)
    with pytest.raises(UsageError, match="not a run directory"):
        run_metrics(tmp_path)


def test_two_stage_coverage_reads_the_explorers_trajectory(built, tmp_path):
    run = tmp_path / "run"
    write_episode(
        run,
        "market_03",
        built / "market_03",
        [facing((-4.9, 1.3))],
        scores=[1],
        paradigm="two-stage",
    )
    meta = {"format": "wac.run/1", "build": str(built), "tasks": ["market_03"]}
    row = task_metrics(run, meta, "market_03")
    assert row["coverage"]["covered"] and row["coverage"]["frames"] == 1


def test_a_real_episode(built, tmp_path):
    """A tiny AuditSession episode: the closer start looks at the target, a half turn looks away."""
    from wac.audit.judge import judge_run
    from wac.audit.session import AuditSession, SessionOptions

    run = tmp_path / "run"
    tid = "market_03"
    opts = SessionOptions(example=False, width=160, height=120, closer_start=True)
    with AuditSession(built / tid, run / "tasks" / tid, opts) as s:
        assert not s.call("turn", {"degrees": 180}).error
        s.call(
            "flag_bug",
            {
                "description": "A grain sack hovers above the ground",
                "category": "missing_support",
                "status": "confirmed",
                "evidence": ["a0"],
            },
        )
        s.call("done", {"summary": "one floating sack"})
    (run / "run.json").write_text(
        json.dumps(
            {
                "format": "wac.run/1",
                "agent": "test",
                "paradigm": "interactive",
                "options": opts.as_dict(),
                "build": str(built),
                "tasks": [tid],
                "pipeline_check": False,
            }
        )
    )
    judge_run(run)
    m = run_metrics(run)
    row = m["tasks"][0]
    assert row["status"] == "judged" and row["success"] is True and row["actions_used"] == 1
    cov = row["coverage"]
    assert cov["covered"] and cov["first_ref"] == "a0" and cov["frames"] >= 3
    assert cov["covered_frames"] == 1 and row["view_point_visited"] is True
    assert Rubric.model_validate_json((run / "tasks" / tid / "rubric.json").read_text()).task_id == tid


def test_docs_give_the_distance_limits():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "evaluation.md").read_text(encoding="utf-8")
    for scene_type, limit in DISTANCE_LIMIT_M.items():
        assert f"| {scene_type.value} | {limit:g} m |" in doc


def test_scene_wide_light_change_is_in_view_everywhere(built):
    """A day-night anomaly has no object: every frame shows it (not the self-check's aim point)."""
    from wac.audit.metrics import anomaly_target
    from wac.bundle.model import CompiledTask, SelfCheckPlan

    b = built / "meadow_13"
    task = CompiledTask.model_validate_json((b / "task.json").read_text())
    plan = SelfCheckPlan.model_validate_json((b / "selfcheck.json").read_text())
    assert anomaly_target(task, 0, plan).point is None
