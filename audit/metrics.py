"""Metrics of a judged run: success rates, cost, geometric coverage and exposure (paper §5-6, App. E).

`run_metrics(RUN)` reads run.json, every task's report.json, judgment.json and trajectory, and
the task's bundle (task.json, selfcheck.json), and returns one JSON-ready dict: a row per task
and the aggregates `wac report` prints and charts.  Definitions (docs/evaluation.md):

* **SR** — judged successes / judged tasks.  Episode errors (error.json) and judge errors
  (judgment.json `error`) are counted apart and left out of the SR; `sr_all_tasks` counts every
  task that is not a judged success as a failure.
* **Geometric coverage** (App. E) — the anomaly's target is covered when, in at least one frame
  (every final and film frame of the trajectory, with its pose), it lies within the distance limit
  (the scene's `environment … coverage` when declared, else the scene type's `DISTANCE_LIMIT_M`,
  7-16 m; horizontal distance), within acos(0.75) = 41.4 deg
  horizontally of the view direction and within 32 deg vertically of the camera's pitch.  No
  occlusion test, as in the paper.  The camera is `exploration.eye_height_m` above the pose.
* **Exposure** — the fraction of the episode's frames that cover the target; **exposed** — the
  category's evidence was in reach (one of its evidence kinds met, see `_exposed`); **view point
  visited** — some frame was taken within 1 m of the self-check's exposing view point.
* **Multi-anomaly** (§6.2) — anchor SR, all-anomaly SR and target recall (identified anomalies /
  all anomalies, over every judged multi-anomaly run).

Runs of a pipeline-check agent (the oracle reads ground truth) carry `pipeline_check` and a label
in every output.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from wac.bundle.coverage import (  # noqa: F401  (re-exported: the metric's definitions)
    DISTANCE_LIMIT_M,
    HALF_HFOV_DEG,
    HALF_VFOV_DEG,
    Target,
    anomaly_target,
    coverage_limit_m,
    covers,
)
from wac.bundle.model import (
    SceneType,
)
from wac.bundle.reader import Bundle
from wac.errors import UsageError
from wac.taxonomy.registry import registry

from .evidence import CONTACT_M, REACH_M, ViewFrame, trajectory_frames  # noqa: F401 - re-exported
from .judge import CorruptFile, bundle_dir, frames_dir, read_json, read_report, read_run, task_ids

METRICS_FORMAT = "wac.metrics/1"
PIPELINE_LABEL = "PIPELINE CHECK (the agent reads ground truth; not an auditing result)"

VIEW_POINT_RADIUS_M = 1.0  # "exposing view point visited": a frame taken this close to it
REVISIT_GAP_S = 1.0  # out of view for at least this long between two sightings
WATCH_S = 2.0  # watched over at least this long (time evidence)
SEVERAL_VIEWS_DEG = 45.0  # two sightings this far apart around the target...
NEAR_FAR_RATIO = 2.0  # ...or one at least this much nearer than another


@dataclass(frozen=True)
class Coverage:
    covered: bool  # App. E geometric coverage: at least one qualifying frame
    frames: int
    covered_frames: int
    exposure: float  # covered_frames / frames
    exposed: bool  # the category's evidence kinds were in reach (heuristic, see _exposed)
    first_ref: str | None
    min_distance_m: float | None
    limit_m: float

    def as_dict(self) -> dict:
        return {
            "covered": self.covered,
            "frames": self.frames,
            "covered_frames": self.covered_frames,
            "exposure": round(self.exposure, 4),
            "exposed": self.exposed,
            "first_ref": self.first_ref,
            "min_distance_m": None if self.min_distance_m is None else round(self.min_distance_m, 3),
            "limit_m": self.limit_m,
        }


def _exposed(frames: list[ViewFrame], hits: list[bool], target: Target, evidence: tuple[str, ...]) -> bool:
    """Whether one of the category's evidence kinds was met (any one suffices):

    single_view — a covered frame; several_views — covered from two sides >= 45 deg apart around the
    target, or from one distance at least twice another; interaction — a pose within 0.6 m of the
    target's footprint (walked into it), or an `interact` action whose frame covers the target within
    reach; revisit — two sightings with >= 1 s out of view between them; time — sightings spanning
    >= 2 s of simulated time.
    """
    seen = [f for f, h in zip(frames, hits, strict=True) if h]
    if target.point is None:  # a scene-wide change: everything is in view; time is what matters
        return bool(frames) and ("single_view" in evidence or frames[-1].t_sim - frames[0].t_sim >= WATCH_S)
    p = target.point

    def dist(f: ViewFrame) -> float:
        return math.hypot(p[0] - f.pose["x"], p[1] - f.pose["y"])

    for kind in evidence:
        if kind == "single_view" and seen:
            return True
        if kind == "several_views" and len(seen) >= 2:
            bearings = [math.degrees(math.atan2(f.pose["y"] - p[1], f.pose["x"] - p[0])) for f in seen]
            spread = max(abs((a - b + 180.0) % 360.0 - 180.0) for a in bearings for b in bearings)
            ds = [max(dist(f), 1e-3) for f in seen]
            if spread >= SEVERAL_VIEWS_DEG or max(ds) / min(ds) >= NEAR_FAR_RATIO:
                return True
        if kind == "interaction":
            if any(dist(f) <= target.radius_m + CONTACT_M for f in frames):
                return True
            if any(
                h and f.action == "interact" and dist(f) <= target.radius_m + REACH_M
                for f, h in zip(frames, hits, strict=True)
            ):
                return True
        if kind == "revisit" and len(seen) >= 2:
            gap_start = None
            for f, h in zip(frames, hits, strict=True):
                if not h and gap_start is None and f.t_sim >= seen[0].t_sim:
                    gap_start = f.t_sim
                elif h and gap_start is not None:
                    if f.t_sim - gap_start >= REVISIT_GAP_S:
                        return True
                    gap_start = None
        if kind == "time" and seen and seen[-1].t_sim - seen[0].t_sim >= WATCH_S:
            return True
    return False


def coverage(
    frames: list[ViewFrame],
    target: Target,
    eye_height_m: float,
    limit_m: float,
    evidence: tuple[str, ...] = ("single_view",),
) -> Coverage:
    if target.point is None:
        hits = [True] * len(frames)
        dmin = None
    else:
        hits = [covers(f.pose, target.point, eye_height_m, limit_m) for f in frames]
        dmin = min(
            (math.hypot(target.point[0] - f.pose["x"], target.point[1] - f.pose["y"]) for f in frames),
            default=None,
        )
    n, k = len(frames), sum(hits)
    first = next((f.ref for f, h in zip(frames, hits, strict=True) if h), None)
    return Coverage(
        k > 0,
        n,
        k,
        k / n if n else 0.0,
        _exposed(frames, hits, target, evidence) if n else False,
        first,
        dmin,
        limit_m,
    )


# --- one task --------------------------------------------------------------------------------------


def _load_json(path: Path) -> dict | None:
    """A run file as a dict; None when it is missing, unreadable or not a JSON object."""
    if not path.is_file():
        return None
    try:
        data = read_json(path)
    except (OSError, UnicodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _usage(*reports: dict | None) -> dict:
    out = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}
    for r in reports:
        for k in out:
            out[k] += int(((r or {}).get("usage") or {}).get(k) or 0)
    return out


def task_metrics(run: Path, meta: dict, tid: str) -> dict:
    """One row of the metrics table: outcome, cost, coverage per anomaly."""
    d = run / "tasks" / tid
    b = bundle_dir(d, meta)
    if b is None:
        raise UsageError(
            f"no bundle for task {tid!r} (run.json build: {meta.get('build')}); "
            f"the metrics need the task's task.json"
        )
    bundle = Bundle(b)
    task, plan = bundle.task(), bundle.plan_or_none()
    anchor_i = next((i for i, a in enumerate(task.anomalies) if a.anchor), 0)
    anchor = task.anomalies[anchor_i]
    corrupt = None
    try:
        report = read_report(d) if (d / "report.json").is_file() else None
    except CorruptFile as exc:  # that episode's error; the run goes on
        report, corrupt = None, str(exc)
    explore = _load_json(d / "explore" / "report.json")
    judgment = _load_json(d / "judgment.json")
    error = _load_json(d / "error.json")
    if corrupt is not None:
        error = {"kind": "corrupt", "message": corrupt}
    status = "judged"
    if error is not None or (d / "error.json").is_file():
        status = "episode_error"
    elif report is None:
        status = "missing"
    elif judgment is None:
        status = "unjudged"
    elif judgment.get("error"):
        status = "judge_error"
    elif judgment.get("report_sha256") and judgment["report_sha256"] != _sha(d / "report.json"):
        status = "unjudged"  # stale: the report changed since it was judged
    entries = (judgment or {}).get("entries") or []
    scores = [e.get("score") for e in entries]
    row = {
        "task_id": tid,
        "family": anchor.family,
        "category": anchor.category,
        "scene_type": task.scene.scene_type.value,
        "scene": task.scene.name,
        "environment": env.name if (env := task.scene.environment) else task.scene.name,
        "anomalies": len(task.anomalies),
        "multi_anomaly": task.meta.multi_anomaly or len(task.anomalies) > 1,
        "status": status,
        "success": bool(judgment.get("success")) if status == "judged" else None,
        "all_success": bool(judgment.get("all_success")) if status == "judged" else None,
        "found": sum(1 for s in scores if s == 1) if status == "judged" else None,
        "judge": f"{judgment.get('backend')}:{judgment.get('model')}" if judgment else None,
        "judge_error": judgment.get("error") if status == "judge_error" else None,
        "episode_error": (error or {}).get("kind", "error") if status == "episode_error" else None,
        "bugs": len((report or {}).get("bugs") or ()),
        "bugs_flagged": judgment.get("bugs_flagged") if status == "judged" else None,
        "bugs_matched": judgment.get("bugs_matched") if status == "judged" else None,
        "actions_used": None,
        "budget": None,
        "tool_calls": None,
        "wall_seconds": None,  # time on the task, when the episode records it (human sessions)
        "usage": None,
        "judge_usage": None,
        "coverage": None,
        "anomaly_coverage": [],
        "view_point_visited": None,
    }
    if report is not None:
        acting = explore if report.get("paradigm") == "two-stage" and explore is not None else report
        row["actions_used"] = acting.get("actions_used")
        row["budget"] = acting.get("budget")
        row["tool_calls"] = int(report.get("tool_calls") or 0) + int((explore or {}).get("tool_calls") or 0)
        row["usage"] = _usage(report, explore)
        row["wall_seconds"] = report.get("wall_seconds")
    if judgment is not None:
        row["judge_usage"] = _usage(judgment)
    traj = frames_dir(d, report or {}) if d.is_dir() else None
    frames = trajectory_frames(traj) if traj is not None else []
    if frames:
        eye = task.exploration.eye_height_m
        limit = coverage_limit_m(task.scene)
        for i, a in enumerate(task.anomalies):
            try:
                evidence = registry().category(a.category).evidence
            except StopIteration:
                evidence = ("single_view",)
            tgt = anomaly_target(task, i, plan)
            cov = coverage(frames, tgt, eye, limit, evidence)
            row["anomaly_coverage"].append(
                {"anchor": a.anchor, "category": a.category, "target": tgt.source, **cov.as_dict()}
            )
        row["coverage"] = row["anomaly_coverage"][anchor_i]
        if plan is not None:
            vx, vy = plan.view_point
            row["view_point_visited"] = any(
                math.hypot(f.pose["x"] - vx, f.pose["y"] - vy) <= VIEW_POINT_RADIUS_M for f in frames
            )
    return row


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- aggregates ------------------------------------------------------------------------------------


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _mean(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(statistics.fmean(xs), 3) if xs else None


def _median(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(float(statistics.median(xs)), 3) if xs else None


def _scored(rows: list[dict]) -> list[dict]:
    """The SR's denominator: judged tasks and judge failures (a judge error never improves the SR)."""
    return [r for r in rows if r["status"] in ("judged", "judge_error")]


