"""Rendering of a running world: VTK offscreen (EGL/OSMesa), first-person RGB, ids and depth.

One `Renderer` per world keeps VTK actors per object (the rigid parts of one material merged
into one actor, each hinged or spinning part on its own) and re-syncs the matrices and
properties of the objects that changed before each frame.  The sun is a directional light with VTK shadow
maps (`vtkShadowMapPass`); lamps are downward spot lights (which also cast shadow maps) placed
at their emitting parts, and emitting parts glow through their ambient (emissive) term.  Shader
replacements on every actor (`_shadow_replacements`) correct VTK's maps (a depth test in metres,
see "shadow shaders") and carry the shadow anomalies: objects left out of the sun's map, a twin of
the sun that keeps their self-shading, and shadow-only stand-ins ("ghosts") for displaced shadows
and hidden casters.  `render_ids` and `render_depth` are internal: flat-coloured object ids
(0 = sky, -1 = ground) and metric depth.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from wac.bundle.terrain import samples as terrain_samples
from wac.errors import WacError

from .atmosphere import fogged, tinted
from .world import ObjectState, World

GROUND_ID = -1
NEAR, FAR = 0.05, 250.0
MAGENTA = (1.0, 0.0, 1.0)

# --- shadow shaders ---------------------------------------------------------------------------------
# VTK's shadow maps (vtkShadowMapBakerPass, vtkShadowMapPass 9.x) go wrong in four ways, each fixed by
# post-replacements on every actor's fragment shader (applied after VTK's own, `_shadow_replacements`):
# * The baker stores exp(11 * depth), depth 0..1 over the light camera's whole range, and the lookup
#   shades by exp(11 * (occluder - receiver)).  Over a street's 60-100 m of depth that stays near 1
#   for anything less than a few metres above what it shades: a car's shadow was 3 L* deep.  Maps now
#   hold the depth itself and the lookup compares it in metres (SHADOW_BIAS_M, SHADOW_RAMP_M).
# * The texture is multiplied into the baked value after it is written: a textured ground "shadowed"
#   itself by its texture, about as deep as the real shadows on it.  The depth is written last.
# * The baker renders each map with the light camera at the frame's aspect ratio (the projection comes
#   from the window's size, not the map's) and the lookup with aspect 1: a 4:3 frame's maps were
#   squeezed across, and shadows away from the map's centre landed metres from where the sun puts them.
# * The baker sets up its depth shader only on the props the camera's culling kept, and bakes the rest
#   with their colour shaders.  A sun map is told by its parallel light camera (no view is parallel),
#   so any shader writes depth there; for lamp maps (perspective) `render` bakes with culling off.
SHADOW_BIAS_M = 0.02  # a receiver this far behind the nearest occluder (along the light) starts to darken...
SHADOW_RAMP_M = 0.03  # ...and is fully shadowed this much further on (crisp, and no acne on flat faces)
_BAKE = "gl_FragData[0].r = exp(depthC * ldepth);"  # the baker's write, after its `ldepth`
_END = "//VTK::DepthPeeling::Impl"  # after lighting and texturing: the last word on the fragment
_LOOKUP = "expFactor = depthCExpBlured * depthCExpActual;"  # in vtkShadowMapPass's calcShadow
_LOOKUP_METRIC = (  # (VTK's names: `depthCExpBlured` is the filtered map, now a depth)
    f"expFactor = 1.0 - smoothstep({SHADOW_BIAS_M:.4f}, {SHADOW_BIAS_M + SHADOW_RAMP_M:.4f}, "
    "(ldepth - depthCExpBlured) * (sFarZ - sNearZ));"
)
_PROJECTED = "vec2 projected = shadowCoord.xy/shadowCoord.w;"
# While an object casts no shadow (or a displaced one), the sun gets a twin (`Renderer.sun_twin`): a
# light of no intensity, SUN_TWIN_RAD off the sun, whose map holds every real object, as the clean
# world's sun map does.  The sun's own map leaves such objects out and holds the ghosts; the objects
# themselves are shaded from the twin's map, so they keep their own shading (a crown over its trunk)
# exactly.  A twin bake is told from a sun bake by the light the light camera looks along (light 0 =
# the sun, 1 = the twin: `_order_lights` puts them first).
SUN_TWIN_RAD = 1e-7
_BAKING_TWIN = (
    "cameraParallel == 1 && "
    "dot(lightDirectionVC1.xy, lightDirectionVC1.xy) < dot(lightDirectionVC0.xy, lightDirectionVC0.xy)"
)


def _shadow_replacements(
    role: str, twin: bool, aspect: float, own_lights: tuple[int, ...] = ()
) -> list[tuple[str, str]]:
    """(original, replacement) post-replacements of an actor's fragment shader for its shadow role:
    "cast" (an ordinary object, the ground), "backdrop" (the skirt: casts, so that the maps hold a
    depth where nothing stands, but takes no shadow, not even the ground's edge's), "self" (shades
    itself but casts nothing on others: no shadow, or a displaced one) or "ghost" (a shadow-only
    stand-in, never drawn).  `twin`: the sun's
    twin is on; `aspect`: the frame's width / height; `own_lights`: the lights (shader numbers) of the
    actor's own lamp, which it does not shade: its bulb and shade are closed solids around the light
    (a real shade is open); a light's map is baked from where the light is, its position in view 0."""

    def bake(depth: str) -> str:
        write = f"gl_FragData[0] = vec4({depth}, 0.0, 0.0, 1.0);"
        if role == "self" and not twin:
            return "discard;"
        if role == "self":
            return f"if (!({_BAKING_TWIN})) discard; {write}"
        if role == "ghost" and twin:
            return f"if ({_BAKING_TWIN}) discard; {write}"
        return write

    own = " || ".join(f"length(lightPositionVC{k}) < 0.001" for k in own_lights)
    end = (
        "#ifdef WAC_BAKE\n"  # the baker's shader: `ldepth` is the depth it stores
        + (f"if ({own}) discard;\n" if own else "")
        + bake("ldepth")
        + "\n"
        "#else\n"  # any other: a sun bake of a prop the camera culled, or a frame
        f"if (cameraParallel == 1) {{ {bake('gl_FragCoord.z')} }}\n"
        + ("else discard;\n" if role == "ghost" else "")
        + f"#endif\n{_END}"
    )
    reps = [
        (_BAKE, "\n#define WAC_BAKE\n"),
        (_END, end),
        (_LOOKUP, "expFactor = 1.0;" if role == "backdrop" else _LOOKUP_METRIC),
        (_PROJECTED, f"{_PROJECTED}\n    projected.x = 0.5 + (projected.x - 0.5) * {1.0 / aspect:.9f};"),
    ]
    if role == "self" and twin:  # shaded from the twin's map, which holds it
        reps += [
            (f"{t} += ({f} * factor0.r * lightColor0);", f"{t} += ({f} * factor1.r * lightColor0);")
            for t, f in (("diffuse", "df"), ("specular", "sf"))
        ]
    return reps


