"""Before/after benchmarks: import one of wac's packages from another copy of its directory."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def use_package(name: str, path: Path | str) -> None:
    """Import `wac.<name>` (and so its submodules) from `path`, e.g. an older checkout's
    `compiler/` (`git worktree add /tmp/old HEAD~1`); the rest of wac stays this tree's."""
    import wac

    path = Path(path).resolve()
    spec = importlib.util.spec_from_file_location(
        f"wac.{name}", path / "__init__.py", submodule_search_locations=[str(path)]
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[f"wac.{name}"] = mod
    spec.loader.exec_module(mod)
    setattr(wac, name, mod)
