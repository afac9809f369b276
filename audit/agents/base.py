"""The Python agent protocol: an agent drives a session through `session.call(name, args)`.

An agent gets a live `AuditSession` (interactive paradigm) or a `ReviewSession` (stage two of the
two-stage paradigm); both expose `tools` (their `ToolSpec`s) and `call`.  `run` returns when the
agent has called `done` or can do nothing more; the runner calls `done` for it otherwise.  Agents
that call a model report its cost with `session.add_usage(...)`.  `pipeline_check` marks agents
that read ground truth (the oracle): every report that includes them says so.  An agent class may
declare `reads_images = False` (it never looks at a frame's pixels: sweep, random, oracle); a run
of such an agent then renders no film frames, which nobody would see (`reads_images`).
"""

from __future__ import annotations

import inspect
import re
from typing import Protocol, runtime_checkable

from wac.errors import AgentError  # noqa: F401 - re-exported
from wac.suggest import close_matches


@runtime_checkable
class Agent(Protocol):
    name: str
    pipeline_check: bool

    def run(self, session) -> None: ...


# name -> (module, class, one-line description); modules are imported on demand
_REGISTRY: dict[str, tuple[str, str, str]] = {
    "random": ("wac.audit.agents.random_agent", "RandomAgent", "uniformly random actions within the budget"),
    "sweep": (
        "wac.audit.agents.sweep",
        "SweepAgent",
        "systematic explorer covering the bounds (VLA-like baseline)",
    ),
    "replay": ("wac.audit.agents.replay", "ReplayAgent", "replays a scripted action list (replay:FILE)"),
    "oracle": (
        "wac.audit.agents.oracle",
        "OracleAgent",
        "PIPELINE CHECK: replays the self-check's exposing actions and files the rubric's finding",
    ),
    "openai": (
        "wac.audit.agents.openai_agent",
        "OpenAIAgent",
        "any OpenAI-compatible chat endpoint with tool calling and image inputs",
    ),
}


def agent_names() -> dict[str, str]:
    return {k: v[2] for k, v in _REGISTRY.items()}


def agent_class(spec: str) -> type:
    """The class behind `NAME` or `NAME:ARG`, without making an agent (e.g. to read `pipeline_check`)."""
    name = spec.partition(":")[0]
    if name not in _REGISTRY:
        close = close_matches(name, _REGISTRY)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise AgentError(f"unknown agent {name!r}{hint} (agents: {', '.join(_REGISTRY)})")
    module, cls, _ = _REGISTRY[name]
    return getattr(__import__(module, fromlist=[cls]), cls)


def reads_images(spec: str) -> bool:
    """Whether the agent behind `spec` may look at frames (undeclared: it may)."""
    return bool(getattr(agent_class(spec), "reads_images", True))


# Option keys that look like credentials: never accepted on the command line, never stored in run.json.
SECRET = re.compile(r"(^|[_-])key$|api[_-]?key|token|secret|passw|credential", re.I)


def is_secret(key: str) -> bool:
    return bool(SECRET.search(str(key)))


def agent_options(spec: str) -> tuple[str, ...]:
    """The option keys an agent's constructor takes (not `seed`, `arg`: the runner sets those)."""
    params = inspect.signature(agent_class(spec).__init__).parameters.values()
    return tuple(
        p.name
        for p in params
        if p.name not in ("self", "seed", "arg") and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    )


def check_options(specs, keys) -> None:
    """Every option key must be taken by one of the run's agents: a typo (`base-url=`) is an error,
    not a silent fallback to a default endpoint."""
    known = sorted({k for s in specs if s for k in agent_options(s)})
    for key in keys:
        if key not in known:
            close = close_matches(str(key).replace("-", "_"), known)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            names = ", ".join(dict.fromkeys(str(s).partition(":")[0] for s in specs if s))
            raise AgentError(
                f"unknown agent option {key!r} for {names}{hint} (options: {', '.join(known) or 'none'})"
            )


def make_agent(spec: str, **options) -> Agent:
    """An agent from `NAME` or `NAME:ARG` (e.g. `replay:actions.txt`); options go to its constructor.
    Options no parameter of this agent takes are left out (the run checks them with `check_options`:
    in a two-stage run the explorer and the analyser share one option list)."""
    kind = agent_class(spec)
    takes = set(agent_options(spec)) | {"seed"}
    options = {k: v for k, v in options.items() if k in takes}
    arg = spec.partition(":")[2]
    if arg:
        options = {**options, "arg": arg}
    return kind(**options)