def precision(rows: list[dict]) -> tuple[float | None, int, int]:
    """Matched bugs / flagged bugs over the judged tasks (false positives are the rest)."""
    known = [r for r in rows if r["status"] == "judged" and r.get("bugs_matched") is not None]
    flagged = sum(int(r.get("bugs_flagged") or 0) for r in known)
    matched = sum(int(r["bugs_matched"]) for r in known)
    return _rate(matched, flagged), flagged, flagged - matched


def _cell(rows: list[dict]) -> dict:
    judged = _scored(rows)
    wins = sum(1 for r in judged if r["success"])
    cov = [r["coverage"]["covered"] for r in rows if r["coverage"] is not None]
    jc = [r for r in judged if r["coverage"] is not None and r["coverage"]["covered"]]
    return {
        "tasks": len(rows),
        "judged": len(judged),
        "success": wins,
        "sr": _rate(wins, len(judged)),
        "covered": sum(cov),
        "coverage": _rate(sum(cov), len(cov)),
        "coverage_known": len(cov),
        "sr_covered": _rate(sum(1 for r in jc if r["success"]), len(jc)),
        "judged_covered": len(jc),
    }


def _groups(rows: list[dict], key: str, order: list[str]) -> dict:
    present = {r[key] for r in rows}
    keys = [k for k in order if k in present] + sorted(present - set(order))
    return {k: _cell([r for r in rows if r[key] == k]) for k in keys}


