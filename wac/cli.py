"""The `wac` command line: build, check, fmt, taxonomy, schema (and the runtime's commands).

Exit codes: 0 success, 1 errors in the sources, 2 usage errors, 3 an internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from wac import __version__
from wac.errors import SourceErrors, UsageError
from wac.exits import run_command


def _sources(args) -> list[Path]:
    paths = [Path(s) for s in args.sources]
    for p in paths:
        if not p.exists():
            raise UsageError(f"no such file or directory: {p}")
    return paths


PROJECT_MARKER = "wac.toml"


def infer_root(sources: list[Path], cwd: Path) -> Path:
    """The project root when `--root` is not given.

    The current directory when it holds every source (the usual case); else the nearest
    directory above the sources that holds a `wac.toml`; else the common parent of the given
    paths (the directory that holds them), so `wac build /elsewhere/tasks` can read
    `/elsewhere/scenes`.
    """
    paths = [p.resolve() for p in sources]
    cwd = cwd.resolve()
    if all(p.is_relative_to(cwd) for p in paths):
        return cwd
    common = Path(os.path.commonpath([str(p if p.is_dir() else p.parent) for p in paths]))
    for d in (common, *common.parents):
        if (d / PROJECT_MARKER).is_file():
            return d
    return Path(os.path.commonpath([str(p.parent) for p in paths]))


def _root(args) -> Path:
    if getattr(args, "root", None):
        root = Path(args.root)
    else:
        root = infer_root(_sources(args), Path.cwd())
    if not root.is_dir():
        raise UsageError(f"project root is not a directory: {root}")
    return root.resolve()


def _jobs(args) -> int:
    jobs = getattr(args, "jobs", None) or (os.cpu_count() or 1)
    if jobs < 1:
        raise UsageError("--jobs must be at least 1")
    return jobs


def _report(result, args, started: float, wrote: str | None) -> int:
    if args.json:
        print(
            json.dumps(
                {
                    "ok": result.ok,
                    "diagnostics": [d.as_json() for d in result.diagnostics],
                    "warnings": [d.as_json() for d in result.warnings],
                    "tasks": [e["id"] for e in result.index],
                    "compiled": result.compiled,
                    "reused": result.reused,
                    "up_to_date": result.up_to_date,
                },
                indent=2,
            )
        )
    else:
        for d in result.diagnostics:
            print(d.render(), file=sys.stderr)
            print(file=sys.stderr)
        _print_warnings(result.warnings)
    n = len(result.diagnostics)
    secs = time.perf_counter() - started
    if not args.json:
        if n:
            print(
                f"wac: {n} error{'s' if n != 1 else ''}; {'nothing was written' if wrote else 'check failed'}",
                file=sys.stderr,
            )
        elif result.up_to_date:
            print(f"wac: {result.reused} task(s) up to date in {wrote} ({secs:.2f} s)", file=sys.stderr)
        else:
            done = (
                f"built {result.compiled}, reused {result.reused}" if wrote else f"checked {result.compiled}"
            )
            print(f"wac: {done} task(s){' into ' + wrote if wrote else ''} ({secs:.2f} s)", file=sys.stderr)
    return 1 if n else 0


SHOWN_WARNINGS = 5


def _print_warnings(warnings) -> None:
    for d in warnings[:SHOWN_WARNINGS]:
        print(d.render(), file=sys.stderr)
        print(file=sys.stderr)
    if len(warnings) > SHOWN_WARNINGS:
        print(
            f"wac: {len(warnings) - SHOWN_WARNINGS} more warning(s) not shown (`--json` lists all; "
            "`--strict` makes them errors)",
            file=sys.stderr,
        )


def _progress(args):
    """The build's progress: a bar on a terminal, a line every 30 s in a log (`wac.progress`);
    none with `--json`."""
    if args.json:
        return None
    from wac.progress import Progress

    return Progress(0, "build", unit="file")


def cmd_build(args) -> int:
    from wac.compiler.pipeline import compile_project

    started = time.perf_counter()
    out = Path(args.output)
    bar = _progress(args)
    try:
        result = compile_project(
            _sources(args),
            _root(args),
            out=out,
            jobs=_jobs(args),
            progress=(lambda n: bar.update(True, n)) if bar else None,
            total=bar.set_total if bar else None,
            strict=args.strict,
            sealed=args.sealed,
        )
    finally:
        if bar:
            bar.close()
    return _report(result, args, started, str(out))


def cmd_check(args) -> int:
    from wac.compiler.pipeline import compile_project

    if args.dump:
        return _dump(args)
    started = time.perf_counter()
    result = compile_project(_sources(args), _root(args), out=None, jobs=_jobs(args), strict=args.strict)
    return _report(result, args, started, None)


def cmd_lint(args) -> int:
    """`wac lint`: exit 0 when no scene holds an anomaly, 1 when one does (or a scene cannot be built)."""
    from wac.compiler.lint import lint_paths, render
    from wac.progress import Progress

    with Progress(0, "lint", unit="file") as bar:
        result = lint_paths(_sources(args), _root(args), progress=bar)
    if args.json:
        print(
            json.dumps(
                {
                    "scenes": list(result.scenes),
                    "findings": [f.as_dict() for f in result.findings],
                    "errors": [d.as_json() for d in result.diagnostics],
                },
                indent=2,
            )
        )
    else:
        for d in result.diagnostics:
            print(d.render(), file=sys.stderr)
            print(file=sys.stderr)
        for f in result.findings:
            print(render(f))
        n = len(result.anomalies)
        print(
            f"wac: {len(result.scenes)} scene(s) linted: "
            + (f"{n} anomal{'y' if n == 1 else 'ies'}" if n else "clean")
            + (f", {len(result.findings) - n} excused by `benign`" if len(result.findings) > n else ""),
            file=sys.stderr,
        )
    return 1 if result.anomalies or result.diagnostics else 0


def _dump(args) -> int:
    """`wac check --dump ast|effects|plan FILE`: what one task file lowers to, as JSON on stdout."""
    from wac.compiler.dump import dump
    from wac.compiler.resolve import Loader

    sources = _sources(args)
    if len(sources) != 1 or not sources[0].is_file():
        raise UsageError("--dump takes exactly one task file (FILE.wa)")
    text, diagnostics = dump(args.dump, sources[0], Loader(root=_root(args), cwd=Path.cwd()))
    for d in diagnostics:
        print(d.render(), file=sys.stderr)
        print(file=sys.stderr)
    if text is None:
        print(f"wac: {len(diagnostics)} error(s); nothing to dump", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


def cmd_fmt(args) -> int:
    from wac.compiler.fmt import format_source
    from wac.compiler.resolve import discover

    changed = 0
    errors = []
    cwd = Path.cwd()
    for path in discover(_sources(args)):
        data = path.read_bytes()
        shown = path.relative_to(cwd) if path.is_relative_to(cwd) else path
        try:
            new = format_source(data, str(shown))
        except SourceErrors as exc:
            errors.extend(exc.diagnostics)
            continue
        if new.encode("utf-8") != data:
            changed += 1
            if args.check:
                print(f"would reformat {shown}")
            else:
                tmp = path.with_name(f".{path.name}.fmt-tmp")
                tmp.write_text(new, encoding="utf-8")
                os.replace(tmp, path)  # a crash mid-write never leaves a truncated source
                print(f"reformatted {shown}")
    for d in errors:
        print(d.render(), file=sys.stderr)
    if errors:
        return 1
    return 1 if (args.check and changed) else 0


def cmd_taxonomy(args) -> int:
    from wac.taxonomy.registry import registry

    reg = registry()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": c.id.value,
                        "family": c.family.value,
                        "name": c.name,
                        "code": c.code,
                        "evidence": list(c.evidence),
                        "operators": [o.name for o in reg.operators_for(c.id)],
                    }
                    for c in reg.categories
                ],
                indent=2,
            )
        )
        return 0
    try:
        from wac.taxonomy.docs import format_table
    except ImportError:  # pragma: no cover - docs module ships with the taxonomy
        format_table = None
    if args.markdown:
        from wac.taxonomy.docs import render_markdown

        print(render_markdown(reg))
    elif format_table:
        print(format_table(reg))
    return 0


def cmd_schema(args) -> int:
    from wac.bundle.schemas import write_schemas

    for p in write_schemas(Path(args.output)):
        print(p)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wac", description="The world-audit compiler.")
    p.add_argument("--version", action="version", version=f"wac {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    b = sub.add_parser("build", help="compile task sources into bundles")
    b.add_argument("sources", nargs="+", metavar="SRC")
    b.add_argument("-o", "--output", default="build", metavar="OUT", help="output directory (default build/)")
    b.add_argument(
        "--root",
        help="project root: sources may only read files under it (default: the current directory if it "
        "holds the sources, else the nearest directory with a wac.toml, else the sources' parent)",
    )
    b.add_argument("--strict", action="store_true", help="treat warnings (W###) as errors")
    b.add_argument("--json", action="store_true", help="machine-readable diagnostics on stdout")
    b.add_argument("-j", "--jobs", type=int, help="parallel compile processes (default: one per CPU)")
    b.add_argument(
        "--sealed",
        action="store_true",
        help="opaque task ids and directory names; the mapping is withheld in each bundle's seal.json",
    )
    b.set_defaults(func=cmd_build)

    c = sub.add_parser("check", help="type-check task sources without writing anything")
    c.add_argument("sources", nargs="+", metavar="SRC")
    c.add_argument("--root", help="project root (default as for `build`)")
    c.add_argument("--strict", action="store_true", help="treat warnings (W###) as errors")
    c.add_argument("--json", action="store_true")
    c.add_argument("-j", "--jobs", type=int, help="parallel compile processes (default: one per CPU)")
    c.add_argument(
        "--dump",
        choices=("ast", "effects", "plan"),
        help="print what one task file lowers to, as JSON: its AST, its anomalies' effects, or its self-check plans",
    )
    c.set_defaults(func=cmd_check)

    lint = sub.add_parser(
        "lint", help="list every anomaly the clean scenes of SRC hold (the detectors on each scene alone)"
    )
    lint.add_argument("sources", nargs="+", metavar="SCENE_OR_DIR")
    lint.add_argument("--root", help="project root (default as for `build`)")
    lint.add_argument("--json", action="store_true", help="the findings as JSON on stdout")
    lint.set_defaults(func=cmd_lint)

    f = sub.add_parser("fmt", help="rewrite task sources in canonical layout")
    f.add_argument("sources", nargs="+", metavar="SRC")
    f.add_argument("--check", action="store_true", help="only report files that would change")
    f.set_defaults(func=cmd_fmt)

    t = sub.add_parser("taxonomy", help="list the 15 anomaly categories")
    t.add_argument("--json", action="store_true")
    t.add_argument("--markdown", action="store_true", help="the taxonomy reference (docs/taxonomy.md)")
    t.set_defaults(func=cmd_taxonomy)

    s = sub.add_parser("schema", help="write the bundle's JSON Schemas")
    s.add_argument("-o", "--output", default="schemas")
    s.set_defaults(func=cmd_schema)

    for module in _command_modules():
        module.register(sub)
    return p


def _command_modules() -> tuple:
    """The modules that add their own subcommands (each has `register(subparsers)`), in help order."""
    from wac.audit import hf_dataset, judge, mcp_server, report, runner, video
    from wac.human import commands as human_commands
    from wac.lsp import commands as lsp_commands
    from wac.review import commands as review_commands
    from wac.runtime import commands as runtime_commands
    from wac.validation import derive_cli, selfcheck, validate

    return (
        derive_cli,
        runtime_commands,
        selfcheck,
        validate,
        runner,
        mcp_server,
        judge,
        report,
        video,
        hf_dataset,
        review_commands,
        human_commands,
        lsp_commands,
    )


def main(argv: list[str] | None = None) -> int:
    return run_command(parser, argv)  # made inside: an error while making it is reported too


if __name__ == "__main__":
    sys.exit(main())
