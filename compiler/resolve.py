"""Pass 3, resolve: load files and their imports, and find what each task can see.

Imports are resolved relative to the importing file and must stay inside the project root
(the language is hermetic).  Every file implicitly sees the standard library of materials
and prefabs (`compiler/stdlib/*.wa`).  Names are file-scoped: a task sees the scenes,
prefabs and materials of its own file and of the files it imports, transitively.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from wac.compiler import nodes as N
from wac.compiler.diagnostics import Collector, Diagnostic, did_you_mean
from wac.compiler.elaborate import elaborate
from wac.compiler.parse import decode, parse
from wac.compiler.spans import Source, Span
from wac.errors import SourceErrors

STDLIB_FILES = ("materials.wa", "prefabs.wa")
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_SCANNED = 5000  # .wa files read (and directories walked) for a hint on an unknown scene
SCENE_DECL = re.compile(r"^[ \t]*scene[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.M)


@dataclass(frozen=True, slots=True)
class Visible:
    """What one file can refer to, name -> declaration (with the module that declares it)."""

    scenes: dict[str, tuple[N.SceneDecl, N.Module]]
    prefabs: dict[str, N.PrefabDecl]
    materials: dict[str, N.MaterialDecl]
    files: tuple[Path, ...]  # the file itself and everything it imports, for the build cache
    broken_imports: bool = False  # an import failed (already reported): unknown names may be its fault


@dataclass
class Loader:
    """Loads and caches modules for one build."""

    root: Path
    cwd: Path = field(default_factory=Path.cwd)
    modules: dict[Path, N.Module] = field(default_factory=dict)
    failed: dict[Path, tuple[Diagnostic, ...]] = field(default_factory=dict)
    raw: dict[Path, bytes] = field(default_factory=dict)
    memo: dict = field(default_factory=dict)  # per-build caches of later passes (scene layouts, grids)
    # unsaved editor buffers (resolved path -> bytes), read instead of the file: the language server
    overlay: dict[Path, bytes] = field(default_factory=dict)
    _stdlib: tuple[N.Module, ...] | None = None
    _visible: dict[Path, Visible] = field(default_factory=dict)

    def display(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.cwd))
        except ValueError:
            return str(path)

    def shown_root(self) -> str:
        """The project root as messages name it: relative to the current directory when under it."""
        shown = self.display(self.root.resolve())
        return "(the current directory)" if shown == "." else f"`{shown}`"

    def _outside(self, target: Path) -> str:
        """E302's hint: where the path leads and which root would hold it (when both are nearby)."""
        rule = "task files may only read files under the project root"
        shown = self.display(target)
        if Path(shown).is_absolute():  # far away: naming it would only add noise
            return f"{rule} (set it with --root, or put a `wac.toml` in the project's top directory)"
        both = self.display(Path(os.path.commonpath([self.root.resolve(), target])))
        return (
            f"it resolves to {shown}; {rule}: build with `--root {both}` (a directory holding both), "
            "or put a `wac.toml` in the project's top directory"
        )

    def scene_files(self) -> dict[str, list[Path]]:
        """Scene name -> the `.wa` files under the root that declare it, found by a text scan (for
        hints: which file to import); hidden directories are left out."""
        if "scene_files" not in self.memo:
            found: dict[str, list[Path]] = {}
            files: list[Path] = []
            for seen, (top, dirs, names) in enumerate(os.walk(self.root.resolve())):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))  # .venv, .git, drafts
                files += [Path(top, n) for n in sorted(names) if n.endswith(".wa") and not n.startswith(".")]
                if len(files) >= MAX_SCANNED or seen >= MAX_SCANNED:  # a root as wide as `/`
                    break
            for f in files:
                try:
                    text = f.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                for name in SCENE_DECL.findall(text):
                    found.setdefault(name, []).append(f)
            self.memo["scene_files"] = found
        return self.memo["scene_files"]

    def stdlib(self) -> tuple[N.Module, ...]:
        if self._stdlib is None:
            self._stdlib = load_stdlib()
        return self._stdlib

    def load(self, path: Path) -> N.Module | None:
        """Parse and elaborate one file (cached); its diagnostics go to `failed`."""
        path = path.resolve()
        if path in self.modules:
            return self.modules[path]
        if path in self.failed:
            return None
        diag = Collector()
        try:
            data = self.overlay[path] if path in self.overlay else path.read_bytes()
            if len(data) > MAX_FILE_BYTES:
                src = Source(path, self.display(path), "")
                raise SourceErrors(
                    (
                        Diagnostic(
                            "E006",
                            f"file is larger than {MAX_FILE_BYTES // 1024 // 1024} MiB",
                            Span(src, 1, 1, 1, 1),
                        ),
                    )
                )
            self.raw[path] = data
            module = elaborate(parse(decode(data, self.display(path), path)), diag)
        except SourceErrors as exc:
            self.failed[path] = exc.diagnostics
            return None
        except OSError as exc:
            src = Source(path, self.display(path), "")
            self.failed[path] = (
                Diagnostic("E007", f"cannot read file: {exc.strerror}", Span(src, 1, 1, 1, 1)),
            )
            return None
        if diag:
            self.failed[path] = tuple(diag.items)
            return None
        self.modules[path] = module
        return module

    def forget(self, path: Path) -> None:
        """Drop an edited file from the caches (the language server); what each file sees is
        computed again."""
        path = path.resolve()
        for cache in (self.modules, self.failed, self.raw):
            cache.pop(path, None)
        self._visible.clear()

    def resolve_path(
        self, base: Path, written: str, span: Span, diag: Collector, what: str, suffixes: tuple[str, ...]
    ) -> Path | None:
        """A path written in a source, resolved against the file and confined to the root."""
        if "\0" in written or not written:
            diag.error("E301", f"invalid {what} path", span)
            return None
        target = (base.parent / written).resolve()
        root = self.root.resolve()
        if not target.is_relative_to(root):
            diag.error(
                "E302",
                f"{what} `{written}` is outside the project root {self.shown_root()}",
                span,
                self._outside(target),
            )
            return None
        if target.suffix.lower() not in suffixes:
            diag.error("E303", f"{what} `{written}` must be a {' / '.join(suffixes)} file", span)
            return None
        if not target.is_file() and target not in self.overlay:
            siblings = (
                [p.name for p in target.parent.glob("*") if p.suffix.lower() in suffixes]
                if target.parent.is_dir()
                else []
            )
            diag.error(
                "E304", f"{what} `{written}` does not exist", span, did_you_mean(target.name, siblings)
            )
            return None
        return target

    def visible(self, path: Path, diag: Collector) -> Visible:
        """Scenes, prefabs and materials visible from `path` (itself + transitive imports + stdlib)."""
        path = path.resolve()
        if path in self._visible:
            return self._visible[path]
        order: list[Path] = []
        stack = [path]
        seen: set[Path] = set()
        broken = False
        while stack:
            p = stack.pop()
            if p in seen:
                continue
            seen.add(p)
            mod = self.load(p)
            if mod is None:
                continue
            order.append(p)
            for imp in mod.imports:
                target = self.resolve_path(p, imp.path, imp.span, diag, "import", (".wa",))
                if target is None:
                    broken = True
                else:
                    if self.load(target) is None and target in self.failed:
                        diag.items.extend(self.failed[target])
                        broken = True
                    stack.append(target)
        scenes: dict[str, tuple[N.SceneDecl, N.Module]] = {}
        prefabs: dict[str, N.PrefabDecl] = {}
        materials: dict[str, N.MaterialDecl] = {}
        for mod in self.stdlib():
            for pf in mod.prefabs:
                prefabs[pf.name] = pf
            for m in mod.materials:
                materials[m.name] = m
        user_prefab: dict[str, Span] = {}
        user_material: dict[str, Span] = {}
        for p in order:
            mod = self.modules[p]
            for sc in mod.scenes:
                if sc.name in scenes and scenes[sc.name][0].span.source.path != sc.span.source.path:
                    prev = scenes[sc.name][0].span
                    diag.error(
                        "E305",
                        f"scene `{sc.name}` is declared twice",
                        sc.span,
                        f"the other is at {prev.location}; rename one",
                    )
                scenes[sc.name] = (sc, mod)
            for pf in mod.prefabs:
                if pf.name in user_prefab and user_prefab[pf.name].source.path != pf.span.source.path:
                    diag.error(
                        "E306",
                        f"prefab `{pf.name}` is declared twice",
                        pf.span,
                        f"the other is at {user_prefab[pf.name].location}; rename one",
                    )
                user_prefab[pf.name] = pf.span
                prefabs[pf.name] = pf  # a project prefab may replace a standard one
            for m in mod.materials:
                if m.name in user_material and user_material[m.name].source.path != m.span.source.path:
                    diag.error(
                        "E307",
                        f"material `{m.name}` is declared twice",
                        m.span,
                        f"the other is at {user_material[m.name].location}; rename one",
                    )
                user_material[m.name] = m.span
                materials[m.name] = m
        vis = Visible(scenes, prefabs, materials, tuple(sorted(order)), broken)
        self._visible[path] = vis
        return vis


