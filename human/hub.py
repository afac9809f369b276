"""Live human sessions: one `AuditSession` per started assignment, driven from the browser.

A participant's session is the agents' `AuditSession` (same tools, budget, texts and episode files)
run on the hub's one worker thread, which owns all VTK and pybullet work (as `wac review`'s
`PlayHub`).  Every tool call is stored (`HumanStore.record_call`) before its answer leaves, with
the SHA-256 of its text; a session that is not in memory (a server restart, an evicted one) is
rebuilt by replaying the stored calls into a fresh episode directory, and each replayed text must
hash the same (the runtime is deterministic), else the session is refused rather than altered.

The clock counts the seconds the task page is open: the page reports every few
seconds, and a silence longer than `GAP_S` (a closed tab, a stopped server) is not counted.  When
the time is up the session ends with `done`, keeping whatever was flagged.  The episode's report
carries those seconds as `wall_seconds` (time per task in `wac report`).
"""

from __future__ import annotations

import hashlib
import io
import shutil
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from wac.audit.session import AuditSession, ImageItem, SessionOptions, ToolResult
from wac.errors import PlayError, StoreError, UsageError

from .store import Assignment, Call, HumanStore, Participant

GAP_S = 20.0  # a longer silence from the page is not counted on the clock
KEPT_RESULTS = 12  # calls whose images stay in memory (the first, with the context, always does)
TIME_UP = "(the time for this task ran out; the session ended with the bugs flagged so far)"


class HumanSession(AuditSession):
    """An `AuditSession` whose report also says how long the participant spent on it."""

    wall_seconds: float | None = None

    def report(self) -> dict:
        out = super().report()
        if self.wall_seconds is not None:
            out["wall_seconds"] = round(self.wall_seconds, 1)
        return out


@dataclass
class Live:
    assignment_id: int
    session: HumanSession
    limit_s: float
    elapsed_s: float
    last_seen: float
    results: OrderedDict[int, tuple[ImageItem, ...]] = field(default_factory=OrderedDict)
    seq: int = 0
    context: str = ""  # the text of the opening `observe`: the auditor's context (C.1)
    ended: str | None = None


def text_hash(res: ToolResult) -> str:
    return hashlib.sha256(f"{res.error}\n{res.text}\n{res.after}".encode()).hexdigest()


def advance(elapsed_s: float, last_seen: float | None, now: float, gap_s: float = GAP_S) -> float:
    """The clock after a sign of life at `now`: the time since the last one, unless it was a gap."""
    if last_seen is None:
        return elapsed_s
    d = now - last_seen
    return elapsed_s + d if 0.0 <= d <= gap_s else elapsed_s


def jpeg(png: bytes, quality: int = 85) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


