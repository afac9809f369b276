"""The review web app (Starlette): sign-in, task list, task page, live play, verdicts.

Pages are rendered on the server (Jinja2 templates in `templates/`); `static/review.js` drives
the task page (keyboard play, verdicts).  Every request needs a signed-in reviewer: the sign-in
form checks a name and token (`wac review add-reviewer`) and keeps the token in an HttpOnly,
SameSite=Strict cookie; scripts may send `Authorization: Bearer TOKEN` instead.  Every write is a
POST that must also carry the `X-Wac-Review` header (which a cross-site page cannot send without
a preflight this app never grants), and requests for other host names are refused (no DNS
rebinding), so a page elsewhere in the browser cannot write either.
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from wac.errors import UsageError, WacError

from .artifacts import Artifacts
from .catalog import FILTERS, apply_filters, choices, progress, read_build, review_of, reviews
from .play import PlayError, PlayHub
from .rating import Rating
from .rubric import rubric_html
from .serving import HostCheck, json_error, local_app  # noqa: F401 - HostCheck re-exported
from .signin import TokenSignIn
from .store import VERDICTS, FlaggedFrame, Store, StoreError

HERE = Path(__file__).parent
COOKIE = "wac_review_token"
WRITE_HEADER = "x-wac-review"
MAX_FLAGS = 12
MAX_FLAG_BYTES = 2_000_000

KEYS = (  # the task page's keyboard map: key, what it does (review.js holds the same table)
    ("W / ↑", "move forward 0.5 m (Shift: 2 m)"),
    ("S / ↓", "move back 0.5 m (Shift: 2 m)"),
    ("A / ←", "turn left 15° (Shift: 45°)"),
    ("D / →", "turn right 15° (Shift: 45°)"),
    ("R", "look up 10° (Shift: 30°)"),
    ("F", "look down 10° (Shift: 30°)"),
    ("E / Space", "interact"),
    ("T", "wait 1 s (Shift: 5 s)"),
    ("C", "switch clean ⇄ perturbed (same actions replayed)"),
    ("B", "flag the current frame for your verdict"),
    ("0", "reset the world to the start"),
)
RANGES = "move 0.3–4 m forward|back · turn −180…180° (positive = right) · look −90…90° (positive = down) · interact · wait 0.5–5 s"


class ReviewApp(TokenSignIn):
    """The state behind the routes: build, store, live worlds, artifact cache."""

    cookie, write_header, who = COOKIE, WRITE_HEADER, "reviewer"

    def __init__(
        self,
        build: Path,
        store: Store,
        cache_dir: Path,
        hub: PlayHub | None = None,
        runs: tuple[Path, ...] = (),
    ) -> None:
        """`runs`: run directories whose episodes raters label (review/rating.py)."""
        self.build = Path(build)
        self.store = store
        self.hub = hub or PlayHub()
        self.artifacts = Artifacts(cache_dir, self.build)
        self.templates = Jinja2Templates(directory=str(HERE / "templates"))
        read_build(self.build)  # fail at start-up, not on the first page, for a wrong path
        self.rating = Rating(self, list(runs), Path(cache_dir)) if runs else None

    # --- pages ------------------------------------------------------------------------------
    async def index(self, request: Request):
        me = self.signed_in(request)
        if me is None:
            return RedirectResponse("/signin", status_code=303)
        revs = reviews(read_build(self.build), self.store.verdicts())
        filters = {k: request.query_params.get(k, "") for k in FILTERS}
        shown = apply_filters(revs, filters)
        return self.templates.TemplateResponse(
            request,
            "list.html",
            {
                "me": me,
                "reviews": shown,
                "progress": progress(revs),
                "shown_progress": progress(shown),
                "choices": choices(revs),
                "filters": filters,
                "build": self.build,
                "rating": self.rating is not None,
            },
        )

    async def task_page(self, request: Request):
        me = self.signed_in(request)
        if me is None:
            return RedirectResponse("/signin", status_code=303)
        rev = self._review(request.path_params["task_id"])
        if rev is None:
            return Response("no such task in this build", status_code=404)
        from wac.bundle.reader import RUBRIC_MD, Bundle

        bundle = Bundle(rev.task.bundle)
        # the page starts the perturbed world as soon as it loads: build it while the page loads
        self.hub.prepare(me.name, rev.task.id, rev.task.version_id, rev.task.bundle, "perturbed")
        rubric = bundle.rubric()  # the reviewer's page shows the rubric: reviewers judge the task
        mine = next((v for v in rev.current if v.reviewer == me.name), None)
        return self.templates.TemplateResponse(
            request,
            "task.html",
            {
                "me": me,
                "rev": rev,
                "task": rev.task,
                "rubric": rubric,
                "rubric_html": rubric_html(bundle.file(RUBRIC_MD).read_text(encoding="utf-8")),
                "mine": mine,
                "keys": KEYS,
                "ranges": RANGES,
                "verdicts": VERDICTS,
                "page": {"task_id": rev.task.id, "version_id": rev.task.version_id},
            },
        )

    # --- task data --------------------------------------------------------------------------
    def _review(self, task_id: str):
        task = next((t for t in read_build(self.build) if t.id == task_id), None)
        return None if task is None else review_of(task, self.store.verdicts(task_id))

    async def api_tasks(self, request: Request):
        if self.signed_in(request) is None:
            return _error("sign in first", 401)
        revs = reviews(read_build(self.build), self.store.verdicts())
        return JSONResponse({"progress": progress(revs), "tasks": [_review_json(r) for r in revs]})

    async def api_task(self, request: Request):
        if self.signed_in(request) is None:
            return _error("sign in first", 401)
        rev = self._review(request.path_params["task_id"])
        if rev is None:
            return _error("no such task", 404)
        return JSONResponse(_review_json(rev, full=True))

    async def api_artifacts(self, request: Request):
        if self.signed_in(request) is None:
            return _error("sign in first", 401)
        rev = self._review(request.path_params["task_id"])
        if rev is None:
            return _error("no such task", 404)
        t = rev.task
        self.artifacts.state(t.id, t.version_id, t.bundle)
        return JSONResponse({"version_id": t.version_id, **self.artifacts.read(t.id, t.version_id)})

    async def api_artifact_file(self, request: Request):
        if self.signed_in(request) is None:
            return _error("sign in first", 401)
        p = request.path_params
        path = self.artifacts.file(p["task_id"], p["version_id"], p["name"])
        if path is None:
            return _error("no such image", 404)
        return FileResponse(path, media_type="image/png", headers={"Cache-Control": "private, max-age=86400"})

    async def api_flagged(self, request: Request):
        if self.signed_in(request) is None:
            return _error("sign in first", 401)
        data = self.store.flagged_image(int(request.path_params["frame_id"]))
        if not data:
            return _error("no such frame", 404)
        kind = "image/png" if data[:4] == b"\x89PNG" else "image/jpeg"
        return Response(data, media_type=kind)

    # --- writes -----------------------------------------------------------------------------
    async def api_verdict(self, request: Request):
        me = self.writer(request)
        body = await _json(request)
        rev = self._review(request.path_params["task_id"])
        if rev is None:
            return _error("no such task", 404)
        if body.get("version_id") != rev.task.version_id:
            return _error(
                "this task was rebuilt since the page was loaded (a new version); reload the page and "
                "look again before giving a verdict",
                409,
            )
        flags = body.get("flagged") or []
        if not isinstance(flags, list) or len(flags) > MAX_FLAGS:
            return _error(f"at most {MAX_FLAGS} flagged frames", 400)
        frames = []
        for f in flags:
            if not isinstance(f, dict) or not isinstance(f.get("label"), str):
                return _error("a flagged frame is {label, meta, image (base64)}", 400)
            image = None
            if f.get("image"):
                image = base64.b64decode(str(f["image"]).split(",", 1)[-1], validate=False)
                if len(image) > MAX_FLAG_BYTES:
                    return _error("a flagged frame is too large", 400)
            frames.append(FlaggedFrame(f["label"][:200], dict(f.get("meta") or {}), image))
        v = self.store.record(
            self.token(request),
            rev.task.id,
            rev.task.version_id,
            str(body.get("verdict", "")),
            str(body.get("comment", ""))[:10_000],
            float(body.get("seconds_spent") or 0.0),
            frames,
        )
        rev = self._review(rev.task.id)
        return JSONResponse({"recorded": v.id, "reviewer": me.name, **_review_json(rev, full=True)})

    async def api_play_start(self, request: Request):
        me = self.writer(request)
        body = await _json(request)
        rev = self._review(str(body.get("task_id", "")))
        if rev is None:
            return _error("no such task", 404)
        t = rev.task
        state, frame = await _in_thread(
            self.hub.start, me.name, t.id, t.version_id, t.bundle, str(body.get("variant", "perturbed"))
        )
        return _frame_response(state, frame)

    async def api_play(self, request: Request):
        me = self.writer(request)
        pid, op = request.path_params["play_id"], request.path_params["op"]
        body = await _json(request) if op in ("act", "variant") else {}
        if op == "act":
            action = body.get("text") if isinstance(body.get("text"), str) else body
            state, frame = await _in_thread(self.hub.act, me.name, pid, action)
        elif op == "variant":
            state, frame = await _in_thread(self.hub.switch, me.name, pid, str(body.get("variant", "")))
        elif op == "reset":
            state, frame = await _in_thread(self.hub.reset, me.name, pid)
        elif op == "close":
            await _in_thread(self.hub.close, me.name, pid)
            return JSONResponse({"closed": pid})
        else:
            return _error(f"unknown play operation {op!r}", 404)
        return _frame_response(state, frame)

    async def api_play_frame(self, request: Request):
        me = self.signed_in(request)
        if me is None:
            return _error("sign in first", 401)
        state, frame = await _in_thread(self.hub.frame, me.name, request.path_params["play_id"])
        return _frame_response(state, frame)

    # --- assembly ---------------------------------------------------------------------------
    def asgi(self, allowed_hosts: set[str] | None = None) -> Starlette:
        routes = [
            Route("/", self.index),
            Route("/signin", self.signin_page, methods=["GET"]),
            Route("/signin", self.signin, methods=["POST"]),
            Route("/signout", self.signout, methods=["POST"]),
            Route("/task/{task_id}", self.task_page),
            Route("/api/tasks", self.api_tasks),
            Route("/api/task/{task_id}", self.api_task),
            Route("/api/task/{task_id}/artifacts", self.api_artifacts),
            Route("/api/task/{task_id}/file/{version_id}/{name:path}", self.api_artifact_file),
            Route("/api/task/{task_id}/verdict", self.api_verdict, methods=["POST"]),
            Route("/api/flagged/{frame_id:int}", self.api_flagged),
            Route("/api/play", self.api_play_start, methods=["POST"]),
            Route("/api/play/{play_id}/frame", self.api_play_frame),
            Route("/api/play/{play_id}/{op}", self.api_play, methods=["POST"]),
            *(self.rating.routes() if self.rating else ()),
            Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ]
        return local_app(routes, allowed_hosts, _status, self.shutdown)

    def shutdown(self) -> None:
        self.hub.shutdown()
        self.artifacts.shutdown()


# --- helpers ---------------------------------------------------------------------------------


_error = json_error


def _status(exc: WacError) -> int:
    return 404 if isinstance(exc, PlayError) else 400 if isinstance(exc, UsageError | StoreError) else 422


async def _json(request: Request) -> dict:
    try:
        body = await request.json()
    except ValueError:
        raise UsageError("the request body must be JSON") from None
    if not isinstance(body, dict):
        raise UsageError("the request body must be a JSON object")
    return body


async def _in_thread(fn, *args):
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn, *args)


def _frame_response(state: dict, frame: bytes) -> Response:
    return Response(
        frame,
        media_type="image/jpeg",
        headers={"X-Wac-State": json.dumps(state, ensure_ascii=True), "Cache-Control": "no-store"},
    )


def _verdict_json(v) -> dict:
    return {
        "id": v.id,
        "reviewer": v.reviewer,
        "verdict": v.verdict,
        "version_id": v.version_id,
        "comment": v.comment,
        "created_at": v.created_at,
        "when": time.strftime("%Y-%m-%d %H:%M", time.localtime(v.created_at)),
        "seconds_spent": round(v.seconds_spent, 1),
        "flagged": list(v.flagged),
    }


def _review_json(r, full: bool = False) -> dict:
    out = {
        "task_id": r.task.id,
        "version_id": r.task.version_id,
        "status": r.status,
        "accepted_by": sorted(r.accepts),
        "stale": len(r.stale),
        "scene": r.task.scene,
        "scene_type": r.task.scene_type,
        "family": r.task.family,
        "category": r.task.category,
        "difficulty": r.task.difficulty,
        "seconds_spent": round(r.seconds_spent, 1),
    }
    if full:
        out["current"] = [_verdict_json(v) for v in r.current]
        out["stale_verdicts"] = [_verdict_json(v) for v in r.stale]
    return out
