"""The reference's replay paradigm over MCP: `wac mcp BUNDLE --replay EXPLORE_DIR [--replay-mode …]`.

The reviewer of an explorer's recording (wac's two-stage paradigm, `ReviewSession`) behind the
reference protocol (protocol.py), with the reference's replay tools:

* `play` mode (default): the first `observe` shows the start view and preview frames (one every
  `preview_every` s, 5 by default); `play(from_s, to_s)` (at most 10 s, 0.5 s steps, any order,
  repeatable, one action of the budget each) returns the view at `to_s` and names the recorded
  frames inside the segment, which `inspect` brings back; there is no `wait`;
* `all` mode: the first `observe` delivers the whole recording;
* `vqa` mode: the whole recording with `observe`, and `report(bugs, summary)` as the one and final
  answer (no inspect, history, notes or bug tools).

Frames keep the recording's refs (the explorer's `a3`, `a3.f0`), in the reference's numbering.
The recording is a wac explorer's episode or a reference VLA recording (`meta.json`,
`poses.jsonl`, `f*.jpg`; vla_recording.py), whose frames are `a0` and `a0.f0`, `a0.f1`, ….
"""

from __future__ import annotations

import math
from pathlib import Path

from wac.errors import BundleError, UsageError

from .protocol import ProtocolOptions, ReferenceSession, _error, ref_in, ref_out
from .session import ToolResult, _pose_text
from .tools import ToolSpec

MAX_SEGMENT_S = 10.0
VQA_DROPS = ("inspect", "history", "write_notes", "flag_bug", "update_bug", "list_bugs", "done")
LEDGER = ("geometry", "collision", "visual", "state", "semantic", "other")


class ReplayReference(ReferenceSession):
    """A `ReviewSession` with the reference's replay tools (`play`, or `report` in vqa mode)."""

    replay = True

    def __init__(
        self,
        session,
        options: ProtocolOptions | None = None,
        mode: str = "play",
        budget: int | None = None,
        preview_every: float = 5.0,
    ) -> None:
        if mode not in ("play", "all", "vqa"):
            raise UsageError(f"replay mode must be play, all or vqa, got {mode!r}")
        self.mode = mode
        self.preview_every = float(preview_every)
        self.plays = 0
        frames = session.recording.frames
        self.last_s = math.floor(frames[-1].t_sim * 2) / 2 if frames else 0.0
        if mode == "vqa":
            options = options or ProtocolOptions()
            options = ProtocolOptions(**{**options.__dict__, "inspect_budget": 0})
        super().__init__(session, options)
        self.budget = int(budget or session.context.budget_actions) if mode == "play" else 0

    @property
    def actions_used(self) -> int:
        return self.plays

    def _tools(self) -> tuple[ToolSpec, ...]:
        tools = [t for t in super()._tools() if not (self.mode == "vqa" and t.name in VQA_DROPS)]
        if self.mode == "play":
            last = math.floor(self.session.recording.frames[-1].t_sim * 2) / 2
            tools.append(
                ToolSpec(
                    "play",
                    f"Play a segment of the explorer's recording, from from_s to to_s (at most {MAX_SEGMENT_S:g} s, "
                    f"times in 0.5 s steps between 0 and {last:g}). Any segment, in any order; a segment can be "
                    "played again. Returns the final view at to_s; the recorded frames inside the segment are "
                    "archived for inspect. This is your only environment action: you do not control the camera.",
                    {
                        "type": "object",
                        "properties": {
                            "from_s": {"type": "number", "minimum": 0, "maximum": last, "multipleOf": 0.5},
                            "to_s": {"type": "number", "minimum": 0.5, "maximum": last, "multipleOf": 0.5},
                        },
                        "required": ["from_s", "to_s"],
                        "additionalProperties": False,
                    },
                )
            )
        if self.mode == "vqa":
            bug = {
                "type": "object",
                "properties": {
                    "description": {
                        "type": "string",
                        "description": "what is wrong, which object, how you know",
                    },
                    "category": {"type": "string", "enum": list(LEDGER)},
                    "status": {"type": "string", "enum": ["suspect", "confirmed"]},
                    "evidence": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "frame refs that show the problem, like a0.f37",
                    },
                },
                "required": ["description", "category", "status", "evidence"],
                "additionalProperties": False,
            }
            tools.append(
                ToolSpec(
                    "report",
                    "Your ONE and final answer: every distinct bug you found in the recording (an empty list if it "
                    "shows no bug), then the inspection ends. There is no other reporting tool and no second report.",
                    {
                        "type": "object",
                        "properties": {
                            "bugs": {"type": "array", "items": bug},
                            "summary": {"type": "string"},
                        },
                        "required": ["bugs", "summary"],
                        "additionalProperties": False,
                    },
                )
            )
        return tuple(tools)

    def _dispatch(self, name: str, args: dict) -> ToolResult:
        if name not in ("play", "report") or self.session.done or self.calls > self.protocol.max_tool_calls:
            res = super()._dispatch(name, args)
            if name == "observe" and self.mode == "play" and not res.error:
                res = self._previews(res)
            return res
        if self.example_pending and not self.example_read:
            return _error(
                f"Read all ICL examples before using scene tools. Call read_example for: {self.code}"
            )
        if not isinstance(args, dict):
            return _error(f"arguments for {name} must be a JSON object")
        return self._play(args) if name == "play" else self._report(args)

    def _previews(self, res: ToolResult) -> ToolResult:
        """The first observe of play mode: the start view and one preview frame every `preview_every` s."""
        if "[observation" not in res.text and "RECORDING" not in res.text:
            return res
        keep, next_t = [], 0.0
        times = {ref_out(f.ref): f.t_sim for f in self.session.recording.frames}
        for im in res.images:
            t = times.get(im.ref.split(" ")[0])
            if t is None:
                keep.append(im)
            elif t >= next_t - 1e-6:
                keep.append(im)
                next_t = t + self.preview_every
        text = res.text + (
            f"\nPreview frames every {self.preview_every:g} s are shown at low resolution; play segments to see the "
            "rest (their frames are archived), and use inspect(refs) to view selected frames."
        )
        return ToolResult(text, tuple(keep), res.error)

    def _play(self, args: dict) -> ToolResult:
        try:
            a, b = float(args["from_s"]), float(args["to_s"])
        except (KeyError, TypeError, ValueError):
            return _error("play needs numbers from_s and to_s")
        if not (math.isfinite(a) and math.isfinite(b)):
            return _error("Non-finite numbers are not permitted")
        if b <= a:
            return _error("play needs from_s < to_s")
        if b - a > MAX_SEGMENT_S + 1e-6:
            return _error(f"a segment is at most {MAX_SEGMENT_S:g} s long")
        if a < 0 or b > self.last_s + 1e-6:
            return _error(f"times run from 0 to {self.last_s:g} s")
        if self.plays >= self.budget:
            return _error("action budget exhausted - no more play actions; call done.")
        frames = [f for f in self.session.recording.frames if a - 1e-6 < f.t_sim <= b + 1e-6]
        if not frames:
            return _error(f"no recorded frame between {a:g} and {b:g} s")
        self.plays += 1
        n, last = self.plays, frames[-1]
        p0, p1 = frames[0].pose or {}, last.pose or {}
        moved = (
            math.hypot(p1.get("x", 0) - p0.get("x", 0), p1.get("y", 0) - p0.get("y", 0)) if p0 and p1 else 0.0
        )
        refs = ", ".join(ref_out(f.ref) for f in frames[:-1])
        text = (
            f"a{n} play {a:.1f}-{b:.1f}s -> moved {moved:.2f}m | {_pose_text(last.pose)} | sim +{b - a:.1f}s | "
            f"frames: {refs + ' (film), ' if refs else ''}{ref_out(last.ref)} (final)"
        )
        self.records[n] = {"call": self.calls, "result": text}
        image = self.session._image(last, self.session._caption(last))
        return self._out(ToolResult(ref_in(text), (image,)))

    def _report(self, args: dict) -> ToolResult:
        bugs, summary = args.get("bugs"), args.get("summary")
        if not isinstance(bugs, list) or not isinstance(summary, str):
            return _error("report needs bugs (a list) and summary (a string)")
        lines = []
        for b in bugs:
            if not isinstance(b, dict):
                return _error("each bug is an object with description, category, status and evidence")
            refs = [str(r) for r in b.get("evidence") or []]
            known = [r for r in refs if self._resolve(r)[0] in self.session.archive]
            unknown = [r for r in refs if r not in known]
            res = self._bug("flag_bug", {**b, "evidence": known})
            line = res.text.split("\nLedger:")[0]
            lines.append(
                line + (f"  (dropped unknown frame ref(s): {', '.join(unknown)})" if unknown else "")
            )
        self.session.call("done", {"summary": ref_in(summary)})
        text = (
            f"Report received ({len(bugs)} bug(s)).\n"
            + "\n".join(lines + ["Inspection finished."])
            + f"\nLedger:\n{self._render()}"
        )
        return ToolResult(text)  # in the reference's refs already (_bug, _render)


