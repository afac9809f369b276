"""Built-in auditor agents and the registry that makes them by name (`make_agent`)."""

from .base import Agent, AgentError, agent_class, agent_names, make_agent

__all__ = ["Agent", "AgentError", "agent_class", "agent_names", "make_agent"]
