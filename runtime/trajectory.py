"""Trajectories on disk: what a run did, step by step, in a directory that can be replayed.

Layout of a trajectory directory:

    meta.json            task id, variant, seed, frame size, film interval
    trajectory.jsonl     one line per step (step 0 = start): action, args, outcome, pose,
                         sim_time, budget_left, frame file, film frames [{file, t_sim, pose}]
    events.jsonl         hidden trigger transitions (never shown to the agent): step, sim_time,
                         anomaly, operator, trigger, event, detail, target_in_view
    step_000.png         final frame of each step
    step_003_f1.png      film frames recorded during step 3 (1-based); a film frame that was not
                         rendered (meta.json `film_images` false) has a time and pose but no file
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wac.errors import BundleError


def save_png(path: Path, frame: np.ndarray) -> None:
    from PIL import Image

    Image.fromarray(frame).save(path, format="PNG", compress_level=1)


def load_png(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


class TrajectoryWriter:
    """Appends steps and events of one `WorldEnv` run to a directory."""

    def __init__(self, out: Path, env) -> None:
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        for name in ("trajectory.jsonl", "events.jsonl"):
            (self.out / name).write_text("", encoding="utf-8")
        for old in self.out.glob("step_*.png"):
            old.unlink()
        meta = {
            "task_id": env.task.id,
            "variant": env.variant,
            "seed": env.seed,
            "width": env.width,
            "height": env.height,
            "hfov_deg": env.hfov,
            "film_interval_s": env.film_interval,
            **({} if env.timing.name == "wac" else {"timing": env.timing.name}),  # absent: wac's timing
            **({} if env.film_images else {"film_images": False}),  # absent: film frames have images
            "budget": env.budget,
            "format": "wac.trajectory/1",
        }
        (self.out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        self._traj = open(self.out / "trajectory.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        self._events = open(self.out / "events.jsonl", "a", encoding="utf-8")  # noqa: SIM115

    def write_step(self, res) -> None:
        frame = f"step_{res.step:03d}.png"
        save_png(self.out / frame, res.frame)
        film = []
        for i, f in enumerate(res.film, start=1):
            entry = {"t_sim": f.t_sim, **({"pose": f.pose.as_dict()} if f.pose else {})}
            if f.frame is not None:
                name = f"step_{res.step:03d}_f{i}.png"
                save_png(self.out / name, f.frame)
                entry = {"file": name, **entry}
            film.append(entry)
        rec = {
            "step": res.step,
            "action": res.action.name if res.action else "start",
            "args": res.action.kwargs if res.action else {},
            "outcome": res.outcome,
            "pose": res.pose.as_dict(),
            "sim_time": round(res.sim_time, 4),
            "moved_m": round(res.moved_m, 4),
            "budget_left": res.budget_left,
            "frame": frame,
            "film": film,
        }
        self._traj.write(json.dumps(rec) + "\n")
        self._traj.flush()

    def write_event(self, ev) -> None:
        self._events.write(json.dumps(ev.as_dict()) + "\n")
        self._events.flush()

    def close(self) -> None:
        self._traj.close()
        self._events.close()


@dataclass(frozen=True)
class Trajectory:
    """A trajectory read back from disk."""

    path: Path
    meta: dict
    steps: tuple[dict, ...]
    events: tuple[dict, ...]

    def frame(self, step: int) -> np.ndarray:
        return load_png(self.path / self.steps[step]["frame"])

    def film(self, step: int) -> list[np.ndarray]:
        """The rendered film frames of a step (a run without film images has none)."""
        return [load_png(self.path / f["file"]) for f in self.steps[step]["film"] if "file" in f]

    def actions(self) -> list[str]:
        """The action list as text ('move 2 forward', 'turn -30', ...), replayable by `WorldEnv.step`."""
        out = []
        for s in self.steps[1:]:
            a = s["args"]
            if s["action"] == "move":
                out.append(f"move {a['distance_m']} {a['direction']}")
            elif s["action"] in ("turn", "look"):
                out.append(f"{s['action']} {a['degrees']}")
            elif s["action"] == "wait":
                out.append(f"wait {a['seconds']}")
            else:
                out.append(s["action"])
        return out

    def fired(self, anomaly: int = 0) -> int:
        return sum(1 for e in self.events if e["anomaly"] == anomaly and e["event"] == "fired")


def read_trajectory(path: str | Path) -> Trajectory:
    p = Path(path)
    try:
        meta = json.loads((p / "meta.json").read_text(encoding="utf-8"))
        steps = tuple(
            json.loads(line)
            for line in (p / "trajectory.jsonl").read_text(encoding="utf-8").splitlines()
            if line
        )
        events_file = p / "events.jsonl"
        events = (
            tuple(json.loads(line) for line in events_file.read_text(encoding="utf-8").splitlines() if line)
            if events_file.exists()
            else ()
        )
    except (OSError, ValueError) as exc:
        raise BundleError(f"{p}: not a readable trajectory: {exc}") from exc
    return Trajectory(p, meta, steps, events)