def _vtk():
    """Import VTK for offscreen use (EGL when there is no display)."""
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
    try:
        import vtk
        from vtkmodules.util import numpy_support
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise WacError(
            "rendering needs the 'vtk' package (via 'pyvista'): pip install 'wac[runtime]'"
        ) from exc
    return vtk, numpy_support


# Polydata by part geometry (shape, size, mesh asset, rest pose), shared by every renderer of a
# process: the clean and perturbed runs of a self-check, and successive episodes, draw the same
# objects, and building their geometry is a large part of a world's start-up.  Never mutated
# once built; cleared when it grows past _CACHE_MAX entries.
_POLYS: dict = {}
_MERGED: dict = {}
_CACHE_MAX = 4096


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


@dataclass
class _Group:
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


class Renderer:
    """Offscreen VTK renderer bound to one `World`."""

    def __init__(
        self,
        world: World,
        width: int = 640,
        height: int = 480,
        hfov_deg: float = 90.0,
        shadows: bool = True,
        shadow_resolution: int | None = None,
        lamp_shadows: bool | None = None,
    ) -> None:
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
        if shadow_resolution is None:
            # the sun's map spans the whole ground and needs the texels; a lamp's 160-degree map at 1024
            # texels looks the same as at 2048 (mean pixel difference 0.005 of 255 in the living room, with
            # the shadow fixes) at a third of the bake time and a quarter of the memory
            shadow_resolution = 2048 if world.scene.sun is not None else 1024
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
        self.sun_twin = vtk.vtkLight()  # see SUN_TWIN_RAD
        self.sun_twin.SetLightTypeToSceneLight()
        self.sun_twin.SetPositional(False)
        self.sun_twin.SetIntensity(0.0)
        self.sun_twin.SwitchOff()
        self.ren.AddLight(self.sun_twin)
        self._lamp_lights: list = []
        for cache in (_POLYS, _MERGED):  # shared by the renderers of one process, bounded
            if len(cache) > _CACHE_MAX:
                cache.clear()
        self._polys: dict = _POLYS
        self._textures: dict = {}
        self.actors: dict[tuple[str, str], object] = {}  # (object id, part id) -> the actor drawing that part
        self.groups: dict[str, list[_Group]] = {}  # object id -> its actors
        self._group_sig: dict[str, tuple] = {}
        self._merged: dict[tuple, object] = (
            _MERGED  # merged polydata of rigid part groups (shared by equal objects)
        )
        self._pose_key: dict[str, tuple] = {}  # object id -> pose key its actor matrices were set for
        self.proxies: dict[str, object] = {}
        self.ghosts: dict[str, object] = {}  # object id -> its shadow-only stand-in
        self._ghost_key: dict[str, tuple] = {}
        self._roles: dict[
            int, tuple
        ] = {}  # id(actor) -> (shadow role, twin on, lights hidden, own lights) of its shader
        self._lamp_src: list[
            tuple[str | None, bool]
        ] = []  # per lamp light: (its object, it lights that object alone)
        self._light_order: dict[int, tuple] = {}  # id(renderer) -> the lights it holds, in order
        self._sources: dict[
            int, list
        ] = {}  # id(renderer) -> per light: (its object, it lights that object alone)
        self._proxy_key: dict[str, tuple] = {}
        self._sig: dict = {}
        self._ground_day: float | None = None
        self._order_dirty = True
        self._built_version = -1
        self._ground = self._make_ground()
        self._anchor_bounds()
        self._culler = self.ren.GetCullers().GetItemAsObject(0)  # frustum culling, off while lamp maps bake
        self._passes = None
        if shadows:
            self._passes = self._shadow_passes(shadow_resolution)
        self._seg_mode = False
        self._baked = None  # (global key, object keys, object boxes) at the last shadow bake
        self.bakes = 0

    # --- shadow maps -----------------------------------------------------------------------------
    def _map_state(self) -> tuple[tuple, dict[str, tuple]]:
        """What the shadow maps depend on: a global part (shadow-casting lights and the scene bounds
        VTK fits the light cameras to) and one key per object (its actors' poses and whether the
        shadow bake draws them)."""
        lights = [
            (self.sun.GetSwitch(), self.sun.GetPosition()),
            (self.sun_twin.GetSwitch(), self.sun_twin.GetPosition()),
        ]
        lights += [(lt.GetSwitch(), lt.GetPosition(), lt.GetConeAngle()) for lt in self._lamp_lights]
        objs = {}
        for oid, groups in self.groups.items():
            drawn = tuple(
                self._roles.get(id(g.actor))
                if g.actor.GetVisibility()
                and g.actor.GetProperty().GetOpacity() >= 1.0
                and not self.xray.HasViewProp(g.actor)
                else None
                for g in groups
            )  # (how the bake draws it)
            extra = tuple(
                (a.GetVisibility(), a.GetBounds())
                for a in (self.proxies.get(oid), self.ghosts.get(oid))
                if a is not None
            )
            render = self.world.objects[oid].render  # flipped normals bake back faces
            objs[oid] = (self._pose_key.get(oid), drawn, extra, render) if any(drawn) or extra else (None,)
        return (tuple(lights), self._scene_bounds()), objs

    def _scene_bounds(self) -> tuple:
        """The bounds VTK fits directional light cameras to (every prop, drawn or not); the invisible
        anchor makes them constant unless something leaves it, so a re-bake after an object moved
        gives the same map everywhere else."""
        props = self.ren.GetViewProps()
        props.InitTraversal()
        b = np.array(self._anchor_box, dtype=float)
        for _ in range(props.GetNumberOfItems()):
            pb = props.GetNextProp().GetBounds()
            if pb is not None and pb[0] <= pb[1]:
                b[0::2] = np.minimum(b[0::2], pb[0::2])
                b[1::2] = np.maximum(b[1::2], pb[1::2])
        return tuple(b.tolist())

    def _object_box(self, oid: str) -> np.ndarray | None:
        """World bounds (lo, hi) of everything drawn for an object, from its actors."""
        acts = [g.actor for g in self.groups.get(oid, ())]
        acts += [
            a for a in (self.proxies.get(oid), self.ghosts.get(oid)) if a is not None and a.GetVisibility()
        ]
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        for a in acts:
            b = a.GetBounds()
            if b is not None and b[0] <= b[1]:
                lo, hi = np.minimum(lo, b[0::2]), np.maximum(hi, b[1::2])
        return None if not np.isfinite(lo).all() else np.array([lo, hi])

    def _need_bake(self, cam: Camera) -> bool:
        """Re-bake the shadow maps only when what changed since the last bake can show: a change of
        lights or of the scene bounds always, a moved, shown or hidden object only when its shadow
        volume (its bounds then and now, swept away from every shadow-casting light) reaches into
        the view.  Shadow maps are sampled only where receivers project, so skipping a bake that no
        visible receiver samples gives the same pixels as baking."""
        glob, objs = self._map_state()
        if self._baked is None or glob != self._baked[0]:
            return self._record_bake(glob, objs)
        baked_objs, boxes = self._baked[1], self._baked[2]
        changed = [oid for oid in objs.keys() | baked_objs.keys() if objs.get(oid) != baked_objs.get(oid)]
        if not changed:
            return False
        for oid in changed:
            box = [b for b in (boxes.get(oid), self._object_box(oid)) if b is not None]
            if box and self._shadow_volume_in_view(np.vstack(box), cam):
                return self._record_bake(glob, objs)
        return False  # the maps are stale only where no visible receiver samples them

    def _record_bake(self, glob: tuple, objs: dict) -> bool:
        self._baked = (glob, objs, {oid: b for oid in objs if (b := self._object_box(oid)) is not None})
        self.bakes += 1
        return True

    def _shadow_volume_in_view(self, pts: np.ndarray, cam: Camera) -> bool:
        """Whether the region a box can shadow (swept from every shadow-casting light) may be seen."""
        lo, hi = pts.min(axis=0) - 0.3, pts.max(axis=0) + 0.3  # + a few texels of shadow-map filtering
        corners = np.array(
            [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
        )
        ab = self._anchor_box
        z0 = ab[4]
        reach = float(np.linalg.norm([ab[1] - ab[0], ab[3] - ab[2], ab[5] - ab[4]]))
        swept = [corners]
        if self.sun.GetSwitch():
            d = np.asarray(self.sun.GetPosition(), dtype=float)
            d = d / max(float(np.linalg.norm(d)), 1e-9)
            t = (corners[:, 2] - z0) / max(d[2], 0.05)
            swept.append(corners - t[:, None] * d[None, :])
        for lt in self._lamp_lights:
            if lt.GetSwitch() and lt.GetPositional() and lt.GetConeAngle() < 90.0:
                away = corners - np.asarray(lt.GetPosition(), dtype=float)
                swept.append(corners + away / np.maximum(np.linalg.norm(away, axis=1), 1e-6)[:, None] * reach)
        pts = np.vstack(swept) - np.asarray(cam.eye, dtype=float)
        f, up = cam.forward(), cam.up()
        right = np.cross(f, up)
        th = np.tan(np.radians(cam.hfov_deg) / 2) * 1.05
        tv = np.tan(np.radians(cam.vfov_deg(self.width, self.height)) / 2) * 1.05
        z = pts @ f
        for n in (right + th * f, -right + th * f, up + tv * f, -up + tv * f):
            if (pts @ n < 0).all():
                return False  # all beyond one side of the view
        return not (z < NEAR).all()

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

    def _groups(self, st: ObjectState) -> list[_Group]:
        """The object's actors, (re)built when its parts' materials or rest poses changed.  Rigid parts
        of one material (and emission) share one actor over merged geometry: fewer actors make every
        pass cheaper (each costs about as much as shading a few thousand pixels in software GL)."""
        sig = tuple((pid, ps.material, ps.position, ps.rotation_deg) for pid, ps in st.parts.items())
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
            actor = self.vtk.vtkActor()
            actor.SetMapper(self._mapper(poly))
            self.ren.AddActor(actor)
            g = _Group(
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

    # --- materials ----------------------------------------------------------------------------
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

    # --- per-frame sync ----------------------------------------------------------------------------
    def sync(self) -> None:
        w = self.world
        if self._built_version != w.version or len(self.groups) != len(w.objects):
            self._build()
        az, el, day = w.daylight()
        sun = w.scene.sun
        sky = np.asarray(w.scene.sky_color, dtype=float)
        night = np.array([0.02, 0.03, 0.08])
        self.ren.SetBackground(*(sky * day + night * (1 - day)))
        d = np.array(
            [
                np.cos(np.radians(el)) * np.cos(np.radians(az)),
                np.cos(np.radians(el)) * np.sin(np.radians(az)),
                np.sin(np.radians(el)),
            ]
        )
        self._sun_dir = d
        if sun is not None and el > 0.5 and day > 0:
            self.sun.SetPosition(*(d * 100.0))
            self.sun.SetFocalPoint(0, 0, 0)
            self.sun.SetColor(*sun.color)
            self.sun.SetIntensity(sun.intensity * day)
            self.sun.SwitchOn()
        else:
            self.sun.SwitchOff()
        self._sync_twin()
        if self._ground_day != day:
            self._apply_material(self._ground.GetProperty(), w.scene.ground.material, day, lit=False)
            self._apply_material(self._skirt.GetProperty(), w.scene.ground.material, day, lit=False)
            self._ground_day = day
        self._sync_lamps(day)
        self._set_shader(self._ground, "cast")
        self._set_shader(self._skirt, "backdrop")
        for st in w.objects.values():
            self._sync_object(st, day)
        if self._order_dirty:
            self._order()

    def _sync_twin(self) -> None:
        """The sun's twin is on while the sun shines and a shown object casts no shadow of its own on
        others (see SUN_TWIN_RAD)."""
        w = self.world
        on = (
            self.shadows
            and bool(self.sun.GetSwitch())
            and any(
                st.present and not st.held and st.visible and _shadow_role(st) == "self"
                for st in w.objects.values()
            )
        )
        if not on:
            if self.sun_twin.GetSwitch():
                self.sun_twin.SwitchOff()
            return
        d = self._sun_dir
        side = np.cross(d, (0.0, 0.0, 1.0))
        side = side / np.linalg.norm(side) if np.linalg.norm(side) > 1e-6 else np.array([1.0, 0.0, 0.0])
        pos = tuple(float(v) for v in (d + SUN_TWIN_RAD * side) * 100.0)
        if tuple(self.sun_twin.GetPosition()) != pos:
            self.sun_twin.SetPosition(*pos)
            self.sun_twin.SetFocalPoint(0, 0, 0)
        if not self.sun_twin.GetSwitch():
            self.sun_twin.SwitchOn()

    def _set_shader(self, actor, role: str, oid: str | None = None) -> None:
        """Set up the actor's shader for its shadow role (`_shadow_replacements`) and the lights that
        must not reach it (a lamp that lights nothing but itself), when either changed.

        An actor drawn without the shadow pass in a frame (translucent, or in the x-ray layer) gets
        a program of its own.  Props the camera culled are baked into sun maps with their plain
        shaders, and VTK sets a program's light directions only when the camera changed since it
        last did: a plain program shared with such an actor kept the light camera's directions for
        the frame (water and lantern glass lit from the wrong side, unless a light mask happened
        to make their programs differ)."""
        twin = bool(self.sun_twin.GetSwitch()) and role in ("self", "ghost")
        in_xray = self.xray.HasViewProp(actor)
        srcs = self._sources.get(id(self.xray if in_xray else self.ren), ())
        hidden = tuple(k for k, (src, alone) in enumerate(srcs) if alone and src != oid)
        own = tuple(
            k for k, (src, _) in enumerate(srcs) if oid is not None and src == oid and self.lamp_cone < 90.0
        )  # (only spot lamps have shadow maps)
        plain = bool(in_xray or actor.GetProperty().GetOpacity() < 1.0)
        if self._roles.get(id(actor)) == (role, twin, hidden, own, plain):
            return
        self._roles[id(actor)] = (role, twin, hidden, own, plain)
        sp = actor.GetShaderProperty()
        sp.ClearAllFragmentShaderReplacements()
        reps = _shadow_replacements(role, twin, self.width / self.height, own)
        reps += [(f"uniform vec3 lightColor{k};", f"const vec3 lightColor{k} = vec3(0.0);") for k in hidden]
        if plain:
            reps.append(("void main()", "// drawn without the shadow pass\nvoid main()"))
        for old, new in reps:
            sp.AddFragmentShaderReplacement(old, False, new, False)

    def _order_lights(self) -> None:
        """Each renderer holds just the lights that are on, the sun and its twin first.  The shaders
        number lights that are on; the shadow pass numbers every light of the renderer, so a light
        switched off ahead of others (the sun indoors) gave every lamp the shadow map of the one
        before it."""
        lamps = [lt for lt in self._lamp_lights if lt.GetSwitch()]
        src = dict(zip(map(id, self._lamp_lights), self._lamp_src, strict=True))
        for ren, first in ((self.ren, (self.sun, self.sun_twin)), (self.xray, (self.sun,))):
            want = [lt for lt in first if lt.GetSwitch()] + lamps
            # per light, in the shaders' order: (the object it comes from, it lights only that object)
            self._sources[id(ren)] = [src.get(id(lt), (None, False)) for lt in want]
            key = tuple(map(id, want))
            if self._light_order.get(id(ren)) != key:
                self._light_order[id(ren)] = key
                ren.RemoveAllLights()
                for lt in want:
                    ren.AddLight(lt)

    def _sync_lamps(self, day: float) -> None:
        vtk = self.vtk
        want = []  # (position, colour, intensity, range, (its object, it lights that object alone))
        for pl in self.world.scene.lights:
            if pl.on:
                want.append((np.asarray(pl.position), pl.color, pl.intensity, pl.range_m, (None, False)))
        for st in self.world.objects.values():
            if not st.present or not self.world.lamp_lit(st):
                continue
            for ps in st.parts.values():
                em = ps.part.emitter
                if em is None and not st.glow:
                    continue
                m = self.world.part_world(st, ps)
                centre = (m @ np.array([0, 0, ps.part.size[2] / 2, 1.0]))[:3]
                if em is not None:  # a lamp that lights nothing still lights itself, as in the clean world
                    want.append((centre, em.color, em.intensity, em.range_m, (st.id, not st.illuminates)))
        while len(self._lamp_lights) < len(want):
            light = vtk.vtkLight()
            light.SetLightTypeToSceneLight()
            light.SetPositional(True)
            light.SetConeAngle(self.lamp_cone)
            self._lamp_lights.append(light)
        self._lamp_src = [w[4] for w in want] + [(None, False)] * (len(self._lamp_lights) - len(want))
        for i, light in enumerate(self._lamp_lights):
            if i >= len(want):
                light.SwitchOff()
                continue
            pos, color, inten, rng, _ = want[i]
            light.SwitchOn()
            light.SetPosition(*pos)
            light.SetFocalPoint(pos[0], pos[1], pos[2] - 1.0)
            light.SetColor(*color)
            light.SetIntensity(
                float(inten) * ((1.0 - 0.5 * day) if self.world.scene.sun is not None else 1.0)
            )
            light.SetAttenuationValues(1.0, 0.0, 12.0 / max(rng, 0.5) ** 2)
        self._order_lights()

    def _sync_object(self, st: ObjectState, day: float) -> None:
        w = self.world
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
        visible = bool(shown and not culled and not proxy)
        role = _shadow_role(st)
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
        _unlit(actor.GetProperty(), np.mean(cols, axis=0))
        actor.SetVisibility(True)

    def _sync_ghost(self, st: ObjectState) -> None:
        """The shadow-only stand-in of an object whose shadow does not come from where it is drawn: a
        displaced shadow (its parts moved by the offset) or a hidden object that still casts one.  It
        is baked into the shadow maps like the object would be and never drawn (`_shadow_replacements`),
        so its shadow looks like any other and falls on whatever lies there."""
        want = (
            self.shadows
            and st.present
            and not st.held
            and st.casts_shadow
            and (not st.visible or st.shadow_offset is not None or st.render == "xray")
        )  # an x-ray object is drawn in a layer that is never baked: its shadow comes from here
        actor = self.ghosts.get(st.id)
        if not want:
            if actor is not None and actor.GetVisibility():
                actor.SetVisibility(False)
            return
        off = np.asarray(st.shadow_offset or (0.0, 0.0), dtype=float)
        key = (self._pose_key.get(st.id), self._group_sig.get(st.id), off.tobytes())
        if actor is None:
            actor = self.vtk.vtkActor()
            actor.SetMapper(self._mapper(None))
            _unlit(actor.GetProperty(), (0.0, 0.0, 0.0))
            self.ren.AddActor(actor)
            self.ghosts[st.id] = actor
        self._set_shader(actor, "ghost", st.id)
        if (
            self._ghost_key.get(st.id) != key
        ):  # the drawn actors' geometry where they stand, moved by the offset
            self._ghost_key[st.id] = key
            import pyvista as pv  # present: _poly imported it already

            app = self.vtk.vtkAppendPolyData()
            for g in self.groups.get(st.id, ()):
                um = g.actor.GetUserMatrix()
                m = np.array([[um.GetElement(i, j) for j in range(4)] for i in range(4)])
                m[:2, 3] += off
                app.AddInputData(pv.wrap(g.actor.GetMapper().GetInput()).transform(m, inplace=False))
            app.Update()
            actor.GetMapper().SetInputData(app.GetOutput())
        if not actor.GetVisibility():
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
            bake = self._need_bake(cam)
            self._passes.SetOpaquePass(self._bake_seq if bake else self._reuse_seq)
            self.ren.SetPass(self._passes)
            # lamp maps need the baker's shaders on every prop, which it sets up on those the camera's
            # culling kept only: bake them with culling off (a sun map needs no such help: "shadow shaders")
            cull = not (
                bake
                and any(
                    lt.GetPositional() and lt.GetConeAngle() < 90.0
                    for lt in self._lamp_lights
                    if lt.GetSwitch()
                )
            )
            cullers = self.ren.GetCullers()
            if not cull and cullers.GetNumberOfItems():
                cullers.RemoveAllItems()
            elif cull and not cullers.GetNumberOfItems():
                cullers.AddItem(self._culler)
        scene = self.world.scene
        if scene.fog is None:
            self.win.Render()
            return tinted(self._grab(), scene.tint)
        self.xray.DrawOff()  # the x-ray layer clears depth: read it without that layer
        self.win.Render()
        depth = self._depth()
        self.xray.DrawOn()
        self.win.Render()
        fog = scene.fog
        color = np.asarray(fog.color if fog.color is not None else self.ren.GetBackground(), dtype=float)
        return tinted(fogged(self._grab(), depth, fog, color), scene.tint)

    def render_ids(self, cam: Camera, with_depth: bool = False):
        """Object-index image (int32, 0 = sky, -1 = ground), optionally with metric depth (inf = sky)."""
        self._set_camera(cam)
        self.sync()
        saved = []
        actors = [(oid, g.actor) for oid, groups in self.groups.items() for g in groups]
        textures = [(a, a.GetTexture()) for _, a in actors] + [(self._ground, self._ground.GetTexture())]
        for a, _ in textures:
            a.SetTexture(None)
        for oid, actor in actors:
            st = self.world.objects[oid]
            prop = actor.GetProperty()
            saved.append((actor, prop))
            actor.SetProperty(self._flat(id_color(st.index), prop))
        for oid, actor in self.proxies.items():
            prop = actor.GetProperty()
            saved.append((actor, prop))
            actor.SetProperty(self._flat(id_color(self.world.objects[oid].index), prop))
        shadow_vis = [(a, a.GetVisibility()) for a in self.ghosts.values()]
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


def _shadow_role(st: ObjectState) -> str:
    """How an object's drawn parts take part in the shadow maps (`_shadow_replacements`)."""
    return "cast" if st.casts_shadow and st.shadow_offset is None else "self"


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
