"""Self-checks: prove that a bundle's anomaly manifests, only in the perturbed world, within budget.

`check_bundle(path)` (bundlecheck.py) runs the bundle's `selfcheck.json` plan in the perturbed and the clean
variant and checks, each with a reason in words when it fails:

- **differential**: the category's observable shows the anomaly in the perturbed run and not in
  the clean one (`observables.py`; shadow/lighting and material compare the two runs' frames
  pixel by pixel, as a reviewer would);
- **necessity** (categories whose evidence needs interaction, revisit, time or another view):
  the clean and perturbed worlds look the same from the start view and, for revisit, time and
  interaction categories, also at the plan's first `mark` (before the exposing actions);
- **visible** (`pixelchecks.py`): a visual anomaly changes the target's pixels visibly at an
  evidence view (the pixel rule, `visual.py`, docs/validation.md);
- **one change from clean**: after load and after the run, only the anomaly's targets, the
  objects it adds and those it declares with `affects` differ between the two worlds (`benign`
  does not excuse a second change);
- **trigger**: the anomaly's trigger fired the intended number of times, after the "before" view,
  and not while the target was on screen when it must fire unseen (segmentation at the firing tick);
- **budget**: the plan's actions fit the task's budget.
- **alone** (`world_alone.py`): judged without the clean twin, the perturbed world shows each anomaly
  and nothing else (the detectors), and the perturbed run shows it by itself (the `alone` column).

A multi-anomaly task is checked anomaly by anomaly, each with its own plan.

This module is the command line (`wac selfcheck`, and `main`, the entry of each bundle's
selfcheck.py); the work lives below it: `bundlecheck.py` (one bundle, start to verdict),
`checks.py` (the checks), `evidence.py` (the clean | perturbed frames written to `--out`) and
`pool.py` (many bundles in a process pool).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from wac.errors import UsageError
from wac.exits import INTERRUPTED, run_command, sigterm_interrupts

from .bundlecheck import SelfCheckResult, check_bundle, safe_check
from .pool import find_bundles, run_many
from .verdicts import Verdicts


def table(results: list[SelfCheckResult]) -> str:
    """The human summary: one row per task, then each failure's reasons."""
    mark = lambda ok: "✓" if ok else "✗"  # noqa: E731
    rows = [("task", "category", "perturbed", "clean", "necessity", "alone", "actions", "seconds")]
    for r in results:
        rows.append(
            (
                r.task_id,
                r.category,
                mark(r.perturbed_ok),
                mark(r.clean_ok),
                r.necessity,
                r.alone,
                f"{r.actions_needed}/{r.budget}",
                "reused" if r.reused else f"{r.seconds:.1f}",
            )
        )
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    failed = [r for r in results if not r.passed]
    if failed:
        lines.append("")
        for r in failed:
            lines.append(f"FAIL {r.task_id}:")
            lines += [f"  - {why}" for why in r.reasons]
    n = len(results)
    lines.append("")
    lines.append(
        f"{n - len(failed)} of {n} task(s) pass the self-check" + (f"; {len(failed)} fail" if failed else "")
    )
    return "\n".join(lines)


def cmd_selfcheck(args: argparse.Namespace) -> int:
    bundles = find_bundles(args.paths)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    t0 = time.perf_counter()
    verdicts = Verdicts(args.out, force=args.force)
    kept = {i: r for i, b in enumerate(bundles) if (r := verdicts.lookup(b)) is not None}
    todo = [b for i, b in enumerate(bundles) if i not in kept]
    jobs = args.jobs or max(1, min(len(todo), os.cpu_count() or 1))
    arrived: list[SelfCheckResult] = []  # this run's verdicts as they arrive, kept on Ctrl-C

    def record(bundle, result: SelfCheckResult) -> None:
        arrived.append(result)
        verdicts.record(bundle, result)

    try:
        with sigterm_interrupts():  # a CI timeout or `kill` stops it like Ctrl-C: finished verdicts kept
            fresh = _check(args, todo, jobs, record)
    except KeyboardInterrupt:
        _interrupted(arrived, len(todo), len(kept), kept=not _save(verdicts))
        return INTERRUPTED
    _save(verdicts)
    it = iter(fresh)
    results = [kept[i] if i in kept else next(it) for i in range(len(bundles))]
    wall = time.perf_counter() - t0
    if args.json:
        print(
            json.dumps(
                {
                    "results": [r.as_dict() for r in results],
                    "passed": sum(r.passed for r in results),
                    "total": len(results),
                    "reused": len(kept),
                    "seconds": round(wall, 2),
                    "jobs": jobs,
                },
                indent=2,
                default=str,
            )
        )
    else:
        print(table(results))
        again = f"; {len(kept)} verdict(s) reused, unchanged since they were reached (--force checks again)"
        print(f"{len(todo)} task(s) checked in {wall:.1f} s on {jobs} process(es)" + (again if kept else ""))
    return 0 if all(r.passed for r in results) else 1


