"""The local web apps' common ground (the review app, the human-auditor app): one Starlette
assembly (Host check against DNS rebinding, JSON errors), one way to serve with uvicorn, and one
command line (an action word, else a build to serve).  Starlette and uvicorn are imported only when
an app is made or served: the command line loads this module at every start."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable
from pathlib import Path

from wac.errors import AuthError, UsageError, WacError
from wac.suggest import close_matches

LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]"}


class HostCheck:
    """Refuse requests whose Host header names another machine (DNS rebinding)."""

    def __init__(self, app, allowed: set[str]) -> None:
        self.app, self.allowed = app, allowed

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if name not in self.allowed:
                from starlette.responses import Response

                await Response("unknown host", status_code=421)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def json_error(message: str, status: int):
    from starlette.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=status)


def local_app(routes: list, allowed_hosts: set[str] | None, status_of: Callable[[WacError], int], shutdown):
    """A Starlette app of `routes` answering only to `allowed_hosts` (default: this machine's names);
    AuthError answers 401, another WacError `status_of(error)`, both as `{"error": message}`;
    `shutdown()` runs when the server stops."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware

    async def auth_error(request, exc: AuthError):
        return json_error(str(exc), 401)

    async def wac_error(request, exc: WacError):
        return json_error(str(exc), status_of(exc))

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        yield
        shutdown()

    return Starlette(
        routes=routes,
        exception_handlers={AuthError: auth_error, WacError: wac_error},
        middleware=[Middleware(HostCheck, allowed=allowed_hosts or LOCAL_HOSTS)],
        lifespan=lifespan,
    )


def allowed_hosts(host: str, allow_host: list[str]) -> set[str]:
    """The Host names the app answers to: this machine's, the bound address, and `--allow-host`s."""
    return set(LOCAL_HOSTS) | ({host} if host not in ("0.0.0.0", "::") else set()) | set(allow_host)


def add_serve_options(p: argparse.ArgumentParser, port: int) -> None:
    """--port, --host and --allow-host, as both apps take them."""
    p.add_argument("--port", type=int, default=port)
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    p.add_argument(
        "--allow-host", action="append", default=[], help="another Host name the app answers to (repeatable)"
    )


def serve(app, host: str, port: int, allow_host: list[str], what: str) -> None:
    """Run `app` (with `asgi(hosts)`) until Ctrl-C; prints `wac: WHAT at URL` when it starts."""
    try:
        import uvicorn
    except ImportError:
        raise UsageError("this needs the review extra: pip install 'wac[review]'") from None
    config = uvicorn.Config(
        app.asgi(allowed_hosts(host, allow_host)), host=host, port=port, log_level="warning", access_log=False
    )
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    print(f"wac: {what} at http://{shown}:{port}/  (Ctrl-C stops)", flush=True)
    uvicorn.Server(config).run()


def run_actions(
    command: str, argv: list[str], actions: tuple[str, ...], parser_for, db: str | None, help_: bool
) -> int:
    """`wac COMMAND [ACTION] ARGS`: the first word picks an action of `actions`, else the rest is the
    build to serve; `parser_for(action or None)` makes its parser.  `--db`/`--help` written before
    the action word (argparse's REMAINDER) are passed on; a misspelt action is told, not taken for
    a build."""
    action = argv[0] if argv and argv[0] in actions else None
    if action is None and argv and not argv[0].startswith("-") and not Path(argv[0]).exists():
        meant = close_matches(argv[0], actions)
        if meant:
            raise UsageError(f"{argv[0]}: no such build directory; did you mean `wac {command} {meant[0]}`?")
    rest = argv[1:] if action else argv
    rest += (["--db", db] if db else []) + (["--help"] if help_ else [])
    try:
        sub = parser_for(action).parse_args(rest)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else 2
    return int(sub.func(sub) or 0)
