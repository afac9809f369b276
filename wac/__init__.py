"""wac, the world-audit compiler: a language, compiler and runtime for world-auditing tasks."""

__version__ = "0.1.0"
