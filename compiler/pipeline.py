"""The compiler pipeline, pass by pass.

`compile_project` reads task sources and produces task bundles; `compile_task` runs passes 3-7c
for one task, in this order:

  1. parse      source bytes -> syntax tree                 (parse.py)
  2. AST        statements -> typed declarations             (elaborate.py)
  3. resolve    imports, scenes, prefabs, materials          (resolve.py)
  4. assemble   generators expanded (rows, grids, rings and rooms, then scatters), objects
                placed, parts and bounds laid out            (generate.py, placement.py, rooms.py,
                                                              layout.py, assemble.py)
  5. check      clean scene and clean world (no detector finds an anomaly), walkable grid,
                start                                        (validate.py, world_alone.py)
  6. anomalies  one anomaly (E530, E531 unless multi)        (pipeline.py)
  6a. halves    `part upper_half`: the surface cut in both worlds   (part_split.py)
  6. lowering   operators checked and lowered to effects     (anomalies.py, operators/)
  6b. honesty   no anomaly on a benign object, target names (E545), no second defect in the
                perturbed world, no invisible symmetric change (E538)
                                                             (honesty.py, perturbed.py, symmetry.py)
  6c. alone     each anomaly evident in its own world, nothing else there  (world_alone.py)
  6d. targets   distinct targets (E532), the anchor within the bounds (E533)   (pipeline.py)
  7. plan       the self-check plans, within the budget (E534, E535)   (plan.py)
  7a. lower     bundle models: task, context, rubric         (lower.py, rubric.py)
  7b. give-away nothing the auditor reads names target and defect   (giveaway.py, via honesty.py)
  7c. start view  W542/W543: the start does not cover a target, nor stand near one (start_view.py)
  8. emit       bundles written atomically, index, cache     (emit.py)

Semantic passes collect every diagnostic of a task and stop before the next pass.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from shapely.geometry import Point, Polygon

from wac.bundle import reader as R
from wac.compiler import nodes as N
from wac.compiler.anomalies import lower_anomalies
from wac.compiler.assemble import Built, build_world
from wac.compiler.diagnostics import Collector, Diagnostic, cached, did_you_mean, replayed
from wac.compiler.emit import Output, bundle_files, compiler_digest, index_entry, read_cache, write_bundle
from wac.compiler.honesty import check_benign, check_giveaway, check_target_names
from wac.compiler.layout import Layout, Materials
from wac.compiler.lower import Lowered3, lower_task
from wac.compiler.outdir import bundle_intact, intact, locked
from wac.compiler.part_split import split_halves
from wac.compiler.perturbed import check_perturbed
from wac.compiler.plan import PlanError, make_plan, over_budget
from wac.compiler.resolve import Loader, discover
from wac.compiler.seal import add_mapping, seal
from wac.compiler.start_view import check_start_view
from wac.compiler.symmetry import check_visible_change
from wac.compiler.validate import check_clean, check_start, walkable_grid
from wac.compiler.world_alone import check_benign_category, check_clean_world, check_evident
from wac.suggest import close_matches


@dataclass
class Result:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    # task id -> bundle files (a parallel build's workers write the bundles straight into the
    # staging directory: their files are read from the built bundle when asked for)
    tasks: dict[str, Mapping[str, bytes]] = field(default_factory=dict)
    index: list[dict] = field(default_factory=list)
    compiled: int = 0
    reused: int = 0
    up_to_date: bool = False

    @property
    def ok(self) -> bool:
        return not self.diagnostics


def _scene_hint(scene: str, path: Path, loader: Loader, vis) -> str:
    """E301's hint: the file under the root that declares the scene (or the closest name), with the
    import line written relative to the task's own folder; else a close name the file already sees."""
    declared = loader.scene_files()
    name = scene if scene in declared else None
    visible_hint = did_you_mean(scene, vis.scenes)
    if name is None and visible_hint is None:
        name = next(iter(close_matches(scene, declared)), None)
    if name is None:
        return visible_hint or (
            f"no file under the project root {loader.shown_root()} declares a scene `{scene}`: declare it, "
            f'or import the file that does (`import "….wa"`, a path relative to {loader.display(path.parent)}/)'
        )
    where = declared[name][0]
    line = f'import "{Path(os.path.relpath(where, path.resolve().parent)).as_posix()}"'
    meant = f"did you mean `{name}`? " if name != scene else ""
    return (
        f"{meant}scene `{name}` is declared in {loader.display(where)}: add `{line}` at the top of this file"
    )


