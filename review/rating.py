"""Rating episodes in the review app (paper §6.3): raters watch an episode's video and read its
report, then answer two questions — was the anomaly **exposed** in the video, and does the report
**identify** the target (against the rubric shown beside it).

`wac review BUILD --run RUN [--run RUN2 ...]` mounts runs (of any agent, model or human); `/rate`
lists their finished episodes under opaque numbers in a fixed shuffled order, so a rater sees
neither the agent nor the judge's verdict.  Videos are made on first view (`wac.audit.video`, WebM,
cached beside the review database).  `wac review labels --db FILE -o labels.json` writes the answers
as a labels file that `wac report RUN... --labels labels.json` reads (`wac.audit.agreement`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from wac.errors import AuthError, UsageError

QUESTIONS = (
    ("exposure", "Was the anomaly exposed in this video (shown clearly enough to be noticed)?"),
    ("report", "Does the report identify the target anomaly described by the rubric?"),
)


@dataclass(frozen=True)
class Episode:
    """One finished episode of a mounted run, known to raters only by its number."""

    number: int
    run: str  # the run directory's name (the labels file's key)
    path: Path  # the task directory in the run
    task_id: str
    bundle: Path | None


def read_episodes(runs: list[Path]) -> list[Episode]:
    """The finished episodes of `runs`, numbered in an order fixed by their names (not by agent)."""
    from wac.audit.judge import bundle_dir, read_run, task_ids

    found = []
    names = set()
    for run in runs:
        meta = read_run(run)
        name = run.resolve().name
        if name in names:
            raise UsageError(f"two runs named {name!r}: labels name runs by their directory; rename one")
        names.add(name)
        for tid in task_ids(run, meta):
            d = run / "tasks" / tid
            if (d / "report.json").is_file():
                found.append((name, d, tid, bundle_dir(d, meta)))
    found.sort(key=lambda e: hashlib.sha256(f"{e[0]}/{e[2]}".encode()).hexdigest())
    return [Episode(i, name, d, tid, b) for i, (name, d, tid, b) in enumerate(found, start=1)]


class Rating:
    """The rating pages and API, mounted in `ReviewApp` (its auth, store, templates)."""

    def __init__(self, app, runs: list[Path], cache_dir: Path) -> None:
        self.app = app
        self.episodes = {e.number: e for e in read_episodes(runs)}
        self.videos = Path(cache_dir) / "videos"
        self._lock = threading.Lock()

    def routes(self) -> list[Route]:
        return [
            Route("/rate", self.list_page),
            Route("/rate/{number:int}", self.page),
            Route("/api/rate/{number:int}", self.api_label, methods=["POST"]),
            Route("/api/rate/{number:int}/video", self.api_video),
            Route("/api/rate/{number:int}/frame/{ref}", self.api_frame),
        ]

    def _episode(self, request: Request) -> Episode | None:
        """The episode a page or API call names (None: no such episode)."""
        return self.episodes.get(int(request.path_params["number"]))

    def _api_episode(self, request: Request) -> Episode | None:
        """The episode an API read names, for a signed-in rater (AuthError: 401)."""
        if self.app.signed_in(request) is None:
            raise AuthError("sign in first")
        return self._episode(request)

    def _mine(self, name: str) -> dict[tuple[str, str], dict[str, bool]]:
        out: dict[tuple[str, str], dict[str, bool]] = {}
        for lab in self.app.store.labels():
            if lab.rater == name:
                out.setdefault((lab.run, lab.task_id), {})[lab.kind] = lab.value
        return out

    async def list_page(self, request: Request):
        me = self.app.signed_in(request)
        if me is None:
            return RedirectResponse("/signin", status_code=303)
        mine = self._mine(me.name)
        rows = [(e, mine.get((e.run, e.task_id), {})) for e in self.episodes.values()]
        return self.app.templates.TemplateResponse(
            request, "rate_list.html", {"me": me, "rows": rows, "questions": QUESTIONS}
        )

    async def page(self, request: Request):
        me = self.app.signed_in(request)
        if me is None:
            return RedirectResponse("/signin", status_code=303)
        e = self._episode(request)
        if e is None:
            return Response("no such episode", status_code=404)
        from wac.audit.judge import cited_refs, frames_dir, read_report

        report = read_report(e.path)
        traj = frames_dir(e.path, report)
        bugs = [
            {
                "id": b.get("id"),
                "category": b.get("category"),
                "status": b.get("status"),
                "description": b.get("description"),
                "frames": cited_refs([b], traj),
            }
            for b in report.get("bugs") or ()
        ]
        rubric = None
        if e.bundle is not None:
            from wac.bundle.reader import RUBRIC_MD, Bundle

            from .rubric import rubric_html

            rubric = rubric_html(Bundle(e.bundle).file(RUBRIC_MD).read_text(encoding="utf-8"))
        mine = self._mine(me.name).get((e.run, e.task_id), {})
        nxt = next((n for n in sorted(self.episodes) if n > e.number), None)
        return self.app.templates.TemplateResponse(
            request,
            "rate.html",
            {
                "me": me,
                "episode": e,
                "bugs": bugs,
                "summary": report.get("summary") or "",
                "rubric_html": rubric,
                "questions": QUESTIONS,
                "mine": mine,
                "next": nxt,
            },
        )

    async def api_label(self, request: Request):
        me = self.app.writer(request)
        e = self._episode(request)
        if e is None:
            return JSONResponse({"error": "no such episode"}, status_code=404)
        try:
            body = json.loads(await request.body())
        except ValueError:
            raise UsageError("the request body must be JSON") from None
        kind, value = (body or {}).get("kind"), (body or {}).get("value")
        if kind not in dict(QUESTIONS) or not isinstance(value, bool):
            raise UsageError('a label is {"kind": "exposure" | "report", "value": true | false}')
        self.app.store.record_label(self.app.token(request), e.run, e.task_id, kind, value)
        return JSONResponse({"episode": e.number, "kind": kind, "value": value, "rater": me.name})

    async def api_video(self, request: Request):
        e = self._api_episode(request)
        if e is None:
            return JSONResponse({"error": "no such episode"}, status_code=404)
        from starlette.concurrency import run_in_threadpool

        path = await run_in_threadpool(self._video, e)
        return FileResponse(path, media_type="video/webm", headers={"Cache-Control": "private, max-age=3600"})

    def _video(self, e: Episode) -> Path:
        """The episode's WebM video, made once, on the simulation thread (a replay needs the runtime)."""
        from wac.audit.video import episode_video

        out = self.videos / e.run / f"{e.task_id}.webm"
        with self._lock:
            if not out.is_file():
                out.parent.mkdir(parents=True, exist_ok=True)
                self.app.hub.run(episode_video, e.path, e.bundle, "webm", 640, 1.0, out)
        return out

    async def api_frame(self, request: Request):
        e = self._api_episode(request)
        if e is None:
            return JSONResponse({"error": "no such episode"}, status_code=404)
        from wac.audit.judge import frame_file, frames_dir, read_report

        f = frame_file(frames_dir(e.path, read_report(e.path)), request.path_params["ref"])
        if f is None:
            return JSONResponse({"error": "no such frame"}, status_code=404)
        return FileResponse(f, media_type="image/png")
