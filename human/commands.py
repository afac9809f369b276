"""`wac human`: serve the human-auditor app, add participants, assign tasks, export a run.

    wac human BUILD --db FILE [--port 8766] [--host 127.0.0.1] [--minutes 10]
    wac human add-participant NAME --db FILE
    wac human participants --db FILE
    wac human assign BUILD --db FILE [--per-task 2] [--tasks ID ...]
    wac human export BUILD --db FILE -o RUN [--slot N]

The first word after `human` picks the action; anything else is the build to serve.  Episodes are
written beside the database (`--episodes`, default the database path with `.episodes`).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from wac.bundle.reader import require_build
from wac.errors import UsageError
from wac.review.serving import add_serve_options, run_actions

DEFAULT_DB = "human.sqlite"
ACTIONS = ("add-participant", "participants", "assign", "export")


def _store(db: str, create: bool = False):
    from .store import HumanStore

    if not create and not Path(db).is_file():
        raise UsageError(
            f"no human-auditor database at {db} (start one with `wac human add-participant NAME --db {db}`)"
        )
    return HumanStore(db)


def _episodes(args) -> Path:
    return Path(args.episodes) if args.episodes else Path(args.db).with_suffix(".episodes")


def cmd_add_participant(args) -> int:
    token = _store(args.db, create=True).add_participant(args.name)
    print(token)
    print(
        f"wac: added participant {args.name!r} in {args.db}; the token above is shown only now: "
        f"give it to {args.name} to sign in",
        file=sys.stderr,
    )
    return 0


def cmd_participants(args) -> int:
    for p in _store(args.db).participants():
        print(p.name)
    return 0


def cmd_assign(args) -> int:
    from wac.audit.runner import eval_bundles

    from .assign import Slot, TaskKey, plan, task_key

    build = require_build(args.build)
    store = _store(args.db)
    keys = [task_key(b) for b in eval_bundles(build, args.tasks)]
    existing = [
        Slot(a.participant, TaskKey(a.task_id, a.version_id, a.scene, frozenset(a.targets)), a.slot)
        for a in store.assignments()
    ]
    new = plan(keys, [p.name for p in store.participants()], existing, args.per_task)
    store.add_assignments(
        [
            (
                s.participant,
                s.task.task_id,
                s.slot,
                s.task.version_id,
                s.task.scene,
                tuple(sorted(s.task.targets)),
            )
            for s in new
        ]
    )
    load = Counter(a.participant for a in store.assignments())
    for p in store.participants():
        print(f"{p.name}\t{load.get(p.name, 0)} task(s)")
    print(
        f"wac: {len(new)} new assignment(s) over {len(keys)} task(s), {args.per_task} per task",
        file=sys.stderr,
    )
    return 0


def cmd_export(args) -> int:
    from .export import export_run

    build = require_build(args.build)
    if args.slot is not None and args.slot < 1:
        raise UsageError("--slot counts from 1")
    res = export_run(build, _store(args.db), _episodes(args), Path(args.out), args.slot)
    for s in res["skipped"]:
        print(f"wac: skipped {s}", file=sys.stderr)
    print(
        f"wac: exported {len(res['exported'])} finished session(s) to {args.out} "
        f"({res['unfinished']} not finished yet); next: wac judge {args.out} && wac report {args.out}",
        file=sys.stderr,
    )
    return 0


def cmd_serve(args) -> int:
    from wac.audit.session import SessionOptions
    from wac.review.serving import serve

    from .app import HumanApp
    from .hub import SessionHub

    build = require_build(args.build)
    store = _store(args.db)
    if not store.assignments():
        print(
            f"wac: no assignments in {args.db} yet; run `wac human assign {build} --db {args.db}`",
            file=sys.stderr,
        )
    options = SessionOptions(width=args.width, height=args.height)
    if args.max_sessions < 1:
        raise UsageError("--max-sessions must be at least 1")
    hub = SessionHub(store, build, _episodes(args), options, minutes=args.minutes, max_live=args.max_sessions)
    app = HumanApp(store, hub)
    serve(app, args.host, args.port, args.allow_host, f"human auditing of {build}")
    return 0


def _parser(action: str | None) -> argparse.ArgumentParser:
    if action == "add-participant":
        p = argparse.ArgumentParser(
            prog="wac human add-participant", description="add a participant; prints their token"
        )
        p.add_argument("name")
        p.set_defaults(func=cmd_add_participant)
    elif action == "participants":
        p = argparse.ArgumentParser(prog="wac human participants", description="list the participants")
        p.set_defaults(func=cmd_participants)
    elif action == "assign":
        p = argparse.ArgumentParser(
            prog="wac human assign",
            description="give every task --per-task participants (balanced; nobody gets a task twice, nor a "
            "task whose scene and target they already audited)",
        )
        p.add_argument("build")
        p.add_argument("--per-task", type=int, default=2, help="participants per task (default 2)")
        p.add_argument("--tasks", nargs="+", metavar="ID", help="only these evaluation tasks")
        p.set_defaults(func=cmd_assign)
    elif action == "export":
        p = argparse.ArgumentParser(
            prog="wac human export",
            description="write the finished sessions as a run for `wac judge` and `wac report`",
        )
        p.add_argument("build")
        p.add_argument("-o", "--out", required=True, help="the run directory to write")
        p.add_argument(
            "--slot", type=int, help="only this participant slot, under plain task ids (one run per slot)"
        )
        p.set_defaults(func=cmd_export)
    else:
        p = argparse.ArgumentParser(
            prog="wac human",
            description="serve the human-auditor app (also: `wac human add-participant NAME`, "
            "`wac human participants`, `wac human assign BUILD`, `wac human export BUILD -o RUN`)",
        )
        p.add_argument("build")
        add_serve_options(p, 8766)
        p.add_argument(
            "--minutes", type=float, default=10.0, help="time per task (default 10, as in the paper)"
        )
        p.add_argument("--width", type=int, default=640, help="frame width (default 640, as agents get)")
        p.add_argument("--height", type=int, default=480, help="frame height (default 480)")
        p.add_argument(
            "--max-sessions",
            type=int,
            default=16,
            help="sessions kept in memory (default 16; one more is rebuilt from its calls, the oldest closed)",
        )
        p.set_defaults(func=cmd_serve)
    p.add_argument("--db", default=DEFAULT_DB, help=f"the human-auditor database (default {DEFAULT_DB})")
    p.add_argument(
        "--episodes", help="where episodes are written (default: the database path with .episodes)"
    )
    return p


def cmd_human(args) -> int:
    return run_actions("human", list(args.human_args), ACTIONS, _parser, args.human_db, args.human_help)


def register(subparsers) -> None:
    h = subparsers.add_parser(
        "human",
        help="human auditors audit tasks in the browser, as agents do (wac human --help)",
        add_help=False,
    )
    h.add_argument("-h", "--help", action="store_true", dest="human_help")
    h.add_argument("--db", dest="human_db")
    h.add_argument("human_args", nargs=argparse.REMAINDER)
    h.set_defaults(func=cmd_human)
