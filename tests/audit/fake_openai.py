"""A local fake of an OpenAI-compatible chat endpoint (POST /v1/chat/completions).

`FakeOpenAI(script)` serves on 127.0.0.1:<free port>; `script(request_json) -> response` decides
each reply (use `reply_text`, `reply_tools` to build responses, return an int to answer with
that HTTP status, a `Status(code, headers)` for a status with headers such as `Retry-After`, or
`Silent(seconds)` to keep the connection open without answering).  Every request is kept in `.requests` so tests can assert what was sent
(tool schemas, image parts, the absence of ground truth...).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def reply_text(text: str, prompt_tokens: int = 100, completion_tokens: int = 20) -> dict:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-vlm",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def reply_tools(
    calls: list[tuple[str, dict]],
    text: str | None = None,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    id_prefix: str = "call",
) -> dict:
    tool_calls = [
        {
            "id": f"{id_prefix}_{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for i, (name, args) in enumerate(calls)
    ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-vlm",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": text, "tool_calls": tool_calls},
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


@dataclass(frozen=True)
class Status:
    """An HTTP error answer with headers (e.g. 429 with Retry-After)."""

    code: int
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Silent:
    """Accept the request, then say nothing for `seconds` (a connected but silent server)."""

    seconds: float


def no_tool_support(body: dict) -> dict | int:
    """A server without tool calling: it ignores the tools and always answers in prose."""
    return reply_text("I would walk forward and look around the scene.")


class FakeOpenAI:
    def __init__(self, script) -> None:
        self.script = script
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                outer.requests.append(body)
                outer.headers.append(dict(self.headers))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_response(404)
                    self.end_headers()
                    return
                out = outer.script(body)
                if isinstance(out, Silent):
                    time.sleep(out.seconds)
                    return
                extra: tuple[tuple[str, str], ...] = ()
                if isinstance(out, Status):
                    out, extra = out.code, out.headers
                if isinstance(out, int):
                    payload = json.dumps(
                        {"error": {"message": f"fake error {out}", "type": "server_error"}}
                    ).encode()
                    self.send_response(out)
                else:
                    payload = json.dumps(out).encode()
                    self.send_response(200)
                for k, v in extra:
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
