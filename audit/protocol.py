"""The reference harness's protocol over a wac session (`wac mcp --protocol reference`, `--config`).

WorldAuditBench's MCP server (`agent/vlm/mcp/server.py`, `agent/vlm/tools.py`) and wac's session
share tool names and schemas but not the text around them.  `ReferenceSession` wraps an
`AuditSession` and speaks the reference's protocol, so a harness (and its parsers) written for
the reference runs unchanged:

* results in the reference's wording: `a3 move forward 2.0m -> moved 1.20m | pos (x=…, y=…) yaw …
  pitch … | sim +0.6s | frames: a3.f0..a3.f3 (film), a3 (final)` (wac's extras, "(blocked)" and
  "dropped 7.01 m", only with `move_extras`), `Recorded b1 [confirmed] (geometry): …` and the
  ledger, `Updated b1 [retracted]: …`, `Inspection finished.`, `ERROR: Unknown tool`, image
  captions ending in `[ref=a3]`;
* film frames numbered from 0 (`a3.f0`; wac numbers them from 1 and keeps doing so in its own
  files: refs are translated both ways, in arguments and free text alike);
* `inspect` with a region returns crop refs (`a12#c1`) that are citable as evidence (they are
  recorded as their frame) and can be inspected again;
* `history` accepts a reversed range; at most 40 actions per call;
* run settings: a tool-call cap (400), `require_full_budget` (done refused until the budget is
  used), `inspect_budget` (None: unlimited, 0: no inspect tool), and scene tools refused until the
  in-context example was read with `read_example` (which accepts the task's code, `G1` … `S3`, or
  wac's id); the example is delivered once, by `read_example`, not again with the first `observe`;
* JPEG images (PNG optional); the launcher picks 960 x 576 (see `config_options`);
* the reference's episode outputs beside wac's: `meta.json`, `mcp-calls.jsonl`, `tools.json`
  and the frame archive `frames/a012.jpg`, `frames/a012_f03.jpg`, `frames/a012_c01.jpg` (crops)
  with `frames/index.jsonl`.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path

from wac.bundle.reader import Bundle
from wac.errors import UsageError
from wac.taxonomy.reference import CODES, same_category

from .session import ImageItem, ToolResult
from .tools import MAX_HISTORY_SPAN, ToolSpec

MAX_TOOL_CALLS = 400
ENV_ACTIONS = ("move", "turn", "look", "interact", "wait")
_WAC_FILM = re.compile(r"\b(a\d+)\.f(\d+)\b")
_CROP = re.compile(r"^(a\d+(?:\.f\d+)?)#c(\d+)$")
_ACTION_LINE = re.compile(
    r"^a(?P<n>\d+) .+? -> (?P<outcome>.+?) \| (?P<pose>pos \(.*?\) yaw -?\d+ pitch -?\d+) \| "
    r"sim \+(?P<sim>[\d.]+)s \| frames: (?P<frames>.+?) \| \d+ actions left"
)
_MOVED = re.compile(r"moved ([\d.]+) m")
CROP_OR_FRAME = r"^a\d+(\.f\d+)?(#c\d+)?$"


@dataclass(frozen=True)
class ProtocolOptions:
    """The reference harness's run settings (its launcher's flags)."""

    max_tool_calls: int = MAX_TOOL_CALLS
    require_full_budget: bool = False
    inspect_budget: int | None = None  # None: unlimited; 0: no inspect tool
    move_extras: bool = False  # wac's "(blocked)" / "dropped" outcome after the reference's wording
    image_format: str = "jpeg"  # or "png"
    jpeg_quality: int = 90

    def __post_init__(self) -> None:
        if self.max_tool_calls < 1:
            raise UsageError("the tool-call cap must be at least 1")
        if self.inspect_budget is not None and self.inspect_budget < 0:
            raise UsageError("inspect_budget must be 0 (no inspect tool), a positive count, or unset")
        if self.image_format not in ("jpeg", "png"):
            raise UsageError(f"image format must be jpeg or png, got {self.image_format!r}")


# --- refs ----------------------------------------------------------------------------------------


def ref_out(text: str) -> str:
    """wac's film refs (from 1) as the reference's (from 0): a3.f1 -> a3.f0."""
    return _WAC_FILM.sub(lambda m: f"{m.group(1)}.f{int(m.group(2)) - 1}", text)


def ref_in(text: str) -> str:
    """The reference's film refs (from 0) as wac's (from 1): a3.f0 -> a3.f1."""
    return _WAC_FILM.sub(lambda m: f"{m.group(1)}.f{int(m.group(2)) + 1}", text)


def _jpeg(data: bytes, quality: int) -> bytes:
    from PIL import Image

    if data[:3] == b"\xff\xd8\xff":
        return data
    buf = io.BytesIO()
    Image.open(io.BytesIO(data)).convert("RGB").save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


class ReferenceSession:
    """An `AuditSession` behind the reference's protocol; `build_server` serves it like a session."""

    def __init__(self, session, options: ProtocolOptions | None = None, example_first: bool = True) -> None:
        """`example_first`: scene tools wait for `read_example`, and the first observe leaves the
        example out (the reference's native harness); False keeps wac's delivery with the first
        observe, for agents that do not read examples themselves (`wac eval --protocol reference`)."""
        self.session = session
        self.protocol = options or ProtocolOptions()
        self.options = session.options
        self.budget = session.budget
        self.out = session.out
        self.examples = session.examples
        self.context = session.context
        self.calls = 0
        self.inspects = 0
        self.crops: dict[str, tuple[str, tuple[float, ...]]] = {}  # a3.f0#c1 -> (wac ref, region)
        self.records: dict[int, dict] = {}  # action -> call number and result line (for history)
        self.code = CODES.get(self.context.example or "", None)
        self.has_example = bool(session.options.example and session.examples is not None and self.code)
        self.example_pending = example_first and self.has_example
        self.example_read = False
        self.saved_frames: set[str] = set()
        self.tools = self._tools()
        self.tools_sha256 = hashlib.sha256(
            json.dumps([t.openai() for t in self.tools], sort_keys=True).encode()
        ).hexdigest()
        if self.out is not None:
            (self.out / "tools.json").write_text(
                json.dumps({t.name: t.openai()["function"] for t in self.tools}, indent=2) + "\n",
                encoding="utf-8",
            )
        self._save("ready")

    # --- what the session exposes to build_server, the CLI and the runner's agents -------------------
    def __getattr__(self, name: str):
        """Everything else (report, add_usage, archive, plan, paradigm, …) is the wrapped session's."""
        if name == "session":
            raise AttributeError(name)
        return getattr(self.session, name)

    def mcp_instructions(self, base: str) -> str:
        """wac's server instructions with the reference protocol's differences."""
        extra = [
            "",
            "Protocol: film frames are numbered from 0 (a3.f0 is the first frame during action 3). Images are "
            "followed by their ref as [ref=a3]. inspect with a region returns a crop ref (a3#c1) that you can cite "
            "as evidence.",
            f"You may make at most {self.protocol.max_tool_calls} tool calls.",
        ]
        if self.example_pending:
            extra.append(
                f"Before observe, read the ONE supplied in-context demonstration with read_example (code {self.code}); "
                "scene tools are refused until you have. It is not evidence from the assigned task."
            )
        if self.protocol.require_full_budget:
            extra.append("This run requires the full action budget before done.")
        if self.protocol.inspect_budget == 0:
            extra.append("There is no inspect tool in this run.")
        elif self.protocol.inspect_budget:
            extra.append(f"At most {self.protocol.inspect_budget} inspect calls in this run.")
        if self.example_pending:
            base = base.replace("Start by calling observe:", "After read_example, call observe:", 1)
        return base + "\n".join(extra) + "\nEnd with done."

    @property
    def done(self) -> bool:
        return self.session.done

    @property
    def actions_used(self) -> int:
        return self.session.actions_used

    def close(self) -> None:
        self.session.close()
        self._save("completed" if self.session.done else "interrupted")

    def _tools(self) -> tuple[ToolSpec, ...]:
        out = []
        for spec in self.session.tools:
            params = json.loads(json.dumps(spec.parameters))
            desc = spec.description
            for key in ("refs", "evidence"):  # crop refs (a12#c1) are refs too
                items = params.get("properties", {}).get(key, {}).get("items", {})
                if "pattern" in items:
                    items["pattern"] = CROP_OR_FRAME
            if spec.name == "inspect":
                if self.protocol.inspect_budget == 0:
                    continue
                if self.protocol.inspect_budget:
                    desc += f" At most {self.protocol.inspect_budget} inspect calls in this run."
                desc += " With a region, the crop gets its own ref (a12#c1), citable as evidence."
            if spec.name == "read_example" and self.code:
                params["properties"]["code"] = {"type": "string", "enum": [self.code]}
                desc = (
                    "Read the ONE supplied in-context demonstration for this task's subcategory (definition, "
                    "1-3 images, reference answer). Read it before observe. Omit code to read the assigned "
                    "example; re-read it after compaction. No environment action or time passes."
                )
            if spec.name == "history":
                desc += " A reversed range is read in order."
            out.append(ToolSpec(spec.name, desc, params))
        return tuple(out)

    # --- the one entry point -----------------------------------------------------------------------
    def call(self, name: str, args: dict | None = None) -> ToolResult:
        args = {} if args is None else args
        self.calls += 1
        res = self._dispatch(name, args)
        self._log(name, args, res)
        self._save("completed" if self.session.done else "running")
        return res

    def _dispatch(self, name: str, args: dict) -> ToolResult:
        names = {t.name for t in self.tools}
        if self.calls > self.protocol.max_tool_calls and name != "done":
            return _error("Tool-call budget exhausted; call done")
        if name not in names:
            return _error("Unknown tool")
        if self.session.done:
            return _error("Episode is finished")
        if not isinstance(args, dict):
            return _error(f"arguments for {name} must be a JSON object")
        if name == "read_example":
            return self._read_example(args)
        if self.example_pending and not self.example_read:
            return _error(
                f"Read all ICL examples before using scene tools. Call read_example for: {self.code}"
            )
        if name == "done":
            used = self.actions_used
            if (
                self.protocol.require_full_budget
                and used < self.budget
                and self.calls <= self.protocol.max_tool_calls
            ):
                return _error(
                    "This run requires the full action budget before done; continue exploration and verification"
                )
            res = self.session.call("done", {"summary": ref_in(str(args.get("summary", "")))})
            return res if res.error else ToolResult("Inspection finished.")
        if name == "inspect":
            return self._inspect(args)
        if name == "history":
            return self._history(args)
        if name in ("flag_bug", "update_bug"):
            return self._bug(name, args)
        if name == "write_notes":
            args = {**args, "text": ref_in(str(args.get("text", "")))}
        res = self.session.call(name, args)
        if name in ENV_ACTIONS and not res.error:
            return self._action(name, args, res)
        if name == "observe":
            res = self._without_example(res)
            text = res.text.replace("\nScene: ", "\nEnvironment description: ", 1)
            return self._out(ToolResult(text, res.images, res.error))
        return self._out(res)

    # --- tools -------------------------------------------------------------------------------------
    def _read_example(self, args: dict) -> ToolResult:
        code = args.get("code")
        if not self.has_example:
            return _error("ICL is disabled for this run")
        if code is None and self.example_read and self.example_pending:
            return _error("All examples were delivered; use observe or provide a code to re-read")
        if code is not None and not same_category(str(code), self.context.example):
            return _error(f"Unknown example code; available: {self.code}")
        res = self.session.call("read_example", {})
        if res.error:
            return self._out(res)
        self.example_read = True
        from wac.taxonomy.registry import registry

        title = registry().category(self.context.example).name
        head = (
            f"ICL demonstration {self.code}: {title}. This is a reference example from another task, not "
            "evidence in your assigned scene. The reference answer is supplied below; do not report this "
            "example as a new bug."
        )
        tail = "The task's matching ICL demonstration was delivered. Use observe to start/resume the assigned scene."
        return self._out(ToolResult(f"{head}\n{res.text}\n{tail}", res.images))

    def _without_example(self, res: ToolResult) -> ToolResult:
        """The first observe without the example when read_example delivers it (examples are delivered once)."""
        if not self.example_pending:
            return res
        ex = self.session.examples.get(self.context.example, avoid=self.session.example_avoid)
        text = res.text.replace("\n\n" + ex.text, "", 1) if ex is not None else res.text
        return ToolResult(text, tuple(i for i in res.images if not i.ref.startswith("example.")), res.error)

    def _action(self, name: str, args: dict, res: ToolResult) -> ToolResult:
        first = res.text.splitlines()[0]
        m = _ACTION_LINE.match(first)
        if m is None:  # a wording wac does not produce; pass it on rather than guess
            return self._out(res)
        n = int(m["n"])
        moved = _MOVED.search(m["outcome"])
        text = (
            f"a{n} {_describe(name, args)} -> moved {float(moved.group(1)) if moved else 0.0:.2f}m | {m['pose']} | "
            f"sim +{float(m['sim']):.1f}s | frames: {m['frames']}"
        )
        if self.protocol.move_extras and m["outcome"] != (moved and moved.group(0)):
            text += f"  [{m['outcome']}]"
        self.records[n] = {"call": self.calls, "result": ref_out(text)}
        if self.options.observation == "final":
            text += "\nFilm frames are archived; use inspect(refs) to view selected frames."
        self._save_frames()
        return self._out(ToolResult(text, res.images))

    def _inspect(self, args: dict) -> ToolResult:
        if self.protocol.inspect_budget and self.inspects >= self.protocol.inspect_budget:
            return _error(
                f"inspect budget exhausted ({self.protocol.inspect_budget} calls); report from the frames you have"
            )
        refs, region = args.get("refs"), args.get("region")
        if not isinstance(refs, list) or not refs:
            return _error("inspect needs a non-empty list of frame refs.")
        if bad := self._unknown_crops(refs):
            return bad
        if region is not None:
            if not (isinstance(region, list) and len(region) == 4):
                return _error("region must be [x0, y0, x1, y1] in 0..1.")
            x0, y0, x1, y1 = (float(v) for v in region)
            if x1 <= x0 or y1 <= y0:
                return _error("Crop must have x0 < x1 and y0 < y1")
        images, shown = [], []
        for r in refs:
            base, reg = self._resolve(str(r))
            reg = tuple(float(v) for v in region) if region is not None else reg
            call = {"refs": [base], **({"region": list(reg)} if reg else {})}
            res = self.session.call("inspect", call)
            if res.error:
                return self._out(res)
            ref = str(r)
            if region is not None:
                ref = self._crop(ref_out(base), reg, res.images[0].png if res.images else None)
            for im in res.images:
                images.append(ImageItem(ref, ref_out(im.caption), im.png))
            shown.append(ref)
        self.inspects += 1
        text = f"Returning {len(refs)} frame(s): {', '.join(shown)} - see the images below."
        return self._out(ToolResult(text, tuple(images)), translate=False)

    def _crop(self, ref: str, region: tuple[float, ...], data: bytes | None) -> str:
        """The crop ref of `ref` and `region` (`a12#c1`), archived as the reference does (a012_c01.jpg)."""
        for name, (base, reg) in self.crops.items():
            if ref_out(base) == ref and reg == region:
                return name
        k = 1 + sum(1 for name in self.crops if name.startswith(ref + "#c"))
        name = f"{ref}#c{k}"
        self.crops[name] = (ref_in(ref), region)
        if self.out is not None and data is not None:
            self._save_frames()
            parent = self.session.archive.get(ref_in(ref))
            row = {
                "ref": name,
                "file": frame_file(ref).removesuffix(".jpg") + f"_c{k:02d}.jpg",
                "kind": "crop",
                "parent": ref,
                "region": list(region),
                "t_sim": parent.t_sim,
                "action": int(ref[1:].split(".")[0]),
            }
            self._index(row, data)
        return name

    def _resolve(self, ref: str) -> tuple[str, tuple[float, ...] | None]:
        """A ref the agent sent -> (wac frame ref, crop region or None)."""
        if ref in self.crops:
            return self.crops[ref]
        return ref_in(ref), None

    def _unknown_crops(self, refs) -> ToolResult | None:
        bad = [str(r) for r in refs or () if _CROP.match(str(r)) and str(r) not in self.crops]
        if not bad:
            return None
        known = ", ".join(self.crops) or "none yet"
        return _error(f"unknown crop ref(s): {', '.join(bad)}; crops so far: {known}")

    def _evidence(self, refs) -> list[str] | None:
        if refs is None:
            return None
        return [self._resolve(str(r))[0] for r in refs] if isinstance(refs, list) else refs

    def _bug(self, name: str, args: dict) -> ToolResult:
        args = dict(args)
        if "description" in args and isinstance(args["description"], str):
            args["description"] = ref_in(args["description"])
        if "evidence" in args:
            if isinstance(args["evidence"], list) and (bad := self._unknown_crops(args["evidence"])):
                return bad
            args["evidence"] = self._evidence(args["evidence"])
        if name == "flag_bug":
            args.setdefault("status", "suspect")
        res = self.session.call(name, args)
        if res.error:
            return self._out(res)
        bug = self.session.ledger.events[-1]  # the change just made
        bid, status = bug["id"], bug["status"]
        desc, cat = bug["description"], bug["category"]
        ledger = self.session.ledger.render()
        if name == "flag_bug":
            text = f"Recorded {bid} [{status}] ({cat}): {desc}\nLedger:\n{ledger}"
        else:
            text = f"Updated {bid} [{status}]: {desc}\nLedger:\n{ledger}"
        return self._out(ToolResult(text))

    def _history(self, args: dict) -> ToolResult:
        try:
            a, b = int(args.get("from_action")), int(args.get("to_action"))
        except (TypeError, ValueError):
            return _error("history needs integer from_action and to_action.")
        if b < a:
            a, b = b, a
        if b - a + 1 > MAX_HISTORY_SPAN:
            return _error(f"history covers at most {MAX_HISTORY_SPAN} actions per call.")
        n = self.actions_used
        lines = [
            f"a{i} [call {r['call']}] model: - | {r['result']}"
            for i in range(max(a, 1), min(b, n) + 1)
            if (r := self.records.get(i))
        ]
        return ToolResult("\n".join(lines) if lines else f"(no actions in a{a}..a{b}; {n} actions so far)")

    # --- output ------------------------------------------------------------------------------------
    def _out(self, res: ToolResult, translate: bool = True) -> ToolResult:
        """Reference refs in text and captions, `[ref=…]` after each caption, JPEG images."""
        text = ref_out(res.text) if translate else res.text
        images = []
        for im in res.images:
            ref = ref_out(im.ref) if translate else im.ref
            caption = ref_out(im.caption) if translate else im.caption
            data = (
                _jpeg(im.png, self.protocol.jpeg_quality) if self.protocol.image_format == "jpeg" else im.png
            )
            images.append(ImageItem(ref, f"{caption} [ref={ref}]", data))
        return ToolResult(text, tuple(images), res.error)

    def _log(self, name: str, args, res: ToolResult) -> None:
        if self.out is None:
            return
        try:
            logged = json.loads(json.dumps(args, allow_nan=False))
        except (TypeError, ValueError):
            logged = {"invalid": "non-finite or non-JSON argument"}
        row = {
            "time": time.time(),
            "tool": name,
            "arguments": logged,
            "text": res.text,
            "images": [i.ref for i in res.images],
            "is_error": res.error,
        }
        with open(self.out / "mcp-calls.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")

    def _index(self, row: dict, data: bytes) -> None:
        """One frame in the reference's archive layout: frames/<file>.jpg and a frames/index.jsonl row."""
        frames = self.out / "frames"
        frames.mkdir(exist_ok=True)
        jpeg = _jpeg(data, self.protocol.jpeg_quality)
        (frames / row["file"]).write_bytes(jpeg)
        from PIL import Image

        w, h = Image.open(io.BytesIO(jpeg)).size
        with open(frames / "index.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps({**row, "w": w, "h": h}) + "\n")

    def _save_frames(self) -> None:
        """Every archived frame as the reference archives it: frames/a012.jpg, frames/a012_f03.jpg."""
        if self.out is None:
            return
        from .frames import png_bytes

        for f in self.session.archive.frames():
            ref = ref_out(f.ref)
            if ref in self.saved_frames:
                continue
            data = f.file.read_bytes() if f.file is not None and f.file.is_file() else png_bytes(f.image)
            p = f.pose or {}
            row = {
                "ref": ref,
                "file": frame_file(ref),
                "kind": f.kind,
                "t_sim": f.t_sim,
                "action": int(ref[1:].split(".")[0]),
                "pose": {
                    "x": p.get("x"),
                    "y": p.get("y"),
                    "z": p.get("z"),
                    "yaw": p.get("yaw_deg"),
                    "pitch": p.get("pitch_deg"),
                },
            }
            self._index(row, data)
            self.saved_frames.add(ref)

    def _save(self, status: str) -> None:
        if self.out is None:
            return
        s = self.session
        flags = [
            {
                "pos": [b.pose.get("x"), b.pose.get("y"), b.pose.get("z")] if b.pose else None,
                "note": ref_out(b.description),
                "simT": b.sim_time,
                "id": b.id,
                "status": b.status,
                "category": b.category,
                "evidence": [ref_out(r) for r in b.evidence],
                "action": b.action,
            }
            for b in s.ledger.active()
        ]
        data = {
            "status": status,
            "environment": "wac",
            "task": s.task_id,
            "max_actions": self.budget,
            "scene_description": self.context.scene_description,
            "actions_used": self.actions_used,
            "tool_calls": self.calls,
            "observation": "on-demand" if self.options.observation == "final" else "film",
            "film_dt": self.options.film_interval_s,
            "tools_sha256": self.tools_sha256,
            "flags": flags,
            "done_summary": ref_out(s.summary) if s.summary is not None else None,
            "backend": {"engine": "wac", "width": self.options.width, "height": self.options.height},
            "icl": {"enabled": self.has_example, "codes": [self.code] if self.has_example else []},
            "icl_examples_delivered": [self.code] if self.example_read else [],
            "icl_complete": not self.has_example or self.example_read or not self.example_pending,
            "environment_started": bool(getattr(s, "_started", False)),
            "simulated_seconds": _sim_seconds(s),
        }
        tmp = self.out / "meta.json.tmp"
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.out / "meta.json")


