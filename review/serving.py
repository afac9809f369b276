"""Serving wac's local web apps (the review app, the human-auditor app) with uvicorn: one way."""

from __future__ import annotations

from wac.errors import UsageError

LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]"}


def allowed_hosts(host: str, allow_host: list[str]) -> set[str]:
    """The Host names the app answers to: this machine's, the bound address, and `--allow-host`s."""
    return set(LOCAL_HOSTS) | ({host} if host not in ("0.0.0.0", "::") else set()) | set(allow_host)


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
