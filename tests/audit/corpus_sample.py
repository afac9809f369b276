"""A CI-sized sample of the shipped corpus for corpus-wide runtime tests (`corpus_sample`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

# Operators whose outcome an `interact` reports: where a tool text could leak a mechanism's state.
MECHANISMS = frozenset(
    {"ignore_interaction", "delay", "interact_through", "ghost_door", "phantom_door"}
    | {"autoclose", "speed_door", "jam", "dark_lamp"}
)


def corpus_sample(built: Path, always=frozenset()) -> list[str]:
    """The evaluation tasks a corpus-wide runtime test runs: one task of each category, the
    categories spread over the environments (category i starts its search at environment 3i), and
    one task of each operator in `always`.

    The whole corpus (about 300 tasks on 80-260-object scenes, 10-20 s of simulation each) does
    not fit CI's 90 minutes on 2 cores; `WAC_FULL_CORPUS=1` runs every task (before a release, or
    with `wac … --backend ray` on a cluster)."""
    index = [e for e in json.loads((built / "index.json").read_text())["tasks"] if not e.get("example")]
    if os.environ.get("WAC_FULL_CORPUS") == "1":
        return sorted(e["id"] for e in index)
    env = lambda e: e.get("environment") or e["scene"]  # noqa: E731
    envs = sorted({env(e) for e in index})
    index.sort(key=lambda e: e["id"])
    chosen: list[str] = []
    for ci, cat in enumerate(sorted({e["category"] for e in index})):
        for k in range(len(envs)):
            here = [e for e in index if e["category"] == cat and env(e) == envs[(3 * ci + k) % len(envs)]]
            if here:
                chosen.append(here[0]["id"])
                break
    for op in sorted(always):
        found = [e["id"] for e in index if e.get("operator") == op]
        if found and not set(found) & set(chosen):
            chosen.append(found[0])
    return sorted(chosen)