def _sim_seconds(session) -> float:
    env = getattr(session, "env", None)
    t = env.sim_time if env is not None else 0.0
    return round(float(t), 3) if math.isfinite(t) else 0.0


def frame_file(ref: str) -> str:
    """The reference's file name of a frame ref: a12 -> a012.jpg, a12.f3 -> a012_f03.jpg."""
    m = re.match(r"^a(\d+)(?:\.f(\d+))?$", ref)
    return f"a{int(m.group(1)):03d}" + (f"_f{int(m.group(2)):02d}" if m.group(2) else "") + ".jpg"


def _error(message: str) -> ToolResult:
    return ToolResult(f"ERROR: {message}", error=True)


def _describe(name: str, args: dict) -> str:
    """The reference's action echo: `move forward 2.0m`, `turn 30 deg (right)`, `wait 2.0s`."""
    if name == "move":
        return f"move {args.get('direction', 'forward')} {float(args['distance_m']):.1f}m"
    if name in ("turn", "look"):
        d = float(args["degrees"])
        side = ("right", "left") if name == "turn" else ("down", "up")
        return f"{name} {abs(d):.0f} deg ({side[0] if d >= 0 else side[1]})"
    if name == "wait":
        return f"wait {float(args['seconds']):.1f}s"
    return name


