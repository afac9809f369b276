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
* A sample whose episode failed (the model's API, the simulator, a tool) is a failure, never a
  pass or a missing score: the solver writes `error.json` into the episode (as `wac eval` does)
  and re-raises, so the sample is an error in Inspect's log (and the log's status `error`); the
  task scores errored samples (`score_on_error`), so the scorer gives it `I` with
  `episode_error` in its metadata and the accuracy counts it.
* `--model wac/replay` is a model that needs no network, key or tokenizer: it plays a replay
  script (the `wac eval --agent replay` syntax) as tool calls; Inspect's own `mockllm` counts
  tokens with tiktoken, whose encoding is downloaded on first use.

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
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    SampleScore,
    Score,
    Target,
    accuracy,
    metric,
    scorer,
    stderr,
    value_to_float,
)
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolChoice, ToolDef, ToolInfo, ToolParams
from inspect_ai.util import LimitExceededError

from wac.bundle.reader import Bundle, is_build
from wac.errors import UsageError, WacError

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
        score_on_error=True,  # a failed episode is scored as a failure, not left without a score
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


def session_tools(session, crashes: list | None = None) -> list[ToolDef]:
    """Inspect tool definitions that dispatch to `session.call` (same names, descriptions, schemas);
    an exception a tool raises (a bug, never an agent mistake) is also appended to `crashes`."""
    defs = []
    for spec in session.tools:

        def make(name: str):
            async def run(**kwargs):
                try:
                    res = session.call(name, kwargs)
                except Exception as exc:
                    if crashes is not None:
                        crashes.append(exc)
                    raise
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
        try:
            out = episode_dir(run_dir, str(state.sample_id), state.epoch)
        except Exception as exc:
            _failed(state, None, "usage", exc)
            raise
        state.store.set("wac_episode", str(out))
        async with _EPISODES:
            session, crashes, phase = None, [], "setup"
            ending = None  # the summary `done` gets if the agent never called it; None: leave it open
            try:
                build_dir = Path(build) if is_build(build) else None
                session = AuditSession(bundle, out, options, _examples(build_dir, options))
                first = session.call("observe")
                state.messages = [
                    ChatMessageSystem(content=system_prompt(session.tools, options.observation)),
                    ChatMessageUser(content=_content(first)),
                ]
                state.tools = session_tools(session, crashes)
                nudges = 0
                while not session.done and session.calls < max_calls:
                    phase = "model"
                    state = await generate(state, tool_calls="single")
                    phase = "episode"
                    if state.output.message.tool_calls:
                        nudges = 0
                        continue
                    if nudges >= NUDGES or state.completed:
                        break
                    nudges += 1
                    state.messages.append(ChatMessageUser(content=NUDGE))
                ending = "(the agent stopped without calling done)"
            except LimitExceededError as exc:  # Inspect's limits end the episode, as the call cap does
                ending = f"(the episode reached Inspect's {exc.type} limit)"
                raise
            except Exception as exc:
                _failed(state, out, _error_kind(exc, phase == "model" and not crashes), exc)
                raise
            finally:
                if session is not None:
                    if ending is not None and not session.done:
                        session.call("done", {"summary": ending})
                    session.close()
        return state

    return solve


def _error_kind(exc: BaseException, model_call: bool) -> str:
    """error.json's kind, as `wac eval` writes it: the model's call, a usage error, or a crash."""
    if model_call:
        return "model"
    return "usage" if isinstance(exc, WacError) else "crash"


def _failed(state: TaskState, out: Path | None, kind: str, exc: BaseException) -> None:
    """Record a failed episode: in the sample's store (for the scorer) and, as `wac eval` does, in
    RUN/tasks/<id>/error.json (so `wac report RUN` counts it among the episode errors)."""
    message = f"{type(exc).__name__}: {exc}"
    state.store.set("wac_error", {"kind": kind, "message": message})
    if out is not None:
        from .runner import write_error

        write_error(out, kind, message, exc)


# --- the scorer: wac's judge ---------------------------------------------------------------------


def _score(s) -> Score:
    return getattr(s, "score", s)  # a SampleScore, or a bare Score when Inspect reduces epochs


