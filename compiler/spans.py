"""Source files and positions: every AST node and diagnostic points back into a `Source`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Source:
    """One decoded source file; `display` is the path as shown to the user."""

    path: Path
    display: str
    text: str

    def line(self, number: int) -> str:
        lines = self.text.splitlines()
        return lines[number - 1] if 0 < number <= len(lines) else ""


@dataclass(frozen=True, slots=True)
class Span:
    """A 1-based line/column range inside a source."""

    source: Source
    line: int
    column: int
    end_line: int
    end_column: int

    @property
    def location(self) -> str:
        return f"{self.source.display}:{self.line}:{self.column}"

    def __repr__(self) -> str:  # keep AST reprs short
        return f"Span({self.location})"