def assemble_task(
    task: N.TaskDecl, path: Path, loader: Loader, diag: Collector
) -> tuple[N.SceneDecl, Layout, Built] | None:
    """Passes 3-4 for one task: its scene resolved and its world built (None after an error)."""
    vis = loader.visible(path, diag)  # 3. resolve
    found = vis.scenes.get(task.scene)
    if found is None and vis.broken_imports:
        return None  # the failed import is reported; an unknown scene would only repeat it
    if found is None:
        diag.error(
            "E301",
            f"unknown scene `{task.scene}`",
            task.scene_span,
            _scene_hint(task.scene, path, loader, vis),
        )
        return None
    scene_decl, _ = found
    layout = Layout(loader, vis, diag, Materials(vis.materials, diag))
    built = build_world(task, scene_decl, layout, diag)  # 4. assemble
    if built is None or diag:
        return None
    return scene_decl, layout, built


def compile_task(task: N.TaskDecl, path: Path, loader: Loader, diag: Collector) -> Lowered3 | None:
    """Passes 3-7c for one task (the module docstring lists them in this order)."""
    assembled = assemble_task(task, path, loader, diag)  # 3. resolve, 4. assemble
    if assembled is None:
        return None
    scene_decl, layout, built = assembled
    check_clean(built, diag, task.span, loader.memo)  # 5. check
    check_clean_world(built, diag, task.span, loader.memo)  # 5. the clean world holds no anomaly
    grid = walkable_grid(built, loader.memo)
    check_start(built, grid, diag, task.span, loader.memo)
    if diag:
        return None
    tk = built.task_settings or {}
    anomalies = task.body.anomalies  # 6. one anomaly
    multi = bool(tk.get("multi_anomaly", {}).get("flag"))
    if not anomalies:
        diag.error(
            "E530",
            f"task `{task.name}` has no anomaly",
            task.span,
            "add one, e.g. `anomaly float sack_2 by 0.4 m`",
        )
        return None
    if len(anomalies) > 1 and not multi:
        diag.error(
            "E531",
            f"task `{task.name}` has {len(anomalies)} anomalies",
            anomalies[1].span,
            "a task has exactly one anomaly; add `multi_anomaly yes` for a multi-anomaly study",
        )
        return None
    built = split_halves(built, anomalies, diag)  # 6a. `part upper_half`: cut the surface in both worlds
    if diag:
        return None
    lowered = lower_anomalies(anomalies, built, layout, diag)  # 6. lowering
    if diag or any(x is None for x in lowered):
        return None
    layout.materials.derive(m for low in lowered for m in low.materials)  # the tints the effects name
    check_benign(built, anomalies, lowered, diag)  # 6b. honesty
    check_target_names(scene_decl, anomalies, lowered, built, diag)  # E545
    check_perturbed(built, lowered, lambda low: low.span, diag)
    check_visible_change(built, lowered, layout.materials.used, diag)  # E538
    if diag:
        return None
    check_benign_category(built, lowered, diag, loader.memo)  # 6c. evident in its own world, alone
    check_evident(built, lowered, layout.materials.used, grid, lambda low: low.span, diag, loader.memo)
    if diag:
        return None
    targets = [t for low in lowered for t in low.targets if t in built.objects]  # 6d. targets
    if len(set(targets)) != len(targets):
        diag.error(
            "E532",
            "two anomalies target the same object",
            anomalies[-1].span,
            "give each anomaly its own object",
        )
        return None
    anchor = lowered[0]
    bounds = Polygon(built.exploration.bounds)
    if anchor.focus is not None:
        c = anchor.focus
        centre = Point((c.aabb_min[0] + c.aabb_max[0]) / 2, (c.aabb_min[1] + c.aabb_max[1]) / 2)
        if bounds.exterior.distance(centre) > 2.0 and not bounds.contains(centre):
            diag.error(
                "E533",
                f"the target `{c.id}` is outside the exploration bounds",
                anomalies[0].span,
                "widen the bounds or pick a target inside them",
            )
            return None
    try:  # 7. plan
        dynamic = tuple(
            (o.aabb_min[0], o.aabb_min[1], o.aabb_max[0], o.aabb_max[1])
            for o in built.objects.values()
            if o.dynamic and o.solid
        )
        plan = make_plan(task.name, anchor, built.exploration, grid, loader.memo, keep_clear=dynamic)
    except PlanError as exc:
        diag.error("E534", str(exc), anomalies[0].span, exc.hint)
        return None
    if plan.actions_needed > built.exploration.budget_actions:
        message, hint = over_budget(plan, built.exploration.budget_actions)
        diag.error("E535", message, anomalies[0].span, hint)
        return None
    others = []  # a multi-anomaly task self-checks every anomaly, each with its own plan
    for i, (low, a) in enumerate(zip(lowered[1:], anomalies[1:], strict=True), start=1):
        try:
            other = make_plan(task.name, low, built.exploration, grid, loader.memo)
        except PlanError as exc:
            diag.error("E534", str(exc), a.span, exc.hint)
            return None
        others.append(other.model_copy(update={"anomaly": i}))
    if others:
        plan = plan.model_copy(update={"others": tuple(others)})
    meta = {
        "hint": tk.get("hint", {}).get("text"),
        "difficulty": tk.get("difficulty", {}).get("level"),
        "tags": tk.get("tags", {}).get("tags"),
        "example": tk.get("example", {}).get("flag"),
        "multi_anomaly": multi,
    }
    source = loader.display(path)
    try:
        source = str(path.relative_to(loader.root.resolve()))
    except ValueError:
        pass
    out = lower_task(task.name, source, built, lowered, meta, layout, plan)  # 7a. lower
    # 7b. the give-away scan of what the auditor reads
    check_giveaway(task, scene_decl, built, lowered, out.context, layout.materials.used, diag)
    check_start_view(task, built, out, lowered, grid, diag, loader.memo)  # 7c. W542, W543
    return None if diag else out


