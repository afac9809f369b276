"""Videos of episodes: what the auditor saw, frame by frame, for raters (paper §6.3, Figure 6).

`wac video RUN [--task ID]` writes `tasks/<id>/video.mp4` (or `.webm`) for every finished episode
of a run: its final and film frames in time order, each held for the simulated time until the next
one (at `--speed`), with a caption bar (frame ref, action, simulated time).  An episode recorded
without film images (agents that read none) is replayed in the simulator from its trajectory
(bundle, variant, seed, frame size, start pose and actions); a replay that does not reach the
recorded poses is an error, never a video of another episode.  The encoder is the ffmpeg binary
that imageio-ffmpeg ships (no system ffmpeg needed).

A video shows only what the auditor was shown: nothing of the rubric, the target or the clean world.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wac.errors import BundleError, UsageError

FORMATS = {
    "mp4": ("libx264", ["-crf", "23", "-preset", "veryfast"]),
    "webm": ("libvpx-vp9", ["-b:v", "0", "-crf", "36"]),
}
FPS = 10  # output frame rate; each episode frame is repeated for its share of simulated time
MAX_HOLD_S = 2.0  # a long wait is shown for at most this long (real seconds, before --speed)
POSE_TOLERANCE_M = 0.02  # a replay must reach every recorded pose this closely
BAR_PX = 18  # height of the caption bar at the video's width of 640 px


@dataclass(frozen=True)
class Shot:
    """One frame of an episode: its ref, simulated time, caption and pixels."""

    ref: str
    t_sim: float
    caption: str
    image: np.ndarray


def _caption(ref: str, step: dict, t: float) -> str:
    from .judge import action_words

    what = "start" if step.get("step", 0) == 0 else action_words(step)
    return f"{ref}  {what}  t={t:.1f} s"


def recorded_shots(traj) -> list[Shot] | None:
    """The episode's frames from its PNG files; None when a film frame has no image."""
    from wac.runtime.trajectory import load_png

    shots: list[Shot] = []
    for s in traj.steps:
        n = s.get("step", 0)
        for k, f in enumerate(s.get("film") or (), start=1):
            if "file" not in f or not (traj.path / f["file"]).is_file():
                return None
            ref, t = f"a{n}.f{k}", float(f["t_sim"])
            shots.append(Shot(ref, t, _caption(ref, s, t), load_png(traj.path / f["file"])))
        if not (traj.path / s["frame"]).is_file():
            return None
        t = float(s.get("sim_time", 0.0))
        shots.append(Shot(f"a{n}", t, _caption(f"a{n}", s, t), load_png(traj.path / s["frame"])))
    return shots


def replayed_shots(traj, bundle: Path) -> list[Shot]:
    """The episode's frames rendered again by replaying its actions (checked against its poses)."""
    from wac.runtime.replay import replay_env

    first = traj.steps[0]
    env = replay_env(traj, bundle)
    try:
        shots = [Shot("a0", 0.0, _caption("a0", first, 0.0), env.history[0].frame)]
        for s, action in zip(traj.steps[1:], traj.actions(), strict=True):
            res = env.step(action)
            _same_pose(res.pose.as_dict(), s["pose"], f"a{res.step}")
            for k, f in enumerate(res.film, start=1):
                ref = f"a{res.step}.f{k}"
                shots.append(Shot(ref, f.t_sim, _caption(ref, s, f.t_sim), f.frame))
            shots.append(
                Shot(f"a{res.step}", res.sim_time, _caption(f"a{res.step}", s, res.sim_time), res.frame)
            )
    finally:
        env.close()
    return shots


def _same_pose(got: dict, want: dict, ref: str) -> None:
    if math.hypot(got["x"] - want["x"], got["y"] - want["y"]) > POSE_TOLERANCE_M:
        raise BundleError(
            f"the replay left the recorded trajectory at {ref} (at ({got['x']:.2f}, {got['y']:.2f}), recorded "
            f"({want['x']:.2f}, {want['y']:.2f})): the bundle or the simulator changed since the episode"
        )


