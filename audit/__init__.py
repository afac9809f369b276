"""Auditor sessions, agents, the MCP server, the judge and the metrics (`wac.audit`)."""
