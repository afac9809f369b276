"""Did-you-mean hints for a misspelt name: the one helper behind the compiler's diagnostics (an
unknown object, scene, prefab...) and the command line's messages (a bundle directory, a task id,
an action name).

Only for names the user wrote and may see: never suggest what an auditor must not learn (an
object id of the scene, a category) in a text an agent reads.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from pathlib import Path

CUTOFF = 0.6  # difflib's ratio a candidate needs to be suggested


def close_matches(word: str, candidates: Iterable[str], n: int = 1, cutoff: float = CUTOFF) -> list[str]:
    """The `n` candidates closest to `word`, best first (none below `cutoff`)."""
    return difflib.get_close_matches(word, sorted(set(candidates)), n=n, cutoff=cutoff)


def did_you_mean(
    word: str, candidates: Iterable[str], n: int = 1, show: Callable[[str], str] = str
) -> str | None:
    """A `did you mean ...?` hint for a misspelt name (up to `n` alternatives, each written as
    `show(name)`: a path, say), or None when nothing is close."""
    shown = [f"`{show(m)}`" for m in close_matches(word, candidates, n=n)]
    if not shown:
        return None
    return f"did you mean {', '.join(shown[:-1]) + ' or ' + shown[-1] if len(shown) > 1 else shown[0]}?"


def nearby(path: str | Path, keep: Callable[[Path], bool]) -> str:
    """For a path that does not exist: `"; did you mean …?"` naming up to three entries beside it
    that `keep` accepts (bundles, builds, run directories), as the path was written; else ""."""
    p = Path(path)
    try:
        names = [d.name for d in p.parent.iterdir() if keep(d)]
    except OSError:
        return ""
    hint = did_you_mean(p.name, names, n=3, show=lambda m: m if str(p.parent) == "." else str(p.parent / m))
    return f"; {hint}" if hint else ""