def _check(args, todo: list, jobs: int, record) -> list[SelfCheckResult]:
    """Self-check `todo` where `args` says; `record(bundle, result)` hears each as it arrives."""
    if not todo:
        return []
    if getattr(args, "backend", "local") == "ray":  # wac/backends.py: one Ray task per bundle
        from wac.backends import ray_map

        fresh = ray_map(safe_check, [(str(b), args.out) for b in todo], args.address)
        for b, r in zip(todo, fresh, strict=True):
            record(b, r)
        return fresh
    # progress on stderr wherever it goes (a log, CI): a bar on a terminal, a line every 30 s elsewhere
    return run_many(todo, jobs, args.out, progress=True, on_result=record)


def _save(verdicts: Verdicts) -> list[str]:
    """Write the verdicts out; the directories that could not be written (each said on stderr)."""
    unwritable = verdicts.save()
    for d in unwritable:
        print(f"wac: {d} is not writable: its verdicts were not kept", file=sys.stderr)
    return unwritable


def _interrupted(arrived: list[SelfCheckResult], todo: int, reused: int, kept: bool) -> None:
    """What an interrupted run finished, and that its verdicts are kept for the next run."""
    passed = sum(r.passed for r in arrived)
    failed = [r.task_id for r in arrived if not r.passed]
    print(
        f"wac: interrupted: {passed} passed, {len(failed)} failed, {todo - len(arrived)} not checked"
        + (f" ({reused} verdict(s) reused)" if reused else "")
        + (f"; failed: {', '.join(failed)}" if failed else ""),
        file=sys.stderr,
    )
    n = sum(r.error is None for r in arrived) if kept else 0  # a check that could not run is not kept
    print(
        f"wac: {n} finished verdict(s) kept; run the same command again to check the {todo - n} other task(s)",
        file=sys.stderr,
    )


def register(subparsers) -> None:
    """Add `selfcheck` to the `wac` command line."""
    s = subparsers.add_parser("selfcheck", help="run every bundle's self-check plan in both variants")
    s.add_argument("paths", nargs="+", metavar="BUILD_DIR_OR_BUNDLE")
    s.add_argument("-j", "--jobs", type=int, help="parallel processes (default: one per CPU)")
    s.add_argument("--json", action="store_true", help="machine-readable results on stdout")
    s.add_argument(
        "--force",
        action="store_true",
        help="check every bundle again, even those whose kept verdict still holds (BUILD/.wac-selfcheck.json)",
    )
    s.add_argument(
        "--out", metavar="DIR", help="write evidence frames (clean | perturbed) per task under DIR"
    )
    from wac.backends import add_backend_args

    add_backend_args(s)
    s.set_defaults(func=cmd_selfcheck)


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point (`python -m wac.validation.selfcheck BUNDLE...`, a bundle's selfcheck.py):
    the same as `wac selfcheck`, with its exit codes (0 pass, 1 fail, 2 usage, 3 internal error)."""
    parser = argparse.ArgumentParser(prog="wac", description="The world-audit compiler.")
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    return run_command(parser, ["selfcheck", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["SelfCheckResult", "check_bundle", "find_bundles", "main", "register", "run_many"]
