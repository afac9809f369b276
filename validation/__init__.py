"""Self-checks and property-based validation of task bundles (issue 4)."""
