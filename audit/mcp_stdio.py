"""`wac mcp`'s stdio transport: the MCP SDK's, fed by a reader that bounds each message.

The SDK reads stdin a line at a time with no limit, so one 20 MB line is held whole (and again
as the parsed message).  `BoundedLines` reads the raw stream in chunks and keeps at most
`MAX_MESSAGE_BYTES` of a line: a longer line is dropped as it arrives, up to its newline, and
answered with a JSON-RPC error -32600 (with the request's id when its first bytes show one);
the session then reads the next message as usual.
"""

from __future__ import annotations

import json
import re
import sys
from typing import BinaryIO

from .limits import MAX_MESSAGE_BYTES

CHUNK = 1 << 16
INVALID_REQUEST = -32600
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,128}")')


class _Rejected:
    """A line over the limit: its size and the request id its first bytes show, if any."""

    __slots__ = ("id", "size")

    def __init__(self, size: int, head: bytes) -> None:
        self.size = size
        m = _ID.search(head)
        self.id = None
        if m is not None:
            try:
                self.id = json.loads(m.group(1))
            except ValueError:
                self.id = None


class BoundedLines:
    """Lines of a binary stream, each at most `limit` bytes (without its newline).

    `next_line()` (blocking) returns the next line as text, a `_Rejected` for a line over the
    limit, or None at the end of the stream.  Memory held: one chunk plus at most `limit` bytes.
    """

    def __init__(self, stream: BinaryIO, limit: int = MAX_MESSAGE_BYTES, chunk: int = CHUNK) -> None:
        self.stream = stream
        self.limit = int(limit)
        self.chunk = int(chunk)
        self._buf = bytearray()
        self._eof = False
        self.rejected = 0

    def _read(self) -> bytes:
        read1 = getattr(self.stream, "read1", None)
        data = read1(self.chunk) if read1 is not None else self.stream.read(self.chunk)
        if not data:
            self._eof = True
        return data

    def next_line(self) -> str | _Rejected | None:
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                if len(line) > self.limit:
                    self.rejected += 1
                    return _Rejected(len(line), line[:4096])
                return line.decode("utf-8", errors="replace")
            if len(self._buf) > self.limit:
                return self._discard()
            if self._eof:
                if not self._buf:
                    return None
                line = bytes(self._buf)
                self._buf.clear()
                return line.decode("utf-8", errors="replace")
            self._buf += self._read()

    def _discard(self) -> _Rejected:
        """Drop the rest of an over-long line, reading on to its newline without keeping it."""
        head = bytes(self._buf[:4096])
        size = len(self._buf)
        self._buf.clear()
        while not self._eof:
            data = self._read()
            nl = data.find(b"\n")
            if nl >= 0:
                size += nl
                self._buf += data[nl + 1 :]
                break
            size += len(data)
        self.rejected += 1
        return _Rejected(size, head)


def rejection(rejected: _Rejected, limit: int = MAX_MESSAGE_BYTES) -> dict:
    """The JSON-RPC error answering a message over the limit."""
    return {
        "jsonrpc": "2.0",
        "id": rejected.id,
        "error": {
            "code": INVALID_REQUEST,
            "message": f"message of {rejected.size} bytes exceeds the limit of {limit} bytes; it was discarded",
        },
    }


class _AsyncLines:
    """The SDK's `stdin` (an async iterator of lines), from a `BoundedLines` read in a worker
    thread; a line over the limit is answered through `reply` and skipped."""

    def __init__(self, lines: BoundedLines) -> None:
        self.lines = lines
        self.reply = None  # set once the transport's write stream exists

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        import anyio

        while True:
            item = await anyio.to_thread.run_sync(self.lines.next_line, abandon_on_cancel=True)
            if item is None:
                raise StopAsyncIteration
            if isinstance(item, str):
                return item
            print(
                f"wac mcp: rejected a message of {item.size} bytes (limit {self.lines.limit})",
                file=sys.stderr,
            )
            if self.reply is not None:
                await self.reply(rejection(item, self.lines.limit))


async def serve_stdio(server, stdin: BinaryIO | None = None, limit: int = MAX_MESSAGE_BYTES) -> None:
    """Run an `MCPServer` on stdio like its `run_stdio_async`, with bounded messages."""
    import mcp_types as types
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    lines = _AsyncLines(BoundedLines(stdin if stdin is not None else sys.stdin.buffer, limit))
    lowlevel = server._lowlevel_server
    async with stdio_server(stdin=lines) as (read_stream, write_stream):

        async def reply(message: dict) -> None:
            error = types.JSONRPCError.model_validate(message)
            await write_stream.send(SessionMessage(error))

        lines.reply = reply
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