@lru_cache(maxsize=1)
def load_stdlib() -> tuple[N.Module, ...]:
    """The standard library modules (parsed once per process; forked workers inherit them)."""
    mods = []
    pkg = resources.files("wac.compiler").joinpath("stdlib")
    for name in STDLIB_FILES:
        res = pkg.joinpath(name)
        if not res.is_file():
            continue
        data = res.read_bytes()
        src = decode(data, f"<stdlib>/{name}", Path(f"<stdlib>/{name}"))
        diag = Collector()
        mod = elaborate(parse(src), diag)
        if diag:
            raise SourceErrors(tuple(diag.items))
        mods.append(mod)
    return tuple(mods)


def discover(sources: list[Path]) -> list[Path]:
    """The `.wa` files named by the command line: files as given, directories recursively, leaving
    out hidden files and directories (names starting with `.`: editors' and tools' scratch files,
    such as the drafts `wac derive` compiles)."""
    found: list[Path] = []
    for s in sources:
        if s.is_dir():
            found.extend(
                sorted(
                    p
                    for p in s.rglob("*.wa")
                    if p.is_file() and not any(part.startswith(".") for part in p.relative_to(s).parts)
                )
            )
        else:
            found.append(s)
    out: list[Path] = []
    seen: set[Path] = set()
    for p in found:
        r = p.resolve()
        if r not in seen:
            seen.add(r)
            out.append(r)
    return out
