"""wac tasks in Inspect AI: `inspect eval wac/wac_audit -T build=build/ --model …`.

* `wac_audit(build)` is an Inspect `Task` with one sample per evaluation bundle of the build
  (demonstrations excluded); a sample's input is the C.1 text (instructions, scene, hint,
  budget), its id the task id.
* `wac_auditor()` is the solver: it opens an auditor session on the sample's bundle, replaces
  the input with the session's full C.1 input (text, in-context example, start frame, as image
  content), offers the session's tools as Inspect tools (their images come back as image
  content) and lets the model call them one at a time until it calls `done` (or stops, or hits
  the call cap).  Each episode is written to `RUN/tasks/<task_id>/`, as `wac eval` writes it.
* `wac_judge()` is the scorer: wac's judge (keyword, or a VLM over an OpenAI-compatible
  endpoint) on that episode; the judgment is written beside it, so `wac report RUN` works on
  the run too.  Metrics: accuracy (SR), SR by family, geometric coverage.

Sessions run one at a time in a process (the simulator is not shared between concurrent
episodes); the model calls of other samples still overlap with them.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ContentImage, ContentText
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Score,
    Target,
    accuracy,
    metric,
    scorer,
    stderr,
    value_to_float,
)
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolDef, ToolParams

from wac.bundle.reader import is_build
from wac.errors import UsageError

from .session import AuditSession, SessionOptions, read_bundle_context, task_text

DEFAULT_RUN = "runs/inspect"
MAX_CALLS = 400  # the reference harness's tool-call cap
NUDGES = 2
_EPISODES = asyncio.Lock()


def _eval_bundles(build: Path, tasks: list[str] | None) -> list[Path]:
    from .runner import eval_bundles

    return eval_bundles(build, tasks)


def _options(
    width: int, height: int, example: bool, hint: bool, observation: str, seed: int
) -> SessionOptions:
    return SessionOptions(
        width=int(width),
        height=int(height),
        example=bool(example),
        hint=bool(hint),
        observation=observation,
        seed=int(seed),
    )


def samples(
    build: str | Path, tasks: list[str] | None = None, options: SessionOptions | None = None
) -> list[Sample]:
    """One sample per evaluation bundle: input the C.1 text, metadata the bundle (never the rubric)."""
    options = options or SessionOptions()
    out = []
    for bundle in _eval_bundles(Path(build), tasks):
        ctx, _ = read_bundle_context(bundle)
        out.append(
            Sample(
                id=bundle.name,
                input=task_text(ctx, ctx.budget_actions, options),
                metadata={"bundle": str(bundle.resolve())},
            )
        )
    return out


@task
def wac_audit(
    build: str = "build",
    tasks: str | list[str] | None = None,
    run_dir: str = DEFAULT_RUN,
    judge: str = "keyword",
    judge_model: str | None = None,
    judge_base_url: str | None = None,
    width: int = 640,
    height: int = 480,
    example: bool = True,
    hint: bool = True,
    observation: str = "final",
    seed: int = 0,
    max_calls: int = MAX_CALLS,
) -> Task:
    """Every evaluation task of a wac build, audited by the model and judged by wac's judge."""
    if isinstance(tasks, str):
        tasks = [t for t in tasks.split(",") if t]
    options = _options(width, height, example, hint, observation, seed)
    return Task(
        dataset=MemoryDataset(samples(build, tasks, options), name=f"wac:{Path(build).name}"),
        solver=wac_auditor(build=build, run_dir=run_dir, options=options, max_calls=max_calls),
        scorer=wac_judge(backend=judge, model=judge_model, base_url=judge_base_url),
    )


# --- the solver: the session's tools as Inspect tools --------------------------------------------


def _content(result) -> list:
    """A session result as Inspect content: its text, then each image after its caption."""
    parts: list = [ContentText(text=result.text)]
    for im in result.images:
        parts.append(ContentText(text=im.caption))
        mime = "image/jpeg" if im.png[:3] == b"\xff\xd8\xff" else "image/png"
        parts.append(ContentImage(image=f"data:{mime};base64," + base64.b64encode(im.png).decode("ascii")))
    return parts


def session_tools(session) -> list[ToolDef]:
    """Inspect tool definitions that dispatch to `session.call` (same names, descriptions, schemas)."""
    defs = []
    for spec in session.tools:

        def make(name: str):
            async def run(**kwargs):
                res = session.call(name, kwargs)
                return _content(res) if res.images else res.text

            return run

        params = ToolParams.model_validate(_described(spec.parameters))
        defs.append(ToolDef(make(spec.name), name=spec.name, description=spec.description, parameters=params))
    return defs


def _described(schema: dict) -> dict:
    """The tool's JSON Schema with a description on every parameter (Inspect requires one)."""
    props = {}
    for name, p in schema.get("properties", {}).items():
        if not p.get("description"):
            what = f"one of {', '.join(map(str, p['enum']))}" if p.get("enum") else p.get("type", "value")
            p = {**p, "description": f"{name.replace('_', ' ')} ({what})"}
        props[name] = p
    return {**schema, "properties": props, "additionalProperties": False}


