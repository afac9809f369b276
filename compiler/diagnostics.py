"""Diagnostics: gcc-style messages with the source line, carets and a hint; stable codes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wac.compiler.spans import Source, Span
from wac.suggest import did_you_mean  # noqa: F401 - the compiler's passes import it from here


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    span: Span | None
    hint: str | None = None
    severity: str = "error"

    def render(self) -> str:
        head = f"{self.severity}[{self.code}]: {self.message}"
        if self.span is None:
            out = [f"wac: {head}"]
        else:
            out = [f"{self.span.location}: {head}"]
            text = self.span.source.line(self.span.line)
            if text:
                shown = text.expandtabs(4)
                col = len(text[: self.span.column - 1].expandtabs(4))
                if self.span.end_line == self.span.line and self.span.end_column > self.span.column:
                    width = len(text[self.span.column - 1 : self.span.end_column - 1].expandtabs(4))
                else:
                    width = 1
                gutter = f"{self.span.line:>4} | "
                out.append(gutter + shown)
                out.append(" " * (len(gutter) - 2) + "| " + " " * col + "^" * max(width, 1))
        if self.hint:
            out.append(f"  = hint: {self.hint}")
        return "\n".join(out)

    def as_json(self) -> dict:
        data: dict = {"code": self.code, "severity": self.severity, "message": self.message}
        if self.span is not None:
            data |= {
                "file": self.span.source.display,
                "line": self.span.line,
                "column": self.span.column,
                "end_line": self.span.end_line,
                "end_column": self.span.end_column,
            }
        if self.hint:
            data["hint"] = self.hint
        return data


def cached(d: Diagnostic) -> dict:
    """A warning as the build cache keeps it: `as_json` and the source's path, so that a build reusing
    the bundle shows it again (`replayed`)."""
    return d.as_json() | ({"path": str(d.span.source.path)} if d.span is not None else {})


def replayed(data: dict) -> Diagnostic:
    """A diagnostic from the build cache (`cached`); its source is read again: the cache reuses a
    bundle only when every file it depends on is unchanged."""
    span = None
    if "path" in data:
        path = Path(data["path"])
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        source = Source(path, data["file"], text)
        span = Span(source, data["line"], data["column"], data["end_line"], data["end_column"])
    return Diagnostic(data["code"], data["message"], span, data.get("hint"), data["severity"])


class Collector:
    """Semantic passes report here; the pipeline stops after a pass that reported errors."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []  # reported, but they stop nothing (`--strict` promotes them)

    def error(self, code: str, message: str, span: Span | None, hint: str | None = None) -> None:
        self.items.append(Diagnostic(code, message, span, hint))

    def warn(self, code: str, message: str, span: Span | None, hint: str | None = None) -> None:
        self.warnings.append(Diagnostic(code, message, span, hint, "warning"))

    def __bool__(self) -> bool:
        return bool(self.items)
