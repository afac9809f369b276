"""Run auditors on compiled tasks: one episode (`wac audit`) or a whole build (`wac eval`).

A run is a directory (layout in docs/evaluation.md):

    RUN/run.json                 what was run: agent, paradigm, options, build, task ids
    RUN/tasks/<task_id>/         one episode: episode.json, tools.jsonl, bugs.jsonl, notes.md,
                                 report.json, trajectory/ (two-stage: explore/ holds the explorer's
                                 episode), error.json when it failed, judgment.json once judged
    RUN/report/                  written by `wac report`

Episodes are independent processes' work (`--jobs`), each task's directory is written to a
temporary name and renamed when the episode ends, so an interrupted run resumes by skipping the
finished tasks.  Model-call failures are recorded in error.json (kind "model"), not as scores.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

from wac.bundle.reader import TASK, Bundle, is_build, read_index, require_build
from wac.errors import BundleError, UsageError, WacError
from wac.exits import sigterm_interrupts
from wac.suggest import did_you_mean

from .agents.base import is_secret
from .procs import LOCK_NAME, RunLock, worker_init
from .session import AuditSession, ReviewSession, SessionOptions, load_recording

RUN_FORMAT = "wac.run/1"
EXPLORE_S = 60.0
EXPLORER_BUDGET = 1000  # the explorer is limited by simulated time, not by actions


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run; stored in run.json and checked when a run is resumed."""

    agent: str
    paradigm: str = "interactive"  # or "two-stage"
    explorer: str | None = None  # two-stage: the agent that records the exploration
    explore_s: float = EXPLORE_S
    sample_s: float = 0.5
    options: SessionOptions = SessionOptions()
    agent_options: tuple[tuple[str, str], ...] = ()  # e.g. (("model", "gpt-4o"),); no secrets
    protocol: str = "wac"  # or "reference": the reference harness's texts (protocol.py)
    recording: str | None = None  # two-stage: review this recording instead of exploring (`wac audit`)

    def __post_init__(self) -> None:
        if self.paradigm not in ("interactive", "two-stage"):
            raise UsageError(f"paradigm must be 'interactive' or 'two-stage', got {self.paradigm!r}")
        if self.recording and self.paradigm != "two-stage":
            raise UsageError("--recording is reviewed in the two-stage paradigm (--paradigm two-stage)")
        if self.paradigm == "two-stage" and not (self.explorer or self.recording):
            raise UsageError("the two-stage paradigm needs an explorer agent (--explorer) or a --recording")
        if self.explore_s <= 0 or self.sample_s <= 0:
            raise UsageError("exploration time and sampling interval must be positive")
        if self.protocol not in ("wac", "reference"):
            raise UsageError(f"protocol must be 'wac' or 'reference', got {self.protocol!r}")
        from .agents import check_options

        check_options((self.agent, self.explorer), [k for k, _ in self.agent_options])

    def as_dict(self) -> dict:
        return {
            "agent": self.agent,
            "paradigm": self.paradigm,
            "explorer": self.explorer,
            "explore_s": self.explore_s,
            "sample_s": self.sample_s,
            "options": self.options.as_dict(),
            "agent_options": {k: v for k, v in self.agent_options if not is_secret(k)},  # never a secret
            "protocol": self.protocol,
            **({"recording": self.recording} if self.recording else {}),
        }


def _agent(spec: str, config: RunConfig, seed: int):
    from .agents import make_agent

    return make_agent(spec, seed=seed, **dict(config.agent_options))


def _examples(build: Path | None, options: SessionOptions):
    if not options.example:
        return None
    from .examples import ExampleLibrary

    return ExampleLibrary(build_dir=build, width=options.width, height=options.height)


def _drive(agent, session) -> None:
    """Let the agent run; make sure the episode ends with `done` and a written report."""
    try:
        agent.run(session)
    finally:
        if not session.done:
            session.call("done", {"summary": "(the agent stopped without calling done)"})
        session.close()


