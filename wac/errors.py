"""The one root exception of wac and its few direct subclasses (see docs/errors.md)."""

from __future__ import annotations


class WacError(Exception):
    """Root of every error wac raises on purpose."""


class UsageError(WacError):
    """The command line or an API call was used wrongly (exit code 2)."""


class SourceErrors(WacError):
    """One or more diagnostics in task sources (exit code 1)."""

    def __init__(self, diagnostics: tuple) -> None:
        self.diagnostics = tuple(diagnostics)
        first = self.diagnostics[0].message if self.diagnostics else "source errors"
        super().__init__(f"{len(self.diagnostics)} error(s); first: {first}")


class BundleError(WacError):
    """A bundle on disk is missing, malformed or of another version."""
