"""`wac derive multi`: the paper's multi-anomaly protocol (§6.2) as ordinary task files.

For each anchor task (a shipped single-anomaly task) the derivation writes two- and
three-anomaly variants, two configurations per condition: the anchor's own task block,
marked `multi_anomaly yes`, with one or two more `anomaly` statements on distinct objects of
the same scene.  Each extra anomaly is drawn, with a random generator seeded from the seed,
the anchor and the configuration, from the operators applicable to an object (its operand is
one object, the object meets the operator's `requires`); a draw is kept only when the whole
derived task compiles (and, from the command line, passes the self-check), so every written
task builds and checks.  The anchor stays the first anomaly: the
agent context gives the anchor's hint and example and the total number of anomalies.

The same sources, anchors and seed give byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from wac.bundle.kinds import choose_demo, target_kinds
from wac.compiler import nodes as N
from wac.compiler.assemble import build_world
from wac.compiler.diagnostics import Collector, did_you_mean
from wac.compiler.layout import Layout, Materials
from wac.compiler.operators import REQUIRES, unit
from wac.compiler.resolve import Loader, discover
from wac.errors import SourceErrors, UsageError, WacError
from wac.taxonomy.registry import OperatorSpec, registry

CONDITIONS = (2, 3)  # anomalies per derived task
CONFIGS = 2  # configurations per anchor per condition
ANCHORS_PER_ENVIRONMENT = 3
ENVIRONMENTS = 7  # the paper's §6.2: three anchors from each of seven environments
MAX_TRIES = 60  # compile attempts per configuration before giving up on the anchor
MAX_CHECKED = 8  # self-checks per configuration, probes included (each a few seconds)

# a value of each parameter type the derivation fills in (required parameters only)
VALUES = {
    "length": 0.4,
    "scale": "2.5",
    "color": '"#d0101a"',
    "vec2": "(2.5, 0)",
    "angle": "35 deg",
    "mass": "0.1 kg",
    "material": "glass",
}
SKIPPED_PARAMS = {"object", "part", "prefab"}  # need a second name: not drawn


@dataclass(frozen=True, slots=True)
class Derived:
    name: str  # the derived task's name (and file stem)
    anchor: str
    count: int  # anomalies in the task, the anchor's included
    config: int
    extras: tuple[str, ...]  # the added `anomaly …` statements
    text: str  # the whole task file


@dataclass(frozen=True, slots=True)
class _Anchor:
    task: N.TaskDecl
    path: Path
    lines: list[str]


def _statement(spec: OperatorSpec, obj: str) -> str | None:
    """An `anomaly` statement of `spec` on `obj`, or None when the operator needs more than an object."""
    if spec.operand != "object":
        return None
    words = [f"anomaly {spec.name} {obj}"]
    for p in spec.params:
        if not p.required:
            continue
        if p.type in SKIPPED_PARAMS:
            return None
        if p.type == "length":
            lo, hi = p.min if p.min is not None else 0.0, p.max if p.max is not None else 10.0
            v = min(max(VALUES["length"], lo), hi)
            words.append(f"{p.name} {v:g} m")
        elif p.type == "enum" or p.choices:
            words.append(f"{p.name} {p.choices[0]}")
        elif p.type in VALUES:
            words.append(f"{p.name} {VALUES[p.type]}")
        else:
            return None
    if "static" not in spec.triggers:
        if "contact" in spec.triggers:
            words.append("when contact")
        elif "distance" in spec.triggers:
            words.append("when beyond 8 m")
        elif "temporal" in spec.triggers:
            words.append("when revisit")
        else:
            return None
    return " ".join(words)


def _applicable(spec: OperatorSpec, obj) -> bool:
    for req in spec.requires:
        if req == "nonsolid":
            if obj.solid:
                return False
        elif req in REQUIRES and not REQUIRES[req].test(obj):
            return False
    return True


def candidates(anchor: _Anchor, loader: Loader) -> list[tuple[str, str]]:
    """(object, statement) pairs applicable to the anchor's scene objects, in a fixed order."""
    diag = Collector()
    vis = loader.visible(anchor.path, diag)
    scene_decl, _ = vis.scenes[anchor.task.scene]
    layout = Layout(loader, vis, diag, Materials(vis.materials, diag))
    built = build_world(anchor.task, scene_decl, layout, diag)
    if diag:  # errors in the sources (exit 1), shown with their diagnostics
        raise SourceErrors(tuple(diag.items))
    if built is None:
        raise WacError(f"anchor `{anchor.task.name}` does not build; run `wac check` on it")
    taken = {n.text for a in anchor.task.body.anomalies for n in a.operand}
    ops = [s for s in registry().operators if s.operand == "object" and not unit(s.name).alone]
    out = []
    for oid in sorted(built.objects):
        obj = built.objects[oid]
        if oid in taken or oid in built.task_local:
            continue
        for spec in ops:
            stmt = _statement(spec, oid)
            if stmt is not None and _applicable(spec, obj):
                out.append((oid, stmt))
    return out


