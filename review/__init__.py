"""`wac review`: human review of task bundles in the browser, with two-reviewer acceptance per version."""
