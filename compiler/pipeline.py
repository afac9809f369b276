"""The compiler pipeline, pass by pass.

`compile_project` reads task sources and produces task bundles:

  1. parse      source bytes -> syntax tree                 (parse.py)
  2. AST        statements -> typed declarations             (elaborate.py)
  3. resolve    imports, scenes, prefabs, materials          (resolve.py)
  4. assemble   objects placed, parts and bounds laid out    (layout.py, assemble.py)
  5. check      clean scene, bounds, start, reachability     (validate.py)
  6. anomalies  operators checked and lowered to effects     (anomalies.py)
  7. lower      bundle models: task, context, rubric, plan   (lower.py, rubric.py, plan.py)
  8. emit       bundles written atomically, index, cache     (emit.py)

Semantic passes collect every diagnostic of a task and stop before the next pass.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from shapely.geometry import Point, Polygon
from wac.compiler import nodes as N
from wac.compiler.anomalies import Lowerer
from wac.compiler.assemble import build_world, settings
from wac.compiler.diagnostics import Collector, Diagnostic, did_you_mean
from wac.compiler.emit import Output, bundle_files, compiler_digest, index_entry, read_cache
from wac.compiler.layout import Layout, Materials
from wac.compiler.lower import Lowered3, lower_task
from wac.compiler.plan import PlanError, make_plan
from wac.compiler.resolve import Loader, discover
from wac.compiler.validate import check_clean, check_start, walkable_grid
from wac.compiler.values import Evaluator


@dataclass
class Result:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    tasks: dict[str, dict[str, bytes]] = field(default_factory=dict)  # task id -> bundle files
    index: list[dict] = field(default_factory=list)
    compiled: int = 0
    reused: int = 0
    up_to_date: bool = False

    @property
    def ok(self) -> bool:
        return not self.diagnostics


def compile_task(task: N.TaskDecl, path: Path, loader: Loader, diag: Collector) -> Lowered3 | None:
    """Passes 3-7 for one task."""
    vis = loader.visible(path, diag)  # 3. resolve
    found = vis.scenes.get(task.scene)
    if found is None:
        diag.error("E301", f"unknown scene `{task.scene}`", task.scene_span,
                   did_you_mean(task.scene, vis.scenes) or "import the file that declares it: `import \"scenes/….wa\"`")
        return None
    scene_decl, _ = found
    layout = Layout(loader, vis, diag, Materials(vis.materials, diag))
    built = build_world(task, scene_decl, layout, diag)  # 4. assemble
    if built is None or diag:
        return None
    check_clean(built, diag, task.span)  # 5. check
    grid = walkable_grid(built)
    check_start(built, grid, diag, task.span)
    if diag:
        return None
    tk = settings(task.body, "task", Evaluator(Collector()))
    anomalies = task.body.anomalies  # 6. anomalies
    multi = bool(tk.get("multi_anomaly", {}).get("flag"))
    if not anomalies:
        diag.error("E530", f"task `{task.name}` has no anomaly", task.span,
                   "add one, e.g. `anomaly float sack_2 by 0.4 m`")
        return None
    if len(anomalies) > 1 and not multi:
        diag.error("E531", f"task `{task.name}` has {len(anomalies)} anomalies", anomalies[1].span,
                   "a task has exactly one anomaly; add `multi_anomaly yes` for a multi-anomaly study")
        return None
    lowerer = Lowerer(built, layout, diag)
    lowered = [lowerer.lower(a) for a in anomalies]
    if diag or any(x is None for x in lowered):
        return None
    targets = [t for low in lowered for t in low.targets if t in built.objects]
    if len(set(targets)) != len(targets):
        diag.error("E532", "two anomalies target the same object", anomalies[-1].span, "give each anomaly its own object")
        return None
    anchor = lowered[0]
    bounds = Polygon(built.exploration.bounds)
    if anchor.focus is not None:
        c = anchor.focus
        centre = Point((c.aabb_min[0] + c.aabb_max[0]) / 2, (c.aabb_min[1] + c.aabb_max[1]) / 2)
        if bounds.exterior.distance(centre) > 2.0 and not bounds.contains(centre):
            diag.error("E533", f"the target `{c.id}` is outside the exploration bounds", anomalies[0].span,
                       "widen the bounds or pick a target inside them")
            return None
    try:  # 7. lower
        plan = make_plan(task.name, anchor, built.exploration, grid)
    except PlanError as exc:
        diag.error("E534", str(exc), anomalies[0].span, exc.hint)
        return None
    if plan.actions_needed > built.exploration.budget_actions:
        diag.error("E535", f"exposing the anomaly takes {plan.actions_needed} actions, more than the budget of "
                   f"{built.exploration.budget_actions}", anomalies[0].span,
                   "start closer to the target or raise `budget`")
        return None
    meta = {
        "hint": tk.get("hint", {}).get("text"), "difficulty": tk.get("difficulty", {}).get("level"),
        "tags": tk.get("tags", {}).get("tags"), "example": tk.get("example", {}).get("flag"), "multi_anomaly": multi,
    }
    source = loader.display(path)
    try:
        source = str(path.relative_to(loader.root.resolve()))
    except ValueError:
        pass
    return lower_task(task.name, source, built, lowered, meta, layout, plan)


def _file_digest(path: Path, loader: Loader) -> str:
    data = loader.raw.get(path)
    if data is None:
        try:
            data = path.read_bytes()
        except OSError:
            return ""
    return hashlib.sha256(data).hexdigest()


def compile_project(sources: list[Path], root: Path, out: Path | None = None,
                    progress: Callable[[int], None] | None = None, total: Callable[[int], None] | None = None) -> Result:
    """Compile every task in `sources`; with `out`, write bundles there (atomically)."""
    result = Result()
    loader = Loader(root=root)
    files = discover(sources)
    cache = read_cache(out) if out is not None else {}
    digest = compiler_digest()
    new_cache: dict = {"compiler": digest, "files": {}}
    # a no-op rebuild: every file's recorded dependencies are unchanged
    if out is not None and cache and out.exists():
        entries = cache.get("files", {})
        if set(entries) == {str(f) for f in files} and all(
            all(_file_digest(Path(d), loader) == h for d, h in e["deps"].items()) for e in entries.values()
        ):
            result.up_to_date = True
            result.reused = sum(len(e["tasks"]) for e in entries.values())
            return result
    output = Output(out) if out is not None else None
    seen_tasks: dict[str, N.TaskDecl] = {}
    todo: list[tuple[Path, N.Module | None]] = [(f, loader.load(f)) for f in files]
    if total:
        total(sum(len(m.tasks) for _, m in todo if m is not None))
    try:
        for path, module in todo:
            if module is None:
                result.diagnostics.extend(loader.failed.get(path.resolve(), ()))
                continue
            entry = cache.get("files", {}).get(str(path))
            reusable = (
                output is not None and entry is not None and out is not None
                and all(_file_digest(Path(d), loader) == h for d, h in entry["deps"].items())
                and all((out / t).is_dir() for t in entry["tasks"])
            )
            diag = Collector()
            vis = loader.visible(path, diag)
            deps = {str(p): _file_digest(p, loader) for p in vis.files}
            for task in module.tasks:
                if task.name in seen_tasks:
                    diag.error("E310", f"task `{task.name}` is declared twice", task.span,
                               f"the other is at {seen_tasks[task.name].span.location}; task names are unique in a project")
                    continue
                seen_tasks[task.name] = task
                if reusable and task.name in entry["tasks"] and task.name in entry.get("index", {}):
                    output.reuse(task.name)
                    result.index.append(entry["index"][task.name])
                    result.reused += 1
                    if progress:
                        progress(1)
                    continue
                tdiag = Collector()
                lowered = compile_task(task, path, loader, tdiag)
                diag.items.extend(tdiag.items)
                if lowered is not None and not tdiag:
                    files_ = bundle_files(lowered)
                    import json

                    version = json.loads(files_["manifest.json"])["version_id"]
                    result.tasks[task.name] = files_
                    result.index.append(index_entry(lowered, version))
                    result.compiled += 1
                    if output is not None:
                        output.add(task.name, files_)
                if progress:
                    progress(1)
            result.diagnostics.extend(diag.items)
            new_cache["files"][str(path)] = {
                "deps": deps, "tasks": [t.name for t in module.tasks],
                "index": {e["id"]: e for e in result.index if e["id"] in {t.name for t in module.tasks}},
            }
        if output is not None:
            if result.diagnostics:
                output.abort()
            else:
                result.index.sort(key=lambda e: e["id"])
                output.commit(result.index, new_cache)
    except BaseException:
        if output is not None:
            output.abort()
        raise
    result.index.sort(key=lambda e: e["id"])
    return result
