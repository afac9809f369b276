"""Self-check evidence on disk: clean | perturbed frames side by side, with the plan's captions."""

from __future__ import annotations

import json
from pathlib import Path

from wac.bundle.model import CompiledTask

from .capture import Run


def save_evidence(out_dir: Path, task: CompiledTask, clean: Run, pert: Run) -> list[str]:
    """Write clean | perturbed evidence frames with the plan's captions; return the file names."""
    from wac.runtime.compose import side_by_side
    from wac.runtime.trajectory import save_png

    out_dir.mkdir(parents=True, exist_ok=True)
    files, captions = [], []
    for c, p in zip(clean.samples, pert.samples, strict=False):
        if c.kind not in ("start", "mark", "after"):
            continue
        name = f"{len(files):02d}_{c.kind}.png"
        save_png(out_dir / name, side_by_side(c.frame, p.frame))
        files.append(name)
        captions.append(
            {
                "file": name,
                "caption": c.caption,
                "step": c.step,
                "sim_time": c.sim_time,
                "left": "clean",
                "right": "perturbed",
            }
        )
    (out_dir / "evidence.json").write_text(
        json.dumps({"task_id": task.id, "frames": captions}, indent=2) + "\n"
    )
    return files