def run_episode(bundle: str | Path, out: str | Path, config: RunConfig, build: Path | None = None) -> dict:
    """One task: interactive, or explore-then-review; returns the report dict."""
    bundle, out = Path(bundle), Path(out)
    if not Bundle.exists(bundle):
        raise BundleError(f"{bundle} is not a task bundle (no {TASK})")
    options = config.options
    examples = _examples(build, options)
    if config.paradigm == "interactive":
        session = _speaking(AuditSession(bundle, out, options, examples, _film_images(config)), config)
        _drive(_agent(config.agent, config, options.seed), session)
        return session.report()
    if config.recording:  # a fixed trajectory: a reference VLA recording or an explorer's episode
        review = ReviewSession(bundle, _recording(config.recording, bundle, config), out, options, examples)
        _drive(_agent(config.agent, config, options.seed), review)
        return review.report()
    explore_opts = replace(
        options,
        max_sim_s=config.explore_s,
        budget_actions=EXPLORER_BUDGET,
        budget_multiplier=1.0,
        film_interval_s=config.sample_s,
        observation="final",
    )
    explorer = AuditSession(bundle, out / "explore", explore_opts, examples)
    _drive(_agent(config.explorer, config, options.seed), explorer)
    recording = load_recording(out / "explore" / "trajectory", interval_s=config.sample_s)
    review = ReviewSession(bundle, recording, out, options, examples)
    _drive(_agent(config.agent, config, options.seed), review)
    return review.report()


def _recording_dir(src: str) -> tuple[bool, Path]:
    """(is a VLA recording, the directory to read) of `--recording`, or a usage error."""
    from .vla_recording import is_vla_recording

    path = Path(src)
    if is_vla_recording(path):
        return True, path
    trajectory = path / "trajectory" if (path / "trajectory").is_dir() else path
    if not (trajectory / "trajectory.jsonl").is_file():
        raise UsageError(
            f"{src} is neither a VLA recording (meta.json, poses.jsonl, f*.jpg) nor an explorer's "
            "episode (trajectory/trajectory.jsonl)"
        )
    return False, trajectory


def _recording(src: str, bundle: Path, config: RunConfig):
    from .session import read_bundle_context
    from .vla_recording import load_vla_recording

    vla, path = _recording_dir(src)
    if vla:
        return load_vla_recording(path, read_bundle_context(bundle)[0].task_id)
    return load_recording(path, interval_s=config.sample_s)


def _film_images(config: RunConfig) -> bool:
    """Whether an interactive episode renders its film frames: not when nobody will look at them (an
    agent that reads no images, shown final frames only, wac's protocol).  Final frames are always
    rendered: the judge, the report and reviewers read them.  Coverage needs only the film frames'
    poses, which are recorded either way."""
    from .agents.base import reads_images

    shown_film = config.options.observation == "film" or config.protocol != "wac"
    return shown_film or reads_images(config.agent)


def _speaking(session, config: RunConfig):
    """The interactive session behind the reference harness's protocol when the run asks for it (PNG
    frames and the example with the first observe, which wac's agents expect); a two-stage review
    keeps wac's texts (the reference's replay protocol is `wac mcp --replay`)."""
    if config.protocol == "wac":
        return session
    from .protocol import ProtocolOptions, ReferenceSession

    return ReferenceSession(session, ProtocolOptions(image_format="png"), example_first=False)


def _error_kind(exc: BaseException) -> str:
    from .agents.openai_agent import ModelCallError  # imports the openai SDK only when a model is called

    if isinstance(exc, ModelCallError):
        return "model"
    if isinstance(exc, WacError):
        return "usage"
    return "crash"


def write_error(task_dir: Path, kind: str, message: str, exc: BaseException) -> None:
    """A failed episode's error.json (kind "model", "usage" or "crash"; a crash keeps its traceback)."""
    task_dir.mkdir(parents=True, exist_ok=True)
    detail = "".join(traceback.format_exception(exc)) if kind == "crash" else None
    (task_dir / "error.json").write_text(
        json.dumps({"kind": kind, "message": message, "traceback": detail}, indent=2) + "\n",
        encoding="utf-8",
    )