def _file_digest(path: Path, loader: Loader | None = None) -> str:
    data = loader.raw.get(path) if loader else None
    if data is None:
        try:
            data = path.read_bytes()
        except OSError:
            return ""
    return hashlib.sha256(data).hexdigest()


STAGED = "staged"  # FileResult.tasks: a bundle a worker wrote into the staging directory


@dataclass
class FileResult:
    """Passes 1-7 for every task of one file."""

    path: Path
    # name, location, files (None: not compiled; STAGED: written by a worker), index entry
    tasks: list[tuple[str, str, dict[str, bytes] | str | None, dict | None]]
    diagnostics: list[Diagnostic]
    deps: dict[str, str]
    warnings: list[Diagnostic] = field(default_factory=list)


def compile_file(path: Path, loader: Loader, sealed: bool = False) -> FileResult:
    module = loader.load(path)  # 1. parse, 2. AST
    if module is None:
        return FileResult(
            path, [], list(loader.failed.get(path.resolve(), ())), {str(path): _file_digest(path)}
        )
    diag = Collector()
    vis = loader.visible(path, diag)
    deps = {str(p): _file_digest(p, loader) for p in vis.files}
    tasks = []
    for task in module.tasks:
        tdiag = Collector()
        lowered = compile_task(task, path, loader, tdiag)
        diag.items.extend(tdiag.items)
        diag.warnings.extend(tdiag.warnings)
        if lowered is None or tdiag:
            tasks.append((task.name, task.span.location, None, None))
            continue
        if sealed:  # opaque ids (seal.py)
            lowered, original = seal(lowered)
            files = add_mapping(
                bundle_files(lowered, loader.memo), lowered.task.id, original, lowered.task.source
            )
        else:
            files = bundle_files(lowered, loader.memo)
        version = json.loads(files[R.MANIFEST])["version_id"]
        tasks.append((task.name, task.span.location, files, index_entry(lowered, version)))
    # duplicate diagnostics (an import error seen by several tasks) are reported once
    unique = list(dict.fromkeys(diag.items))
    return FileResult(path, tasks, unique, deps, list(dict.fromkeys(diag.warnings)))


def _warm_up() -> None:
    from wac.compiler.emit import _validators
    from wac.compiler.parse import _parser
    from wac.compiler.resolve import load_stdlib
    from wac.taxonomy.registry import registry

    _parser(), load_stdlib(), registry(), _validators()


_WORKER_LOADER: dict[tuple[Path, Path], Loader] = {}


