"""Every exception wac raises on purpose, under one root (see docs/errors.md).

Catch `WacError` to catch them all.  Where callers of a part of wac expect a builtin exception,
the class mixes it in (Hypothesis's errors.py does the same): a `LedgerError` is also a
`ValueError`.  The modules that raise them re-export them under their old names.  Exceptions
used only for control flow inside one module (a private `_Stop`) never leave it and are not here.
"""

from __future__ import annotations


class WacError(Exception):
    """Root of every error wac raises on purpose.

    `exit_code` is the command line's exit status when the error ends a command (the contract is
    in wac/exits.py): 1 unless a class says otherwise."""

    exit_code = 1


class UsageError(WacError):
    """The command line or an API call was used wrongly (exit code 2)."""

    exit_code = 2


class SourceErrors(WacError):
    """One or more diagnostics in task sources (exit code 1)."""

    def __init__(self, diagnostics: tuple) -> None:
        self.diagnostics = tuple(diagnostics)
        first = self.diagnostics[0].message if self.diagnostics else "source errors"
        super().__init__(f"{len(self.diagnostics)} error(s); first: {first}")


class BundleError(WacError):
    """A bundle on disk is missing, malformed or of another version."""


class NoBundle(BundleError, UsageError):
    """A path given for a bundle or a build holds none (it does not exist, or is another kind of
    directory): a usage error (exit code 2), unlike a damaged bundle (exit code 1)."""

    exit_code = 2


# --- taxonomy ---------------------------------------------------------------------------------------


class TaxonomyError(WacError, ValueError):
    """The taxonomy tables (categories.yaml, operators.yaml, the in-context index) or an operator
    unit name something that does not exist or are malformed: a researcher's mistake, found when the
    registry loads or a unit registers."""


# --- compiler ---------------------------------------------------------------------------------------


class PlanError(WacError):
    """No self-check plan can be made for a task (no reachable view point, no exposing actions);
    the compiler reports it as a diagnostic with `hint`."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


# --- validation -------------------------------------------------------------------------------------


class UnknownObservable(WacError, KeyError):
    """A self-check plan names an observable that `wac.validation.observables` does not have."""


# --- runtime ----------------------------------------------------------------------------------------


class ActionError(UsageError):
    """An action was malformed or out of range; nothing happened and no budget was spent.

    A `UsageError` for code that calls the environment, but on the command line the actions are the
    user's input, like task sources: exit code 1."""

    exit_code = 1


class BudgetExhausted(WacError):
    """The action budget is spent; further environment actions are refused."""


# --- audit ------------------------------------------------------------------------------------------


class AgentError(UsageError):
    """An agent could not be made (unknown name, missing option)."""


class ModelCallError(WacError):
    """The model endpoint failed (HTTP error after retries, malformed response): not a score."""


class LedgerError(WacError, ValueError):
    """A flag or update that cannot be applied (unknown id, bad status, retracted bug...)."""


class FrameRefError(WacError, ValueError):
    """A frame ref that is malformed or names no archived frame."""


class JudgeCallError(WacError, RuntimeError):
    """A model call that produced no verdict (HTTP failure after retries, unparsable answer)."""


class CorruptFile(WacError, ValueError):
    """A run file that is not what wac wrote (hand-edited, truncated, another program's)."""


# --- review -----------------------------------------------------------------------------------------


class PlayError(WacError):
    """A play request named no open session of this reviewer, or asked for something impossible."""


class StoreError(WacError):
    """The review database cannot be used (newer schema, not a review database, bad input)."""


class AuthError(WacError):
    """A write came without a valid reviewer token."""
