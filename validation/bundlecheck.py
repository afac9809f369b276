"""One bundle's self-check, start to verdict: run each anomaly's plan in both worlds, apply the
checks (checks.py, pixelchecks.py, the category's observable) and return a `SelfCheckResult`.

`check_bundle` raises on a bundle it cannot read; `safe_check` (for worker processes) turns every
failure into a failed result.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

from wac.bundle.model import CompiledTask, SelfCheckPlan
from wac.bundle.reader import Bundle
from wac.errors import WacError
from wac.taxonomy.registry import Category

from .capture import Step, actions_text, anchor, anchor_index, run_steps
from .checks import check_necessity, check_one_change, check_trigger, static_checks
from .evidence import save_evidence
from .observables import Reading, observable
from .pixelchecks import check_visible, check_watched
from .world_alone import check_alone, world_problems


@dataclass(frozen=True)
class SelfCheckResult:
    """The verdict on one bundle; `passed` when every check holds."""

    task_id: str
    category: str
    observable: str
    operator: str
    perturbed: Reading | None
    clean: Reading | None
    necessity: str  # ok | n/a | FAIL
    actions_needed: int
    budget: int
    seconds: float
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    trigger_fired: int = 0
    frames: tuple[str, ...] = ()
    actions: str = ""
    bundle: str = ""
    error: str | None = None
    alone: str = "?"  # the world-alone stage: ok | FAIL (world_alone.py)
    reused: bool = False  # a kept verdict on the same bytes and checker (verdicts.py), not checked again

    @property
    def passed(self) -> bool:
        return not self.reasons and self.error is None

    @property
    def perturbed_ok(self) -> bool:
        return bool(self.perturbed and self.perturbed.anomalous)

    @property
    def clean_ok(self) -> bool:
        return bool(self.clean and not self.clean.anomalous)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["passed"] = self.passed
        return d


def focused(task: CompiledTask, index: int) -> CompiledTask:
    """The task with anomaly `index` as its anchor: what the checks of that anomaly look at."""
    if anchor_index(task) == index:
        return task
    ans = tuple(an.model_copy(update={"anchor": i == index}) for i, an in enumerate(task.anomalies))
    return task.model_copy(update={"anomalies": ans})


@dataclass(frozen=True)
class _Checked:
    """One anomaly's checks: its readings, necessity verdict, reasons and notes."""

    perturbed: Reading | None
    clean: Reading | None
    necessity: str
    reasons: list
    notes: list
    fired: int
    runs: tuple = ()
    error: str | None = None
    alone: str = "?"


def _check_anomaly(
    bdir: Path,
    task: CompiledTask,
    plan: SelfCheckPlan,
    steps: list[Step],
    seed: int,
    shadows: bool | None,
    problems: list[tuple[int, str]] = (),
    starts: dict | None = None,
) -> _Checked:
    """Run one anomaly's plan in both worlds and apply every check to it (`task` has it as anchor)."""
    obs = observable(plan.observable)
    reasons = static_checks(task, plan)
    if shadows is None:
        shadows = plan.category == Category.shadow_lighting
    same = dict(seed=seed, shadows=shadows, depth=obs.depth, focus=task, starts=starts)
    try:
        pert = run_steps(bdir, "perturbed", steps, obs.measure, **same)
        probe = [e.sim_time for e in pert.events if e.event in ("fired", "deactivated")]
        clean = run_steps(bdir, "clean", steps, obs.measure, probe_times=probe, **same)
    except WacError as exc:
        return _Checked(None, None, "?", [f"the runtime refused the bundle: {exc}"], [], 0, error=str(exc))
    for run in (pert, clean):
        if run.error:
            reasons.append(f"{run.variant}: {run.error}")
    rp, rc = obs.readings(pert, clean, task)
    if not rp.anomalous:
        reasons.append(f"perturbed variant does not show the anomaly: {rp.detail}")
    if rc.anomalous:
        reasons.append(f"clean variant also shows it: {rc.detail}")
    vreasons, notes = check_visible(task, plan, clean, pert)
    reasons += vreasons
    necessity, nreasons, nnotes = check_necessity(task, plan, clean, pert)
    reasons += nreasons
    notes += nnotes
    oreasons, onotes = check_one_change(task, clean, pert)
    reasons += oreasons
    notes += onotes
    fired, treasons = check_trigger(task, pert)
    reasons += treasons
    if not any("happened in view" in r for r in treasons):
        reasons += check_watched(task, clean, pert)
    alone, areasons = check_alone(task, anchor_index(task), plan.observable, pert, list(problems))
    reasons += areasons
    return _Checked(rp, rc, necessity, reasons, notes, fired, (clean, pert), alone=alone)