class SessionHub:
    """The live sessions of one server and the one thread that simulates them."""

    def __init__(
        self,
        store: HumanStore,
        build: Path,
        episodes: Path,
        options: SessionOptions,
        minutes: float = 10.0,
        max_live: int = 16,
        clock=time.time,
    ) -> None:
        if not (0 < minutes <= 24 * 60):
            raise UsageError(f"--minutes must be in (0, 1440], got {minutes:g}")
        self.store, self.build, self.episodes = store, Path(build), Path(episodes)
        self.options, self.minutes, self.max_live, self.clock = options, minutes, max_live, clock
        self.live: OrderedDict[int, Live] = OrderedDict()
        self._examples = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wac-human")
        self._pool.submit(_load_runtime)

    def _run(self, fn, *args):
        return self._pool.submit(fn, *args).result()

    # --- the public operations (request threads) ------------------------------------------
    def assignment(self, who: Participant, assignment_id: int) -> Assignment:
        a = self.store.assignment(assignment_id)
        if a is None or a.participant != who.name:
            raise PlayError("no such task among your assignments")
        return a

    def start(self, who: Participant, assignment_id: int) -> dict:
        """Open (or rebuild) the session; the first answer of a session is its opening `observe`."""
        a = self.assignment(who, assignment_id)
        if a.ended:
            return {"assignment": a.id, "ended": a.ended, "state": self._closed_state(a)}
        live = self._run(self._open, a)
        first = live.results.get(1, ())
        return {
            "assignment": a.id,
            "context": live.context,
            "images": [self._image_json(a.id, 1, i, im) for i, im in enumerate(first)],
            "state": self._state(live),
        }

    def call(self, who: Participant, assignment_id: int, tool: str, args) -> dict:
        a = self.assignment(who, assignment_id)
        if a.ended:
            raise PlayError("this session has ended")
        if not isinstance(tool, str) or not tool:
            raise UsageError("a call names a tool")
        return self._run(lambda: self._call(self._open(a), tool, args))  # one job: no eviction between

    def tick(self, who: Participant, assignment_id: int) -> dict:
        """The page's sign of life: advance the clock; end the session when the time is up."""
        a = self.assignment(who, assignment_id)
        if a.ended:
            return self._closed_state(a)
        if a.options is None:  # not started yet
            return {"elapsed_s": 0.0, "limit_s": self._limit(a), "ended": None, "live": False}
        return self._run(lambda: self._tick(self._open(a)))  # after a restart the page's tick rebuilds it

    def image(self, who: Participant, assignment_id: int, seq: int, index: int) -> bytes:
        self.assignment(who, assignment_id)
        live = self.live.get(assignment_id)
        items = live.results.get(seq) if live else None
        if not items or not (0 <= index < len(items)):
            raise PlayError("no such image (it may be from before a restart: press observe or inspect it)")
        return jpeg(items[index].png)

    def frame(self, who: Participant, assignment_id: int, ref: str) -> bytes:
        """A frame of the session's archive by ref (what `inspect` would show), as JPEG."""
        self.assignment(who, assignment_id)
        live = self.live.get(assignment_id)
        if live is None:
            raise PlayError("this session is not open; reload the page")
        return self._run(self._frame_jpeg, live, ref)

    def shutdown(self) -> None:
        """Close the open sessions without ending them (they are rebuilt from their calls)."""
        for live in list(self.live.values()):
            self._run(self._drop, live)
        self._pool.shutdown(wait=True)

    # --- on the simulation thread ---------------------------------------------------------
    def _open(self, a: Assignment) -> Live:
        live = self.live.get(a.id)
        if live is not None:
            self.live.move_to_end(a.id)
            return live
        while len(self.live) >= self.max_live:
            self._drop(next(iter(self.live.values())))
        bundle = self.build / a.task_id
        from wac.bundle.reader import Bundle

        if not Bundle.exists(bundle) or Bundle(bundle).manifest().version_id != a.version_id:
            raise PlayError(
                "this task is not in the served build as it was assigned (rebuilt or removed); "
                "tell the study's organisers"
            )
        now = self.clock()
        opts = a.options
        if opts is None:
            opts = {"session": self.options.as_dict(), "minutes": self.minutes}
            self.store.start(a.id, opts, now)
            a = self.store.assignment(a.id) or a
            opts = a.options or opts
        out = self.episodes / str(a.id)
        shutil.rmtree(out, ignore_errors=True)  # a rebuilt session writes its episode afresh
        session = HumanSession(bundle, out, SessionOptions(**opts["session"]), self._library(opts["session"]))
        live = Live(a.id, session, float(opts["minutes"]) * 60.0, a.elapsed_s, now)
        calls = self.store.calls(a.id)
        for c in calls:
            res = session.call(c.tool, c.args)
            live.seq = c.seq
            self._keep(live, c.seq, res)
            if text_hash(res) != c.text_sha256:
                session.close()
                raise StoreError(
                    f"session {a.id} did not replay as recorded (call {c.seq}, {c.tool}); "
                    f"its episode is kept in the database, tell the study's organisers"
                )
        live.last_seen = self.clock()  # building and replaying the world is not the participant's time
        self.live[a.id] = live
        if not calls:
            self._do(live, "observe", {})
        if session.done:  # stopped between its `done` and the end of the session
            self._end(live, "done")
        return live

    def _library(self, opts: dict):
        if not opts.get("example", True):
            return None
        from wac.audit.examples import ExampleLibrary

        if self._examples is None or (self._examples.width, self._examples.height) != (
            opts["width"],
            opts["height"],
        ):
            self._examples = ExampleLibrary(build_dir=self.build, width=opts["width"], height=opts["height"])
        return self._examples

    def _do(self, live: Live, tool: str, args) -> ToolResult:
        now = self.clock()
        live.elapsed_s = advance(live.elapsed_s, live.last_seen, now)
        live.last_seen = now
        res = live.session.call(tool, args)
        live.seq += 1
        self._keep(live, live.seq, res)
        call = Call(live.seq, tool, args, res.error, text_hash(res))
        self.store.record_call(live.assignment_id, call, live.elapsed_s, now)
        return res

    def _call(self, live: Live, tool: str, args) -> dict:
        if live.assignment_id not in self.live:
            raise PlayError("this session has ended")
        self._tick(live)
        if live.assignment_id not in self.live:  # the time ran out just now
            return {"seq": None, "tool": tool, "text": f"ERROR: {TIME_UP}", "error": True, "images": [],
                    "state": self._state(live)}  # fmt: skip
        res = self._do(live, tool, args)
        out = {
            "seq": live.seq,
            "tool": tool,
            "text": res.text + (f"\n{res.after}" if res.after else ""),
            "error": res.error,
            "images": [
                self._image_json(live.assignment_id, live.seq, i, im) for i, im in enumerate(res.images)
            ],
        }
        if live.session.done:
            self._end(live, "done")
        out["state"] = self._state(live)
        return out

    def _tick(self, live: Live) -> dict:
        now = self.clock()
        live.elapsed_s = advance(live.elapsed_s, live.last_seen, now)
        live.last_seen = now
        if live.elapsed_s >= live.limit_s and live.assignment_id in self.live:
            self._do(live, "done", {"summary": TIME_UP})
            self._end(live, "time")
        elif live.assignment_id in self.live:
            self.store.tick(live.assignment_id, live.elapsed_s, now)
        return self._state(live)

    def _end(self, live: Live, ended: str) -> None:
        live.elapsed_s = min(live.elapsed_s, live.limit_s)
        live.session.wall_seconds = live.elapsed_s
        live.session.write_report()
        self._drop(live)
        self.store.finish(live.assignment_id, ended, live.elapsed_s, self.clock())
        live.ended = ended

    def _drop(self, live: Live) -> None:
        self.live.pop(live.assignment_id, None)
        live.session.close()

    def _frame_jpeg(self, live: Live, ref: str) -> bytes:
        from wac.audit.frames import FrameRefError
        from wac.review.play import jpeg as jpeg_of

        try:
            frame = live.session.archive.get(ref)
        except FrameRefError as exc:
            raise PlayError(str(exc)) from None
        if frame.image is None:
            raise PlayError(f"frame {ref} was not rendered")
        return jpeg_of(frame.image)

    # --- helpers --------------------------------------------------------------------------
    @staticmethod
    def _keep(live: Live, seq: int, res: ToolResult) -> None:
        if seq == 1:
            live.context = res.text
        if res.images:
            live.results[seq] = res.images
        while len(live.results) > KEPT_RESULTS:
            old = next(k for k in live.results if k != 1)
            live.results.pop(old)

    @staticmethod
    def _image_json(aid: int, seq: int, index: int, item: ImageItem) -> dict:
        return {"url": f"/api/a/{aid}/image/{seq}/{index}", "ref": item.ref, "caption": item.caption}

    def _limit(self, a: Assignment) -> float:
        return float((a.options or {}).get("minutes", self.minutes)) * 60.0

    def _state(self, live: Live) -> dict:
        s = live.session
        ended = live.ended
        steps = s.actions_used
        return {
            "budget": s.budget,
            "used": steps,
            "left": s.budget - steps,
            "view": None if ended else f"/api/a/{live.assignment_id}/frame/a{steps}",
            "view_ref": f"a{steps}",
            "elapsed_s": round(live.elapsed_s, 1),
            "limit_s": live.limit_s,
            "ended": ended,
            "live": ended is None,
        }

    def _closed_state(self, a: Assignment) -> dict:
        return {
            "elapsed_s": round(a.elapsed_s, 1),
            "limit_s": self._limit(a),
            "ended": a.ended,
            "live": False,
        }


def _load_runtime() -> None:
    import wac.runtime.env  # noqa: F401 - pybullet, VTK and the renderer, loaded once
