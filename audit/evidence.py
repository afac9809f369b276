"""Whether a report's evidence shows its target: the judge's evidence rule (issue 31).

A finding is credited only if a frame it rests on shows the anomaly's target: one of the frames the
bug cites or, when it cites none, any frame of the episode.  "Shows" means at least `EVIDENCE_PX`
(150) px of the target in a 640x480 frame, occluders in front included: the floor below which the
self-check expects no auditor to see a change (docs/validation.md).

The pixels are measured while the episode runs: `TargetSightings` listens to the world's frames and
counts, for every frame the auditor is shown, each anomaly target's pixels in a segmentation render
(the runtime's view probe: a hidden object's place, an object about to be added, a hole's box count
as the target).  They are ground truth, so they are kept in memory and written to
`target_px.json` beside the trajectory only when the session closes, after the auditor's last call.

A change (a dynamic rubric entry) must also have been observed: the episode saw the target at two
moments at least `CHANGE_S` apart (a before and an after), or, for an interaction category, touched
it or acted on it within reach.  One view cannot show that something changes.

A category whose evidence is an interaction (`interaction` among its evidence kinds: a fence walked
through, a lamp switched through a wall) is shown by its outcome as much as by its look: a frame also
counts when it was taken touching the target (within `CONTACT_M` of its footprint) or within
interaction reach of it, facing it (App. E's angles, no occlusion test).

A run without that file (recorded before it existed, or by another runtime) is judged by App. E's
geometric coverage of each frame's pose instead (no occlusion test); a scene-wide anomaly (the
day-night cycle) is in every frame.  Each judgment row names the test it used.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from wac.bundle.coverage import anomaly_target, covers

SIGHTINGS = "target_px.json"
SIGHTINGS_FORMAT = "wac.target_px/1"
# px (640x480) of the target a frame must show to count as evidence: the self-check's perceptual floor
# for a visible change (`wac.validation.visual.CHANGE_PX`, docs/validation.md), not `WATCH_PX` (30 px,
# "on screen": a target 5 px across far away is on screen, but no one can see what is wrong with it)
EVIDENCE_PX = 150.0
REACH_M = 3.0  # interact reach of the simulator (runtime/env.py)
CONTACT_M = 0.6  # a pose this close to the target's footprint touched or walked into it
CHANGE_S = 0.5  # a change is observed by sightings this far apart in simulated time (one film interval)


class TargetSightings:
    """Counts each anomaly target's pixels in every frame of a `WorldEnv` episode (module docstring)."""

    def __init__(self, env) -> None:
        from wac.runtime.triggers import LiveAnomaly, TriggerState

        self.env = env
        task = env.task
        # a clean world runs no anomaly: its targets are probed where the anomaly would put them
        self.live = env.anomalies or [
            LiveAnomaly(i, a, TriggerState(a.trigger)) for i, a in enumerate(task.anomalies)
        ]
        self.wide = [anomaly_target(task, i).point is None for i in range(len(task.anomalies))]
        self.px: dict[str, list[float | None]] = {}
        self._measure("a0")  # the start frame was taken in reset: the world is still as it shows
        env.add_frame_listener(self._on_frame)

    def _on_frame(self, step: int, k: int | None) -> None:
        self._measure(f"a{step}" if k is None else f"a{step}.f{k}")

    def _measure(self, ref: str) -> None:
        self.px[ref] = [
            None if wide else round(float(self.env.target_px(an)), 1)
            for an, wide in zip(self.live, self.wide, strict=True)
        ]

    def write(self, folder: Path) -> None:
        data = {"format": SIGHTINGS_FORMAT, "threshold_px": EVIDENCE_PX, "frames": self.px}
        tmp = folder / (SIGHTINGS + ".tmp")
        tmp.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
        tmp.replace(folder / SIGHTINGS)


