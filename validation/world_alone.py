"""The self-check's world-alone stage (issue 27): the perturbed world judged without its clean twin.

The differential checks prove the two worlds differ; an auditor only ever sees the perturbed one.
This stage, with its own verdict (`alone`: ok | FAIL), asks of the bundle as built:

1. **the world**: `wac.detectors.evident` on the bundle's scene and anomalies, as the compiler's
   pass 6c does (E550, E551), so a bundle made by hand, imported (`wac import hf`) or built by an
   older wac is held to the same rule: each anomaly is found by its category's detector, and no
   detector finds anything else that the clean scene does not already hold;
2. **the run**: the perturbed run's own reading of the category, where the observable is
   differential: the walk crossed the target (missing collision) or stopped with nothing drawn ahead
   (unexpected collision) in that run alone; the contacted target rose, was thrown, tipped over or
   jittered beyond what any contact does (abnormal trajectory), without the clean run's margin.  The
   other observables already judge one run at a time (`Observable.judge`; a differential one's
   one-run half is its `Observable.alone`); shadows, materials and
   view-dependent appearance are judged by the detectors on the world and by the pixel rule.

The clean scene's findings are computed once per scene in a process (`_KNOWN`).
"""

from __future__ import annotations

from wac.bundle.model import CompiledTask, Scene
from wac.detectors import Timeline, World, detect
from wac.detectors.evident import Change, judge

from .capture import Run
from .observables import observable as observable_of
from .readings import Reading

_KNOWN: dict[tuple, list[tuple[Scene, tuple]]] = {}  # a scene's size and ends -> (scene, findings)
_KNOWN_MAX = 8  # a worker stays on a scene (validation/pool.py)


def _known(task: CompiledTask, clean: World) -> tuple:
    """The clean scene's findings, kept for the next equal scene (compared by value: a millisecond,
    where serialising it to a digest took ten)."""
    scene = task.scene
    objs = scene.objects
    key = (len(objs), objs[0].id if objs else "", objs[-1].id if objs else "")
    kept = _KNOWN.setdefault(key, [])
    for other, found in kept:
        if other is scene or other == scene:
            return found
    if sum(len(v) for v in _KNOWN.values()) >= _KNOWN_MAX:  # scenes are large: keep a few
        _KNOWN.clear()
        kept = _KNOWN[key] = []
    found = tuple(detect(Timeline((clean,))))
    kept.append((scene, found))
    return found


def world_problems(task: CompiledTask) -> list[tuple[int, str]]:
    """(anomaly index, message) of every problem the detectors find in the bundle's perturbed world."""
    clean = World.of_scene(task.scene, task.exploration)
    changes = [Change.of(an) for an in task.anomalies]
    return [(p.index, p.message) for p in judge(clean, changes, _known(task, clean))]


def run_reading(observable: str, pert: Run, task: CompiledTask) -> Reading | None:
    """The perturbed run judged on its own, for a differential observable (None for the others)."""
    judge_one = observable_of(observable).alone
    return None if judge_one is None else judge_one(pert, task)


def check_alone(
    task: CompiledTask, index: int, observable: str, pert: Run, problems: list[tuple[int, str]]
) -> tuple[str, list[str]]:
    """(verdict, reasons) of one anomaly's world-alone stage; `problems` from `world_problems`."""
    reasons = [f"world alone: {m}" for i, m in problems if i == index]
    r = run_reading(observable, pert, task)
    if r is not None and not r.anomalous:
        reasons.append(f"world alone: the perturbed run by itself does not show it: {r.detail}")
    return ("FAIL" if reasons else "ok"), reasons
