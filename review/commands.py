"""`wac review`: serve the review app, add reviewers, export the accepted tasks.

    wac review BUILD [--db review.sqlite] [--port 8765] [--host 127.0.0.1]
    wac review add-reviewer NAME [--db review.sqlite] [--rotate]
    wac review reviewers [--db review.sqlite]
    wac review export BUILD [--db review.sqlite] [--out FILE] [--format json|csv]
    wac review labels [--db review.sqlite] [--out FILE]

The first word after `review` picks the action; anything else is the build to serve.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wac.bundle.reader import require_build
from wac.errors import UsageError

from .serving import add_serve_options, run_actions

DEFAULT_DB = "review.sqlite"
ACTIONS = ("add-reviewer", "reviewers", "export", "labels")


def _store(db: str):
    from .store import Store

    return Store(db)


def cmd_add_reviewer(args) -> int:
    store = _store(args.db)
    token = store.rotate_token(args.name) if args.rotate else store.add_reviewer(args.name)
    print(token)
    print(
        f"wac: {'new token for' if args.rotate else 'added reviewer'} {args.name!r} in {args.db}; "
        f"the token above is shown only now: give it to {args.name} to sign in",
        file=sys.stderr,
    )
    return 0


def cmd_reviewers(args) -> int:
    for r in _store(args.db).reviewers():
        print(r.name)
    return 0


def cmd_export(args) -> int:
    from .export import write_export

    build = require_build(args.build)
    if not Path(args.db).is_file():
        raise UsageError(f"no review database at {args.db} (start one with `wac review add-reviewer`)")
    line = write_export(build, _store(args.db), args.out, args.format)
    print(f"wac: {line}" + (f" -> {args.out}" if args.out not in (None, "-") else ""), file=sys.stderr)
    return 0


def cmd_labels(args) -> int:
    from wac.audit.agreement import Labels

    if not Path(args.db).is_file():
        raise UsageError(f"no review database at {args.db} (start one with `wac review add-reviewer`)")
    labels = Labels(labels=tuple(_store(args.db).labels()))
    text = labels.model_dump_json(indent=2) + "\n"
    if args.out in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
    print(
        f"wac: {len(labels.labels)} label(s)" + (f" -> {args.out}" if args.out not in (None, "-") else ""),
        file=sys.stderr,
    )
    return 0


def cmd_serve(args) -> int:
    from .app import ReviewApp
    from .play import PlayHub
    from .serving import serve

    build = require_build(args.build)  # NoBundle (exit 2) before the database is touched
    store = _store(args.db)
    if not store.reviewers():
        print(
            f"wac: no reviewers in {args.db} yet; add one with `wac review add-reviewer NAME --db {args.db}`",
            file=sys.stderr,
        )
    cache = Path(args.cache) if args.cache else Path(args.db).with_suffix(".cache")
    hub = PlayHub(width=args.width, height=args.height)
    runs = tuple(Path(r) for r in args.run)
    app = ReviewApp(build, store, cache, hub, runs)
    serve(app, args.host, args.port, args.allow_host, f"reviewing {build}")
    return 0


def _parser(action: str | None) -> argparse.ArgumentParser:
    if action == "add-reviewer":
        p = argparse.ArgumentParser(
            prog="wac review add-reviewer", description="add a reviewer; prints their token"
        )
        p.add_argument("name")
        p.add_argument("--rotate", action="store_true", help="give an existing reviewer a new token")
        p.set_defaults(func=cmd_add_reviewer)
    elif action == "reviewers":
        p = argparse.ArgumentParser(prog="wac review reviewers", description="list the reviewers")
        p.set_defaults(func=cmd_reviewers)
    elif action == "labels":
        p = argparse.ArgumentParser(
            prog="wac review labels",
            description="write the raters' labels of episodes (for `wac report --labels`)",
        )
        p.add_argument("--out", "-o", help="file to write (default: stdout)")
        p.set_defaults(func=cmd_labels)
    elif action == "export":
        p = argparse.ArgumentParser(
            prog="wac review export", description="write the accepted task versions (JSON or CSV)"
        )
        p.add_argument("build")
        p.add_argument("--out", "-o", help="file to write (default: stdout); .csv writes CSV")
        p.add_argument("--format", choices=("json", "csv"), help="default: from --out's suffix, else json")
        p.set_defaults(func=cmd_export)
    else:
        p = argparse.ArgumentParser(
            prog="wac review",
            description="review the tasks of a build in the browser (also: "
            "`wac review add-reviewer NAME`, `wac review reviewers`, `wac review export BUILD`)",
        )
        p.add_argument("build")
        add_serve_options(p, 8765)
        p.add_argument(
            "--cache", help="rendered context and evidence (default: the database path with .cache)"
        )
        p.add_argument("--width", type=int, default=640, help="frame width of the live world (default 640)")
        p.add_argument("--height", type=int, default=480, help="frame height (default 480)")
        p.add_argument(
            "--run",
            action="append",
            default=[],
            help="a run directory whose episodes raters label at /rate (repeatable)",
        )
        p.set_defaults(func=cmd_serve)
    p.add_argument("--db", default=DEFAULT_DB, help=f"the review database (default {DEFAULT_DB})")
    return p


def cmd_review(args) -> int:
    return run_actions("review", list(args.review_args), ACTIONS, _parser, args.review_db, args.review_help)


def register(subparsers) -> None:
    r = subparsers.add_parser(
        "review",
        help="review tasks in the browser with two-reviewer acceptance (wac review --help)",
        add_help=False,
    )
    r.add_argument("-h", "--help", action="store_true", dest="review_help")
    r.add_argument("--db", dest="review_db")
    r.add_argument("review_args", nargs=argparse.REMAINDER)
    r.set_defaults(func=cmd_review)
