"""`wac lint`: the world-alone detectors as a linter for scene authors.

Every scene of the given files is built as the clean world of a task would be (no task, no anomaly)
and every detector runs on it; each finding is reported at the object's declaration with its
category and evidence.  A scene is ready for tasks when `wac lint` finds nothing: an auditor could
otherwise report a defect the scene already holds and be marked wrong.  `benign` oddities are listed
as excused (unless they are defects of physics, which nothing excuses).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wac.compiler import nodes as N
from wac.compiler.assemble import build_world
from wac.compiler.diagnostics import Collector, Diagnostic
from wac.compiler.layout import Layout, Materials
from wac.compiler.resolve import Loader, discover
from wac.compiler.validate import check_clean
from wac.compiler.world_alone import CODES, clean_findings
from wac.detectors import Finding
from wac.taxonomy.registry import Category, registry


@dataclass(frozen=True)
class Lint:
    """One finding of the linter: where it is declared and what shows."""

    scene: str
    file: str
    line: int
    column: int
    category: str
    objects: tuple[str, ...]
    evidence: str
    physical: bool
    excused: str | None = None  # the `benign` reason, when one excuses it

    def as_dict(self) -> dict:
        return {
            "scene": self.scene,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "category": self.category,
            "objects": list(self.objects),
            "evidence": self.evidence,
            "physical": self.physical,
            "excused": self.excused,
        }


@dataclass(frozen=True)
class LintResult:
    scenes: tuple[str, ...]
    findings: tuple[Lint, ...]
    diagnostics: tuple[Diagnostic, ...]  # errors that stopped a scene from being built

    @property
    def anomalies(self) -> tuple[Lint, ...]:
        return tuple(f for f in self.findings if f.excused is None)


def _empty_task(scene: N.SceneDecl) -> N.TaskDecl:
    return N.TaskDecl("lint", scene.name, N.Body((), ()), scene.span, scene.span)


def lint_paths(paths: list[Path], root: Path, cwd: Path | None = None, progress=None) -> LintResult:
    """Lint every scene declared in the `.wa` files under `paths`.  `progress` (a `wac.progress.
    Progress`), if given, hears the number of files and each file as it is done."""
    loader = Loader(root=root, cwd=cwd or Path.cwd())
    diag = Collector()
    scenes, found = [], []
    files = discover(paths)
    if progress:
        progress.set_total(len(files))
    for path in files:
        _lint_file(path, loader, diag, scenes, found)
        if progress:
            progress.update(True)
    return LintResult(tuple(scenes), tuple(found), tuple(dict.fromkeys(diag.items)))


def _lint_file(path: Path, loader: Loader, diag: Collector, scenes: list, found: list) -> None:
    """Lint the scenes of one file, adding to `scenes`, `found` and `diag`."""
    module = loader.load(path)
    if module is None:
        diag.items.extend(loader.failed.get(path, ()))
        return
    vis = loader.visible(path, diag)
    for scene in module.scenes:
        sdiag = Collector()
        layout = Layout(loader, vis, sdiag, Materials(vis.materials, sdiag))
        built = build_world(_empty_task(scene), scene, layout, sdiag)
        if built is not None:
            check_clean(built, sdiag, scene.span, loader.memo)
        if built is None or sdiag:
            diag.items.extend(sdiag.items)
            continue
        scenes.append(scene.name)
        benign = {b.object: b.reason for b in built.scene.benign}
        for f in clean_findings(built, loader.memo):
            found.append(_lint(scene.name, built, f, benign, loader, scene.span))


def _lint(scene: str, built, f: Finding, benign: dict, loader: Loader, scene_span) -> Lint:
    thing = next((built.things[o] for o in f.objects if o in built.things), None)
    span = thing.span if thing is not None else scene_span  # a scene-wide finding: the daylight
    excused = next((benign[o] or "benign" for o in f.objects if o in benign), None)
    return Lint(
        scene,
        loader.display(span.source.path) if span else "",
        span.line if span else 0,
        span.column if span else 0,
        f.category.value,
        f.objects,
        f.evidence,
        f.physical,
        None if f.physical else excused,
    )


def render(f: Lint) -> str:
    """gcc-style: `file:line:col: error[E504]: … (category)`."""
    code = CODES.get(Category(f.category), "E504")
    name = registry().category(f.category).name.lower()
    where = f"{f.file}:{f.line}:{f.column}: " if f.file else ""
    if f.excused is not None:
        return f"{where}note: {f.evidence} ({name}); excused by `benign` ({f.excused})"
    return f"{where}error[{code}]: {f.evidence} ({name})"
