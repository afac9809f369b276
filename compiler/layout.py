"""Pass 4a, layout: evaluate object declarations into placed objects with parts and bounds.

Prefab parts are evaluated with the prefab's parameters (instance overrides applied); an
object `on` another gets its height from the top of its support; materials are resolved
and colour tints become derived materials.  The result is the bundle's `SceneObject`s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from wac.bundle import model as B
from wac.bundle.transforms import part_corners_world
from wac.compiler import nodes as N
from wac.compiler import schema as T
from wac.compiler.diagnostics import Collector, did_you_mean
from wac.compiler.resolve import Loader, Visible
from wac.compiler.values import Evaluator, param_type

PRIMITIVES = ("box", "cylinder", "sphere", "capsule", "cone", "wedge", "mesh")
DEFAULT_MATERIAL = "plaster"
MESH_SUFFIXES = (".obj", ".stl", ".ply", ".glb")


@dataclass
class MeshAsset:
    path: Path
    source: str
    extents: tuple[float, float, float]
    digest: str
    format: str


@dataclass
class Materials:
    """Materials used by a scene: declared ones evaluated on demand, tints derived."""

    visible: dict[str, N.MaterialDecl]
    diag: Collector
    used: dict[str, B.Material] = field(default_factory=dict)

    def get(self, name: str, span) -> B.Material | None:
        if name in self.used:
            return self.used[name]
        decl = self.visible.get(name)
        if decl is None:
            self.diag.error(
                "E401",
                f"unknown material `{name}`",
                span,
                did_you_mean(name, self.visible) or 'declare it with `material NAME color "#…"`',
            )
            return None
        ev = Evaluator(self.diag)
        spec = {c.key: c for c in T.MATERIAL_CLAUSES}
        values: dict = {}
        for cl in decl.clauses:
            c = spec[cl.key]
            values[cl.key] = ev.value(cl.value, c.type, f"`{cl.key}`", c.min, c.max, c.choices)
        mat = B.Material(
            name=name,
            color=values.get("color") or (0.7, 0.7, 0.7),
            roughness=values.get("roughness", 0.7) if values.get("roughness") is not None else 0.7,
            metallic=values.get("metallic") or 0.0,
            opacity=values.get("opacity", 1.0) if values.get("opacity") is not None else 1.0,
            texture=None if values.get("texture") in (None, "none") else values["texture"],
            category=values.get("category") or "generic",
        )
        self.used[name] = mat
        return mat

    def derive(self, materials) -> None:
        """Add materials derived by the lowerings (`Lowering.materials`); one name, one material."""
        for m in materials:
            had = self.used.setdefault(m.name, m)
            assert had == m, f"two materials named {m.name!r}"

    def tinted(self, base: B.Material, color: tuple[float, float, float]) -> str:
        hexcode = "".join(f"{round(c * 255):02x}" for c in color)
        name = f"{base.name}#{hexcode}"
        if name not in self.used:
            self.used[name] = base.model_copy(update={"name": name, "color": color})
        return name


@dataclass(frozen=True, slots=True)
class Instance:
    """An object as `Layout.build` evaluates it: its clauses' values and its parts (in its own frame),
    the prefab (or shape) it is built from, that prefab's defaults and its parameters' values."""

    values: Mapping[str, object]
    parts: tuple[B.Part, ...]
    prefab: str
    defaults: Mapping[str, object] = field(default_factory=dict)
    params: Mapping[str, object] = field(default_factory=dict)

    def with_values(self, **values: object) -> Instance:
        """The same instance with some clause values set (a replacement standing where the original stood)."""
        return dataclasses.replace(self, values={**self.values, **values})


class Layout:
    def __init__(self, loader: Loader, visible: Visible, diag: Collector, materials: Materials) -> None:
        self.loader = loader
        self.visible = visible
        self.diag = diag
        self.materials = materials
        self.assets: dict[str, MeshAsset] = {}

    # -- mesh assets -----------------------------------------------------------------------
    def mesh(self, written: str, base_file: Path, span) -> MeshAsset | None:
        path = self.loader.resolve_path(base_file, written, span, self.diag, "mesh", MESH_SUFFIXES)
        if path is None:
            return None
        import hashlib

        import trimesh

        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest in self.assets:
            return self.assets[digest]
        try:
            loaded = trimesh.load(path, force="mesh")
            ext = tuple(float(v) for v in loaded.extents)
        except Exception as exc:  # trimesh raises many kinds of errors on bad files
            self.diag.error(
                "E402",
                f"cannot read mesh `{written}`: {exc}",
                span,
                "check the file is a valid OBJ/STL/PLY/GLB",
            )
            return None
        if not all(np.isfinite(ext)) or min(ext) <= 0:
            self.diag.error("E403", f"mesh `{written}` is empty or flat", span)
            return None
        root = self.loader.root.resolve()
        asset = MeshAsset(path, str(path.relative_to(root)), ext, digest, path.suffix.lower()[1:])
        self.assets[digest] = asset
        return asset

    # -- parts --------------------------------------------------------------------------------
    def shape_part(
        self,
        pid: str,
        shape: str,
        values: dict,
        span,
        file: Path,
        default_mat: str,
        default_color,
        override_mat,
        override_color,
    ) -> B.Part | None:
        size = None
        mesh_id = None
        if shape in ("box", "wedge"):
            size = values.get("size")
            if size is None:
                self.diag.error("E404", f"{shape} `{pid}` needs `size (x, y, z)`", span)
                return None
        elif shape in ("cylinder", "capsule", "cone"):
            r, h = values.get("radius"), values.get("height")
            if r is None or h is None:
                self.diag.error("E404", f"{shape} `{pid}` needs `radius` and `height`", span)
                return None
            if shape == "capsule" and h < 2 * r:
                self.diag.error(
                    "E405", f"capsule `{pid}` is shorter ({h:g} m) than its diameter ({2 * r:g} m)", span
                )
                return None
            size = (2 * r, 2 * r, h)
        elif shape == "sphere":
            r = values.get("radius")
            if r is None:
                self.diag.error("E404", f"sphere `{pid}` needs `radius`", span)
                return None
            size = (2 * r, 2 * r, 2 * r)
        elif shape == "mesh":
            written = values.get("file")
            if written is None:
                self.diag.error("E404", f'mesh `{pid}` needs `file "path"`', span)
                return None
            asset = self.mesh(written, file, span)
            if asset is None:
                return None
            size = asset.extents
            mesh_id = asset.digest
        # an instance's material/colour replaces the prefab's defaults, not a part's own choice
        # (a bumper's black stripes stay black when the bumper is tinted)
        own = values.get("material") is not None or values.get("color") is not None
        emits = values.get("emits")
        if own or emits:
            override_mat = override_color = None
        mat_name = override_mat or values.get("material") or default_mat or DEFAULT_MATERIAL
        mat = self.materials.get(mat_name, span)
        if mat is None:
            return None
        color = (
            override_color
            or values.get("color")
            or (None if values.get("material") or override_mat else default_color)
        )
        material = self.materials.tinted(mat, color) if color else mat.name
        hinge = (
            B.Hinge(pivot=values["hinge"], swing_deg=values.get("swing", 90.0))
            if values.get("hinge")
            else None
        )
        emitter = None
        if emits is not None:
            emitter = B.Emitter(
                intensity=emits,
                range_m=values.get("light_range", 8.0),
                color=values.get("light_color") or (1.0, 0.9, 0.7),
            )
        spin = (
            B.Spin(rate_deg_s=values["spin"], axis=values.get("spin_axis", "z"))
            if values.get("spin")
            else None
        )
        pos = values.get("at") or (0.0, 0.0, 0.0)
        if len(pos) == 2:
            pos = (pos[0], pos[1], 0.0)
        return B.Part(
            id=pid,
            shape=shape,
            size=tuple(round(s, 6) for s in size),
            mesh=mesh_id,
            position=tuple(round(p, 6) for p in pos),
            rotation_deg=(values.get("yaw", 0.0), values.get("pitch", 0.0), values.get("roll", 0.0)),
            material=material,
            solid=values.get("solid", True) is not False,
            hinge=hinge,
            emitter=emitter,
            spin=spin,
        )

    def eval_clauses(
        self,
        clauses,
        spec_map: dict[str, T.Clause],
        ev: Evaluator,
        owner: str,
        extra: dict[str, str] | None = None,
    ) -> dict:
        out: dict = {}
        for cl in clauses:
            spec = spec_map.get(cl.key)
            if spec is None:
                if extra and cl.key in extra:
                    out[cl.key] = ev.value(cl.value, extra[cl.key], f"parameter `{cl.key}`")
                    continue
                known = list(spec_map) + list(extra or {})
                self.diag.error(
                    "E102",
                    f"unknown clause `{cl.key}` for {owner}",
                    cl.span,
                    did_you_mean(cl.key, known) or "see the object clauses in docs/language.md",
                )
                continue
            if cl.key in out:
                self.diag.error("E109", f"`{cl.key}` is given twice for {owner}", cl.span)
                continue
            out[cl.key] = ev.value(cl.value, spec.type, f"`{cl.key}`", spec.min, spec.max, spec.choices)
        return {k: v for k, v in out.items() if v is not None}

    def prefab_defaults(self, pf: N.PrefabDecl) -> dict:
        ev = Evaluator(self.diag)
        out: dict = {}
        for st in pf.body.settings:
            if st.keyword in ("param",):
                continue
            spec = T.CONTEXTS["prefab"][st.keyword]
            if spec.positional:
                _, ptype = spec.positional[0]
                choices = (
                    T.INTERACTIONS if st.keyword == "interact" else (T.ERAS if st.keyword == "era" else ())
                )
                out[st.keyword] = ev.value(st.args[0], ptype, f"`{st.keyword}`", choices=choices)
        return out

    def build(self, thing: N.Thing, file: Path) -> Instance | None:
        """Evaluate an object's clauses and parts (in its own frame)."""
        ev = Evaluator(self.diag)
        kind = thing.kind
        if kind in PRIMITIVES:
            values = self.eval_clauses(thing.clauses, T.OBJECT_CLAUSE_MAP, ev, f"`{thing.id}`")
            part = self.shape_part("body", kind, values, thing.span, file, None, None, None, None)
            if part is None:
                return None
            part = part.model_copy(update={"position": (0.0, 0.0, 0.0), "rotation_deg": (0.0, 0.0, 0.0)})
            values.setdefault("name", thing.id.rstrip("_0123456789").replace("_", " ") or thing.id)
            return Instance(values, (part,), kind)
        pf = self.visible.prefabs.get(kind)
        if pf is None:
            choices = list(self.visible.prefabs) + list(PRIMITIVES)
            self.diag.error(
                "E406",
                f"unknown prefab or shape `{kind}`",
                thing.kind_span,
                did_you_mean(kind, choices) or "see the prefab list in docs/prefabs.md",
            )
            return None
        params: dict[str, tuple[str, object]] = {}
        pev = Evaluator(self.diag)
        for st in pf.body.all("param"):
            pname = st.args[0]
            ptype = param_type(st.args[1])
            val = pev.value(st.args[1], ptype, f"parameter `{getattr(pname, 'text', '?')}`")
            if val is not None:
                params[pname.text] = (ptype, val)
        values = self.eval_clauses(
            thing.clauses, T.OBJECT_CLAUSE_MAP, ev, f"`{thing.id}`", {k: t for k, (t, _) in params.items()}
        )
        for k in list(values):
            if k in params and k not in T.OBJECT_CLAUSE_MAP:
                params[k] = (params[k][0], values.pop(k))
        defaults = self.prefab_defaults(pf)
        env = {k: (t, v) for k, (t, v) in params.items() if isinstance(v, (int, float))}
        part_ev = Evaluator(self.diag, env)
        parts = []
        ok = True
        for pt in pf.body.things:
            pv = self.eval_clauses(
                pt.clauses, T.PART_CLAUSE_MAP, part_ev, f"part `{pt.id}` of prefab `{pf.name}`"
            )
            if pt.kind not in PRIMITIVES:
                self.diag.error(
                    "E407",
                    f"part `{pt.id}` of prefab `{pf.name}` must be a shape ({', '.join(PRIMITIVES)})",
                    pt.kind_span,
                    did_you_mean(pt.kind, PRIMITIVES),
                )
                ok = False
                continue
            part = self.shape_part(
                pt.id,
                pt.kind,
                pv,
                pt.span,
                pf.span.source.path if isinstance(pf.span.source.path, Path) else file,
                defaults.get("material"),
                defaults.get("color"),
                values.get("material"),
                values.get("color"),
            )
            if part is None:
                ok = False
                continue
            parts.append(part)
        if not ok:
            return None
        if not parts:
            self.diag.error("E408", f"prefab `{pf.name}` has no parts", pf.span)
            return None
        return Instance(values, tuple(parts), pf.name, defaults, {k: v for k, (_, v) in params.items()})


def local_bounds(parts: tuple[B.Part, ...], scale=(1.0, 1.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    pts = np.vstack([part_corners_world(p, (0, 0, 0), (0, 0, 0), scale) for p in parts])
    return pts.min(axis=0), pts.max(axis=0)


def world_bounds(parts, position, rotation, scale) -> tuple[tuple[float, ...], tuple[float, ...]]:
    pts = np.vstack([part_corners_world(p, position, rotation, scale) for p in parts])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    return tuple(round(float(v), 6) for v in lo), tuple(round(float(v), 6) for v in hi)
