"""A reference VLA recording as a two-stage `Recording`: the paper's fixed explorer trajectories, reviewed on wac.

The reference's explorer (UCSB-NLP-Chang/WorldAuditBench `agent/vla/vla_explore.py` for three.js,
`vla_ue.py` for Unreal; read by `agent/vlm/mcp/replay.py`, `ReplayEnv`) writes one directory per
episode: `meta.json` (`kind` vla_explore or vla_explore_ue, `dt_ms` per tick, `record_every` ticks
per frame, `frames` the frame files in order), `poses.jsonl` (one line per tick: `t`, `pos`
[x, y_up, z] in metres or `pos_cm` [x, y, z] in centimetres, `yaw`, `pitch`) and the frames
(`f<tick>.jpg`, one every `dt_ms * record_every` ms).  Frame k is taken at k × that interval; the
first is the start view `a0`, the k-th after it is the film frame `a0.f<k>` (wac's numbering from
1; the reference protocol shows it as `a0.f<k-1>`, as the reference's replay does).  The bundle
supplies the task (instructions, budget, rubric for the judge); the recording supplies the frames.
"""

from __future__ import annotations

import json
from pathlib import Path

from wac.errors import UsageError

from .frames import Frame
from .session import Recording

KINDS = ("vla_explore", "vla_explore_ue")


def is_vla_recording(path: str | Path) -> bool:
    """A directory with the reference explorer's `meta.json` (its `kind` says so)."""
    meta = Path(path) / "meta.json"
    try:
        return json.loads(meta.read_text(encoding="utf-8")).get("kind") in KINDS
    except (OSError, ValueError, AttributeError):
        return False


def _pose(p: dict, unreal: bool) -> dict:
    """wac's pose (x, y on the ground, z up) of one `poses.jsonl` line."""
    if unreal:
        x, y, z = (float(v) / 100.0 for v in p["pos_cm"])
    else:
        x, z, y = (float(v) for v in p["pos"])  # three.js: [x, y_up, z]
    return {
        "x": x,
        "y": y,
        "z": z,
        "yaw_deg": float(p.get("yaw", 0.0)),
        "pitch_deg": float(p.get("pitch", 0.0)),
    }


def load_vla_recording(path: str | Path, task_id: str) -> Recording:
    """The recording in `path` as frames every `dt_ms * record_every` ms, for the task `task_id` (the
    bundle's: the recording names the reference's task, which wac's bundle stands for)."""
    from wac.runtime.trajectory import load_png

    path = Path(path)
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
        poses = [json.loads(line) for line in (path / "poses.jsonl").read_text().splitlines() if line.strip()]
        dt = float(meta["dt_ms"]) / 1000.0
        every = int(meta["record_every"])
        files = [str(f) for f in meta["frames"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"{path} is not a readable VLA recording (meta.json with dt_ms, record_every, frames; "
            f"poses.jsonl): {exc}"
        ) from None
    if meta.get("kind") not in KINDS:
        raise UsageError(
            f"{path}/meta.json has kind {meta.get('kind')!r}, not a VLA recording ({', '.join(KINDS)})"
        )
    missing = [f for f in files if not (path / f).is_file() or Path(f).is_absolute() or ".." in Path(f).parts]
    if missing or not files or not poses:
        raise UsageError(f"{path}: {len(missing)} recorded frame(s) missing, or no frames or poses")
    unreal = meta["kind"] == "vla_explore_ue"
    by_tick = {int(p["t"]): p for p in poses if "t" in p}
    interval = round(dt * every, 6)
    frames = []
    for k, name in enumerate(files):
        tick = min(k * every, len(poses) - 1)
        pose = _pose(by_tick.get(k * every) or poses[tick], unreal)
        ref, kind = ("a0", "start") if k == 0 else (f"a0.f{k}", "film")
        frames.append(Frame(ref, load_png(path / name), pose, round(k * interval, 3), kind, path / name))
    lines = tuple(
        f"t={f.t_sim:.1f}s {f.ref}: pos ({f.pose['x']:.2f}, {f.pose['y']:.2f}) yaw {f.pose['yaw_deg']:.0f} "
        f"pitch {f.pose['pitch_deg']:.0f}"
        for f in frames
    )
    return Recording(task_id, tuple(frames), interval, frames[-1].t_sim, lines)