def _with_bar(image: np.ndarray, caption: str, width: int) -> np.ndarray:
    """The frame scaled to `width` with a caption bar under it (even sizes, as yuv420p needs)."""
    from PIL import Image, ImageDraw, ImageFont

    h, w = image.shape[:2]
    height = max(2, round(h * width / w) // 2 * 2)
    bar = max(12, round(BAR_PX * width / 640)) // 2 * 2
    out = Image.new("RGB", (width, height + bar), (16, 16, 16))
    out.paste(Image.fromarray(np.ascontiguousarray(image)).resize((width, height), Image.Resampling.BILINEAR))
    draw = ImageDraw.Draw(out)
    font = ImageFont.load_default(size=max(9, bar - 6))
    draw.text((6, height + 2), caption, fill=(235, 235, 235), font=font)
    return np.asarray(out)


def frames_for(shots: list[Shot], speed: float) -> Iterator[tuple[Shot, int]]:
    """Each shot with the number of video frames it is held for (its simulated time to the next)."""
    for i, s in enumerate(shots):
        gap = (shots[i + 1].t_sim - s.t_sim) if i + 1 < len(shots) else 1.0
        hold = min(max(gap, 0.0), MAX_HOLD_S) / speed
        yield s, max(1, round(hold * FPS))


def write_video(shots: list[Shot], out: Path, fmt: str = "mp4", width: int = 640, speed: float = 1.0) -> int:
    """Encode `shots` to `out`; returns the number of video frames."""
    import imageio_ffmpeg

    codec, params = FORMATS[fmt]
    first = _with_bar(shots[0].image, shots[0].caption, width)
    size = (first.shape[1], first.shape[0])
    tmp = out.with_name(out.name + ".partial" + out.suffix)
    writer = imageio_ffmpeg.write_frames(
        str(tmp),
        size,
        fps=FPS,
        codec=codec,
        output_params=params,
        macro_block_size=2,
        ffmpeg_log_level="error",
    )
    writer.send(None)
    n = 0
    try:
        for shot, hold in frames_for(shots, speed):
            frame = np.ascontiguousarray(_with_bar(shot.image, shot.caption, width)).tobytes()
            for _ in range(hold):
                writer.send(frame)
                n += 1
    finally:
        writer.close()
    tmp.replace(out)
    return n


def episode_video(
    task_dir: Path,
    bundle: Path | None,
    fmt: str = "mp4",
    width: int = 640,
    speed: float = 1.0,
    out: Path | None = None,
) -> Path:
    """Write the video of one episode (to `out`, default `video.FMT` in its task directory); the path."""
    from wac.runtime.trajectory import read_trajectory

    from .judge import frames_dir, read_report

    report = read_report(task_dir) if (task_dir / "report.json").is_file() else {}
    traj = read_trajectory(frames_dir(task_dir, report))
    shots = recorded_shots(traj)
    if shots is None:
        if bundle is None:
            raise UsageError(
                f"{task_dir.name}: the episode has no film images and its bundle is gone; rebuild it"
            )
        shots = replayed_shots(traj, bundle)
    out = out or task_dir / f"video.{fmt}"
    write_video(shots, out, fmt, width, speed)
    return out


def cmd_video(args) -> int:
    from wac.progress import Progress

    from .judge import bundle_dir, read_run, task_ids

    if args.speed <= 0:
        raise UsageError(f"--speed must be positive, got {args.speed:g}")
    if not 64 <= args.width <= 3840:
        raise UsageError(f"--width must be between 64 and 3840 px, got {args.width}")
    run = Path(args.run)
    meta = read_run(run)
    ids = task_ids(run, meta)
    if args.task:
        unknown = [t for t in args.task if t not in ids]
        if unknown:
            from wac.suggest import did_you_mean

            hint = did_you_mean(unknown[0], ids)
            raise UsageError(f"no task {unknown[0]!r} in {run}" + (f"; {hint}" if hint else ""))
        ids = [t for t in ids if t in args.task]
    done = [
        t
        for t in ids
        if (run / "tasks" / t / "trajectory").is_dir()
        or (run / "tasks" / t / "explore" / "trajectory").is_dir()
    ]
    if not done:
        raise UsageError(f"{run} has no recorded episode to film")
    bar = Progress(len(done), "video", unit="episode")
    failed = 0
    for tid in done:
        d = run / "tasks" / tid
        try:
            path = episode_video(d, bundle_dir(d, meta), args.format, args.width, args.speed)
            bar.update(True)
            if args.task:
                print(path)
        except (BundleError, UsageError) as exc:
            print(f"wac: {tid}: {exc}", file=sys.stderr)
            failed += 1
            bar.update(False)
    bar.close()
    print(
        f"wac: {len(done) - failed} video(s) written into {run}/tasks/<id>/video.{args.format}"
        + (f", {failed} failed" if failed else ""),
        file=sys.stderr,
    )
    return 1 if failed else 0


def register(subparsers) -> None:
    v = subparsers.add_parser("video", help="render the episodes of a run as videos (for raters)")
    v.add_argument("run", help="a run directory (wac eval, wac human export, wac mcp --out)")
    v.add_argument("--task", action="append", help="only this task (repeatable)")
    v.add_argument("--format", choices=sorted(FORMATS), default="mp4")
    v.add_argument("--width", type=int, default=640, help="video width in px (default 640)")
    v.add_argument("--speed", type=float, default=1.0, help="playback speed against simulated time")
    v.set_defaults(func=cmd_video)