def _compile_chunk(
    root: Path, cwd: Path, paths: list[Path], sealed: bool = False, stage: Path | None = None
) -> list[FileResult]:
    """Passes 1-7 for a run of files in a build's worker process; with `stage`, the bundles are
    written there (the build's staging directory) and only their index entries come back.

    A worker serves one build (the pool is forked per build), so it keeps one loader for all its
    chunks: each scene is parsed and laid out once per worker, as in a one-process build."""
    loader = _WORKER_LOADER.setdefault((root, cwd), Loader(root=root, cwd=cwd))
    results = [compile_file(p, loader, sealed) for p in paths]
    if stage is not None:
        for fr in results:
            for i, (name, location, files, entry) in enumerate(fr.tasks):
                if files is not None:
                    write_bundle(stage / entry["id"], files)
                    fr.tasks[i] = (name, location, STAGED, entry)
    return results


class BuiltBundle(Mapping):
    """A bundle's files as `Result.tasks` gives them, read from its directory in the build."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _names(self) -> list[str]:
        return sorted(
            str(f.relative_to(self.directory)).replace("\\", "/")
            for f in self.directory.rglob("*")
            if f.is_file()
        )

    def __getitem__(self, rel: str) -> bytes:
        try:
            return (self.directory / rel).read_bytes()
        except OSError:
            raise KeyError(rel) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


def _reusable(entry: dict | None, out: Path | None, strict: bool = False) -> bool:
    return (
        entry is not None
        and out is not None
        and not (strict and entry.get("warnings"))
        and all(_file_digest(Path(d)) == h for d, h in entry["deps"].items())
        and set(entry["tasks"]) == set(entry.get("index", {}))
        # a sealed build's bundle directory is its opaque id (seal.py), not the task's name
        and all(bundle_intact(out / e.get("id", t), e["version_id"]) for t, e in entry["index"].items())
    )


def compile_project(
    sources: list[Path],
    root: Path,
    out: Path | None = None,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
    total: Callable[[int], None] | None = None,
    strict: bool = False,
    sealed: bool = False,
) -> Result:
    """Compile every task in `sources`; with `out`, write bundles there (atomically).

    Builds into one `out` take turns (a lock), and a commit a killed build left half done is
    finished first (`outdir.py`).

    Unchanged files (same bytes for the file and everything it imports, same compiler)
    reuse their bundles from the previous build; `jobs` > 1 compiles files in parallel;
    `sealed` gives evaluation tasks opaque ids (seal.py).
    """
    if out is None:
        return _compile_project(sources, root, None, jobs, progress, total, strict, sealed)
    with locked(out):
        return _compile_project(sources, root, out, jobs, progress, total, strict, sealed)


def _compile_project(sources, root, out, jobs, progress, total, strict, sealed) -> Result:
    result = Result()
    files = discover(sources)
    cache = read_cache(out) if out is not None and out.exists() else {}
    if cache.get("sealed", False) != sealed:  # a sealed build reuses only sealed bundles
        cache = {}
    entries = cache.get("files", {})
    if (
        out is not None
        and entries
        and set(entries) == {str(f) for f in files}
        and all(_reusable(e, out, strict) for e in entries.values())
        and intact(out, {i["id"]: i for e in entries.values() for i in e["index"].values()})
    ):
        result.up_to_date = True
        result.reused = sum(len(e["tasks"]) for e in entries.values())
        for f in files:  # shown again: the files still have them
            result.warnings.extend(replayed(w) for w in entries[str(f)]["warnings"])
        result.index = sorted(
            (i for e in entries.values() for i in e["index"].values()), key=lambda e: e["id"]
        )
        return result
    reuse = [f for f in files if out is not None and _reusable(entries.get(str(f)), out, strict)]
    todo = [f for f in files if f not in set(reuse)]
    if total:
        total(len(files))
    results: dict[Path, FileResult] = {}
    cwd = Path.cwd()
    output = Output(out) if out is not None else None
    try:
        _compile_files(results, todo, root, cwd, jobs, progress, sealed, output)
        _emit(result, files, results, entries, strict, sealed, output, progress)
    except BaseException:
        if output is not None:
            output.abort()
        raise
    result.index.sort(key=lambda e: e["id"])
    return result


_IMPORT = re.compile(r'^[ \t]*import[ \t]+"([^"\n]+)"', re.MULTILINE)


def _chunks(todo: list[Path], jobs: int) -> list[list[Path]]:
    """The files to compile, in chunks for `jobs` workers, largest first.

    A worker parses, lays out and grids each scene it meets once (one loader per worker), so the
    files that import the same files (the tasks of one scene) go together; a group larger than
    a share of the work is split, so that one big scene still keeps every worker busy."""
    groups: dict[tuple[str, ...], list[Path]] = {}
    for f in sorted(todo):
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""  # the compile pass reports it
        key = tuple(sorted(os.path.normpath(f.parent / m) for m in _IMPORT.findall(text))) or (str(f),)
        groups.setdefault(key, []).append(f)
    cap = max(1, -(-len(todo) // (2 * jobs)))
    chunks = [g[i : i + cap] for g in groups.values() for i in range(0, len(g), cap)]
    return sorted(chunks, key=len, reverse=True)  # stable: equal sizes keep the files' order


def _compile_files(results, todo, root, cwd, jobs, progress, sealed, output) -> None:
    """Passes 1-7 for the files to (re)build, in `jobs` forked processes when there are enough."""
    if jobs > 1 and len(todo) >= 2 * jobs:
        from wac.backends import as_completed, local_pool

        _warm_up()  # forked workers inherit the parsed standard library, grammar and schemas
        chunks = _chunks(todo, jobs)
        done: list[list[FileResult]] = [[] for _ in chunks]
        with local_pool(jobs, "fork") as pool:
            # the workers write their bundles into the staging directory themselves (in parallel,
            # and the parent does not receive every bundle's bytes); as_completed wakes the waiting
            # thread, so a Ctrl-C stops the build at once (local_pool then drops the queued chunks
            # and kills the running ones)
            stage = output.tmp if output is not None else None
            futs = {pool.submit(_compile_chunk, root, cwd, c, sealed, stage): i for i, c in enumerate(chunks)}
            for fut in as_completed(futs):
                done[futs[fut]] = fut.result()
                if progress:
                    progress(len(done[futs[fut]]))
        for chunk_result in done:  # in the files' order, whichever chunk finished first
            for fr in chunk_result:
                results[fr.path] = fr
    else:
        loader = Loader(root=root, cwd=cwd)
        for f in todo:
            results[f] = compile_file(f, loader, sealed)
            if progress:
                progress(1)


def _emit(result, files, results, entries, strict, sealed, output, progress) -> None:
    """8. emit: diagnostics, index and bundles in the files' order; commit when all is well."""
    new_cache: dict = {"compiler": compiler_digest(), "files": {}, **({"sealed": True} if sealed else {})}
    seen: dict[str, str] = {}
    for f in files:
        if f in results:
            fr = results[f]
            result.diagnostics.extend(fr.diagnostics)
            if strict:
                result.diagnostics.extend(replace(w, severity="error") for w in fr.warnings)
            else:
                result.warnings.extend(fr.warnings)
            index = {}
            for name, location, bundle, entry in fr.tasks:
                if name in seen:
                    result.diagnostics.append(
                        Diagnostic(
                            "E310",
                            f"task `{name}` is declared twice (here and at {seen[name]})",
                            None,
                            "task names are unique in a project; rename one",
                        )
                    )
                    continue
                seen[name] = location
                if bundle is None:
                    continue
                result.index.append(entry)
                result.compiled += 1
                index[name] = entry
                if bundle == STAGED:  # a worker wrote it; read back from the build if asked for
                    output.staged(entry["id"])
                    result.tasks[name] = BuiltBundle(output.out / entry["id"])
                else:
                    result.tasks[name] = bundle
                    if output is not None:
                        output.add(entry["id"], bundle)
            new_cache["files"][str(f)] = {
                "deps": fr.deps,
                "tasks": [t[0] for t in fr.tasks],
                "index": index,
                "warnings": [cached(w) for w in fr.warnings],
            }
        else:
            e = entries[str(f)]
            for name in e["tasks"]:
                if name in seen:
                    result.diagnostics.append(
                        Diagnostic(
                            "E310",
                            f"task `{name}` is declared twice ({f} and {seen[name]})",
                            None,
                            "task names are unique in a project; rename one",
                        )
                    )
                    continue
                seen[name] = str(f)
                output.reuse(e["index"][name]["id"])
                result.index.append(e["index"][name])
                result.reused += 1
            result.warnings.extend(replayed(w) for w in e["warnings"])  # the file still has them
            new_cache["files"][str(f)] = e
            if progress:
                progress(1)
    if output is not None:
        if result.diagnostics:
            output.abort()
        else:
            output.commit(sorted(result.index, key=lambda e: e["id"]), new_cache)
