"""`wac derive multi` and `wac derive closer-start`: the paper's derived task sets (§5, §6.2).

Derivation (`wac.compiler.derive`) draws and compiles task variants; `wac derive multi` keeps the
draws whose bundles pass their self-check, so its command sits in the validation layer, which
hands the check to the compiler's derivation."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wac.errors import SourceErrors, UsageError
from wac.progress import Progress


def _anchor_names(args) -> list[str] | None:
    names: list[str] = []
    if args.anchors:
        names += [a.strip() for a in args.anchors.split(",") if a.strip()]
    if args.anchors_file:
        p = Path(args.anchors_file)
        if not p.is_file():
            raise UsageError(f"no such anchors file: {p}")
        for line in p.read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                names.append(line)
    return list(dict.fromkeys(names)) or None


def cmd_multi(args) -> int:
    from wac.compiler.derive import default_anchors, derive_default, derive_multi, write_derived
    from wac.compiler.pipeline import compile_project

    sources = [Path(s) for s in args.sources]
    for s in sources:
        if not s.exists():
            raise UsageError(f"no such file or directory: {s}")
    root = Path(args.root).resolve() if args.root else Path.cwd().resolve()
    out = Path(args.output)
    if not out.resolve().is_relative_to(root):
        raise UsageError(
            f"{out} is outside the project root {root}: derived tasks import the anchors' scenes"
        )
    check = None
    if not args.no_selfcheck:
        from wac.validation.bundlecheck import files_pass

        check = files_pass
    say = None if args.quiet else (lambda m: print(m, file=sys.stderr))
    names = _anchor_names(args)
    if names is None:
        from wac.compiler.resolve import discover

        derived_dir = out.resolve()
        files = [p for p in discover(sources) if not p.is_relative_to(derived_dir)]
        result = compile_project(files, root, out=None, jobs=1)
        if not result.ok:  # errors in the sources: exit 1, with their diagnostics
            raise SourceErrors(tuple(result.diagnostics))
        groups = default_anchors(result.index, args.seed)
        envs = None if args.environments == 0 else args.environments
        with Progress(envs or len(groups), "derive", unit="environment") as bar:
            names, made = derive_default(
                groups,
                sources,
                root,
                out,
                args.seed,
                args.per_environment,
                say,
                check,
                envs,
                args.jobs,
                True,
                bar.update,
            )
        got = len(names) // max(args.per_environment, 1)
        if envs is not None and got < envs:
            print(
                f"wac: only {got} environment(s) give {args.per_environment} anchors that derive "
                f"(asked for {envs})",
                file=sys.stderr,
            )
        elif envs is None:
            short = [g[0] for g in groups if len([n for n in names if n in g]) < args.per_environment]
            if short:
                print(
                    f"wac: fewer than {args.per_environment} anchors derive in the environments of: "
                    f"{', '.join(short)}",
                    file=sys.stderr,
                )
    else:
        with Progress(len(names), "derive", unit="anchor") as bar:
            made = derive_multi(
                names, sources, root, out, args.seed, say, check, keep_each=True, done=bar.update
            )
    # `--anchors` re-derives some anchors of the set: the other anchors' files stay
    paths = write_derived(made, out, set(names) if args.anchors else None)
    print(f"wac: derived {len(paths)} task(s) from {len(names)} anchor(s) into {out} (seed {args.seed})")
    return 0


def cmd_closer_start(args) -> int:
    from wac.compiler.closer_start import write_closer_starts

    build = Path(args.build)
    path = write_closer_starts(build)
    print(f"wac: closer starts written to {path}")
    return 0


def register(subparsers) -> None:
    d = subparsers.add_parser("derive", help="derive task sets: multi-anomaly variants, closer starts")
    sub = d.add_subparsers(dest="derive_command", required=True, metavar="KIND")

    m = sub.add_parser(
        "multi",
        help="two- and three-anomaly variants of anchor tasks (the paper's §6.2), as task files",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    m.add_argument("sources", nargs="*", default=["tasks_src"], metavar="SRC", help="default tasks_src/")
    m.add_argument(
        "--anchors", help="comma-separated anchor task names (default: 3 from each of 7 environments)"
    )
    m.add_argument("--anchors-file", help="a file of anchor task names, one a line (# comments)")
    m.add_argument(
        "--per-environment", type=int, default=3, help="default anchors per environment (default 3)"
    )
    m.add_argument(
        "--environments",
        type=int,
        default=7,
        help="environments the default anchors come from, drawn by the seed (default 7, the "
        "paper's 21 anchors; 0: every environment)",
    )
    m.add_argument("--seed", type=int, default=0, help="the derivation's seed (default 0)")
    m.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=1,
        help="environments derived in parallel processes (default 1; the files are the same)",
    )
    m.add_argument("-o", "--output", default="tasks_src/multi/derived", help="where the task files go")
    m.add_argument("--root", help="project root (default: the current directory)")
    m.add_argument(
        "--no-selfcheck",
        action="store_true",
        help="keep draws that compile without self-checking them (faster; the default keeps only "
        "draws whose task passes `wac selfcheck`)",
    )
    m.add_argument("-q", "--quiet", action="store_true", help="do not list the drawn anomalies")
    m.set_defaults(func=cmd_multi)

    c = sub.add_parser(
        "closer-start",
        help="start poses at one third of the route distance to the target (the paper's §5 ablation)",
    )
    c.add_argument("build", metavar="BUILD", help="a build directory; writes BUILD/closer_start.json")
    c.set_defaults(func=cmd_closer_start)