# --- the reference launcher's configuration ---------------------------------------------------------


def config_options(config: dict, base_dir: Path) -> dict:
    """`wac mcp --config FILE`: the reference launcher's keys as `wac mcp` settings.

    Keys: `task` (a bundle directory, or a task id with `build`), `run_dir`, `max_actions`,
    `max_tool_calls`, `require_full_budget`, `inspect_budget`, `observation` (`on-demand`, `final`
    or `film`), `icl.enabled`, `seed`, and wac's `width`, `height` (960 x 576), `image_format`
    (jpeg), `move_extras`.  Relative paths are relative to the config file.
    """
    if not isinstance(config, dict):
        raise UsageError("the config must be a JSON object")
    known = {
        "task", "build", "run_dir", "max_actions", "max_tool_calls", "require_full_budget", "inspect_budget",
        "observation", "icl", "seed", "width", "height", "image_format", "move_extras", "environment",
        "instruction", "scene_description", "subcategory", "upstream", "replay_dir", "replay_mode",
        "preview_every",
    }  # fmt: skip
    unknown = sorted(set(config) - known)
    if unknown:
        raise UsageError(f"unknown config key(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    if config.get("environment") not in (None, "wac", "vla-replay"):
        raise UsageError(
            f"environment {config['environment']!r} is the reference's; wac serves its own worlds "
            "(environment: wac, or vla-replay with replay_dir)"
        )
    replay = config.get("environment") == "vla-replay"
    if replay and not config.get("replay_dir"):
        raise UsageError("environment vla-replay needs replay_dir: an explorer's episode directory")
    if "task" not in config:
        raise UsageError("the config needs `task`: a bundle directory, or a task id with `build`")

    def path(value) -> Path:
        p = Path(str(value))
        return p if p.is_absolute() else base_dir / p

    task = path(config["task"])
    if "build" in config and not Bundle.exists(task):
        task = path(config["build"]) / str(config["task"])
    observation = {"on-demand": "final", "final": "final", "film": "film"}.get(
        config.get("observation", "on-demand")
    )
    if observation is None:
        raise UsageError(f"observation must be on-demand, final or film, got {config.get('observation')!r}")
    icl = config.get("icl", {"enabled": True})
    return {
        "bundle": str(task),
        "out": str(path(config["run_dir"])) if config.get("run_dir") else None,
        "budget_actions": int(config["max_actions"]) if config.get("max_actions") else None,
        "observation": observation,
        "example": bool(icl.get("enabled", True)) if isinstance(icl, dict) else bool(icl),
        "seed": int(config.get("seed", 0)),
        "replay_dir": str(path(config["replay_dir"])) if replay else None,
        "replay_mode": str(config.get("replay_mode", "play")),
        "preview_every": float(config.get("preview_every", 5.0)),
        "width": int(config.get("width", 960)),
        "height": int(config.get("height", 576)),
        "protocol": ProtocolOptions(
            max_tool_calls=int(config.get("max_tool_calls", MAX_TOOL_CALLS)),
            require_full_budget=bool(config.get("require_full_budget", False)),
            inspect_budget=None if config.get("inspect_budget") is None else int(config["inspect_budget"]),
            move_extras=bool(config.get("move_extras", False)),
            image_format=str(config.get("image_format", "jpeg")),
        ),
    }


# --- `wac mcp` options ---------------------------------------------------------------------------


def add_arguments(p) -> None:
    """`wac mcp`'s reference-protocol options (mcp_server.register calls this)."""
    p.add_argument(
        "--config",
        metavar="FILE",
        help="a launcher config in the reference harness's form (JSON; see docs/mcp.md); implies "
        "--protocol reference, 960x576 JPEG images",
    )
    p.add_argument(
        "--protocol",
        choices=("wac", "reference"),
        default=None,
        help="reference (default): the reference harness's protocol, 960x576 JPEG frames (docs/mcp.md, "
        "'Coming from WorldAuditBench'); wac: wac's result texts, 640x480 PNG frames",
    )
    p.add_argument("--image-format", choices=("jpeg", "png"), default=None, help="reference protocol: images")
    p.add_argument(
        "--max-tool-calls", type=int, default=None, help=f"reference protocol: call cap ({MAX_TOOL_CALLS})"
    )
    p.add_argument(
        "--require-full-budget",
        action="store_true",
        default=None,
        help="refuse done before the budget is used",
    )
    p.add_argument(
        "--inspect-budget", type=int, default=None, help="inspect calls allowed (0: no inspect tool)"
    )
    p.add_argument(
        "--move-extras", action="store_true", default=None, help="wac's (blocked)/dropped after a move"
    )
    p.add_argument(
        "--replay",
        metavar="EXPLORE_DIR",
        help="the replay paradigm: review this explorer episode (its trajectory/) instead of acting; "
        "implies --protocol reference",
    )
    p.add_argument(
        "--replay-mode",
        choices=("play", "all", "vqa"),
        default=None,
        help="play: play(from_s, to_s) segments (default); all: the whole recording with observe; "
        "vqa: the whole recording and one report(bugs, summary)",
    )


def apply_config(args):
    """Fill `args` from `--config` (explicit flags win); returns the protocol options or None for wac's."""
    if args.config:
        cfg_path = Path(args.config)
        try:
            config = json.loads(cfg_path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"cannot read the config {args.config}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise UsageError(f"{args.config} is not valid JSON: {exc}") from None
        c = config_options(config, cfg_path.parent)
        if args.bundle and Path(args.bundle).resolve() != Path(c["bundle"]).resolve():
            raise UsageError("give the bundle either as BUNDLE or as the config's `task`, not both")
        args.bundle = c["bundle"]
        args.out = args.out or c["out"]
        for key in ("observation", "seed"):
            setattr(args, key, c[key])
        args.width = args.width or c["width"]
        args.height = args.height or c["height"]
        args.no_example = args.no_example or not c["example"]
        args.budget_actions = c["budget_actions"]
        args.replay = args.replay or c["replay_dir"]
        args.replay_mode = args.replay_mode or c["replay_mode"]
        args.preview_every = c["preview_every"]
        proto = c["protocol"]
        args.protocol = args.protocol or "reference"
    else:
        proto = ProtocolOptions()
        args.budget_actions = None
        args.preview_every = 5.0
    if not args.bundle:
        raise UsageError("give a BUNDLE (or --config FILE with a `task`)")
    if args.replay:
        args.protocol = "reference"  # the replay paradigm's tools exist only in the reference protocol
    args.protocol = args.protocol or "reference"  # the paper's protocol unless wac's is asked for
    reference = args.protocol == "reference"
    args.width = args.width or (960 if reference else 640)
    args.height = args.height or (576 if reference else 480)
    if not reference:
        return None
    updates = {
        k: v
        for k, v in {
            "image_format": args.image_format,
            "max_tool_calls": args.max_tool_calls,
            "require_full_budget": args.require_full_budget,
            "inspect_budget": args.inspect_budget,
            "move_extras": args.move_extras,
        }.items()
        if v is not None
    }
    return replace(proto, **updates)


def budget_multiplier(bundle: str | Path, budget_actions: int | None, current: float) -> float:
    """The multiplier that gives exactly `budget_actions` (the config's max_actions)."""
    if budget_actions is None:
        return current
    if budget_actions < 1:
        raise UsageError("max_actions must be at least 1")
    from .session import read_bundle_context

    base = read_bundle_context(Path(bundle))[0].budget_actions
    mult = budget_actions / base
    if not 0 < mult <= 20:
        raise UsageError(f"max_actions {budget_actions} is more than 20 times the task's budget of {base}")
    return mult
