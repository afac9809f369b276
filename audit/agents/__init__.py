"""Built-in auditor agents and the registry that makes them by name (`make_agent`)."""

from .base import Agent, AgentError, agent_class, agent_names, check_options, is_secret, make_agent

__all__ = ["Agent", "AgentError", "agent_class", "agent_names", "check_options", "is_secret", "make_agent"]
