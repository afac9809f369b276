"""Documented limits on what an agent can write and what the judge reads (docs/evaluation.md).

Agent texts are bounded by the tool schemas (`maxLength`, checked before any tool runs) and by
counts the session enforces, so that no agent can grow the episode's files or the server's memory
without bound.  The judge reads at most `MAX_COUNTED_BUGS` active bugs of a report, in the order
they were flagged: a report cannot win by listing every possible defect.  Large tool results are
logged once; repeats are logged as a reference to the first copy.
"""

from __future__ import annotations

import hashlib

MAX_DESCRIPTION_CHARS = 2000  # flag_bug / update_bug description
MAX_NOTE_CHARS = 2000  # one write_notes entry
MAX_SUMMARY_CHARS = 4000  # done(summary)
MAX_CODE_CHARS = 64  # read_example(code)
MAX_BUGS = 50  # flag_bug calls per episode
MAX_NOTES = 200  # write_notes entries per episode

MAX_COUNTED_BUGS = 5  # the judge reads the first five active bugs; later ones never count
MAX_JUDGED_CHARS = MAX_COUNTED_BUGS * MAX_DESCRIPTION_CHARS + MAX_SUMMARY_CHARS + 2000  # larger: judge error

MAX_TOOL_NAME = 64  # longer tool names are cut before they are echoed or counted
# one JSON-RPC message on `wac mcp`'s stdin: the largest legitimate one (a flag_bug at its text
# limits) is a few kB; a longer line is discarded as it arrives, never held whole, and answered
# with a JSON-RPC error -32600 (invalid request)
MAX_MESSAGE_BYTES = 1 << 20
LOG_TEXT_CHARS = 4000  # tool results longer than this are logged whole only the first time


def counted_bugs(bugs: list[dict]) -> list[dict]:
    """The active bugs the judge reads: the first MAX_COUNTED_BUGS unretracted ones, in flag order."""
    live = [b for b in bugs if isinstance(b, dict) and b.get("status") != "retracted"]
    return live[:MAX_COUNTED_BUGS]


def judged_chars(report: dict) -> int:
    """Characters of report text the judge reads (counted descriptions and the summary)."""
    descr = sum(len(str(b.get("description") or "")) for b in counted_bugs(report.get("bugs") or []))
    return descr + len(str(report.get("summary") or ""))


class TextLog:
    """Remembers which large texts were already logged, so repeats are logged as a reference."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def fields(self, text: str) -> dict:
        if len(text) <= LOG_TEXT_CHARS:
            return {"text": text}
        digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()
        if digest in self._seen:
            return {"text": None, "text_sha256": digest, "text_chars": len(text), "text_repeated": True}
        self._seen.add(digest)
        return {"text": text, "text_sha256": digest, "text_chars": len(text)}


def clip_args(args):
    """Tool arguments as logged: strings longer than LOG_TEXT_CHARS are cut (their length kept)."""
    if isinstance(args, str):
        return args if len(args) <= LOG_TEXT_CHARS else f"{args[:LOG_TEXT_CHARS]}…({len(args)} chars)"
    if isinstance(args, dict):
        return {str(k)[:MAX_TOOL_NAME]: clip_args(v) for k, v in list(args.items())[:64]}
    if isinstance(args, list):
        return [clip_args(v) for v in args[:64]]
    return args