def _rng(seed: int, *parts) -> random.Random:
    digest = hashlib.sha256(":".join(str(p) for p in (seed, *parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _task_text(anchor: _Anchor, name: str, extras: tuple[str, ...], out_dir: Path, header: str) -> str:
    src = anchor.path.read_text(encoding="utf-8").splitlines()
    imports = []
    for line in src:
        m = re.match(r'\s*import\s+"([^"]+)"', line)
        if m:
            target = (anchor.path.parent / m.group(1)).resolve()
            rel = os.path.relpath(target, out_dir.resolve()).replace(os.sep, "/")
            imports.append(f'import "{rel}"')
    t = anchor.task.span
    block = src[t.line - 1 : t.end_line]
    first = re.sub(r"^(\s*task\s+)\w+", lambda m: m.group(1) + name, block[0], count=1)
    body = block[1:-1]
    indent = next((re.match(r"\s*", b).group(0) for b in body if b.strip()), "    ")
    if not any(re.match(r"\s*multi_anomaly\b", b) for b in body):
        body = [f"{indent}multi_anomaly yes", *body]
    closing = block[-1]
    lines = [header, *imports, "", first, *body, *(indent + e for e in extras), closing]
    return "\n".join(lines) + "\n"


def _find_anchors(names: list[str], sources: list[Path], loader: Loader) -> list[_Anchor]:
    found: dict[str, _Anchor] = {}
    seen: set[str] = set()
    for path in discover(sources):
        module = loader.load(path)
        if module is None:
            continue
        for task in module.tasks:
            seen.add(task.name)
            if task.name in names and task.name not in found:
                found[task.name] = _Anchor(task, path, [])
    missing = [n for n in names if n not in found]
    if missing:
        shown = [f"{n} ({h})" if (h := did_you_mean(n, seen, n=3)) else n for n in missing]
        raise UsageError(f"no such anchor task(s) in the sources: {', '.join(shown)}")
    for n, a in found.items():
        if len(a.task.body.anomalies) != 1:
            raise UsageError(f"anchor `{n}` must have exactly one anomaly")
    return [found[n] for n in names]


def _compiles(text: str, stem: str, out_dir: Path, loader: Loader, check=None) -> bool:
    from wac.compiler.pipeline import compile_file

    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".derive-{stem}.wa"
    tmp.write_text(text, encoding="utf-8")
    try:
        res = compile_file(tmp, loader)
    finally:
        tmp.unlink(missing_ok=True)
        loader.modules.pop(tmp.resolve(), None)
        loader.failed.pop(tmp.resolve(), None)
        loader._visible.pop(tmp.resolve(), None)
    if res.diagnostics or res.warnings or any(files is None for _, _, files, _ in res.tasks):
        return False
    if not all(same_example(files) for _, _, files, _ in res.tasks):
        return False
    return check is None or all(check(files) for _, _, files, _ in res.tasks)


@cache
def _demo_kinds(task_file: str) -> frozenset[str]:
    """The target kinds of a demonstration task (compiled from the taxonomy's examples)."""
    from importlib import resources

    from wac.compiler.pipeline import compile_file

    root = Path(str(resources.files("wac.taxonomy") / "examples"))
    res = compile_file(root / task_file, Loader(root=root))
    ((_, _, files, _),) = res.tasks
    return target_kinds(json.loads(files["task.json"]))


def _example(task: dict) -> str | None:
    """The demonstration the example library shows with `task` (wac.audit.examples.choose_demo):
    the first of its first anomaly's category sharing no target kind with the task."""
    spec = registry().category(task["anomalies"][0]["category"])
    demo = choose_demo(spec.demos or (spec.demo,), lambda d: _demo_kinds(d.task), target_kinds(task))
    return demo.id if demo is not None else None


def same_example(files: dict[str, bytes]) -> bool:
    """Whether a derived task is shown the same in-context example as its anchor alone: an extra
    anomaly on an object of the example's kind would change the example, and the change would
    hint at the extra's target."""
    task = json.loads(files["task.json"])
    return _example(task) == _example({**task, "anomalies": task["anomalies"][:1]})


@dataclass
class _Attempts:
    """The derived tasks tried for one configuration, within MAX_TRIES builds and MAX_CHECKED checks."""

    anchor: _Anchor
    loader: Loader
    out_dir: Path
    check: object
    header: str
    tries: int = 0
    checked: int = 0

    @property
    def spent(self) -> bool:
        return self.tries >= MAX_TRIES or self.checked >= MAX_CHECKED

    def builds(self, extras: tuple[tuple[str, str], ...], task: str) -> bool:
        """Whether the anchor with `extras`, named `task`, builds (and checks)."""
        self.tries += 1
        self.checked += bool(self.check)
        text = _task_text(self.anchor, task, tuple(s for _, s in extras), self.out_dir, self.header)
        return _compiles(text, task, self.out_dir, self.loader, self.check)


def _derive_anchor(
    anchor: _Anchor, loader: Loader, out_dir: Path, seed: int, check, say
) -> list[Derived] | None:
    """Both conditions and configurations of one anchor, or None when one of them finds no draw.

    Every extra anomaly is first proven with the anchor alone: the two-anomaly task with it must
    build (and check).  A three-anomaly draw combines two proven extras, so a draw is never lost to
    an extra that cannot manifest by itself (a faint shadow, a change hidden from every view); the
    verdicts are kept for the anchor's later configurations."""
    pool = candidates(anchor, loader)
    proven: dict[tuple[str, str], bool] = {}  # extra -> whether anchor + extra builds (and checks)
    seen: set[frozenset] = set()
    made: list[Derived] = []
    for count in CONDITIONS:
        for config in range(1, CONFIGS + 1):
            rng = _rng(seed, anchor.task.name, count, config)
            order = pool[:]
            rng.shuffle(order)
            name = f"{anchor.task.name}_m{count}_c{config}"
            header = (
                f"# Derived by `wac derive multi --seed {seed}` from `{anchor.task.name}`: "
                f"{count} anomalies, configuration {config}. Do not edit."
            )
            att = _Attempts(anchor, loader, out_dir, check, header)
            chosen: list[tuple[str, str]] = []
            for extra in order:
                if len(chosen) == count - 1:
                    break
                if att.spent:
                    break
                if proven.get(extra) is False or any(extra[0] == c[0] for c in chosen):
                    continue
                trial = (*chosen, extra)
                if len(trial) == count - 1 and frozenset(trial) in seen:
                    continue  # the other configuration already has this draw
                if len(trial) == 1 and count == 2:  # the draw itself proves the extra
                    proven[extra] = att.builds(trial, name)
                    if proven[extra]:
                        chosen.append(extra)
                    continue
                if extra not in proven:
                    proven[extra] = att.builds((extra,), f"{anchor.task.name}_probe")
                    if not proven[extra]:
                        continue
                if len(trial) < count - 1 or att.builds(trial, name):
                    chosen.append(extra)
            if len(chosen) != count - 1:
                if say:
                    say(f"{anchor.task.name}: no {count}-anomaly configuration {config} builds and checks")
                return None
            seen.add(frozenset(chosen))
            extras = tuple(s for _, s in chosen)
            text = _task_text(anchor, name, extras, out_dir, header)
            made.append(Derived(name, anchor.task.name, count, config, extras, text))
            if say:
                say(f"{name}: {'; '.join(extras)}")
    return made


def derive_multi(
    anchors: list[str],
    sources: list[Path],
    root: Path,
    out_dir: Path,
    seed: int,
    say=None,
    check=None,
    keep_each: bool = False,
    done=None,
) -> list[Derived]:
    """The derived tasks for `anchors` (task names in `sources`).

    A draw is kept when the derived task compiles and, with `check` (e.g. `wac.validation.bundlecheck.files_pass`),
    when `check(bundle files)` holds.  An anchor without a draw for every configuration is an error.
    Nothing is written unless `keep_each`: then each anchor's files are written as soon as it is
    done, so an interrupted run keeps the anchors it finished (`write_derived` completes the set).
    `done(True)`, if given, hears each anchor as it is done."""
    if not anchors:
        raise UsageError("no anchors given")
    loader = Loader(root=root)
    made: list[Derived] = []
    for anchor in _find_anchors(anchors, sources, loader):
        got = _derive_anchor(anchor, loader, out_dir, seed, check, say)
        if got is None:
            raise UsageError(
                f"anchor `{anchor.task.name}`: some configuration finds no extra anomaly that builds "
                f"(and self-checks) within {MAX_TRIES} draws; pick another anchor"
            )
        made += got
        if keep_each:
            _write(got, out_dir)
        if done:
            done(True)
    return made


def _derive_environment(
    group: list[str],
    sources: list[Path],
    root: Path,
    out_dir: Path,
    seed: int,
    per_env: int,
    check,
    say,
    keep_each: bool = False,
) -> tuple[list[str], list[Derived]]:
    """Up to `per_env` anchors of one environment, its candidates in order, an anchor that finds no
    draw for some configuration giving way to the next."""
    loader = Loader(root=root)
    names: list[str] = []
    tasks: list[Derived] = []
    for anchor in _find_anchors(group, sources, loader):
        if len(names) == per_env:
            break
        got = _derive_anchor(anchor, loader, out_dir, seed, check, say)
        if got is not None:
            names.append(anchor.task.name)
            tasks += got
            if keep_each:
                _write(got, out_dir)
    return names, tasks


def _say_stderr(message: str) -> None:
    import sys

    print(message, file=sys.stderr, flush=True)


def derive_default(
    groups: list[list[str]],
    sources: list[Path],
    root: Path,
    out_dir: Path,
    seed: int,
    per_env: int = ANCHORS_PER_ENVIRONMENT,
    say=None,
    check=None,
    environments: int | None = ENVIRONMENTS,
    jobs: int = 1,
    keep_each: bool = False,
    done=None,
) -> tuple[list[str], list[Derived]]:
    """`per_env` anchors from each of `environments` environments (all when None).

    The environments are taken in an order drawn from the seed; within one, its candidates in
    order, an anchor that finds no draw for some configuration giving way to the next.  An
    environment where fewer than `per_env` anchors derive is left out (when `environments` is
    given) and the next one is tried.  With `jobs` > 1 environments derive in parallel processes
    (`say`, if given, becomes a print to stderr there); the result is the same.  `keep_each` writes
    each anchor's files as soon as it is done (see `derive_multi`).  Returns the anchors used and
    the tasks.  `done(full)`, if given, hears each environment as it is taken (with `environments`,
    only the full ones: they are what the run needs)."""
    order = list(groups)
    if environments is not None:
        _rng(seed, "environments").shuffle(order)
    used: list[str] = []
    made: list[Derived] = []
    full = 0

    def take(group, names, tasks) -> bool:
        """Record one environment's result; True when enough environments are full."""
        nonlocal full
        if done and (environments is None or len(names) == per_env):
            done(len(names) == per_env)
        if len(names) == per_env:
            full += 1
        elif environments is not None:
            if say:
                say(f"{group[0]}: only {len(names)} anchor(s) derive in this environment; it is left out")
            return False
        used.extend(names)
        made.extend(tasks)
        return environments is not None and full == environments

    if jobs <= 1:
        for group in order:
            got = _derive_environment(group, sources, root, out_dir, seed, per_env, check, say, keep_each)
            if take(group, *got):
                break
        return used, made
    from wac.backends import local_pool, result, stop_pool

    speak = _say_stderr if say else None
    with local_pool(jobs, "fork") as pool:  # Ctrl-C stops the environments being derived at once

        def submit(group):
            args = (group, sources, root, out_dir, seed, per_env, check, speak, keep_each)
            return group, pool.submit(_derive_environment, *args)

        pending = iter(order)
        # (group, future) in the seed's order, at most `jobs` ahead; results are taken in that order
        inflight = [submit(g) for _, g in zip(range(jobs), pending, strict=False)]
        while inflight:
            group, fut = inflight.pop(0)
            if take(group, *result(fut)):
                if inflight:  # enough environments: the ones still deriving are not needed
                    stop_pool(pool)
                break
            nxt = next(pending, None)
            if nxt is not None:
                inflight.append(submit(nxt))
    return used, made


def default_anchors(index: list[dict], seed: int) -> list[list[str]]:
    """Per environment (a scene without one is its own), its single-anomaly evaluation tasks as
    anchor candidates, in the order the seed draws them with distinct categories first."""
    envs: dict[str, list[dict]] = {}
    for e in index:
        if e.get("anomalies", 1) == 1 and not e.get("example"):
            envs.setdefault(e.get("environment") or e["scene"], []).append(e)
    out: list[list[str]] = []
    for env in sorted(envs):
        tasks = sorted(envs[env], key=lambda e: e["id"])
        _rng(seed, "anchors", env).shuffle(tasks)
        first: list[dict] = []
        for e in tasks:  # one per category first, then the rest
            if all(p["category"] != e["category"] for p in first):
                first.append(e)
        out.append([e["id"] for e in first] + [e["id"] for e in tasks if e not in first])
    return out


def _write(made: list[Derived], out_dir: Path) -> list[Path]:
    """Write derived task files (only those that differ)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for d in made:
        p = out_dir / f"{d.name}.wa"
        if not p.is_file() or p.read_text(encoding="utf-8") != d.text:
            p.write_text(d.text, encoding="utf-8")
        written.append(p)
    return written


def write_derived(made: list[Derived], out_dir: Path, anchors: set[str] | None = None) -> list[Path]:
    """Write the derived task files (only those that differ), and remove stale derived ones: every
    other derived file, or with `anchors` (a run that re-derives some anchors of a larger set) only
    the other files derived from those anchors."""
    written = _write(made, out_dir)
    keep = {f"{d.name}.wa" for d in made}
    for p in sorted(out_dir.glob("*.wa")):
        if p.name in keep:
            continue
        head = p.read_text(encoding="utf-8").split("\n", 1)[0]
        if not head.startswith("# Derived by `wac derive multi"):
            continue
        source = re.search(r" from `([^`]+)`:", head)
        if anchors is None or (source is not None and source.group(1) in anchors):
            p.unlink()
    return written
