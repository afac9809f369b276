"""Scene sync of the renderer: VTK actors built from the world's objects (rigid parts of one material
merged into one actor), the ground and its skirt, materials and textures, and the per-frame update
of each object's matrices, material, layer and proxy.  `SceneActors` is a part of `render.Renderer`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wac.bundle.terrain import samples as terrain_samples
from wac.errors import WacError

from .render_shadows import shadow_role, unlit
from .world import ObjectState

# Polydata by part geometry (shape, size, mesh asset, rest pose), shared by every renderer of a
# process: the clean and perturbed runs of a self-check, and successive episodes, draw the same
# objects, and building their geometry is a large part of a world's start-up.  Never mutated
# once built; cleared when it grows past _CACHE_MAX entries.
_POLYS: dict = {}
_MERGED: dict = {}
_CACHE_MAX = 4096


def shared_geometry() -> tuple[dict, dict]:
    """The process's polydata caches (by part, by merged group), cleared when over `_CACHE_MAX`."""
    for cache in (_POLYS, _MERGED):
        if len(cache) > _CACHE_MAX:
            cache.clear()
    return _POLYS, _MERGED


@dataclass
class ActorGroup:
    """One actor of an object: several rigid parts merged (`local` = identity) or one part that
    follows its own pose (`local` None: its part matrix, hinge and spin included)."""

    actor: object
    parts: tuple[str, ...]
    material: str
    emits: bool
    local: np.ndarray | None


def _pose_key(st: ObjectState) -> tuple:
    """Everything the matrices of an object's actors depend on."""
    return (
        np.asarray(st.position, dtype=float).tobytes(),
        np.asarray(st.rotation_deg, dtype=float).tobytes(),
        np.asarray(st.scale, dtype=float).tobytes(),
        np.asarray(st.motion_offset, dtype=float).tobytes(),
        None if st.appearance_scale is None else np.asarray(st.appearance_scale, dtype=float).tobytes(),
        tuple((ps.hinge_deg, ps.spin_deg) for ps in st.parts.values() if ps.part.hinge or ps.part.spin),
    )


def _mirrored(st: ObjectState) -> bool:
    """Whether the object is drawn mirrored (an odd number of negative scale components)."""
    sign = float(np.prod(np.sign(np.asarray(st.scale, dtype=float))))
    if st.appearance_scale is not None:
        sign *= float(np.prod(np.sign(np.asarray(st.appearance_scale, dtype=float) * np.ones(3))))
    return sign < 0


def _spin_top(obj) -> float:
    """Highest point a spinning part of an object reaches (its rest bounds do not cover the sweep)."""
    from wac.bundle.transforms import rotation

    top = -np.inf
    for part in obj.parts:
        if part.spin is not None:
            r = 0.5 * float(np.linalg.norm(np.asarray(part.size) * np.asarray(obj.scale)))
            c = np.asarray(obj.position) + rotation(*obj.rotation_deg) @ (
                np.asarray(part.position) * np.asarray(obj.scale)
            )
            top = max(top, float(c[2]) + float(part.size[2]) / 2 * float(obj.scale[2]) + r)
    return top


def _vtk_matrix(vtk, m: np.ndarray):
    vm = vtk.vtkMatrix4x4()
    for i in range(4):
        for j in range(4):
            vm.SetElement(i, j, float(m[i, j]))
    return vm