def summarise(rows: list[dict]) -> dict:
    judged = _scored(rows)
    wins = sum(1 for r in judged if r["success"])
    prec, flagged, false_pos = precision(rows)
    with_cov = [r for r in rows if r["coverage"] is not None]
    covered = [r for r in with_cov if r["coverage"]["covered"]]
    judged_cov = [r for r in judged if r["coverage"] is not None]
    jc = [r for r in judged_cov if r["coverage"]["covered"]]
    ju = [r for r in judged_cov if not r["coverage"]["covered"]]
    usage = [r["usage"] for r in rows if r["usage"]]
    reporting = [u for u in usage if u["calls"] or u["prompt_tokens"] or u["completion_tokens"]]
    judge_usage = [r["judge_usage"] for r in rows if r["judge_usage"]]
    vp = [r["view_point_visited"] for r in rows if r["view_point_visited"] is not None]
    count = {
        s: sum(1 for r in rows if r["status"] == s)
        for s in ("judged", "episode_error", "judge_error", "unjudged", "missing")
    }
    return {
        "tasks": len(rows),
        **count,
        "success": wins,
        "sr": _rate(wins, len(judged)),
        "sr_all_tasks": _rate(wins, len(rows)),
        "precision": prec,
        "bugs_flagged": flagged,
        "false_positives": false_pos,
        "coverage": _rate(len(covered), len(with_cov)),
        "covered": len(covered),
        "coverage_known": len(with_cov),
        "exposure_mean": _mean(r["coverage"]["exposure"] for r in with_cov),
        "exposed": _rate(sum(1 for r in with_cov if r["coverage"]["exposed"]), len(with_cov)),
        "view_point_visited": _rate(sum(vp), len(vp)),
        "sr_covered": _rate(sum(1 for r in jc if r["success"]), len(jc)),
        "judged_covered": len(jc),
        "sr_uncovered": _rate(sum(1 for r in ju if r["success"]), len(ju)),
        "judged_uncovered": len(ju),
        "actions_mean": _mean(r["actions_used"] for r in rows),
        "actions_median": _median(r["actions_used"] for r in rows),
        "tool_calls_mean": _mean(r["tool_calls"] for r in rows),
        "tool_calls_median": _median(r["tool_calls"] for r in rows),
        "wall_seconds_mean": _mean(r.get("wall_seconds") for r in rows),
        "wall_seconds_median": _median(r.get("wall_seconds") for r in rows),
        "tokens": {
            "prompt": sum(u["prompt_tokens"] for u in reporting),
            "completion": sum(u["completion_tokens"] for u in reporting),
            "tasks_reporting": len(reporting),
            "mean_per_task": _mean(u["prompt_tokens"] + u["completion_tokens"] for u in reporting),
        },
        "judge_tokens": {
            "prompt": sum(u["prompt_tokens"] for u in judge_usage),
            "completion": sum(u["completion_tokens"] for u in judge_usage),
            "calls": sum(u["calls"] for u in judge_usage),
        },
    }