def read_sightings(folder: Path) -> dict[str, list[float | None]] | None:
    """The px per frame ref and anomaly of an episode, or None when it was not recorded (or is damaged)."""
    try:
        data = json.loads((folder / SIGHTINGS).read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != SIGHTINGS_FORMAT:
        return None
    frames = data.get("frames")
    return frames if isinstance(frames, dict) else None


# --- the episode's frames --------------------------------------------------------------------------


@dataclass(frozen=True)
class ViewFrame:
    ref: str
    t_sim: float
    pose: dict  # x, y, z (feet), yaw_deg (ccw from +x), pitch_deg (positive looks down)
    action: str  # the action of the step the frame belongs to ("start" for a0)


def trajectory_frames(traj: Path) -> list[ViewFrame]:
    """Every final and film frame of a trajectory that has a pose, in time order."""
    f = traj / "trajectory.jsonl"
    if not f.is_file():
        return []
    out: list[ViewFrame] = []
    for line in f.read_text(encoding="utf-8").splitlines():
        try:
            s = json.loads(line)
        except ValueError:  # a torn last line of an interrupted episode
            continue
        n = s.get("step", 0)
        for k, fr in enumerate(s.get("film") or (), start=1):
            if fr.get("pose"):
                out.append(
                    ViewFrame(f"a{n}.f{k}", float(fr.get("t_sim", 0.0)), fr["pose"], s.get("action", ""))
                )
        if s.get("pose"):
            out.append(ViewFrame(f"a{n}", float(s.get("sim_time", 0.0)), s["pose"], s.get("action", "start")))
    return out


@dataclass(frozen=True)
class EvidenceRule:
    """The judge's evidence rule over one episode (module docstring).  `frames`: every frame with its
    pose, in time order; `points` and `radii`: each rubric entry's target (point None: scene-wide)."""

    sightings: dict[str, list[float | None]] | None
    frames: tuple[ViewFrame, ...]
    points: tuple[tuple[float, float, float] | None, ...]
    radii: tuple[float, ...]
    eye_height_m: float
    limit_m: float
    known: bool  # the judge knows where the targets are (the task's bundle or judge_context.json)

    def test(self, index: int) -> str:
        """How entry `index` is checked: pixels, geometric (no recorded pixels), scene-wide or unchecked."""
        if self.sightings and index < len(next(iter(self.sightings.values()))):
            first = next(iter(self.sightings.values()))
            return "scene-wide" if first[index] is None else "pixels"
        if not self.known or index >= len(self.points):
            return "unchecked"
        return "scene-wide" if self.points[index] is None else "geometric"

    def refs(self) -> list[str]:
        """Every frame of the episode, by ref."""
        return list(self.sightings) if self.sightings else [f.ref for f in self.frames]

    def showing(self, index: int, refs: Iterable[str], interaction: bool = False) -> list[str]:
        """Those of `refs` whose frame shows the target of entry `index` (`interaction`: or was taken
        touching it, or within reach facing it)."""
        how = self.test(index)
        if how in ("scene-wide", "unchecked"):
            return list(refs)
        poses = {f.ref: f.pose for f in self.frames}
        return [
            r
            for r in refs
            if self._seen(how, index, r, poses) or interaction and self._within_reach(index, poses.get(r))
        ]

    def _seen(self, how: str, index: int, ref: str, poses: dict[str, dict]) -> bool:
        if how == "pixels":
            px = self.sightings.get(ref) or ()
            return index < len(px) and px[index] is not None and px[index] >= EVIDENCE_PX
        pose = poses.get(ref)
        return pose is not None and covers(pose, self.points[index], self.eye_height_m, self.limit_m)

    def _within_reach(self, index: int, pose: dict | None) -> bool:
        point = self.points[index] if index < len(self.points) else None
        if point is None or pose is None:
            return False
        radius = self.radii[index] if index < len(self.radii) else 0.0
        d = math.hypot(point[0] - pose["x"], point[1] - pose["y"])
        return d <= radius + CONTACT_M or covers(pose, point, self.eye_height_m, radius + REACH_M)

    def observed(self, index: int, interaction: bool = False) -> bool:
        """Whether the episode saw the target at two moments, `CHANGE_S` apart or more (a change needs
        a before and an after), or (`interaction`) touched it or acted on it within reach."""
        how = self.test(index)
        if how == "unchecked":
            return True
        shown = set(self.showing(index, [f.ref for f in self.frames]))
        times = [f.t_sim for f in self.frames if f.ref in shown]
        if times and max(times) - min(times) >= CHANGE_S - 1e-6:
            return True
        poses = [f.pose for f in self.frames if f.action == "interact" or f.ref in shown]
        return interaction and any(self._within_reach(index, p) for p in poses)

    def why_not(
        self, index: int, bug: dict, cited: list[str], interaction: bool, dynamic: bool
    ) -> str | None:
        """None when `bug`'s evidence shows the target (and, for a change, the episode observed it),
        else the reason (for the judgment)."""
        if not self.showing(index, cited or self.refs(), interaction):
            what = (
                f"at least {EVIDENCE_PX:g} px of it on screen" if self.test(index) == "pixels" else "in view"
            )
            if interaction:
                what += ", or taken within reach of it"
            if cited:
                return f"{bug.get('id')} cites {', '.join(cited)}, none of which shows the target ({what})"
            return f"{bug.get('id')} cites no frame, and no frame of the episode shows the target ({what})"
        if dynamic and not self.observed(index, interaction):
            return (
                f"{bug.get('id')} describes a change the episode never observed (it saw the target at one "
                f"moment only: a change needs it seen {CHANGE_S:g} s apart or more"
                + (", or touched or acted on" if interaction else "")
                + ")"
            )
        return None