def episode_dir(run_dir: str | Path, task_id: str, epoch: int) -> Path:
    """RUN/tasks/<task_id>, or <task_id>~<epoch> for later epochs; a previous episode there is replaced."""
    d = Path(run_dir) / "tasks" / (task_id if epoch <= 1 else f"{task_id}~{epoch}")
    if d.exists():
        if not (d / "episode.json").is_file() and any(d.iterdir()):
            raise UsageError(f"{d} exists and is not a wac episode; refusing to replace it")
        shutil.rmtree(d)
    return d


@solver
def wac_auditor(
    build: str | Path = "build",
    run_dir: str | Path = DEFAULT_RUN,
    options: SessionOptions | None = None,
    max_calls: int = MAX_CALLS,
):
    """Audit the sample's bundle with the model driving wac's tools."""
    from .agents.openai_agent import NUDGE, system_prompt
    from .runner import _examples

    options = options or SessionOptions()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        bundle = Path(state.metadata["bundle"])
        out = episode_dir(run_dir, str(state.sample_id), state.epoch)
        async with _EPISODES:
            build_dir = Path(build) if is_build(build) else None
            session = AuditSession(bundle, out, options, _examples(build_dir, options))
            try:
                first = session.call("observe")
                state.messages = [
                    ChatMessageSystem(content=system_prompt(session.tools, options.observation)),
                    ChatMessageUser(content=_content(first)),
                ]
                state.tools = session_tools(session)
                nudges = 0
                while not session.done and session.calls < max_calls:
                    state = await generate(state, tool_calls="single")
                    if state.output.message.tool_calls:
                        nudges = 0
                        continue
                    if nudges >= NUDGES or state.completed:
                        break
                    nudges += 1
                    state.messages.append(ChatMessageUser(content=NUDGE))
                if not session.done:
                    session.call("done", {"summary": "(the agent stopped without calling done)"})
            finally:
                session.close()
        state.store.set("wac_episode", str(out))
        return state

    return solve


# --- the scorer: wac's judge ---------------------------------------------------------------------


def _score(s) -> Score:
    return getattr(s, "score", s)  # a SampleScore, or a bare Score when Inspect reduces epochs


@metric
def sr_by_family():
    """Success rate per anomaly family (judged episodes only, as `wac report`); Inspect lists each
    family as its own metric."""

    to_float = value_to_float()

    def compute(scores) -> dict:
        by: dict[str, list[float]] = {}
        for s in map(_score, scores):
            md = s.metadata or {}
            if md.get("judge_error") or not md.get("family"):
                continue
            by.setdefault(md["family"], []).append(to_float(s.value))
        return {f: sum(v) / len(v) for f, v in sorted(by.items())}

    return compute


@metric
def coverage():
    """Geometric coverage (App. E): the fraction of episodes with the anomaly's target in view."""

    def compute(scores) -> float:
        known = [c for c in ((_score(s).metadata or {}).get("covered") for s in scores) if c is not None]
        return sum(1.0 for c in known if c) / len(known) if known else 0.0

    return compute


@scorer(metrics=[accuracy(), stderr(), sr_by_family(), coverage()])
def wac_judge(backend: str = "keyword", model: str | None = None, base_url: str | None = None):
    """wac's judge on the episode the solver wrote (C.4 rules); the judgment is written beside it."""
    from .judge import BACKENDS, OpenAIJudge, _write, judge_task, read_run
    from .metrics import task_metrics

    if backend not in BACKENDS or backend == "none":
        raise UsageError(f"unknown judge backend {backend!r}; backends are: keyword, openai")
    if backend == "openai" and not model:
        raise UsageError("the openai judge needs a judge model (-T judge_model=…)")

    async def score(state: TaskState, target: Target) -> Score:
        d = Path(state.store.get("wac_episode"))

        def judge() -> tuple[dict, dict]:
            vlm = OpenAIJudge(model, base_url, None, 2, 300.0) if backend == "openai" else None
            meta = read_run(d.parent.parent)
            j = judge_task(d, meta, backend, vlm)
            _write(d / "judgment.json", j)
            return j, task_metrics(d.parent.parent, meta, d.name)

        j, row = await asyncio.to_thread(judge)
        cov = row.get("coverage")
        return Score(
            value=CORRECT if j.get("success") else INCORRECT,
            answer=json.dumps(json.loads((d / "report.json").read_text(encoding="utf-8")).get("bugs", [])),
            explanation=j.get("error")
            or next((e.get("reason") for e in j["entries"] if e.get("anchor")), None),
            metadata={
                "family": row.get("family"),
                "category": row.get("category"),
                "covered": None if cov is None else bool(cov["covered"]),
                "judge_error": j.get("error"),
                "episode": str(d),
            },
        )

    return score