def multi_anomaly(rows: list[dict]) -> dict | None:
    """§6.2, per anomaly count: anchor SR, all-anomaly SR, target recall (judged runs only)."""
    if not any(r["multi_anomaly"] for r in rows):
        return None
    out = {}
    for n in sorted({r["anomalies"] for r in rows}):
        judged = [r for r in rows if r["anomalies"] == n and r["status"] == "judged"]
        out[str(n)] = {
            "runs": len(judged),
            "anchor_sr": _rate(sum(1 for r in judged if r["success"]), len(judged)),
            "all_anomaly_sr": _rate(sum(1 for r in judged if r["all_success"]), len(judged)),
            "target_recall": _rate(sum(r["found"] for r in judged), n * len(judged)),
        }
    return out


def run_metrics(run: str | Path) -> dict:
    """Everything `wac report` shows about one run, JSON-ready and free of wall-clock values."""
    run = Path(run)
    meta = read_run(run)
    rows = [task_metrics(run, meta, t) for t in task_ids(run, meta)]
    reg = registry()
    pipeline = bool(meta.get("pipeline_check"))
    opts = meta.get("options") or {}
    judges = sorted({r["judge"] for r in rows if r["judge"]})
    return {
        "format": METRICS_FORMAT,
        "run": {
            "name": run.resolve().name,
            "agent": meta.get("agent"),
            "paradigm": meta.get("paradigm"),
            "explorer": meta.get("explorer"),
            "pipeline_check": pipeline,
            "label": PIPELINE_LABEL if pipeline else None,
            "options": {
                k: opts.get(k)
                for k in ("example", "hint", "budget_multiplier", "closer_start", "observation", "seed")
                if k in opts
            },
            "judges": judges,
        },
        "summary": summarise(rows),
        "by_family": _groups(rows, "family", [f.id.value for f in reg.families]),
        "by_category": _groups(rows, "category", [c.id.value for c in reg.categories]),
        "by_scene_type": _groups(rows, "scene_type", [s.value for s in SceneType]),
        "by_environment": _groups(rows, "environment", []),
        "multi_anomaly": multi_anomaly(rows),
        "definitions": {
            "coverage_distance_limit_m": {k.value: v for k, v in DISTANCE_LIMIT_M.items()},
            "coverage_half_hfov_deg": round(HALF_HFOV_DEG, 2),
            "coverage_half_vfov_deg": HALF_VFOV_DEG,
        },
        "tasks": rows,
    }
