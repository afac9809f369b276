"""The Python agent protocol: an agent drives a session through `session.call(name, args)`.

An agent gets a live `AuditSession` (interactive paradigm) or a `ReviewSession` (stage two of the
two-stage paradigm); both expose `tools` (their `ToolSpec`s) and `call`.  `run` returns when the
agent has called `done` or can do nothing more; the runner calls `done` for it otherwise.  Agents
that call a model report its cost with `session.add_usage(...)`.  `pipeline_check` marks agents
that read ground truth (the oracle): every report that includes them says so.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from wac.errors import UsageError


class AgentError(UsageError):
    """An agent could not be made (unknown name, missing option)."""


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
        raise AgentError(f"unknown agent {name!r}; agents are: {', '.join(_REGISTRY)}")
    module, cls, _ = _REGISTRY[name]
    return getattr(__import__(module, fromlist=[cls]), cls)


def make_agent(spec: str, **options) -> Agent:
    """An agent from `NAME` or `NAME:ARG` (e.g. `replay:actions.txt`); options go to its constructor."""
    kind = agent_class(spec)
    arg = spec.partition(":")[2]
    if arg:
        options = {**options, "arg": arg}
    return kind(**options)