def open_replay(args, protocol: ProtocolOptions) -> ReplayReference:
    """The reviewer's session on `args.replay`: an explorer's episode (or its trajectory/ directory),
    or a reference VLA recording (vla_recording.py)."""
    from .mcp_setup import check_bundle, episode_dir, load_examples, options_from, stdout_to_stderr
    from .session import ReviewSession, load_recording
    from .vla_recording import is_vla_recording, load_vla_recording

    bundle = check_bundle(args.bundle)
    src = Path(args.replay)
    vla = is_vla_recording(src)  # the reference's recording (meta.json, poses.jsonl, f*.jpg)
    trajectory = src / "trajectory" if (src / "trajectory").is_dir() else src
    if not vla and not (trajectory / "trajectory.jsonl").is_file():
        raise UsageError(
            f"{args.replay} holds no recorded trajectory (trajectory/trajectory.jsonl) and is no VLA "
            "recording (meta.json, poses.jsonl, f*.jpg)"
        )
    options = options_from(args)
    out = episode_dir(args.out, Path.cwd())
    try:
        with stdout_to_stderr():
            from .examples import bundle_target_kinds
            from .session import read_bundle_context

            if vla:
                recording = load_vla_recording(src, read_bundle_context(bundle)[0].task_id)
            else:
                recording = load_recording(trajectory, interval_s=options.film_interval_s)

            examples = load_examples(
                Path(args.build) if args.build else bundle.parent,
                options,
                read_bundle_context(bundle)[0].example,
                bundle_target_kinds(bundle),
            )
            session = ReviewSession(bundle, recording, out, options, examples)
    except BundleError as exc:
        raise UsageError(str(exc)) from exc
    return ReplayReference(
        session,
        protocol,
        args.replay_mode or "play",
        args.budget_actions,
        getattr(args, "preview_every", 5.0),
    )
