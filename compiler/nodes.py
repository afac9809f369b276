"""The AST: typed, frozen nodes for files, scenes, tasks, prefabs and anomalies.

Values stay as syntax words (`wac.compiler.syntax`) until the check pass evaluates them
against their declared type, so every later diagnostic can point at the exact word.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wac.compiler import syntax as S
from wac.compiler.spans import Source, Span


@dataclass(frozen=True, slots=True)
class Clause:
    key: str
    value: S.Word
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Setting:
    """A simple statement of a scene, task or prefab: `era medieval`, `sun azimuth 135 deg`."""

    keyword: str
    args: tuple[S.Word, ...]
    clauses: tuple[Clause, ...]
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Thing:
    """A labelled declaration: an object in a scene/task, or a part in a prefab."""

    id: str
    kind: str  # prefab or shape name
    clauses: tuple[Clause, ...]
    span: Span = field(compare=False, repr=False)
    id_span: Span = field(compare=False, repr=False)
    kind_span: Span = field(compare=False, repr=False)

    def clause(self, key: str) -> Clause | None:
        return next((c for c in self.clauses if c.key == key), None)


@dataclass(frozen=True, slots=True)
class Trigger:
    kind: str
    arg: S.Word | None
    clauses: tuple[Clause, ...]
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Anomaly:
    operator: str
    operand: tuple[S.Name, ...]  # target ids (empty for place operators)
    new_object: Thing | None  # for new_object operators
    clauses: tuple[Clause, ...]
    trigger: Trigger | None
    span: Span = field(compare=False, repr=False)
    op_span: Span = field(compare=False, repr=False)
    affects: tuple[S.Word, ...] = ()  # `affects OBJ` / `affects [A, B]`: declared consequences

    def clause(self, key: str) -> Clause | None:
        return next((c for c in self.clauses if c.key == key), None)


@dataclass(frozen=True, slots=True)
class Generator:
    """`LABEL: row|grid|ring|scatter|room …`: a statement that expands into many objects."""

    label: str
    keyword: str
    args: tuple[S.Word, ...]  # positional words (prefab, count)
    clauses: tuple[Clause, ...]  # its own clauses and object clauses passed on to every object
    items: tuple[Setting, ...]  # a room's `door`, `window` and `opening` statements
    span: Span = field(compare=False, repr=False)
    label_span: Span = field(compare=False, repr=False)
    head_span: Span = field(compare=False, repr=False)

    def clause(self, key: str) -> Clause | None:
        return next((c for c in self.clauses if c.key == key), None)


@dataclass(frozen=True, slots=True)
class Body:
    """The contents of a scene, task or prefab block."""

    settings: tuple[Setting, ...]
    things: tuple[Thing, ...]
    anomalies: tuple[Anomaly, ...] = ()
    generators: tuple[Generator, ...] = ()

    def setting(self, keyword: str) -> Setting | None:
        return next((s for s in self.settings if s.keyword == keyword), None)

    def all(self, keyword: str) -> tuple[Setting, ...]:
        return tuple(s for s in self.settings if s.keyword == keyword)


@dataclass(frozen=True, slots=True)
class SceneDecl:
    name: str
    body: Body
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class TaskDecl:
    name: str
    scene: str
    body: Body
    span: Span = field(compare=False, repr=False)
    scene_span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class PrefabDecl:
    name: str
    body: Body
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class MaterialDecl:
    name: str
    clauses: tuple[Clause, ...]
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Import:
    path: str
    span: Span = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Module:
    source: Source = field(compare=False, repr=False)
    imports: tuple[Import, ...]
    scenes: tuple[SceneDecl, ...]
    tasks: tuple[TaskDecl, ...]
    prefabs: tuple[PrefabDecl, ...]
    materials: tuple[MaterialDecl, ...]