class SceneActors:
    """The actors of a `Renderer`: built from the world's objects and synced before each frame.

    Owns `actors`, `groups`, `proxies`, the ground and skirt, the geometry and texture caches and the
    per-actor keys (`_sig`, `_pose_key`, `_group_sig`, `_proxy_key`); reads `vtk`, `ren`, `xray`, `cam`
    and `world`, and asks `ShadowMaps` for each actor's shader (`_set_shader`, `_sync_ghost`)."""

    def _poly(self, key, mesh):
        poly = self._polys.get(key)
        if poly is None:
            try:
                import pyvista as pv
            except ImportError as exc:  # pragma: no cover - depends on the installation
                raise WacError("rendering needs the 'pyvista' package: pip install 'wac[runtime]'") from exc

            from .textures import box_uv

            poly = pv.wrap(mesh).compute_normals(
                split_vertices=True, feature_angle=35.0, auto_orient_normals=False
            )
            poly.active_texture_coordinates = box_uv(
                np.asarray(poly.points), np.asarray(poly.point_data["Normals"]), 0.5
            )
            self._polys[key] = poly
        return poly

    def _make_ground(self):
        vtk = self.vtk
        gx, gy = self.world.scene.ground.size
        src = vtk.vtkPlaneSource()
        src.SetOrigin(-gx / 2, -gy / 2, 0)
        src.SetPoint1(gx / 2, -gy / 2, 0)
        src.SetPoint2(-gx / 2, gy / 2, 0)
        src.SetResolution(max(1, int(gx)), max(1, int(gy)))
        terrain = self.world.scene.ground.terrain is not None
        if terrain:  # the heightfield's samples, lifted: the physics' surface, shaded by its normals
            xs, ys, h = terrain_samples(self.world.scene.ground)
            src.SetResolution(len(xs) - 1, len(ys) - 1)
        src.Update()
        if terrain:
            pts = src.GetOutput().GetPoints()
            for k, z in enumerate(h.ravel()):  # the plane's points run x fastest, then y, as h does
                x, y, _ = pts.GetPoint(k)
                pts.SetPoint(k, x, y, float(z))
            normals = vtk.vtkPolyDataNormals()
            normals.SetInputData(src.GetOutput())
            normals.Update()
            src = normals
        mapper = vtk.vtkPolyDataMapper()
        mapper.SetInputData(src.GetOutput())
        actor = vtk.vtkActor()
        actor.SetMapper(mapper)
        self._apply_material(actor.GetProperty(), self.world.scene.ground.material, 1.0, lit=False)
        tex = self._texture(self.world.material(self.world.scene.ground.material).texture)
        if tex is not None:
            tc = vtk.vtkFloatArray()
            tc.SetNumberOfComponents(2)
            out = src.GetOutput()
            for i in range(out.GetNumberOfPoints()):
                x, y, _ = out.GetPoint(i)
                tc.InsertNextTuple2(x / 2.0, y / 2.0)
            out.GetPointData().SetTCoords(tc)
            actor.SetTexture(tex)
        self.ren.AddActor(actor)
        return actor

    def _anchor_bounds(self) -> None:
        """A wider ground-coloured skirt 0.3 m under the ground: it hides the void, and it gives the
        shadow maps a depth beyond the ground's edge.  It takes no shadows (`_shadow_replacements`):
        the ground's edge would throw a dark band onto it."""
        vtk = self.vtk
        gx, gy = self.world.scene.ground.size
        mx, my = gx / 2 + 10.0, gy / 2 + 10.0
        zs = -0.3
        if self.world.scene.ground.terrain is not None:
            zs += float(terrain_samples(self.world.scene.ground)[2].min())
        src = vtk.vtkPlaneSource()
        src.SetOrigin(-mx, -my, zs)
        src.SetPoint1(mx, -my, zs)
        src.SetPoint2(-mx, my, zs)
        src.Update()
        actor = vtk.vtkActor()
        actor.SetMapper(self._mapper(src.GetOutput()))
        self._apply_material(actor.GetProperty(), self.world.scene.ground.material, 1.0, lit=False)
        self.ren.AddActor(actor)
        self._skirt = actor
        # An invisible box around everything: VTK fits the light cameras to the bounds of every prop,
        # drawn or not, so with it a spinning blade or a pushed crate does not shift every shadow.
        objs = self.world.scene.objects
        zlo = min([zs] + [o.aabb_min[2] for o in objs])
        ztop = 0.0
        if self.world.scene.ground.terrain is not None:
            ztop = float(terrain_samples(self.world.scene.ground)[2].max())
        zhi = max([ztop] + [o.aabb_max[2] for o in objs] + [_spin_top(o) for o in objs]) + 0.3
        self._anchor_box = (
            min([-mx] + [o.aabb_min[0] for o in objs]),
            max([mx] + [o.aabb_max[0] for o in objs]),
            min([-my] + [o.aabb_min[1] for o in objs]),
            max([my] + [o.aabb_max[1] for o in objs]),
            zlo,
            zhi,
        )
        cube = vtk.vtkCubeSource()
        cube.SetBounds(*self._anchor_box)
        cube.Update()
        anchor = vtk.vtkActor()
        anchor.SetMapper(self._mapper(cube.GetOutput()))
        anchor.SetVisibility(False)
        self.ren.AddActor(anchor)

    def _texture(self, name: str | None):
        """A repeating VTK texture for a procedural pattern name (None: no texture)."""
        from .textures import pattern

        if not name:
            return None
        if name in self._textures:
            return self._textures[name]
        img = pattern(name)
        tex = None
        if img is not None:
            vtk = self.vtk
            data = vtk.vtkImageData()
            data.SetDimensions(img.shape[1], img.shape[0], 1)
            arr = self.nps.numpy_to_vtk(img[::-1].reshape(-1, 3).copy(), deep=True)
            arr.SetNumberOfComponents(3)
            data.GetPointData().SetScalars(arr)
            tex = vtk.vtkTexture()
            tex.SetInputData(data)
            tex.RepeatOn()
            tex.InterpolateOn()
            tex.MipmapOff()
        self._textures[name] = tex
        return tex

    def _mapper(self, poly):
        m = self.vtk.vtkPolyDataMapper()
        m.SetInputData(poly)
        m.ScalarVisibilityOff()
        return m

    def _build(self) -> None:
        """Drop the actors of removed objects (objects may also be added at run time: `_groups`)."""
        for oid in [o for o in self.groups if o not in self.world.objects]:
            self._drop(oid)
        self._built_version = self.world.version

    def _drop(self, oid: str) -> None:
        for g in self.groups.pop(oid, []):
            self.ren.RemoveActor(g.actor)
            self.xray.RemoveActor(g.actor)
            self._sig.pop(id(g.actor), None)
            self._roles.pop(id(g.actor), None)
            for pid in g.parts:
                self.actors.pop((oid, pid), None)
        self._group_sig.pop(oid, None)
        self._pose_key.pop(oid, None)

    def _groups(self, st: ObjectState) -> list[ActorGroup]:
        """The object's actors, (re)built when its parts' materials or rest poses changed.  Rigid parts
        of one material (and emission) share one actor over merged geometry: fewer actors make every
        pass cheaper (each costs about as much as shading a few thousand pixels in software GL)."""
        mirrored = _mirrored(st)
        sig = (mirrored, *((pid, ps.material, ps.position, ps.rotation_deg) for pid, ps in st.parts.items()))
        groups = self.groups.get(st.id)
        if groups is not None and self._group_sig.get(st.id) == sig:
            return groups
        self._drop(st.id)
        buckets: dict[tuple, list] = {}
        for pid, ps in st.parts.items():
            moving = bool(ps.part.hinge or ps.part.spin)
            key = ("moving", pid) if moving else ("rigid", ps.material, ps.part.emitter is not None)
            buckets.setdefault(key, []).append(ps)
        groups = []
        for parts in buckets.values():
            if len(parts) == 1:
                ps = parts[0]
                poly = self._poly((ps.part.shape, ps.part.size, ps.part.mesh), self.world.mesh(ps))
                local = None  # the part's own matrix, recomputed with its pose
            else:
                poly = self._merged_poly(parts)
                local = np.eye(4)
            if mirrored:
                poly = self._reversed(poly)
            actor = self.vtk.vtkActor()
            actor.SetMapper(self._mapper(poly))
            self.ren.AddActor(actor)
            g = ActorGroup(
                actor,
                tuple(ps.part.id for ps in parts),
                parts[0].material,
                any(ps.part.emitter is not None for ps in parts),
                local,
            )
            groups.append(g)
            for pid in g.parts:
                self.actors[(st.id, pid)] = actor
        self.groups[st.id] = groups
        self._group_sig[st.id] = sig
        self._order_dirty = True
        return groups

    def _order(self) -> None:
        """Draw small things first and the ground last: software GL tests depth before shading, so
        what is drawn first hides the big surfaces behind it cheaply (about a quarter off an indoor
        frame).  Done when actors are (re)built, not per frame."""
        acts = [g.actor for groups in self.groups.values() for g in groups if self.ren.HasViewProp(g.actor)]

        def size(a) -> float:
            b = a.GetBounds()
            return (
                float(np.linalg.norm([b[1] - b[0], b[3] - b[2], b[5] - b[4]]))
                if b is not None and b[0] <= b[1]
                else 0.0
            )

        ranked = sorted(range(len(acts)), key=lambda i: (size(acts[i]), i))
        for a in acts + [self._ground, self._skirt]:
            self.ren.RemoveActor(a)
        for i in ranked:
            self.ren.AddActor(acts[i])
        self.ren.AddActor(self._ground)
        self.ren.AddActor(self._skirt)
        self._order_dirty = False

    def _reversed(self, poly):
        """`poly` with every face wound the other way and the same normals: what a mirrored object
        draws.  Its matrix has a negative determinant, which turns the winding of every face, so
        OpenGL takes its front faces for back faces and two-sided lighting turns their normals
        inward (a mirrored window drew dark).  Wound the other way before the mirror, the faces
        come out front-facing and lit as the unmirrored object's are."""
        got = self._reversed_polys.get(id(poly))
        if got is None or got[0] is not poly:
            import pyvista as pv

            rev = self.vtk.vtkReverseSense()
            rev.SetInputData(poly)
            rev.ReverseCellsOn()
            rev.ReverseNormalsOff()
            rev.Update()
            got = (poly, pv.wrap(rev.GetOutput()))
            self._reversed_polys[id(poly)] = got
        return got[1]

    def _merged_poly(self, parts: list):
        """One polydata of several rigid parts, in the object's (unscaled) frame."""
        key = tuple((ps.part.shape, ps.part.size, ps.part.mesh, ps.position, ps.rotation_deg) for ps in parts)
        poly = self._merged.get(key)
        if poly is None:
            import pyvista as pv

            from .geometry import part_matrix

            app = self.vtk.vtkAppendPolyData()
            for ps in parts:
                one = self._poly((ps.part.shape, ps.part.size, ps.part.mesh), self.world.mesh(ps))
                app.AddInputData(one.transform(part_matrix(ps.part, ps.pose()), inplace=False))  # normals too
            app.Update()
            poly = pv.wrap(app.GetOutput())
            self._merged[key] = poly
        return poly

    def _apply_material(
        self, prop, name: str, daylight: float, lit: bool, color=None, emissive_all=False
    ) -> None:
        """Phong material: ambient term = colour x scene ambient (+ emission when lit), then diffuse
        and a specular lobe from roughness/metallic; opacity as given."""
        mat = self.world.material(name)
        col = np.asarray(color if color is not None else mat.color, dtype=float)
        amb = self.world.scene.ambient * (0.35 + 0.65 * daylight)
        emis = np.asarray(mat.emissive, dtype=float)
        if lit and emissive_all:
            emis = np.maximum(emis, col)
        prop.SetLighting(True)
        prop.SetInterpolationToPhong()
        prop.SetColor(*col)
        prop.SetDiffuseColor(*col)
        prop.SetAmbientColor(*np.clip(col * amb + emis, 0, 1))
        prop.SetAmbient(1.0)
        prop.SetDiffuse(0.85)
        shine = 1.0 - mat.roughness
        prop.SetSpecular(0.05 + 0.5 * shine * (1 + mat.metallic))
        prop.SetSpecularPower(4 + 60 * shine)
        prop.SetSpecularColor(*(col * mat.metallic + (1 - mat.metallic) * np.ones(3)))
        prop.SetOpacity(float(mat.opacity))

    def _sync_object(self, st: ObjectState, day: float) -> None:
        w = self.world
        self._flat_dirty.add(st.id)  # its flat twins follow (render_flat.py)
        shown = st.present and not st.held and st.visible
        lit = w.lamp_lit(st)
        groups = self._groups(st)
        key = _pose_key(st)
        if self._pose_key.get(st.id) != key:  # matrices only for objects whose pose changed
            from .geometry import part_matrix

            self._pose_key[st.id] = key
            base_m = st.matrix()
            if st.appearance_scale is not None:
                s = np.eye(4)
                s[:3, :3] *= st.appearance_scale
                base_m = base_m @ s
            for g in groups:
                if g.local is None:
                    ps = st.parts[g.parts[0]]
                    m = base_m @ part_matrix(ps.part, ps.pose())
                else:
                    m = base_m
                g.actor.SetUserMatrix(_vtk_matrix(self.vtk, m))
        culled = False
        if st.render == "cull" and shown:
            n = np.asarray(st.render_normal or (1.0, 0.0), dtype=float)
            lo, hi = w.aabb(st)
            rel = np.asarray(self.cam.GetPosition())[:2] - (lo[:2] + hi[:2]) / 2
            culled = float(rel @ n) > 0
        proxy = st.render == "lod_proxy" and shown
        cut = self._cutaway and st.spec.cutaway  # a ceiling an overview shot looks through
        visible = bool(shown and not culled and not proxy and not cut)
        role = shadow_role(st)
        for g in groups:
            actor = g.actor
            if bool(actor.GetVisibility()) != visible:
                actor.SetVisibility(visible)
            sig = (g.material, lit, st.glow, st.appearance_color, round(day, 3), st.render, self._seg_mode)
            if self._sig.get(id(actor)) != sig:
                self._sig[id(actor)] = sig
                prop = actor.GetProperty()
                self._apply_material(
                    prop,
                    g.material,
                    day,
                    lit=lit and (g.emits or st.glow),
                    color=st.appearance_color,
                    emissive_all=True,
                )
                prop.SetBackfaceCulling(False)
                prop.SetFrontfaceCulling(st.render == "flip_normals")
                actor.SetTexture(self._texture(w.material(g.material).texture))
            in_xray = st.render == "xray"
            if in_xray and not self.xray.HasViewProp(actor):
                self.ren.RemoveActor(actor)
                self.xray.AddActor(actor)
            elif not in_xray and self.xray.HasViewProp(actor):
                self.xray.RemoveActor(actor)
                self.ren.AddActor(actor)
            self._set_shader(actor, role, st.id)
        self._sync_proxy(st, proxy)
        self._sync_ghost(st)

    def _sync_proxy(self, st: ObjectState, on: bool) -> None:
        actor = self.proxies.get(st.id)
        if not on:
            if actor is not None:
                actor.SetVisibility(False)
            return
        vtk = self.vtk
        key = (self._pose_key.get(st.id), self._group_sig.get(st.id))
        if actor is not None and self._proxy_key.get(st.id) == key:
            if not actor.GetVisibility():
                actor.SetVisibility(True)
            return
        self._proxy_key[st.id] = key
        lo, hi = self.world.aabb(st)
        if actor is None:
            actor = vtk.vtkActor()
            actor.SetMapper(vtk.vtkPolyDataMapper())
            self._set_shader(actor, "cast", st.id)
            self.ren.AddActor(actor)
            self.proxies[st.id] = actor
        src = vtk.vtkCubeSource()
        src.SetBounds(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2])
        src.Update()
        actor.GetMapper().SetInputData(src.GetOutput())
        cols = [self.world.material(p.material).color for p in st.parts.values()]
        unlit(actor.GetProperty(), np.mean(cols, axis=0))
        actor.SetVisibility(True)
