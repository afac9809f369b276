"""Auditor sessions: the tools of the paper's Table 6 over one task, with everything recorded.

`AuditSession` is the interactive paradigm (the agent acts in the perturbed world);
`ReviewSession` is the second stage of the two-stage paradigm (the agent reviews a recording
made by an explorer and cannot act).  Both answer `call(name, args)` with a `ToolResult`
(text, captioned PNG images, error flag) and never raise for an agent's mistake: bad arguments,
unknown frame refs, an exhausted budget or a second `done` come back as error results.

Ground truth stays sealed: the session holds the bundle in memory; no tool takes a path, and
tool text names objects only by the human names the scene already shows.  The episode directory
(trajectory, tool log, bug log, notes, final report) is written for the runner and the judge,
never handed to the agent.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
import numpy as np

from wac.bundle.model import AgentContext, PlanStep, SelfCheckPlan
from wac.bundle.reader import Bundle
from wac.errors import BundleError, UsageError
from wac.runtime.timing import TIMINGS
from wac.taxonomy.reference import same_category

from .evidence import TargetSightings
from .frames import Frame, FrameArchive, FrameRefError, crop, png_bytes
from .ledger import BugLedger, LedgerError
from .limits import MAX_BUGS, MAX_NOTES, MAX_TOOL_NAME, TextLog, clip_args
from .tools import MAX_HISTORY_SPAN, ToolSpec, live_tools, review_tools

REPORT_FORMAT = "wac.report/1"


@dataclass(frozen=True)
class ImageItem:
    """One image of a tool result, with the text that must travel beside it."""

    ref: str
    caption: str
    png: bytes


@dataclass(frozen=True)
class ToolResult:
    text: str
    images: tuple[ImageItem, ...] = ()
    error: bool = False
    after: str = ""  # text that travels after the images (the reference's example: figures, then answer)


@dataclass(frozen=True)
class SessionOptions:
    """How an episode is run: the guidance ablations of §6.1, budget, start and observation delivery."""

    example: bool = True  # give the category's in-context example
    hint: bool = True  # give the anomaly-type hint (the paper ablates it together with the example)
    budget_multiplier: float = 1.0
    closer_start: bool = False  # start at the self-check's exposing view point (an ablation)
    observation: str = "final"  # "final": final frame inline, film archived; "film": film frames inline too
    seed: int = 0
    width: int = 640
    height: int = 480
    film_interval_s: float = 0.5
    max_sim_s: float | None = None  # stop environment actions after this much simulated time
    budget_actions: int | None = None  # replaces the task's budget (before the multiplier); explorers
    variant: str = "perturbed"
    # seconds per action and film sampling: wac's or the reference runtime's (runtime/timing.py)
    timing: str = "wac"

    def __post_init__(self) -> None:
        if self.observation not in ("final", "film"):
            raise UsageError(f"observation must be 'final' or 'film', got {self.observation!r}")
        if self.timing not in TIMINGS:
            raise UsageError(f"timing must be one of {', '.join(TIMINGS)}, got {self.timing!r}")
        if not (0 < self.budget_multiplier <= 20):
            raise UsageError(f"budget multiplier must be in (0, 20], got {self.budget_multiplier}")

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _pose_text(p: dict | None) -> str:
    if not p:
        return "pose unknown"
    return f"pos (x={p['x']:.2f}, y={p['y']:.2f}) yaw {p['yaw_deg']:.0f} pitch {p['pitch_deg']:.0f}"


def read_bundle_context(bundle: Path) -> tuple[AgentContext, SelfCheckPlan | None]:
    """The auditor's context and the self-check plan of a verified bundle (never its rubric)."""
    b = Bundle.open(bundle, verify=True)
    return b.context(), b.plan_or_none()


def task_text(ctx: AgentContext, budget: int | None, options: SessionOptions) -> str:
    """The textual part of the auditor's initial input (C.1): instructions, scene, hint, budget
    (`budget` None: no environment actions, as in a review of a recording)."""
    instructions = ctx.instructions
    if budget is not None:
        instructions = instructions.replace(f"{ctx.budget_actions}-action", f"{budget}-action")
    parts = ["# Auditing task", "", instructions, "", f"Scene: {ctx.scene_description}"]
    # no list of interactive objects: it is the scene's as compiled for this task and can single out
    # the target (a mechanism anomaly's object); agents find what can be used by trying (docs/auditing.md)
    if options.hint and ctx.hint:
        parts.append(f"Anomaly-type hint: {ctx.hint}")
    if ctx.anomaly_count > 1:
        parts.append(f"This scene contains {ctx.anomaly_count} anomalies.")
    if budget is not None:
        parts.append(
            f"Budget: {budget} environment actions (move, turn, look, interact, wait); "
            f"the other tools are free."
        )
    return "\n".join(parts)


