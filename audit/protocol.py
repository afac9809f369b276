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
* every call checked first as the reference's server checks it: the call cap, the tool's name,
  finite numbers, then its published input schema with jsonschema (`ERROR: <jsonschema's message>`);
* `inspect` with a region returns crop refs (`a12#c1`) that are citable as evidence (kept as
  cited in the ledger, `meta.json` and `bugs.jsonl`) and can be inspected again;
* `history` accepts a reversed range; at most 40 actions per call;
* run settings: a tool-call cap (400), `require_full_budget` (done refused until the budget is
  used), `inspect_budget` (None: unlimited, 0: no inspect tool), and scene tools refused until the
  in-context example was read with `read_example` (which accepts the task's code, `G1` … `S3`, or
  wac's id); the example is delivered once, by `read_example`, not again with the first `observe`;
* JPEG images (PNG optional); the launcher picks 960 x 576 (its config: reference_config.py);
* the reference's episode outputs beside wac's: `meta.json`, `bugs.jsonl` in the reference's rows,
  `mcp-calls.jsonl`, `tools.json`, `episode.started` and the frame archive `frames/a012.jpg`,
  `frames/a012_f03.jpg`, `frames/a012_c01.jpg` (crops) with `frames/index.jsonl`; `update_bug`
  keeps the action and time a bug was flagged at.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import time
from dataclasses import dataclass, replace

import jsonschema

from wac.errors import UsageError
from wac.taxonomy.reference import CODES, same_category

from .session import ImageItem, ToolResult
from .tools import MAX_HISTORY_SPAN, ToolSpec, _obj

MAX_TOOL_CALLS = 400
MAX_ERROR_CHARS = 4000  # a schema error echoes the instance: never a huge argument back into the context
FILM_MAX = 8  # film frames per action at most: agent/vlm/mcp/server.py, Episode.__init__ (ObsConfig film_max)
ARCHIVED = "\nFilm frames are archived; use inspect(refs) to view selected frames."
_NO_NOTE = ("inspect", "read_example")  # results the reference's on-demand note does not follow
_NO_EXAMPLE = (
    "Read the ONE supplied ICL demonstration for this task's specific subcategory (definition, 1-3 "
    "images, reference answer). No example is supplied in this run."
)
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

    replay = False  # the replay paradigm (replay_mcp.ReplayReference) words its own observe

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
        self.observed = False
        self.cited: dict[str, list[str]] = {}  # bug id -> its evidence as cited (crop refs kept)
        self.event_refs: list[list[str]] = []  # the cited evidence after each ledger event
        self.claimed = False  # episode.started written (the reference's lock on a started episode)
        self.sim_seconds = 0.0  # the last simulated time seen (the world is gone after close)
        # update_bug keeps a flag's action and time, as the reference's ledger does
        session.keep_flag_origin = True
        self.tools = self._tools()
        self.validators = {t.name: jsonschema.Draft202012Validator(t.parameters) for t in self.tools}
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
        if not any(t.name == "read_example" for t in out):  # the reference lists it even without examples
            out.insert(0, ToolSpec("read_example", _NO_EXAMPLE, _obj({"code": {"type": "string"}})))
        return tuple(out)

    # --- the one entry point -----------------------------------------------------------------------
    def call(self, name: str, args: dict | None = None) -> ToolResult:
        args = {} if args is None else args
        self.calls += 1
        res = self._refusal(name, args) or self._dispatch(name, args)
        replay_observe = name == "observe" and self.replay  # replay_mcp.py words its own
        if not (res.error or replay_observe) and name not in _NO_NOTE and self.options.observation == "final":
            # the reference's on-demand delivery says so after every result but inspect's
            res = replace(res, text=res.text + ARCHIVED)
        self._log(name, args, res)
        self._save("completed" if self.session.done else "running")
        return res

    def _refusal(self, name: str, args) -> ToolResult | None:
        """The reference server's checks before any tool runs, in its order and with its texts: the
        call cap, the tool's name, finite numbers, then the tool's input schema (jsonschema)."""
        if self.calls > self.protocol.max_tool_calls and name != "done":
            return _error("Tool-call budget exhausted; call done")
        if name not in self.validators:
            return _error("Unknown tool")
        if not isinstance(args, dict):
            return _error(f"arguments for {name} must be a JSON object")
        if not _finite(args):
            return _error("Non-finite numbers are not permitted")
        try:
            self.validators[name].validate(args)
        except jsonschema.ValidationError as exc:
            text = str(exc)  # jsonschema's own message, schema and instance, as the reference returns it
            return _error(text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + "…")
        return None

    def _dispatch(self, name: str, args: dict) -> ToolResult:
        if self.session.done:
            return _error("Episode is finished")
        if name == "read_example":
            return self._read_example(args)
        if self.example_pending and not self.example_read:
            return _error(
                f"Read all ICL examples before using scene tools. Call read_example for: {self.code}"
            )
        self._claim()
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
        if name == "list_bugs" and not res.error:
            return ToolResult(self._render())
        if name in ENV_ACTIONS and not res.error:
            return self._action(name, args, res)
        if name == "observe" and not res.error:
            later, self.observed = self.observed, True
            if later and not self.replay:  # a later observe: the reference's status text
                return replace(self._out(ToolResult("", res.images)), text=self._status())
            res = self._without_example(res)
            text = res.text.replace("\nScene: ", "\nEnvironment description: ", 1)
            return self._out(ToolResult(text, res.images, res.error))
        return self._out(res)

    def _status(self) -> str:
        """A later observe, in the reference's wording (`Episode.invoke`, observe)."""
        n = self.actions_used
        refs = [ref_out(f.ref) for f in self.session.archive.frames() if f.ref.split(".")[0] == f"a{n}"]
        notes = "\n".join(f"- {ref_out(x)}" for x in self.session.notes) or "(none)"
        return (
            f"Task: {self.context.instructions}\nEnvironment description: {self.context.scene_description}\n"
            f"Current view a{n}. Actions remaining: {self.budget - n}. Archived frames: {', '.join(refs)}\n"
            f"Notes:\n{notes}\nBug ledger:\n{self._render()}"
        )

    def _claim(self) -> None:
        """`episode.started` on the first call that reads the example or touches the scene (discovery
        and list_tools never start an episode)."""
        if not self.claimed and self.out is not None:
            (self.out / "episode.started").write_text(str(time.time()), encoding="utf-8")
        self.claimed = True

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
        self._claim()
        self.example_read = True
        from wac.taxonomy.registry import registry

        title = registry().category(self.context.example).name
        head = (
            f"ICL demonstration {self.code}: {title}. This is a reference example from another task, not "
            "evidence in your assigned scene. The reference answer is supplied below; do not report this "
            "example as a new bug."
        )
        tail = "The task's matching ICL demonstration was delivered. Use observe to start/resume the assigned scene."
        # the reference's order: definition, figures, then the answer (examples.py, ExamplePack.content)
        body, _, answer = res.text.partition("\nReference answer")
        after = (
            f"Reference answer (demonstration):\nReference answer{answer.rstrip()}\n{tail}"
            if answer
            else tail
        )
        return self._out(ToolResult(f"{head}\n{body.rstrip()}", res.images, after=after))

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
        cited = [str(r) for r in args["evidence"]] if isinstance(args.get("evidence"), list) else None
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
        if cited is not None or name == "flag_bug":  # refs as cited: a crop stays a crop (a1#c1)
            self.cited[bid] = cited or []
        self.event_refs.append(list(self.cited[bid]))
        self._bug_rows()
        desc, cat = ref_out(bug["description"]), bug["category"]
        ledger = self._render()
        if name == "flag_bug":
            text = f"Recorded {bid} [{status}] ({cat}): {desc}\nLedger:\n{ledger}"
        else:
            text = f"Updated {bid} [{status}]: {desc}\nLedger:\n{ledger}"
        return ToolResult(text)  # already in the reference's refs

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
        after = ref_out(res.after) if translate else res.after
        images = []
        for im in res.images:
            ref = ref_out(im.ref) if translate else im.ref
            caption = ref_out(im.caption) if translate else im.caption
            data = (
                _jpeg(im.png, self.protocol.jpeg_quality) if self.protocol.image_format == "jpeg" else im.png
            )
            images.append(ImageItem(ref, f"{caption} [ref={ref}]", data))
        return ToolResult(text, tuple(images), res.error, after)

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
            "text": res.text + (f"\n{res.after}" if res.after else ""),
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

    def _render(self) -> str:
        """The ledger as the reference renders it, with the refs as the agent cited them."""
        lines = [
            f"{b.id} [{b.status}] ({b.category}) at a{b.action}: {ref_out(b.description)} | evidence: "
            + (", ".join(self.cited.get(b.id, [])) or "-")
            for b in self.session.ledger.active()
        ]
        return "\n".join(lines) or "(no bugs flagged)"

    def _bug_rows(self) -> None:
        """bugs.jsonl as the reference's ledger writes it (one row per change, `pos` and `simT`), in
        place of wac's rows (`pose`, `sim_time`): the run directory's readers are the reference's."""
        if self.out is None:
            return
        rows = [
            {
                "event": e["event"],
                "id": e["id"],
                "description": ref_out(e["description"]),
                "category": e["category"],
                "status": e["status"],
                "evidence": self.event_refs[i]
                if i < len(self.event_refs)
                else [ref_out(r) for r in e["evidence"]],
                "pos": _pos(e.get("pose")),
                "action": e["action"],
                "simT": e["sim_time"],
            }
            for i, e in enumerate(self.session.ledger.events)
        ]
        (self.out / "bugs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    def _save(self, status: str) -> None:
        if self.out is None:
            return
        s = self.session
        self.sim_seconds = _sim_seconds(s, self.sim_seconds)
        flags = [
            {
                "pos": _pos(b.pose),
                "note": ref_out(b.description),
                "simT": b.sim_time,
                "id": b.id,
                "status": b.status,
                "category": b.category,
                "evidence": list(self.cited.get(b.id, [])),
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
            "film_max": FILM_MAX,
            "tools_sha256": self.tools_sha256,
            "flags": flags,
            "done_summary": ref_out(s.summary) if s.summary is not None else None,
            "backend": {"engine": "wac", "width": self.options.width, "height": self.options.height},
            "icl": {"enabled": self.has_example, "codes": [self.code] if self.has_example else []},
            "icl_examples_delivered": [self.code] if self.example_read else [],
            "icl_complete": not self.has_example or self.example_read or not self.example_pending,
            "environment_started": bool(getattr(s, "_started", False)),
            "simulated_seconds": self.sim_seconds,
        }
        tmp = self.out / "meta.json.tmp"
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.out / "meta.json")


def _sim_seconds(session, last: float) -> float:
    """The world's simulated time; after close (the world is gone) the last one seen."""
    env = getattr(session, "env", None)
    if env is None:
        return last
    t = float(env.sim_time)
    return round(t, 3) if math.isfinite(t) else last


def _pos(pose: dict | None) -> list | None:
    """A flag's position as the reference's ledger lists it (wac's x, y ground plane and z up)."""
    return [pose.get("x"), pose.get("y"), pose.get("z")] if pose else None


def _finite(value) -> bool:
    """No NaN or infinity anywhere in the arguments (the reference refuses them before its schema)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


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
