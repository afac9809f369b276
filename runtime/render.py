"""Rendering of a running world: VTK offscreen (EGL/OSMesa), first-person RGB, ids and depth.

One `Renderer` per world keeps a VTK actor per object part and re-syncs their matrices and
properties from the `World` before each frame.  The sun is a directional light with VTK shadow
maps (`vtkShadowMapPass`); lamps are downward spot lights (which also cast shadow maps) placed
at their emitting parts, and emitting parts glow through their ambient (emissive) term.  Shadows
that cannot come from the shadow map (an invisible object that still casts one, a displaced
shadow) are drawn as geometry projected along the sun onto the ground.  `render_ids` and
`render_depth` are internal: flat-coloured object ids (0 = sky, -1 = ground) and metric depth.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from wac.errors import WacError

from .world import ObjectState, World

GROUND_ID = -1
NEAR, FAR = 0.05, 250.0
MAGENTA = (1.0, 0.0, 1.0)


def _vtk():
    """Import VTK for offscreen use (EGL when there is no display)."""
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
    try:
        import vtk
        from vtkmodules.util import numpy_support
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise WacError("rendering needs the 'vtk' package (via 'pyvista'): pip install 'wac[runtime]'") from exc
    return vtk, numpy_support


@dataclass(frozen=True)
class Camera:
    """A pin-hole camera: eye position, yaw (deg, ccw from +x), pitch (deg, positive = down)."""

    eye: tuple[float, float, float]
    yaw_deg: float
    pitch_deg: float
    hfov_deg: float = 90.0

    def forward(self) -> np.ndarray:
        y, p = np.radians(self.yaw_deg), np.radians(self.pitch_deg)
        return np.array([np.cos(p) * np.cos(y), np.cos(p) * np.sin(y), -np.sin(p)])

    def up(self) -> np.ndarray:
        y, p = np.radians(self.yaw_deg), np.radians(self.pitch_deg)
        return np.array([np.sin(p) * np.cos(y), np.sin(p) * np.sin(y), np.cos(p)])

    def vfov_deg(self, width: int, height: int) -> float:
        return float(np.degrees(2 * np.arctan(np.tan(np.radians(self.hfov_deg) / 2) * height / width)))


def look_at(eye, target, hfov_deg: float = 60.0) -> Camera:
    """A camera at `eye` looking at `target`."""
    d = np.asarray(target, dtype=float) - np.asarray(eye, dtype=float)
    yaw = float(np.degrees(np.arctan2(d[1], d[0])))
    pitch = float(np.degrees(np.arctan2(-d[2], np.hypot(d[0], d[1]))))
    return Camera(tuple(float(v) for v in eye), yaw, pitch, hfov_deg)


def id_color(index: int) -> tuple[float, float, float]:
    """Flat colour encoding an object index (index + 2 so that 0 = sky and 1 = ground)."""
    v = index + 2
    return ((v & 255) / 255.0, ((v >> 8) & 255) / 255.0, ((v >> 16) & 255) / 255.0)


class Renderer:
    """Offscreen VTK renderer bound to one `World`."""

    def __init__(self, world: World, width: int = 640, height: int = 480, hfov_deg: float = 90.0,
                 shadows: bool = True, shadow_resolution: int = 2048, lamp_shadows: bool | None = None) -> None:
        vtk, self.nps = _vtk()
        self.vtk = vtk
        self.world = world
        self.width, self.height, self.hfov = int(width), int(height), float(hfov_deg)
        self.shadows = shadows
        # VTK bakes shadow maps for directional and spot lights only: lamps become 80-degree
        # downward spots when lamp_shadows (one more shadow map each), else 180-degree point lights.
        # Default: lamp shadows in scenes without a sun (indoor), where they are the only shadows.
        if lamp_shadows is None:
            lamp_shadows = world.scene.sun is None
        self.lamp_cone = 80.0 if lamp_shadows else 180.0
        self.win = vtk.vtkRenderWindow()
        self.win.SetOffScreenRendering(1)
        self.win.SetSize(self.width, self.height)
        self.win.SetMultiSamples(0)
        self.win.SetNumberOfLayers(2)
        self.ren = vtk.vtkRenderer()
        self.ren.SetAutomaticLightCreation(False)
        self.ren.SetLayer(0)
        self.xray = vtk.vtkRenderer()  # layer 1: objects drawn through occluders
        self.xray.SetLayer(1)
        self.xray.SetAutomaticLightCreation(False)
        self.xray.SetInteractive(False)
        self.win.AddRenderer(self.ren)
        self.win.AddRenderer(self.xray)
        self.cam = self.ren.GetActiveCamera()
        self.xray.SetActiveCamera(self.cam)
        self.sun = vtk.vtkLight()
        self.sun.SetLightTypeToSceneLight()
        self.sun.SetPositional(False)
        self.ren.AddLight(self.sun)
        self.xray.AddLight(self.sun)
        self._lamp_lights: list = []
        self._polys: dict = {}
        self._textures: dict = {}
        self.actors: dict[tuple[str, str], object] = {}  # (object id, part id) -> actor
        self.proxies: dict[str, object] = {}
        self.shadow_actors: dict[str, object] = {}
        self._sig: dict = {}
        self._built_version = -1
        self._ground = self._make_ground()
        self._anchor_bounds()
        self._passes = None
        if shadows:
            self._passes = self._shadow_passes(shadow_resolution)
        self._seg_mode = False
        self._last_shadow_sig = None

    def _shadow_signature(self) -> bytes:
        """Everything the shadow maps depend on (not the camera): poses, visibility, lights."""
        import hashlib

        h = hashlib.blake2b(digest_size=16)
        for (oid, pid), actor in self.actors.items():
            h.update(f"{oid}/{pid}:{actor.GetVisibility()}{actor.GetForceTranslucent()}".encode())
            if actor.GetVisibility():
                m = actor.GetUserMatrix()
                h.update(np.array([m.GetElement(i, j) for i in range(4) for j in range(4)]).tobytes())
        h.update(np.asarray(self.sun.GetPosition()).tobytes())
        h.update(f"{self.sun.GetSwitch()}{self.sun.GetIntensity()}".encode())
        for light in self._lamp_lights:
            h.update(np.asarray(light.GetPosition()).tobytes() + f"{light.GetSwitch()}".encode())
        return h.digest()

    # --- set-up ------------------------------------------------------------------------------
    def _shadow_passes(self, resolution: int):
        vtk = self.vtk
        shadows = vtk.vtkShadowMapPass()
        shadows.GetShadowMapBakerPass().SetResolution(resolution)
        seq = vtk.vtkSequencePass()
        passes = vtk.vtkRenderPassCollection()
        passes.AddItem(shadows.GetShadowMapBakerPass())
        passes.AddItem(shadows)
        seq.SetPasses(passes)
        reuse = vtk.vtkSequencePass()  # the same without re-baking: shadow maps are kept while nothing moves
        again = vtk.vtkRenderPassCollection()
        again.AddItem(shadows)
        reuse.SetPasses(again)
        self._bake_seq, self._reuse_seq = seq, reuse
        steps = vtk.vtkRenderStepsPass()
        steps.SetOpaquePass(seq)
        return steps

    def close(self) -> None:
        if self.win is not None:
            self.ren.SetPass(None)
            if self._passes is not None:
                self._passes.ReleaseGraphicsResources(self.win)
            self.win.Finalize()
            self.win = None

    def _poly(self, key, mesh):
        poly = self._polys.get(key)
        if poly is None:
            try:
                import pyvista as pv
            except ImportError as exc:  # pragma: no cover - depends on the installation
                raise WacError("rendering needs the 'pyvista' package: pip install 'wac[runtime]'") from exc

            from .textures import box_uv

            poly = pv.wrap(mesh).compute_normals(split_vertices=True, feature_angle=35.0, auto_orient_normals=False)
            poly.active_texture_coordinates = box_uv(np.asarray(poly.points), np.asarray(poly.point_data["Normals"]),
                                                     0.5)
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
        src.Update()
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
        """A wider ground-coloured skirt 0.3 m under the ground.  VTK's exponential shadow maps blur
        the empty texels around the ground's edge into it (a dark band along every edge); with the
        skirt behind the ground those texels hold far depths instead.  It also hides the void."""
        vtk = self.vtk
        gx, gy = self.world.scene.ground.size
        mx, my = gx / 2 + 10.0, gy / 2 + 10.0
        src = vtk.vtkPlaneSource()
        src.SetOrigin(-mx, -my, -0.3)
        src.SetPoint1(mx, -my, -0.3)
        src.SetPoint2(-mx, my, -0.3)
        src.Update()
        actor = vtk.vtkActor()
        actor.SetMapper(self._mapper(src.GetOutput()))
        self._apply_material(actor.GetProperty(), self.world.scene.ground.material, 1.0, lit=False)
        self.ren.AddActor(actor)
        self._skirt = actor

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
        """Create actors for objects that have none (objects may be added at run time)."""
        for st in self.world.objects.values():
            for ps in st.parts.values():
                key = (st.id, ps.part.id)
                if key in self.actors:
                    continue
                mesh = self.world.mesh(ps)
                poly = self._poly((ps.part.shape, ps.part.size, ps.part.mesh), mesh)
                actor = self.vtk.vtkActor()
                actor.SetMapper(self._mapper(poly))
                self.ren.AddActor(actor)
                self.actors[key] = actor
        for key in [k for k in self.actors if k[0] not in self.world.objects]:
            a = self.actors.pop(key)
            self.ren.RemoveActor(a)
            self.xray.RemoveActor(a)
        self._built_version = self.world.version

    # --- materials ----------------------------------------------------------------------------
    def _apply_material(self, prop, name: str, daylight: float, lit: bool, color=None, emissive_all=False) -> None:
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
        shine = (1.0 - mat.roughness)
        prop.SetSpecular(0.05 + 0.5 * shine * (1 + mat.metallic))
        prop.SetSpecularPower(4 + 60 * shine)
        prop.SetSpecularColor(*(col * mat.metallic + (1 - mat.metallic) * np.ones(3)))
        prop.SetOpacity(float(mat.opacity))

    # --- per-frame sync ----------------------------------------------------------------------------
    def sync(self) -> None:
        w = self.world
        if self._built_version != w.version or len(self.actors) != sum(len(s.parts) for s in w.objects.values()):
            self._build()
        az, el, day = w.daylight()
        sun = w.scene.sun
        sky = np.asarray(w.scene.sky_color, dtype=float)
        night = np.array([0.02, 0.03, 0.08])
        self.ren.SetBackground(*(sky * day + night * (1 - day)))
        d = np.array([np.cos(np.radians(el)) * np.cos(np.radians(az)), np.cos(np.radians(el)) * np.sin(np.radians(az)),
                      np.sin(np.radians(el))])
        self._sun_dir = d
        if sun is not None and el > 0.5 and day > 0:
            self.sun.SetPosition(*(d * 100.0))
            self.sun.SetFocalPoint(0, 0, 0)
            self.sun.SetColor(*sun.color)
            self.sun.SetIntensity(sun.intensity * day)
            self.sun.SwitchOn()
        else:
            self.sun.SwitchOff()
        self._apply_material(self._ground.GetProperty(), w.scene.ground.material, day, lit=False)
        self._apply_material(self._skirt.GetProperty(), w.scene.ground.material, day, lit=False)
        self._sync_lamps(day)
        for st in w.objects.values():
            self._sync_object(st, day)

    def _sync_lamps(self, day: float) -> None:
        vtk = self.vtk
        want = []
        for pl in self.world.scene.lights:
            if pl.on:
                want.append((np.asarray(pl.position), pl.color, pl.intensity, pl.range_m))
        for st in self.world.objects.values():
            if not st.present or not self.world.lamp_lit(st) or not st.illuminates:
                continue
            for ps in st.parts.values():
                em = ps.part.emitter
                if em is None and not st.glow:
                    continue
                m = self.world.part_world(st, ps)
                centre = (m @ np.array([0, 0, ps.part.size[2] / 2, 1.0]))[:3]
                if em is not None:
                    want.append((centre, em.color, em.intensity, em.range_m))
        while len(self._lamp_lights) < len(want):
            light = vtk.vtkLight()
            light.SetLightTypeToSceneLight()
            light.SetPositional(True)
            light.SetConeAngle(self.lamp_cone)
            self.ren.AddLight(light)
            self.xray.AddLight(light)
            self._lamp_lights.append(light)
        for i, light in enumerate(self._lamp_lights):
            if i >= len(want):
                light.SwitchOff()
                continue
            pos, color, inten, rng = want[i]
            light.SwitchOn()
            light.SetPosition(*pos)
            light.SetFocalPoint(pos[0], pos[1], pos[2] - 1.0)
            light.SetColor(*color)
            light.SetIntensity(float(inten) * ((1.0 - 0.5 * day) if self.world.scene.sun is not None else 1.0))
            light.SetAttenuationValues(1.0, 0.0, 12.0 / max(rng, 0.5) ** 2)

    def _sync_object(self, st: ObjectState, day: float) -> None:
        w = self.world
        shown = st.present and not st.held and st.visible
        lit = w.lamp_lit(st)
        app_s = st.appearance_scale
        base_m = st.matrix()
        if app_s is not None:
            s = np.eye(4)
            s[:3, :3] *= app_s
            base_m = base_m @ s
        culled = False
        if st.render == "cull" and shown:
            n = np.asarray(st.render_normal or (1.0, 0.0), dtype=float)
            lo, hi = w.aabb(st)
            rel = np.asarray(self.cam.GetPosition())[:2] - (lo[:2] + hi[:2]) / 2
            culled = float(rel @ n) > 0
        proxy = st.render == "lod_proxy" and shown
        for ps in st.parts.values():
            actor = self.actors[(st.id, ps.part.id)]
            from .geometry import part_matrix

            m = base_m @ part_matrix(ps.part, ps.pose())
            actor.SetUserMatrix(_vtk_matrix(self.vtk, m))
            actor.SetVisibility(bool(shown and not culled and not proxy))
            sig = (ps.material, lit, st.glow, st.appearance_color, round(day, 3), st.render, self._seg_mode)
            if self._sig.get(id(actor)) != sig:
                self._sig[id(actor)] = sig
                prop = actor.GetProperty()
                self._apply_material(prop, ps.material, day, lit=lit and (ps.part.emitter is not None or st.glow),
                                     color=st.appearance_color, emissive_all=True)
                prop.SetBackfaceCulling(False)
                prop.SetFrontfaceCulling(st.render == "flip_normals")
                actor.SetTexture(self._texture(w.material(ps.material).texture))
            in_xray = st.render == "xray"
            if in_xray and not self.xray.HasViewProp(actor):
                self.ren.RemoveActor(actor)
                self.xray.AddActor(actor)
            elif not in_xray and self.xray.HasViewProp(actor):
                self.xray.RemoveActor(actor)
                self.ren.AddActor(actor)
        self._sync_proxy(st, proxy)
        self._sync_projected_shadow(st, shown)

    def _sync_proxy(self, st: ObjectState, on: bool) -> None:
        actor = self.proxies.get(st.id)
        if not on:
            if actor is not None:
                actor.SetVisibility(False)
            return
        vtk = self.vtk
        lo, hi = self.world.aabb(st)
        if actor is None:
            actor = vtk.vtkActor()
            actor.SetMapper(vtk.vtkPolyDataMapper())
            self.ren.AddActor(actor)
            self.proxies[st.id] = actor
        src = vtk.vtkCubeSource()
        src.SetBounds(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2])
        src.Update()
        actor.GetMapper().SetInputData(src.GetOutput())
        cols = [self.world.material(p.material).color for p in st.parts.values()]
        _unlit(actor.GetProperty(), np.mean(cols, axis=0))
        actor.SetVisibility(True)

    def _occluder_keys(self) -> None:
        """Objects that must not cast a shadow-map shadow are drawn in the translucent pass, which the
        shadow baker skips (this VTK exposes no per-actor occluder keys); opaque, they look the same."""
        no_shadow = {st.id for st in self.world.objects.values() if not st.casts_shadow or st.shadow_offset}
        for (oid, _), actor in self.actors.items():
            actor.SetForceTranslucent(oid in no_shadow)

    def _sync_projected_shadow(self, st: ObjectState, shown: bool) -> None:
        """Shadow geometry for cases the shadow map cannot express (hidden caster, displaced shadow)."""
        w = self.world
        want = st.present and not st.held and st.casts_shadow and (
            (not st.visible) or st.shadow_offset is not None) and w.scene.sun is not None
        actor = self.shadow_actors.get(st.id)
        az, el, day = w.daylight()
        if not want or el <= 1.0 or day <= 0:
            if actor is not None:
                actor.SetVisibility(False)
            return
        import trimesh

        d = self._sun_dir
        off = np.asarray(st.shadow_offset or (0.0, 0.0), dtype=float)
        meshes = []
        for ps in st.parts.values():
            mesh = w.mesh(ps).copy()
            mesh.apply_transform(w.part_world(st, ps))
            v = mesh.vertices
            t = v[:, 2] / d[2]
            v2 = v - t[:, None] * d[None, :]
            v2[:, :2] += off
            v2[:, 2] = 0.004
            meshes.append(trimesh.Trimesh(v2, mesh.faces, process=False))
        flat = trimesh.util.concatenate(meshes)
        import pyvista as pv  # present: _poly imported it already

        poly = pv.wrap(flat)
        vtk = self.vtk
        if actor is None:
            actor = vtk.vtkActor()
            actor.SetMapper(vtk.vtkPolyDataMapper())
            self.ren.AddActor(actor)
            self.shadow_actors[st.id] = actor
        actor.GetMapper().SetInputData(poly)
        g = np.asarray(w.material(w.scene.ground.material).color, dtype=float)
        amb = w.scene.ambient * (0.35 + 0.65 * day)
        _unlit(actor.GetProperty(), np.clip(g * amb, 0, 1))
        actor.SetVisibility(True)

    # --- frames -------------------------------------------------------------------------------------
    def _set_camera(self, cam: Camera) -> None:
        eye = np.asarray(cam.eye, dtype=float)
        self.cam.SetPosition(*eye)
        self.cam.SetFocalPoint(*(eye + cam.forward()))
        self.cam.SetViewUp(*cam.up())
        self.cam.SetViewAngle(cam.vfov_deg(self.width, self.height))
        self.cam.SetClippingRange(NEAR, FAR)

    def _grab(self) -> np.ndarray:
        arr = self.vtk.vtkUnsignedCharArray()
        self.win.GetPixelData(0, 0, self.width - 1, self.height - 1, 0, arr, 0)
        img = self.nps.vtk_to_numpy(arr).reshape(self.height, self.width, 3)
        return np.ascontiguousarray(img[::-1])

    def render(self, cam: Camera) -> np.ndarray:
        """RGB frame (H x W x 3 uint8) from `cam`."""
        self._seg_mode = False
        self._set_camera(Camera(cam.eye, cam.yaw_deg, cam.pitch_deg, cam.hfov_deg))
        self.sync()
        if self.shadows:
            self._occluder_keys()
            sig = self._shadow_signature()
            bake = sig != self._last_shadow_sig
            self._passes.SetOpaquePass(self._bake_seq if bake else self._reuse_seq)
            self._last_shadow_sig = sig
            self.ren.SetPass(self._passes)
        self.win.Render()
        return self._grab()

    def render_ids(self, cam: Camera, with_depth: bool = False):
        """Object-index image (int32, 0 = sky, -1 = ground), optionally with metric depth (inf = sky)."""
        self._set_camera(cam)
        self.sync()
        saved = []
        textures = [(a, a.GetTexture()) for a in list(self.actors.values()) + [self._ground]]
        for a, _ in textures:
            a.SetTexture(None)
        for (oid, _), actor in list(self.actors.items()):
            st = self.world.objects[oid]
            prop = actor.GetProperty()
            saved.append((actor, prop))
            actor.SetProperty(self._flat(id_color(st.index), prop))
        for oid, actor in self.proxies.items():
            prop = actor.GetProperty()
            saved.append((actor, prop))
            actor.SetProperty(self._flat(id_color(self.world.objects[oid].index), prop))
        shadow_vis = [(a, a.GetVisibility()) for a in self.shadow_actors.values()]
        for a, _ in shadow_vis:
            a.SetVisibility(False)
        gprop = self._ground.GetProperty()
        self._ground.SetProperty(self._flat(id_color(-1), gprop))
        sprop = self._skirt.GetProperty()
        self._skirt.SetProperty(self._flat(id_color(-1), sprop))
        bg = self.ren.GetBackground()
        self.ren.SetBackground(0, 0, 0)
        self.ren.SetPass(None)
        try:
            self.win.Render()
            img = self._grab().astype(np.int32)
            code = img[..., 0] + (img[..., 1] << 8) + (img[..., 2] << 16)
            ids = np.where(code == 0, 0, code - 2)
            depth = None
            if with_depth:  # the x-ray layer clears depth: read it without that layer
                self.xray.DrawOff()
                self.win.Render()
                depth = self._depth()
                self.xray.DrawOn()
        finally:
            for actor, prop in saved:
                actor.SetProperty(prop)
            for a, tex in textures:
                a.SetTexture(tex)
            for a, v in shadow_vis:
                a.SetVisibility(v)
            self._ground.SetProperty(gprop)
            self._skirt.SetProperty(sprop)
            self.ren.SetBackground(*bg)
        return (ids, depth) if with_depth else ids

    def _flat(self, color, like):
        """An unlit property of exactly `color`, keeping face culling of `like`."""
        flat = self.vtk.vtkProperty()
        flat.SetLighting(False)
        flat.SetAmbient(1.0)
        flat.SetDiffuse(0.0)
        flat.SetSpecular(0.0)
        flat.SetColor(*color)
        flat.SetAmbientColor(*color)
        flat.SetDiffuseColor(*color)
        flat.SetFrontfaceCulling(like.GetFrontfaceCulling())
        flat.SetBackfaceCulling(like.GetBackfaceCulling())
        return flat

    def render_depth(self, cam: Camera) -> np.ndarray:
        """Metric depth along the view axis (float32 H x W, inf where nothing was drawn)."""
        return self.render_ids(cam, with_depth=True)[1]

    def _depth(self) -> np.ndarray:
        arr = self.vtk.vtkFloatArray()
        self.win.GetZbufferData(0, 0, self.width - 1, self.height - 1, arr)
        z = self.nps.vtk_to_numpy(arr).reshape(self.height, self.width)[::-1]
        ndc = 2.0 * z - 1.0
        depth = 2.0 * NEAR * FAR / (FAR + NEAR - ndc * (FAR - NEAR))
        return np.where(z >= 1.0, np.inf, depth).astype(np.float32)


def _unlit(prop, color) -> None:
    """A flat colour that still goes through the lit shader (the shadow pass cannot compile
    unlit shaders: they lack the view-space position its shadow lookup needs)."""
    prop.SetLighting(True)
    prop.SetAmbient(1.0)
    prop.SetDiffuse(0.0)
    prop.SetSpecular(0.0)
    prop.SetColor(*color)
    prop.SetAmbientColor(*color)


def _vtk_matrix(vtk, m: np.ndarray):
    vm = vtk.vtkMatrix4x4()
    for i in range(4):
        for j in range(4):
            vm.SetElement(i, j, float(m[i, j]))
    return vm


def sun_direction(world: World) -> np.ndarray:
    """Unit vector towards the sun now."""
    az, el, _ = world.daylight()
    a, e = np.radians(az), np.radians(el)
    return np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])


__all__ = ["Camera", "Renderer", "look_at", "id_color", "sun_direction", "GROUND_ID"]