class _Session:
    """What both paradigms share: frames, ledger, notes, the tool log and the final report."""

    tools: tuple[ToolSpec, ...]
    # update_bug keeps the action and time a bug was flagged at (the reference's ledger); wac's own
    # protocol records the action and time of the last change
    keep_flag_origin: bool = False

    def __init__(self, out: Path | None, options: SessionOptions, examples) -> None:
        self.options = options
        self.out = Path(out) if out else None
        self.examples = examples
        self.archive = FrameArchive()
        self.ledger = BugLedger()
        self.notes: list[str] = []
        self.done = False
        self.summary: str | None = None
        self.calls = 0
        self.tool_counts: dict[str, int] = {}
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}
        self.overhead_ms: list[float] = []
        self.env_ms = 0.0  # time the current call spent in the environment step (not runner overhead)
        self._started = False
        self._validators = {t.name: jsonschema.Draft202012Validator(t.parameters) for t in self.tools}
        self._log = None
        self._text_log = TextLog()
        if self.out is not None:
            self.out.mkdir(parents=True, exist_ok=True)
            self._log = open(self.out / "tools.jsonl", "w", encoding="utf-8")  # noqa: SIM115

    @property
    def example_avoid(self) -> frozenset[str]:
        """The task's target kinds: the in-context example must share none of them (harness side;
        the agent sees only the example chosen, see wac.audit.examples.choose_demo)."""
        if getattr(self, "_example_avoid", None) is None:
            from .examples import bundle_target_kinds

            self._example_avoid = bundle_target_kinds(self.bundle)
        return self._example_avoid

    # --- the one entry point ---------------------------------------------------------------------
    def call(self, name: str, args: dict | None = None) -> ToolResult:
        """Run one tool; every agent mistake becomes an error result, never an exception."""
        name = str(name)[:MAX_TOOL_NAME]
        t0 = time.perf_counter()
        self.env_ms = 0.0
        args = {} if args is None else args
        self.calls += 1
        self.tool_counts[name] = self.tool_counts.get(name, 0) + 1
        if name not in self._validators:
            res = ToolResult(
                f"ERROR: unknown tool {name!r}; tools are: {', '.join(t.name for t in self.tools)}",
                error=True,
            )
        elif not isinstance(args, dict):
            res = ToolResult(f"ERROR: arguments for {name} must be a JSON object", error=True)
        else:
            errors = sorted(self._validators[name].iter_errors(args), key=lambda e: list(e.path))
            if errors:
                res = ToolResult(
                    f"ERROR: invalid arguments for {name}: " + "; ".join(_explain(e) for e in errors),
                    error=True,
                )
            else:
                try:
                    res = getattr(self, f"_t_{name}")(**args)
                except (FrameRefError, LedgerError, UsageError) as exc:
                    res = ToolResult(f"ERROR: {exc}", error=True)
        self._record(name, args, res, t0)
        return res

    def refuse(self, name: str, message: str) -> ToolResult:
        """A call the agent's transport could not decode (e.g. arguments that are not JSON): an error
        result, counted and logged like any other mistake; the raw arguments are not kept."""
        t0 = time.perf_counter()
        self.env_ms = 0.0
        self.calls += 1
        self.tool_counts[name] = self.tool_counts.get(name, 0) + 1
        res = ToolResult(f"ERROR: {message}", error=True)
        self._record(name, {"invalid_arguments": True}, res, t0)
        return res

    def _record(self, name: str, args, res: ToolResult, t0: float) -> None:
        ms = (time.perf_counter() - t0) * 1000.0
        self.overhead_ms.append(max(0.0, ms - self.env_ms))
        if self._log is not None:
            self._log.write(
                json.dumps(
                    {
                        "call": self.calls,
                        "tool": name,
                        "args": clip_args(args),
                        "error": res.error,
                        **self._text_log.fields(res.text),
                        "images": [i.ref for i in res.images],
                        "ms": round(ms, 2),
                        "env_ms": round(self.env_ms, 2),
                    },
                    default=str,
                )
                + "\n"
            )
            self._log.flush()

    def add_usage(self, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        """Model cost, reported by agents that call a model."""
        self.usage["prompt_tokens"] += int(prompt_tokens or 0)
        self.usage["completion_tokens"] += int(completion_tokens or 0)
        self.usage["calls"] += 1

    # --- shared tools --------------------------------------------------------------------------
    def _image(self, frame: Frame, caption: str, image: np.ndarray | None = None) -> ImageItem:
        if image is None and frame.file is not None and frame.file.is_file():
            return ImageItem(frame.ref, caption, frame.file.read_bytes())  # already encoded by the recorder
        return ImageItem(frame.ref, caption, png_bytes(frame.image if image is None else image))

    def _caption(self, frame: Frame) -> str:
        what = {"start": "start view", "final": "final view", "film": f"film frame t={frame.t_sim:.1f} s"}[
            frame.kind
        ]
        return f"{frame.ref} {what} | {_pose_text(frame.pose)} | t={frame.t_sim:.1f} s"

    def _example(self) -> ToolResult | None:
        """The task's in-context example as text and captioned images, when the run gives one."""
        if not self.options.example or self.examples is None or not self.context.example:
            return None
        ex = self.examples.get(self.context.example, avoid=self.example_avoid)
        if ex is None:
            return None
        return ToolResult(
            ex.text,
            tuple(ImageItem(f"example.{i}", cap, png) for i, (cap, png) in enumerate(ex.figures, start=1)),
        )

    def _t_read_example(self, code: str | None = None) -> ToolResult:
        if not self.options.example or self.examples is None:
            return ToolResult("ERROR: no in-context example is available in this run", error=True)
        mine = self.context.example
        if code not in (None, "", mine) and not same_category(code, mine):  # a wac id or a code (G1 …)
            return ToolResult(
                f"ERROR: only the example for this task's anomaly type is available; "
                f"omit code (or use {mine!r})",
                error=True,
            )
        ex = self._example()
        return ex if ex is not None else ToolResult("ERROR: this task has no in-context example", error=True)

    def _t_inspect(self, refs: list[str], region: list[float] | None = None) -> ToolResult:
        frames = [self.archive.get(r) for r in refs]
        for f in frames:
            if f.image is None:
                raise FrameRefError(
                    f"frame {f.ref} was not rendered (this run records film frames' poses only)"
                )
        items, lines = [], []
        for f in frames:
            img = crop(f.image, region, min_width=f.image.shape[1]) if region else None
            cap = self._caption(f) + (f" | zoom [{', '.join(f'{v:.2f}' for v in region)}]" if region else "")
            items.append(self._image(f, cap, img))
            lines.append(cap)
        return ToolResult("\n".join(lines), tuple(items))

    def _t_history(self, from_action: int, to_action: int) -> ToolResult:
        if to_action < from_action:
            return ToolResult("ERROR: to_action must not be smaller than from_action", error=True)
        if to_action - from_action + 1 > MAX_HISTORY_SPAN:
            return ToolResult(f"ERROR: at most {MAX_HISTORY_SPAN} actions per history call", error=True)
        lines = self._history_lines(from_action, to_action)
        return ToolResult(
            "\n".join(lines) if lines else f"(no actions between a{from_action} and a{to_action})"
        )

    def _t_write_notes(self, text: str) -> ToolResult:
        text = text.strip()
        if not text:
            return ToolResult("ERROR: write_notes needs non-empty text", error=True)
        if len(self.notes) >= MAX_NOTES:
            return ToolResult(f"ERROR: at most {MAX_NOTES} notes per episode", error=True)
        self.notes.append(text)
        if self.out is not None:
            (self.out / "notes.md").write_text("".join(f"- {n}\n" for n in self.notes), encoding="utf-8")
        n = len(self.notes)
        return ToolResult(f"Note added ({n} {'entry' if n == 1 else 'entries'}).")

    def _evidence(self, evidence) -> tuple[str, ...]:
        refs = tuple(str(r) for r in (evidence or ()))
        for r in refs:
            self.archive.get(r)  # unknown refs are an error, not silently kept
        return refs

    def _t_flag_bug(self, description: str, category: str, status: str, evidence=None) -> ToolResult:
        if self.done:
            return ToolResult("ERROR: the inspection is already finished (done was called)", error=True)
        if len(self.ledger.all()) >= MAX_BUGS:
            return ToolResult(f"ERROR: at most {MAX_BUGS} bugs can be flagged per episode", error=True)
        pose, t = self._where()
        bug = self.ledger.flag(
            description,
            category,
            status,
            self._evidence(evidence),
            action=self.actions_used,
            sim_time=t,
            pose=pose,
        )
        self._log_bug()
        return ToolResult(f"Flagged {bug.id} [{bug.status}] ({bug.category}).")

    def _t_update_bug(self, id: str, description=None, status=None, evidence=None) -> ToolResult:  # noqa: A002
        if self.done:
            return ToolResult("ERROR: the inspection is already finished (done was called)", error=True)
        _, t = self._where()
        ev = self._evidence(evidence) if evidence is not None else None
        keep = self.keep_flag_origin
        bug = self.ledger.update(
            id,
            description=description,
            status=status,
            evidence=ev,
            action=None if keep else self.actions_used,
            sim_time=None if keep else t,
        )
        self._log_bug()
        return ToolResult(f"Updated {bug.line()}")

    def _t_list_bugs(self) -> ToolResult:
        return ToolResult(self.ledger.render())

    def _t_done(self, summary: str) -> ToolResult:
        if self.done:
            return ToolResult("ERROR: done was already called; the inspection is finished", error=True)
        self.done = True
        self.summary = summary
        self.write_report()
        n = len(self.ledger.active())
        return ToolResult(f"Inspection finished with {n} active bug report{'s' if n != 1 else ''}.")

    def _log_bug(self) -> None:
        if self.out is not None:
            with open(self.out / "bugs.jsonl", "a", encoding="utf-8") as fh:
                fh.write(json.dumps(self.ledger.events[-1]) + "\n")

    def _status_text(self) -> str:
        notes = "\n".join(f"- {n}" for n in self.notes) or "(none)"
        return f"Notes:\n{notes}\nBugs:\n{self.ledger.render()}"

    # --- report --------------------------------------------------------------------------------
    def report(self) -> dict:
        return {
            "format": REPORT_FORMAT,
            "task_id": self.task_id,
            "paradigm": self.paradigm,
            "done": self.done,
            "summary": self.summary,
            "bugs": [b.as_dict() for b in self.ledger.active()],
            "retracted": [b.as_dict() for b in self.ledger.all() if b.status == "retracted"],
            "notes": list(self.notes),
            "actions_used": self.actions_used,
            "budget": self.budget,
            "tool_calls": self.calls,
            "tool_counts": dict(sorted(self.tool_counts.items())),
            "usage": dict(self.usage),
            "overhead_ms_median": float(np.median(self.overhead_ms)) if self.overhead_ms else 0.0,
            "options": self.options.as_dict(),
        }

    def write_report(self) -> None:
        if self.out is not None:
            tmp = self.out / "report.json.tmp"
            tmp.write_text(json.dumps(self.report(), indent=2) + "\n", encoding="utf-8")
            tmp.replace(self.out / "report.json")

    def close(self) -> None:
        self.write_report()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _explain(err: jsonschema.ValidationError) -> str:
    where = ".".join(str(p) for p in err.absolute_path)
    msg = err.message
    if err.validator == "maxLength" and isinstance(err.instance, str):
        msg = f"text of {len(err.instance)} characters is longer than the limit of {err.validator_value}"
    elif len(msg) > 300:  # never echo a huge argument back
        msg = msg[:300] + "…"
    return f"{where}: {msg}" if where else msg


class AuditSession(_Session):
    """The interactive paradigm: the agent acts in the (by default perturbed) world of one bundle."""

    paradigm = "interactive"

    def __init__(
        self,
        bundle: str | Path,
        out: str | Path | None = None,
        options: SessionOptions | None = None,
        examples=None,
        film_images: bool = True,
    ) -> None:
        """`film_images=False` (an agent that reads no images, final observations): film frames keep
        their refs, times and poses (coverage counts them) but are not rendered; `inspect` refuses them."""
        from wac.runtime.env import WorldEnv, load_task

        options = options or SessionOptions()
        self.tools = live_tools(example=options.example and examples is not None)
        task, bundle_dir = load_task(bundle)
        if bundle_dir is None:
            raise BundleError("an audit session needs a bundle directory")
        self.task_id = task.id
        self.bundle = bundle_dir  # ground truth lives here: only the runner and the oracle may read it
        self.context, self.plan = read_bundle_context(bundle_dir)
        super().__init__(Path(out) if out else None, options, examples)
        base = options.budget_actions or task.exploration.budget_actions
        self.budget = max(1, round(base * options.budget_multiplier))
        self.closer_steps = None  # the plan's remaining steps from a derived closer start
        start = self._closer_start(task) if options.closer_start else None
        record = self.out / "trajectory" if self.out else None
        self.env = WorldEnv(
            task,
            variant=options.variant,
            seed=options.seed,
            width=options.width,
            height=options.height,
            film_interval_s=options.film_interval_s,
            record_dir=record,
            start=start,
            budget=self.budget,
            film_images=film_images,
            timing=TIMINGS[options.timing],
        )
        self.task = task
        # the targets' pixels in every frame, for the judge's evidence rule: written on close only
        self.sightings = TargetSightings(self.env) if self.out is not None else None
        first = self.env.history[0]
        self.archive.add(
            Frame(
                "a0",
                first.frame,
                first.pose.as_dict(),
                0.0,
                "start",
                record / "step_000.png" if record else None,
            )
        )
        self._lines = [f"a0 start -> {_pose_text(first.pose.as_dict())} | frames a0"]
        if self.out is not None:
            (self.out / "episode.json").write_text(
                json.dumps(
                    {
                        "task_id": task.id,
                        "bundle": str(bundle_dir.resolve()),
                        "paradigm": self.paradigm,
                        "options": options.as_dict(),
                        "budget": self.budget,
                        "tools": [t.name for t in self.tools],
                    },
                    indent=2,
                )
                + "\n",
                encoding="utf-8",
            )

    def _closer_start(self, task) -> tuple[float, float, float, float]:
        from wac.compiler.closer_start import read_closer_start

        derived = read_closer_start(self.bundle, task.id)  # `wac derive closer-start`: 1/3 of the route
        if derived is not None:
            self.closer_steps = tuple(PlanStep.model_validate(s) for s in derived["steps"])
            p = derived["pose"]
            return (p["x"], p["y"], p["yaw_deg"], p["pitch_deg"])
        if self.plan is None:
            raise UsageError("closer start needs the bundle's selfcheck.json")
        vx, vy = self.plan.view_point
        tx, ty, tz = self.plan.target_point
        d = math.hypot(tx - vx, ty - vy)
        yaw = math.degrees(math.atan2(ty - vy, tx - vx))
        pitch = math.degrees(math.atan2(task.exploration.eye_height_m - tz, max(d, 0.5)))
        return (vx, vy, yaw, max(-30.0, min(45.0, pitch)))

    @property
    def actions_used(self) -> int:
        return self.env.steps if self.env is not None else self._final_steps

    def _where(self) -> tuple[dict, float]:
        return self.env.pose().as_dict(), self.env.sim_time

    def initial_input(self) -> ToolResult:
        """C.1: instructions, scene, hint, the in-context example (text and images) and the start frame."""
        text = task_text(self.context, self.budget, self.options)
        example = self._example()
        if example is not None:
            text += "\n\n" + example.text
        images: list[ImageItem] = list(example.images) if example is not None else []
        a0 = self.archive.get("a0")
        text += f"\n\n[observation a0] start view | {_pose_text(a0.pose)}"
        images.append(self._image(a0, self._caption(a0)))
        return ToolResult(text, tuple(images))

    def _t_observe(self) -> ToolResult:
        last = self.archive.get(f"a{self.env.steps}")
        if not self._started:
            self._started = True
            first = self.initial_input()
            return ToolResult(first.text, first.images)
        left = self.budget - self.env.steps
        text = (
            f"{task_text(self.context, self.budget, self.options)}\n\n"
            f"Current view {last.ref} | {_pose_text(last.pose)} | t={self.env.sim_time:.1f} s | "
            f"{left} of {self.budget} environment actions left{' | done' if self.done else ''}\n"
            f"{self._status_text()}"
        )
        return ToolResult(text, (self._image(last, self._caption(last)),))

    def _env_refusal(self) -> str | None:
        if self.done:
            return "ERROR: the inspection is already finished (done was called)"
        if self.env.steps >= self.budget:
            return (
                f"ERROR: action budget exhausted ({self.budget} of {self.budget} environment actions used): "
                f"no more environment actions; call done"
            )
        if self.options.max_sim_s is not None and self.env.sim_time >= self.options.max_sim_s - 1e-6:
            return (
                f"ERROR: time budget exhausted ({self.options.max_sim_s:g} s of simulated time): "
                f"no more environment actions; call done"
            )
        return None

    def _act(self, name: str, args: dict) -> ToolResult:
        refusal = self._env_refusal()
        if refusal:
            return ToolResult(refusal, error=True)
        t0 = time.perf_counter()
        res = self.env.try_step({"action": name, **args})
        self.env_ms = (time.perf_counter() - t0) * 1000.0
        if not res.ok:
            return ToolResult(res.outcome, error=True)
        n = res.step
        film = []
        rec = self.out / "trajectory" if self.out is not None else None
        for k, f in enumerate(res.film, start=1):
            fr = Frame(
                f"a{n}.f{k}",
                f.frame,
                f.pose.as_dict() if f.pose else None,
                f.t_sim,
                "film",
                rec / f"step_{n:03d}_f{k}.png" if rec and f.frame is not None else None,
            )
            self.archive.add(fr)
            film.append(fr)
        final = Frame(
            f"a{n}",
            res.frame,
            res.pose.as_dict(),
            res.sim_time,
            "final",
            rec / f"step_{n:03d}.png" if rec else None,
        )
        self.archive.add(final)
        refs = (
            f"{film[0].ref}..{film[-1].ref} (film), "
            if len(film) > 1
            else f"{film[0].ref} (film), "
            if film
            else ""
        ) + f"{final.ref} (final)"
        text = (
            f"a{n} {res.action.describe()} -> {res.outcome} | {_pose_text(final.pose)} | "
            f"sim +{res.sim_elapsed:.1f}s | frames: {refs} | {res.budget_left} actions left"
        )
        self._lines.append(text)
        if not self._started:
            text += " | note: call observe to read the task and the in-context example"
        shown = [f for f in film if f.image is not None] if self.options.observation == "film" else []
        images = tuple(self._image(f, self._caption(f)) for f in shown) + (
            self._image(final, self._caption(final)),
        )
        return ToolResult(text, images)

    def _t_move(self, distance_m: float, direction: str) -> ToolResult:
        return self._act("move", {"distance_m": distance_m, "direction": direction})

    def _t_turn(self, degrees: float) -> ToolResult:
        return self._act("turn", {"degrees": degrees})

    def _t_look(self, degrees: float) -> ToolResult:
        return self._act("look", {"degrees": degrees})

    def _t_interact(self) -> ToolResult:
        return self._act("interact", {})

    def _t_wait(self, seconds: float) -> ToolResult:
        return self._act("wait", {"seconds": seconds})

    def _history_lines(self, first: int, last: int) -> list[str]:
        return self._lines[max(0, first) : last + 1]

    def close(self) -> None:
        super().close()
        if getattr(self, "env", None) is not None:
            if self.sightings is not None:
                self.sightings.write(self.out)
                self.sightings = None
            self._final_steps = self.env.steps
            self.env.close()
            self.env = None


@dataclass(frozen=True)
class Recording:
    """Frames of an explorer's trajectory, sampled every `interval_s` of simulated time."""

    task_id: str
    frames: tuple[Frame, ...]  # refs a0..; film frames keep their a{n}.f{k} refs
    interval_s: float
    duration_s: float
    lines: tuple[str, ...] = field(default=())


def load_recording(trajectory_dir: str | Path, interval_s: float = 0.5) -> Recording:
    """Read an explorer's trajectory and keep one frame per `interval_s` of simulated time."""
    from wac.runtime.trajectory import load_png, read_trajectory

    tr = read_trajectory(trajectory_dir)
    candidates: list[tuple[float, str, dict | None, Path, str]] = []
    for s in tr.steps:
        n = s["step"]
        for k, f in enumerate(s.get("film", ()), start=1):
            if "file" not in f:  # not rendered (meta.json `film_images` false)
                continue
            candidates.append((f["t_sim"], f"a{n}.f{k}", f.get("pose"), tr.path / f["file"], "film"))
        candidates.append(
            (s["sim_time"], f"a{n}", s["pose"], tr.path / s["frame"], "start" if n == 0 else "final")
        )
    candidates.sort(key=lambda c: c[0])
    kept, next_t = [], 0.0
    for t, ref, pose, path, kind in candidates:
        if t >= next_t - 1e-6 or kind == "start":
            kept.append(Frame(ref, load_png(path), pose, t, kind, path))
            next_t = t + interval_s
    lines = tuple(
        f"a{s['step']} {s['action']} {json.dumps(s['args'])} -> {s['outcome']} | "
        f"{_pose_text(s['pose'])} | t={s['sim_time']:.1f} s"
        for s in tr.steps
    )
    duration = candidates[-1][0] if candidates else 0.0
    return Recording(tr.meta["task_id"], tuple(kept), interval_s, duration, lines)


class ReviewSession(_Session):
    """Stage two of the two-stage paradigm: review a recording offline and report; no actions."""

    paradigm = "two-stage"

    def __init__(
        self,
        bundle: str | Path,
        recording: Recording,
        out: str | Path | None = None,
        options: SessionOptions | None = None,
        examples=None,
        strip_width: int = 320,
    ) -> None:
        options = options or SessionOptions()
        self.tools = review_tools(example=options.example and examples is not None)
        bundle = Path(bundle)
        self.bundle = bundle
        self.context, self.plan = read_bundle_context(bundle)
        self.task_id = self.context.task_id
        if recording.task_id != self.task_id:
            raise UsageError(f"the recording is of task {recording.task_id!r}, not {self.task_id!r}")
        super().__init__(Path(out) if out else None, options, examples)
        self.recording = recording
        self.budget = 0
        self.strip_width = strip_width
        for f in recording.frames:
            self.archive.add(f)
        if self.out is not None:
            (self.out / "episode.json").write_text(
                json.dumps(
                    {
                        "task_id": self.task_id,
                        "bundle": str(bundle.resolve()),
                        "paradigm": self.paradigm,
                        "options": options.as_dict(),
                        "budget": 0,
                        "tools": [t.name for t in self.tools],
                        "recording": {
                            "frames": len(recording.frames),
                            "interval_s": recording.interval_s,
                            "duration_s": recording.duration_s,
                        },
                    },
                    indent=2,
                )
                + "\n",
                encoding="utf-8",
            )

    actions_used = 0

    def _where(self) -> tuple[dict | None, float]:
        return None, self.recording.duration_s

    def _small(self, image: np.ndarray) -> np.ndarray:
        from PIL import Image

        h, w = image.shape[:2]
        if w <= self.strip_width:
            return image
        size = (self.strip_width, round(h * self.strip_width / w))
        return np.asarray(Image.fromarray(image).resize(size, Image.Resampling.BILINEAR))

    def initial_input(self) -> ToolResult:
        rec = self.recording
        text = task_text(self.context, None, self.options)
        text += (
            f"\n\nYou are reviewing a first-person RECORDING of this world made by a separate explorer; you "
            f"cannot act. It lasts {rec.duration_s:.1f} s of simulated time and is shown as "
            f"{len(rec.frames)} frames, one every {rec.interval_s:g} s (reduced size; inspect a ref for full "
            f"resolution or a zoomed region)."
        )
        example = self._example()
        if example is not None:
            text += "\n\n" + example.text
        images: list[ImageItem] = list(example.images) if example is not None else []
        images += [self._image(f, self._caption(f), self._small(f.image)) for f in rec.frames]
        return ToolResult(text, tuple(images))

    def _t_observe(self) -> ToolResult:
        if not self._started:
            self._started = True
            return self.initial_input()
        return ToolResult(
            f"{len(self.recording.frames)} recorded frames "
            f"({self.recording.frames[0].ref}..{self.recording.frames[-1].ref}).\n{self._status_text()}"
        )

    def _history_lines(self, first: int, last: int) -> list[str]:
        return list(self.recording.lines[max(0, first) : last + 1])
