"""The language server's view of a buffer, from the compiler's own passes: cheap ones as you type
(parse, resolve, assemble, anomaly lowering), the whole compile of the file on save.

One `Loader` per project root lives across edits, reading unsaved buffers from its overlay; an
edited file is dropped from it before each analysis, and a file that declares scenes, prefabs or
materials drops the loader's layouts too (they are cached per scene declaration).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from wac.compiler import nodes as N
from wac.compiler.anomalies import lower_anomalies
from wac.compiler.assemble import Built, build_world
from wac.compiler.diagnostics import Collector, Diagnostic
from wac.compiler.layout import Layout, Materials, local_bounds
from wac.compiler.part_split import split_halves
from wac.compiler.pipeline import assemble_task, compile_file
from wac.compiler.resolve import Loader, Visible

PROJECT_MARKER = "wac.toml"  # as `wac build` infers the root (wac.cli.infer_root)


def project_root(path: Path, folders: Sequence[Path] = (), cwd: Path | None = None) -> Path:
    """The nearest directory above `path` with a `wac.toml`; else the innermost workspace folder
    holding it; else the server's working directory if it holds it (as `wac build` infers it); else
    its own directory (a file outside any project still gets diagnostics)."""
    for d in path.parents:
        if (d / PROJECT_MARKER).is_file():
            return d
    inside = [f for f in (*folders, *([cwd] if cwd else [])) if path.is_relative_to(f)]
    return max(inside, key=lambda f: len(f.parts)) if inside else path.parent


def stdlib_file(path: Path) -> Path:
    """The real file of a standard-library source (`<stdlib>/prefabs.wa`), else `path`."""
    if path.parts and path.parts[0] == "<stdlib>":
        return Path(str(resources.files("wac.compiler").joinpath("stdlib", path.name)))
    return path


@dataclass
class Analysis:
    """What one pass over a buffer found."""

    path: Path
    loader: Loader
    module: N.Module | None = None
    visible: Visible | None = None
    worlds: dict[str, Built] = field(default_factory=dict)  # task (or scene) name -> its world
    diagnostics: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    full: bool = False


class Projects:
    """The loaders of the open projects and the buffers the editor holds unsaved."""

    def __init__(self, folders: Sequence[Path] = ()) -> None:
        self.folders = [f.resolve() for f in folders]
        self.loaders: dict[Path, Loader] = {}
        self.overlay: dict[Path, bytes] = {}  # shared by every loader

    def loader(self, path: Path) -> Loader:
        root = project_root(path, self.folders, Path.cwd().resolve())
        if root not in self.loaders:
            self.loaders[root] = Loader(root=root, cwd=root, overlay=self.overlay)
        return self.loaders[root]

    def update(self, path: Path, text: str | None) -> None:
        """A buffer's new text (None: closed, the file on disk counts again)."""
        path = path.resolve()
        if text is None:
            self.overlay.pop(path, None)
        else:
            self.overlay[path] = text.encode("utf-8")
        self._drop(path)

    def _drop(self, path: Path) -> Loader:
        """The loader of `path`, without `path` in it: read again at the next analysis."""
        loader = self.loader(path)
        previous = loader.modules.get(path)
        if previous is not None and (previous.scenes or previous.prefabs or previous.materials):
            # layouts are cached by the identity of scene declarations: a new loader, never a stale hit
            loader = self.loaders[loader.root] = Loader(
                root=loader.root, cwd=loader.root, overlay=self.overlay
            )
        else:
            loader.forget(path)
        return loader

    def analyse(self, path: Path, full: bool = False) -> Analysis:
        """Diagnostics and worlds of one file: the cheap passes, or with `full` the whole compile."""
        path = path.resolve()
        loader = self._drop(path)
        out = Analysis(path, loader, full=full)
        if full:
            result = compile_file(path, loader)
            out.diagnostics, out.warnings = list(result.diagnostics), list(result.warnings)
        cheap = _cheap(path, loader, out)  # the module as the compile loaded it; worlds from the layouts
        if not full:
            out.diagnostics, out.warnings = cheap.items, cheap.warnings
        return out


def _cheap(path: Path, loader: Loader, out: Analysis) -> Collector:
    """Passes 1-4 and 6 (anomaly lowering) for every task of a file; a scene file's scenes are
    assembled alone (as `wac lint` does)."""
    diag = Collector()
    out.module = loader.load(path)
    if out.module is None:
        diag.items.extend(loader.failed.get(path, ()))
        return diag
    out.visible = loader.visible(path, diag)
    for task in out.module.tasks:
        tdiag = Collector()
        assembled = assemble_task(task, path, loader, tdiag)
        if assembled is not None:
            _, layout, built = assembled
            if task.body.anomalies:
                built = split_halves(built, task.body.anomalies, tdiag)
            out.worlds[task.name] = built
            if task.body.anomalies:
                if not tdiag:
                    lower_anomalies(task.body.anomalies, built, layout, tdiag)
        diag.items.extend(tdiag.items)
        diag.warnings.extend(tdiag.warnings)
    for scene in out.module.scenes:
        sdiag = Collector()
        layout = Layout(loader, out.visible, sdiag, Materials(out.visible.materials, sdiag))
        empty = N.TaskDecl(f"<scene {scene.name}>", scene.name, N.Body((), ()), scene.span, scene.span)
        built = build_world(empty, scene, layout, sdiag)
        if built is not None:
            out.worlds.setdefault(scene.name, built)
        diag.items.extend(sdiag.items)
        diag.warnings.extend(sdiag.warnings)
    diag.items[:] = list(dict.fromkeys(diag.items))
    diag.warnings[:] = list(dict.fromkeys(diag.warnings))
    return diag


def prefab_extent(analysis: Analysis, name: str) -> tuple[float, float, float] | None:
    """A prefab's (x, y, z) extent in metres with its default parameters, built by the layout pass
    (None when it does not build)."""
    vis = analysis.visible
    if vis is None or name not in vis.prefabs:
        return None
    diag = Collector()
    pf = vis.prefabs[name]
    thing = N.Thing(name, name, (), pf.span, pf.span, pf.span)
    built = Layout(analysis.loader, vis, diag, Materials(vis.materials, diag)).build(thing, analysis.path)
    if built is None or diag:
        return None
    lo, hi = local_bounds(built.parts)
    return tuple(round(float(b - a), 2) for a, b in zip(lo, hi, strict=True))
