"""The baseline tables of docs/baselines.md, from one run directory per agent.

    .venv/bin/wac eval build --agent sweep --no-example --width 160 --height 120 -j 2 --out runs/corpus-sweep
    (the same for random and oracle)
    .venv/bin/python bench/baseline_table.py runs/corpus-sweep runs/corpus-random runs/corpus-oracle

Prints, from each run's metrics (`wac.audit.metrics.run_metrics`, what `wac report` shows): the
overall figures per agent for the single- and multi-anomaly tasks (with the targets already covered
at the start frame, before any action), then success rate and geometric
coverage (App. E, the environment's distance limit) of the single-anomaly tasks per environment and
per category, and of the multi-anomaly tasks per environment.  A task that
has not run yet counts as missing and is left out, so the tables of an unfinished run say so.
"""

from __future__ import annotations

import sys
from collections import defaultdict

from wac.audit.metrics import run_metrics


def _pct(num: int, den: int) -> str:
    return f"{100.0 * num / den:.1f}% ({num}/{den})" if den else "–"


def _done(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["status"] == "judged" and r.get("coverage")]


def _overall(runs: list[tuple[str, list[dict]]]) -> list[str]:
    out = [
        "| agent | tasks | SR | geometric coverage | covered at the start (a0) | exposure | actions |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, rows in runs:
        for kind, sub in (
            ("single", [r for r in rows if not r["multi_anomaly"]]),
            ("multi", [r for r in rows if r["multi_anomaly"]]),
        ):
            if not sub:
                continue
            n = len(sub)
            sr = sum(r["success"] for r in sub)
            cov = sum(r["coverage"]["covered"] for r in sub)
            a0 = sum(r["coverage"]["first_ref"] == "a0" for r in sub)
            exp = sum(r["coverage"]["exposure"] for r in sub) / n
            act = sum(r["actions_used"] for r in sub) / n
            out.append(
                f"| `{name}` | {n} {kind}-anomaly | {_pct(sr, n)} | {_pct(cov, n)} | {_pct(a0, n)} | {exp:.3f} "
                f"| {act:.1f} |"
            )
    return out


def _by(runs: list[tuple[str, list[dict]]], key: str, title: str) -> list[str]:
    names = [n for n, _ in runs]
    groups: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    limits: dict[str, set[float]] = defaultdict(set)
    for name, rows in runs:
        for r in rows:
            groups[r[key]][name].append(r)
            limits[r[key]].add(r["coverage"]["limit_m"])
    head = f"| {title} | tasks | limit | " + " | ".join(f"{n} coverage | {n} SR" for n in names) + " |"
    out = [head, "|" + "---|" * (3 + 2 * len(names))]
    for g in sorted(groups):
        tasks = max(len(v) for v in groups[g].values())
        lim = ", ".join(f"{v:g} m" for v in sorted(limits[g]))
        cells = []
        for n in names:
            sub = groups[g].get(n, [])
            cells += [
                _pct(sum(r["coverage"]["covered"] for r in sub), len(sub)),
                _pct(sum(r["success"] for r in sub), len(sub)),
            ]
        out.append(f"| {g} | {tasks} | {lim} | " + " | ".join(cells) + " |")
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    runs = []
    for path in argv:
        m = run_metrics(path)
        rows = _done(m["tasks"])
        runs.append((m["run"]["agent"], rows))
        missing = len(m["tasks"]) - len(rows)
        if missing:
            print(f"{path}: {missing} task(s) not run or not judged, left out", file=sys.stderr)
    print("\n".join(_overall(runs)))
    single = [(n, [r for r in rows if not r["multi_anomaly"]]) for n, rows in runs]
    multi = [(n, [r for r in rows if r["multi_anomaly"]]) for n, rows in runs]
    for title, sub, key in (
        ("Single-anomaly tasks per environment", single, "environment"),
        ("Single-anomaly tasks per category", single, "category"),
        ("Multi-anomaly tasks per environment (coverage of the anchor)", multi, "environment"),
    ):
        if any(rows for _, rows in sub):
            print(f"\n{title}:\n")
            print("\n".join(_by(sub, key, key)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
