"""The human-auditor web app (Starlette): sign-in, a participant's tasks, the auditing page.

A participant signs in with the name and token from `wac human add-participant` (an HttpOnly,
SameSite=Strict cookie, or `Authorization: Bearer TOKEN`), sees their assignments as "Task 1",
"Task 2" (never a task id: ids can name the anomaly), and audits on a page whose every datum comes
from the participant's `AuditSession`: the opening `observe` (the auditor's context, byte for byte
what an agent reads), tool results, and frames by ref.  No route reads a bundle file: the rubric,
the target, the perturbation and the clean world have no way to the page.  Writes are POSTs with
the `X-Wac-Human` header; requests for other host names are refused (`wac.review.serving.HostCheck`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from wac.audit.tools import live_tools
from wac.errors import PlayError, StoreError, UsageError, WacError
from wac.review.serving import json_error, local_app
from wac.review.signin import TokenSignIn

from .hub import SessionHub
from .store import HumanStore, Participant

HERE = Path(__file__).parent
COOKIE = "wac_human_token"
WRITE_HEADER = "x-wac-human"
MAX_BODY = 64_000  # bytes of one request body (the longest tool argument is a few thousand characters)
MAX_TOOL = 32

KEYS = (  # the page's keyboard map (human.js holds the same table); amounts come from the tool forms
    ("W / ↑", "move forward"),
    ("S / ↓", "move back"),
    ("A / ←", "turn left"),
    ("D / →", "turn right"),
    ("R", "look up"),
    ("F", "look down"),
    ("E", "interact"),
    ("T", "wait"),
)


class CallBody(BaseModel):
    """One tool call from the page; the arguments go to the session as sent (it checks them, as for
    an agent, and a mistake is an error result, not a refused request)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    tool: str = Field(min_length=1, max_length=MAX_TOOL)
    args: Any = Field(default_factory=dict)


class HumanApp(TokenSignIn):
    """The state behind the routes: the store and the live sessions."""

    cookie, write_header, who = COOKIE, WRITE_HEADER, "participant"

    def __init__(self, store: HumanStore, hub: SessionHub) -> None:
        self.store, self.hub = store, hub
        self.templates = Jinja2Templates(directory=str(HERE / "templates"))
        opts = hub.options
        self.tools = live_tools(example=opts.example)

    # --- pages ----------------------------------------------------------------------------
    async def index(self, request: Request):
        me = self.signed_in(request)
        if me is None:
            return RedirectResponse("/signin", status_code=303)
        return self.templates.TemplateResponse(request, "list.html", {"me": me, "tasks": self._tasks(me)})

    async def task_page(self, request: Request):
        me = self.signed_in(request)
        if me is None:
            return RedirectResponse("/signin", status_code=303)
        tasks = self._tasks(me)
        task = next((t for t in tasks if t["assignment"] == request.path_params["aid"]), None)
        if task is None:
            return Response("no such task among your assignments", status_code=404)
        return self.templates.TemplateResponse(
            request,
            "task.html",
            {
                "me": me,
                "task": task,
                "tools": [_tool_form(t) for t in self.tools],
                "keys": KEYS,
                "page": {"assignment": task["assignment"]},
            },
        )

    def _tasks(self, me: Participant) -> list[dict]:
        """The participant's assignments as the page shows them: a number, a status and the clock."""
        out = []
        for n, a in enumerate(self.store.assignments(me.name), start=1):
            limit = float((a.options or {}).get("minutes", self.hub.minutes)) * 60.0
            out.append(
                {
                    "assignment": a.id,
                    "label": f"Task {n}",
                    "status": a.status,
                    "elapsed_s": round(a.elapsed_s),
                    "left_s": max(0, round(limit - a.elapsed_s)),
                }
            )
        return out

    # --- the session API ------------------------------------------------------------------
    async def api_tasks(self, request: Request):
        me = self.signed_in(request)
        if me is None:
            return _error("sign in first", 401)
        return JSONResponse({"tasks": self._tasks(me)})

    async def api_start(self, request: Request):
        me = self.writer(request)
        return JSONResponse(await run_in_threadpool(self.hub.start, me, request.path_params["aid"]))

    async def api_call(self, request: Request):
        me = self.writer(request)
        try:
            body = CallBody.model_validate(await _json(request))
        except ValidationError:
            raise UsageError(
                f"a call is {{tool, args}}: a tool name of 1-{MAX_TOOL} characters and its arguments"
            ) from None
        aid = request.path_params["aid"]
        return JSONResponse(await run_in_threadpool(self.hub.call, me, aid, body.tool, body.args))

    async def api_tick(self, request: Request):
        me = self.writer(request)
        return JSONResponse(await run_in_threadpool(self.hub.tick, me, request.path_params["aid"]))

    async def api_image(self, request: Request):
        me = self.signed_in(request)
        if me is None:
            return _error("sign in first", 401)
        p = request.path_params
        data = await run_in_threadpool(self.hub.image, me, p["aid"], p["seq"], p["index"])
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})

    async def api_frame(self, request: Request):
        me = self.signed_in(request)
        if me is None:
            return _error("sign in first", 401)
        p = request.path_params
        data = await run_in_threadpool(self.hub.frame, me, p["aid"], p["ref"])
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})

    # --- assembly -------------------------------------------------------------------------
    def asgi(self, allowed_hosts: set[str] | None = None) -> Starlette:
        routes = [
            Route("/", self.index),
            Route("/signin", self.signin_page, methods=["GET"]),
            Route("/signin", self.signin, methods=["POST"]),
            Route("/signout", self.signout, methods=["POST"]),
            Route("/task/{aid:int}", self.task_page),
            Route("/api/tasks", self.api_tasks),
            Route("/api/a/{aid:int}/start", self.api_start, methods=["POST"]),
            Route("/api/a/{aid:int}/call", self.api_call, methods=["POST"]),
            Route("/api/a/{aid:int}/tick", self.api_tick, methods=["POST"]),
            Route("/api/a/{aid:int}/image/{seq:int}/{index:int}", self.api_image),
            Route("/api/a/{aid:int}/frame/{ref}", self.api_frame),
            Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ]
        return local_app(routes, allowed_hosts, _status, self.hub.shutdown)


def _tool_form(spec) -> dict:
    """A tool's form fields from its JSON Schema: name, kind (number, integer, choice, text, long,
    refs, numbers), bounds, whether required, and the schema's description."""
    props = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", ()))
    fields = []
    for name, p in props.items():
        kind = p.get("type")
        if "enum" in p:
            kind, choices = "choice", list(p["enum"])
        else:
            choices = []
        if kind == "array":
            kind = "numbers" if p.get("items", {}).get("type") == "number" else "refs"
        elif kind == "string" and (p.get("maxLength") or 0) > 200:
            kind = "long"
        elif kind == "string":
            kind = "text"
        fields.append(
            {
                "name": name,
                "kind": kind,
                "choices": choices,
                "min": p.get("minimum"),
                "max": p.get("maximum"),
                "required": name in required,
                "help": p.get("description", ""),
            }
        )
    return {"name": spec.name, "description": spec.description, "fields": fields, "env": spec.env_action}


_error = json_error


def _status(exc: WacError) -> int:
    if isinstance(exc, PlayError):
        return 404
    return 400 if isinstance(exc, UsageError) else 409 if isinstance(exc, StoreError) else 422


async def _json(request: Request) -> dict:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise UsageError(f"a request body is at most {MAX_BODY} bytes")
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        raise UsageError("the request body must be JSON") from None
    if not isinstance(body, dict):
        raise UsageError("the request body must be a JSON object")
    return body