def _episode_job(bundle: str, task_dir: str, config: RunConfig, build: str | None) -> dict:
    """Worker: run one episode into a temporary dir, rename it into place; errors -> error.json."""
    final = Path(task_dir)
    tmp = final.with_name(final.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    t0 = time.perf_counter()
    status = {"task_id": final.name, "ok": True, "error": None}
    try:
        report = run_episode(bundle, tmp, config, Path(build) if build else None)
        status["actions"] = report["actions_used"]
        status["bugs"] = len(report["bugs"])
    except Exception as exc:  # noqa: BLE001 - an episode failure is recorded, the run goes on
        kind = _error_kind(exc)
        write_error(tmp, kind, str(exc), exc)
        status.update(ok=False, error=f"{kind}: {exc}")
    status["seconds"] = round(time.perf_counter() - t0, 2)
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    return status


def finished(task_dir: Path) -> bool:
    """A task whose episode ended and did not fail, with everything an episode leaves: a report that
    says done, the tool log and the trajectory (two-stage: also the explorer's)."""
    rep = task_dir / "report.json"
    if not rep.is_file() or (task_dir / "error.json").exists():
        return False
    try:
        report = json.loads(rep.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError):
        return False
    if not isinstance(report, dict) or not report.get("done"):
        return False
    needed = ["tools.jsonl"]
    if report.get("paradigm") == "two-stage":
        needed += ["explore/tools.jsonl", "explore/report.json", "explore/trajectory/trajectory.jsonl"]
    else:
        needed += ["trajectory/trajectory.jsonl"]
    return all((task_dir / n).is_file() for n in needed)


def eval_bundles(build: Path, only: list[str] | None = None) -> list[Path]:
    """The evaluation tasks of a build: every bundle that is not an in-context demonstration."""
    entries = read_index(require_build(build))
    ids = [e["id"] for e in entries if not e.get("example")]
    if only:
        unknown = sorted(set(only) - set(ids))
        if unknown:
            examples = {e["id"] for e in entries if e.get("example")}
            raise UsageError(
                f"not evaluation tasks of {build}: "
                + ", ".join(_unknown_task(t, ids, t in examples) for t in unknown)
            )
        ids = [i for i in ids if i in set(only)]
    return [build / i for i in ids]


def _unknown_task(task: str, ids: list[str], example: bool) -> str:
    """An unknown `--task` id, with why it is not one (a demonstration) or the closest ids."""
    if example:
        return f"{task} (an in-context demonstration, not an evaluation task)"
    hint = did_you_mean(task, ids, n=3)
    return f"{task} ({hint})" if hint else task


def start_run(run: Path, build: Path, config: RunConfig, bundles: list[Path]) -> dict:
    """Create run.json, or check that an existing run is the same run (for resuming)."""
    meta = {
        "format": RUN_FORMAT,
        **config.as_dict(),
        "build": str(build.resolve()),
        "tasks": [b.name for b in bundles],
        "pipeline_check": _pipeline_check(config),
    }
    path = run / "run.json"
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8"))
        old.setdefault("protocol", "wac")  # runs from before the option
        keys = (
            "agent", "paradigm", "explorer", "explore_s", "sample_s", "options", "agent_options", "build", "protocol",
            "recording",
        )  # fmt: skip
        changed = [k for k in keys if old.get(k) != meta.get(k)]
        if changed:
            raise UsageError(
                f"{run} holds a different run (differs in {', '.join(changed)}); "
                f"use a new --out directory, or --fresh to start over"
            )
        meta["tasks"] = list(dict.fromkeys(old.get("tasks", []) + meta["tasks"]))
    run.mkdir(parents=True, exist_ok=True)
    (run / "tasks").mkdir(exist_ok=True)
    path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


def _pipeline_check(config: RunConfig) -> bool:
    from .agents import agent_class

    names = [config.agent] + ([config.explorer] if config.explorer else [])
    return any(agent_class(n).pipeline_check for n in names)


def run_eval(
    build: str | Path,
    run: str | Path,
    config: RunConfig,
    jobs: int = 1,
    only: list[str] | None = None,
    progress: bool = False,
    fresh: bool = False,
    backend: str = "local",
    address: str | None = None,
) -> list[dict]:
    """Run every evaluation task of `build` into `run`, skipping finished ones; returns per-task status.

    `backend="ray"` runs the episodes as tasks of the Ray cluster at `address` (wac/backends.py)."""
    build, run = Path(build), Path(run)
    bundles = eval_bundles(build, only)
    if fresh and run.exists() and not (run / "run.json").is_file():
        raise UsageError(f"{run} exists and is not a wac run; refusing to delete it")
    with RunLock(run):
        if fresh:
            for p in run.iterdir():
                if p.name != LOCK_NAME:
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
        return _run_locked(build, run, config, bundles, jobs, progress, backend, address)


def _run_locked(
    build: Path,
    run: Path,
    config: RunConfig,
    bundles: list[Path],
    jobs: int,
    progress: bool,
    backend: str = "local",
    address: str | None = None,
):
    start_run(run, build, config, bundles)
    for stale in (run / "tasks").glob("*.partial"):  # interrupted episodes: redone below
        shutil.rmtree(stale, ignore_errors=True)
    todo = [b for b in bundles if not finished(run / "tasks" / b.name)]
    statuses = [{"task_id": b.name, "ok": True, "skipped": True} for b in bundles if b not in todo]
    bar = None
    if progress and todo:
        from wac.progress import Progress

        bar = Progress(len(todo), "eval")  # a bar on a terminal, a line every 30 s in a log
    args = [(str(b), str(run / "tasks" / b.name), config, str(build)) for b in todo]
    try:
        if backend == "ray":
            from wac.backends import ray_map

            statuses += ray_map(_episode_job, args, address)
        elif jobs <= 1 or len(todo) <= 1:
            for a in args:
                statuses.append(_episode_job(*a))
                if bar:
                    bar.update(statuses[-1]["ok"])
        else:
            import os

            from wac.backends import local_pool
            from wac.validation.pool import by_scene, scenes_of

            # spawn: VTK/EGL and pybullet do not survive fork; Ctrl-C cancels queued episodes at
            # once and kills running ones (their `.partial` directories are redone on resume); a
            # worker stays on a scene (`by_scene`: what a process keeps of a scene serves its tasks)
            with local_pool(jobs, "spawn", worker_init, (os.getpid(),)) as ex:
                for _, status in by_scene(ex, jobs, _episode_job, args, scenes_of(todo)):
                    statuses.append(status)
                    if bar:
                        bar.update(statuses[-1]["ok"])
    finally:
        if bar:
            bar.close()
    order = {b.name: i for i, b in enumerate(bundles)}
    return sorted(statuses, key=lambda s: order[s["task_id"]])


# --- command line ------------------------------------------------------------------------------

from .mcp_setup import options_from  # noqa: E402 - the one reading of the session flags


def _agent_options(args) -> tuple[tuple[str, str], ...]:
    out = []
    for kv in args.agent_option or ():
        k, sep, v = kv.partition("=")
        if not sep or not k:
            raise UsageError(f"--agent-option takes KEY=VALUE, got {kv!r}")
        if is_secret(k):
            raise UsageError(
                f"--agent-option {k}=… looks like a secret: pass API keys through the environment "
                f"(OPENAI_API_KEY), not on the command line (they would show in process lists and run files)"
            )
        out.append((k, v))
    return tuple(sorted(out))


def _config(args) -> RunConfig:
    return RunConfig(
        agent=args.agent,
        paradigm=args.paradigm,
        explorer=args.explorer,
        explore_s=args.explore_seconds,
        sample_s=args.sample_interval,
        options=options_from(args),
        agent_options=_agent_options(args),
        protocol=args.protocol,
        recording=getattr(args, "recording", None),
    )


def _add_common(p: argparse.ArgumentParser) -> None:
    from .agents import agent_names

    names = "; ".join(f"{k}: {v}" for k, v in agent_names().items())
    p.add_argument("--agent", required=True, help=f"the auditor ({names})")
    p.add_argument(
        "--agent-option",
        action="append",
        metavar="KEY=VALUE",
        help="an agent option, e.g. model=gpt-4o or base_url=http://localhost:8000/v1 (repeatable)",
    )
    p.add_argument("--paradigm", choices=("interactive", "two-stage"), default="interactive")
    p.add_argument(
        "--protocol",
        choices=("wac", "reference"),
        default="wac",
        help="the texts the agent reads: wac's (default) or the reference harness's (docs/mcp.md)",
    )
    p.add_argument("--explorer", help="two-stage: the agent that records the exploration (e.g. sweep)")
    p.add_argument(
        "--explore-seconds", type=float, default=EXPLORE_S, help="two-stage: simulated seconds explored"
    )
    p.add_argument(
        "--sample-interval", type=float, default=0.5, help="two-stage: seconds between recorded frames"
    )
    p.add_argument("--no-example", action="store_true", help="ablation: no in-context example")
    p.add_argument("--no-hint", action="store_true", help="ablation: no example and no anomaly-type hint")
    p.add_argument("--budget-multiplier", type=float, default=1.0)
    p.add_argument("--closer-start", action="store_true", help="ablation: start at the exposing view point")
    p.add_argument(
        "--observation",
        choices=("final", "film"),
        default="final",
        help="final: the final frame is shown after each action (film frames via inspect); "
        "film: film frames are shown too",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--width", type=int, default=640)
    p.add_argument("--height", type=int, default=480)


def cmd_audit(args) -> int:
    bundle = Bundle.open(args.bundle).path  # NoBundle (a usage error) when there is none
    config = _config(args)
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty; choose a new --out directory")
    if config.recording:
        _recording_dir(config.recording)  # a bad --recording is a usage error before any episode
    build = bundle.parent if is_build(bundle.parent) else None
    status = _episode_job(str(bundle), str(out), config, str(build) if build else None)
    if not status["ok"]:
        print(f"wac: episode failed: {status['error']} (details in {out / 'error.json'})", file=sys.stderr)
        return 1
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    print(
        f"{rep['task_id']}: {rep['actions_used']}/{rep['budget']} actions, {len(rep['bugs'])} bug(s) flagged; "
        f"episode in {out}"
    )
    for b in rep["bugs"]:
        print(f"  {b['id']} [{b['status']}] ({b['category']}) {b['description']}")
    return 0


def _interrupted(run: Path) -> str:
    """What an interrupted `wac eval` keeps (finished episodes) and how to go on."""
    try:
        tasks = json.loads((run / "run.json").read_text(encoding="utf-8"))["tasks"]
    except (OSError, ValueError, KeyError, TypeError):  # stopped before the run was set up
        return f"wac: interrupted before any episode ran; nothing was written to {run}"
    done = [t for t in tasks if finished(run / "tasks" / t)]
    failed = [t for t in tasks if (run / "tasks" / t / "error.json").is_file()]
    left = len(tasks) - len(done) - len(failed)
    return (
        f"wac: interrupted: {len(done)} episode(s) finished and kept in {run}, {len(failed)} failed, "
        f"{left} not run; run the same command again to resume (finished episodes are skipped)"
    )


def cmd_eval(args) -> int:
    config = _config(args)
    jobs = args.jobs or 1
    if jobs < 1:
        raise UsageError("--jobs must be at least 1")
    run = Path(args.out)
    if args.judge == "openai" and not args.judge_model:
        raise UsageError("--judge openai needs --judge-model")
    if args.judge_prompt != "c4" and args.judge != "openai":
        raise UsageError(f"--judge-prompt {args.judge_prompt} applies to --judge openai")
    only = args.task
    if args.accepted_only:  # only task versions two reviewers accepted (`wac review export`)
        from wac.audit.accepted import accepted_only

        only = accepted_only(args.build, args.accepted_only, only)
    t0 = time.perf_counter()
    try:
        with sigterm_interrupts():  # SIGTERM stops a run like Ctrl-C
            statuses = run_eval(
                args.build,
                run,
                config,
                jobs=jobs,
                only=only,
                progress=True,
                fresh=args.fresh,
                backend=args.backend,
                address=args.address,
            )
    except KeyboardInterrupt:
        print(_interrupted(run), file=sys.stderr)
        return 130
    ran = [s for s in statuses if not s.get("skipped")]
    failed = [s for s in ran if not s["ok"]]
    print(
        f"wac: {len(ran)} episode(s) run, {len(statuses) - len(ran)} already finished, {len(failed)} failed "
        f"({time.perf_counter() - t0:.1f} s) -> {run}"
    )
    for s in failed:
        print(f"  FAIL {s['task_id']}: {s['error']}", file=sys.stderr)
    if args.judge != "none":
        from .judge import judge_run

        judge_run(
            run,
            backend=args.judge,
            model=args.judge_model,
            base_url=args.judge_base_url,
            jobs=jobs,
            progress=True,
            prompt=args.judge_prompt,
        )
        from .report import print_summary

        print_summary(run)
    return 1 if failed else 0


def register(subparsers) -> None:
    a = subparsers.add_parser("audit", help="run one auditor episode on one bundle")
    a.add_argument("bundle")
    a.add_argument("--out", required=True, help="episode directory (new or empty)")
    _add_common(a)
    a.add_argument(
        "--recording",
        metavar="DIR",
        help="two-stage: review this fixed recording instead of exploring: a reference VLA recording "
        "(meta.json, poses.jsonl, f*.jpg) or an explorer's episode (trajectory/)",
    )
    a.set_defaults(func=cmd_audit)

    e = subparsers.add_parser("eval", help="run an auditor on every task of a build and judge it")
    e.add_argument("build")
    e.add_argument("--out", default="runs/latest", help="run directory (resumed when it exists)")
    e.add_argument("-j", "--jobs", type=int, default=None, help="episodes in parallel (default 1)")
    e.add_argument("--task", action="append", help="only this task id (repeatable)")
    e.add_argument("--fresh", action="store_true", help="delete an existing run directory first")
    e.add_argument("--accepted-only", metavar="FILE", help="only tasks accepted in this `wac review export`")
    e.add_argument(
        "--judge",
        choices=("keyword", "openai", "none"),
        default="keyword",
        help="judge the reports when the episodes are done (default keyword)",
    )
    e.add_argument("--judge-model", help="--judge openai: the judge model")
    e.add_argument("--judge-base-url", help="--judge openai: the endpoint (default $OPENAI_BASE_URL)")
    e.add_argument(
        "--judge-prompt",
        choices=("c4", "reference"),
        default="c4",
        help="--judge openai: C.4 rules or the reference's",
    )
    _add_common(e)
    from wac.backends import add_backend_args

    add_backend_args(e)
    e.set_defaults(func=cmd_eval)
