"""`wac human export`: the finished human sessions as a run directory that `wac judge` and `wac
report` read like any agent's (run.json with agent "human", paradigm interactive; RUN/tasks/...).

Two participants per task give two episodes per task.  By default one run holds them all, each
task directory named `<task_id>.p<slot>` (its episode.json names the bundle, so the judge and the
metrics find the task); SR and time per task are then over every human episode, as the paper
reports its human baseline.  `--slot N` exports one slot only, under the plain task ids: one run
per slot, comparable task for task with a model's run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from wac.audit.runner import EXPLORE_S, RUN_FORMAT, finished
from wac.errors import UsageError

from .store import HumanStore

AGENT = "human"


def episode_dir(episodes: Path, assignment_id: int) -> Path:
    """Where the hub writes the episode of one assignment."""
    return Path(episodes) / str(assignment_id)


def export_run(build: Path, store: HumanStore, episodes: Path, out: Path, slot: int | None = None) -> dict:
    """Write the run; returns a summary {exported, skipped, unfinished}."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        meta = out / "run.json"
        old = json.loads(meta.read_text(encoding="utf-8")) if meta.is_file() else {}
        if old.get("agent") != AGENT:
            raise UsageError(
                f"{out} is not empty and not an export of `wac human`; choose a new -o directory"
            )
        shutil.rmtree(out)  # an earlier export: written again from the database
    rows = [a for a in store.assignments() if slot is None or a.slot == slot]
    done = [a for a in rows if a.ended]
    names, skipped, options, minutes = [], [], None, None
    for a in done:
        src = episode_dir(episodes, a.id)
        if not finished(src):
            skipped.append(f"{a.task_id} slot {a.slot} (episode files missing in {src})")
            continue
        name = a.task_id if slot is not None else f"{a.task_id}.p{a.slot}"
        shutil.copytree(src, out / "tasks" / name)
        names.append(name)
        options = options or (a.options or {}).get("session")
        minutes = minutes or (a.options or {}).get("minutes")
    meta = {
        "format": RUN_FORMAT,
        "agent": AGENT,
        "paradigm": "interactive",
        "explorer": None,
        "explore_s": EXPLORE_S,
        "sample_s": 0.5,
        "options": options or {},
        "agent_options": {},
        "protocol": "wac",
        "build": str(Path(build).resolve()),
        "tasks": names,
        "pipeline_check": False,
        "human": {
            "minutes": minutes,
            "slot": slot,
            "participants": len({a.participant for a in done}),
        },
    }
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    (out / "run.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return {"exported": names, "skipped": skipped, "unfinished": len(rows) - len(done)}