@metric
def sr_by_family():
    """Success rate per anomaly family over every scored sample, as `accuracy` counts them (a judge
    error or a failed episode is a failure); Inspect lists each family as its own metric."""

    to_float = value_to_float()

    def compute(scores: list[SampleScore]) -> dict:
        by: dict[str, list[float]] = {}
        for s in map(_score, scores):
            md = s.metadata or {}
            if md.get("family"):
                by.setdefault(md["family"], []).append(to_float(s.value))
        return {f: sum(v) / len(v) for f, v in sorted(by.items())}

    return compute


@metric
def coverage():
    """Geometric coverage (App. E): the fraction of episodes with the anomaly's target in view."""

    def compute(scores: list[SampleScore]) -> float:
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
        episode = state.store.get("wac_episode")
        error = state.store.get("wac_error")
        if error is None and not (episode and (Path(episode) / "report.json").is_file()):
            error = {"kind": "missing", "message": "the episode wrote no report"}
        if error is not None:
            return _failure(state, error, episode)
        d = Path(episode)

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
                "episode_error": None,
                "episode": str(d),
            },
        )

    return score


def _failure(state: TaskState, error: dict, episode: str | None) -> Score:
    """The score of a failed episode: incorrect, with the error and the task's family."""
    family = category = None
    try:
        anomalies = Bundle(Path(state.metadata["bundle"])).task().anomalies
        anchor = next((a for a in anomalies if a.anchor), anomalies[0])
        family, category = str(anchor.family), str(anchor.category)
    except Exception:  # noqa: BLE001 - a broken bundle may be why the episode failed
        pass
    return Score(
        value=INCORRECT,
        answer="[]",
        explanation=f"episode error ({error['kind']}): {error['message']}",
        metadata={
            "family": family,
            "category": category,
            "covered": None,
            "judge_error": None,
            "episode_error": error["kind"],
            "episode": episode,
        },
    )


# --- an offline model: `--model wac/replay` ------------------------------------------------------

DEFAULT_ACTIONS = "turn 90; turn 90; turn 90; turn 90; done turned full circle"


@modelapi(name="wac")
class ReplayModel(ModelAPI):
    """`--model wac/replay`: plays a replay script as tool calls, one per turn, then `done`; no
    network, no key, no tokenizer (a smoke test of a build, or a scripted baseline).

    `-M actions="move 2 forward; turn 90; flag intersection bins overlap; done"` gives the script
    inline, `-M script=FILE` from a file (the `wac eval --agent replay` syntax; a flag cites the
    latest frame); without either it turns a full circle and calls `done`."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        actions: str | None = None,
        script: str | None = None,
        **model_args,
    ) -> None:
        from .agents.replay import ReplayAgent

        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        if model_name != "replay":
            raise UsageError(f"unknown wac model {model_name!r}; the wac models are: wac/replay")
        if model_args or (actions is not None and script is not None):
            given = ", ".join(sorted(model_args)) or "both actions and script"
            raise UsageError(f"wac/replay takes -M actions=… or -M script=FILE, not {given}")
        if actions is None and script is None:
            actions = DEFAULT_ACTIONS
        self.items = ReplayAgent(script, None if actions is None else str(actions)).items

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        from .agents.replay import FINAL_REF

        played = sum(1 for m in input if m.role == "tool")  # one tool result per scripted call
        if played < len(self.items):
            name, args = self.items[played].tool, dict(self.items[played].args)
        else:
            name, args = "done", {"summary": "Scripted replay finished."}
        if name == "flag_bug":  # cite the latest frame the model was shown, as the replay agent does
            results = [m for m in input if m.role == "tool" and not getattr(m, "error", None)]
            refs = [ref.group(1) for m in results for ref in FINAL_REF.finditer(m.text)]
            args["evidence"] = refs[-1:] or ["a0"]
        out = ModelOutput.for_tool_call(f"wac/{self.model_name}", name, args)
        out.usage = ModelUsage()  # set, so Inspect never counts tokens with a downloaded tokenizer
        return out

    async def count_text_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)  # an estimate that needs no tokenizer download