def check_bundle(
    path: str | Path,
    out_dir: str | Path | None = None,
    steps: list[Step] | None = None,
    seed: int = 0,
    shadows: bool | None = None,
) -> SelfCheckResult:
    """Self-check one bundle (optionally with another action list); see the module docstring.

    A multi-anomaly task is checked anomaly by anomaly, each with its own plan (`plan.others`);
    the result's readings are the anchor's, and the reasons of a further anomaly name it.
    Shadows are rendered only for the shadow/lighting category unless `shadows` says otherwise
    (no other observable needs them, and they cost most of the render time).
    """
    t0 = time.perf_counter()
    bundle = Bundle.open(path)
    bdir, task, plan = bundle.path, bundle.task(), bundle.plan()
    an = anchor(task)
    steps = steps if steps is not None else [Step.of(s) for s in plan.steps]
    base = dict(
        task_id=task.id,
        category=plan.category,
        observable=plan.observable,
        operator=an.operator,
        actions_needed=sum(1 for s in steps if s.action != "mark"),
        budget=task.exploration.budget_actions,
        actions=actions_text(steps),
        bundle=str(bdir),
    )
    problems = world_problems(task)
    starts: dict = {}  # every plan starts in the same two worlds: their start views, drawn once
    main = _check_anomaly(bdir, task, plan, steps, seed, shadows, problems, starts)
    reasons, notes = list(main.reasons), list(main.notes)
    for other in plan.others:
        if other.anomaly >= len(task.anomalies):
            reasons.append(f"the plan for anomaly {other.anomaly + 1} has no anomaly in the task")
            continue
        o = task.anomalies[other.anomaly]
        label = f"anomaly {other.anomaly + 1} (`{o.operator} {' '.join(o.targets)}`): "
        sub = _check_anomaly(
            bdir,
            focused(task, other.anomaly),
            other,
            [Step.of(x) for x in other.steps],
            seed,
            shadows,
            problems,
            starts,
        )
        reasons += [label + r for r in sub.reasons]
        notes += [label + n for n in sub.notes]
    if main.error is not None:
        return SelfCheckResult(
            perturbed=None,
            clean=None,
            necessity="?",
            seconds=time.perf_counter() - t0,
            reasons=tuple(reasons),
            error=main.error,
            **base,
        )
    frames: list[str] = []
    if out_dir is not None:
        clean, pert = main.runs
        frames = save_evidence(Path(out_dir), task, clean, pert)
    return SelfCheckResult(
        perturbed=main.perturbed,
        clean=main.clean,
        necessity=main.necessity,
        seconds=round(time.perf_counter() - t0, 2),
        reasons=tuple(reasons),
        notes=tuple(notes),
        trigger_fired=main.fired,
        frames=tuple(frames),
        alone=main.alone,
        **base,
    )


def safe_check(path: str, out: str | None) -> SelfCheckResult:
    """check_bundle for a worker process: every failure becomes a failed result."""
    t0 = time.perf_counter()
    try:
        return check_bundle(path, Path(out) / Path(path).name if out else None)
    except WacError as exc:
        msg = str(exc)
    except Exception as exc:  # a bug in wac or the runtime: report it as this task's failure, keep going
        import traceback

        msg = (
            f"internal error: {type(exc).__name__}: {exc} ({traceback.extract_tb(exc.__traceback__)[-1].filename.rsplit('/', 1)[-1]}:"
            f"{traceback.extract_tb(exc.__traceback__)[-1].lineno})"
        )
    return SelfCheckResult(
        task_id=Path(path).name,
        category="?",
        observable="?",
        operator="?",
        perturbed=None,
        clean=None,
        necessity="?",
        actions_needed=0,
        budget=0,
        seconds=round(time.perf_counter() - t0, 2),
        reasons=(msg,),
        bundle=path,
        error=msg,
    )


def files_pass(files: dict[str, bytes]) -> bool:
    """Whether a compiled task's bundle, given as its files' bytes, passes `wac selfcheck` (every
    anomaly checked): `wac derive multi` keeps only the draws that do."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="wac-derive-") as tmp:
        bundle = Path(tmp) / "bundle"
        for name, data in files.items():
            f = bundle / name
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(data)
        return safe_check(str(bundle), None).passed
