"""`wac human`: human auditors play the benchmark's tasks in the browser, as agents do (docs/human.md)."""
