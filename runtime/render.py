"""Rendering of a running world: VTK offscreen (EGL/OSMesa), first-person RGB, ids and depth.

One `Renderer` per world keeps VTK actors per object (the rigid parts of one material merged
into one actor, each hinged or spinning part on its own) and re-syncs the matrices and
properties of the objects that changed before each frame.  The sun is a directional light with VTK shadow
maps (`vtkShadowMapPass`); lamps are downward spot lights (which also cast shadow maps) placed
at their emitting parts, and emitting parts glow through their ambient (emissive) term.  Shader
replacements on every actor (`render_shadows._shadow_replacements`) correct VTK's maps (a depth test in metres,
see "shadow shaders") and carry the shadow anomalies: objects left out of the sun's map, a twin of
the sun that keeps their self-shading, and shadow-only stand-ins ("ghosts") for displaced shadows
and hidden casters.  `render_ids` and `render_depth` are internal: flat-coloured object ids
(0 = sky, -1 = ground) and metric depth.

The `Renderer` is put together from its parts: `render_scene.SceneActors` (actors from the world's
objects), `render_lights.Lamps`, `render_shadows.ShadowMaps` (shadow shaders, bakes, twin, ghosts),
`render_probe.ViewProbe` (how many pixels of a trigger's target the camera shows),
`render_flat.FlatTwins` (the scene's flat twin, which draws the ids, depth and probe counts); this
module sets up their shared VTK state and makes the frames.  `camera.py` holds the `Camera`.
"""

from __future__ import annotations

import atexit
import os
import threading
from dataclasses import dataclass

import numpy as np

from wac.errors import WacError

from .atmosphere import fogged, tinted
from .camera import FAR, NEAR, Camera, look_at
from .render_flat import FlatTwins, id_color
from .render_lights import Lamps
from .render_probe import ViewProbe
from .render_reuse import Reuse, park, release_parked, unpark
from .render_scene import ActorGroup, SceneActors, shared_geometry
from .render_shadows import ShadowMaps
from .world import World

GROUND_ID = -1


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


@dataclass
class _Slot:
    """An offscreen render window handed from one renderer of the process to the next (a task's
    clean and perturbed worlds, the tasks of a scene), up to `_SLOT_USES` of them: a new window per
    world made a worker's memory grow by about 12 MB a world (to 5 GB over the corpus in one
    process).  Shadow passes are never handed on: a VTK shadow pass that baked another renderer's
    lamps shades the next renderer's wrongly even after a new bake (a lamp that lights nothing lit
    the room)."""

    win: object
    uses: int = 0  # renderers that had it
    main: bool = True  # made in the main thread (see `_pooled`)


_SLOTS: dict[tuple[int, int], list[_Slot]] = {}  # (width, height) -> slots free for a renderer
_SLOTS_KEPT = 2  # per size: a task's two worlds one after the other, or an MCP session's
# renderers per window: a GL context keeps a little of each renderer it served; a new window now and
# then keeps a worker's memory flat
_SLOT_USES = 16


def _pooled() -> bool:
    """Windows are handed on in the main thread only: an EGL context is bound to the thread that
    made it current, and a window another thread (a server's worker) left crashed the next render."""
    return threading.current_thread() is threading.main_thread()


def _slot(vtk, width: int, height: int) -> _Slot:
    """A free slot of this size the process made before, else a new window."""
    free = _SLOTS.get((width, height)) if _pooled() else None
    if free:
        slot = free.pop()
        slot.uses += 1
        return slot
    win = vtk.vtkRenderWindow()
    win.SetOffScreenRendering(1)
    win.SetSize(width, height)
    win.SetMultiSamples(0)
    win.SetNumberOfLayers(2)
    return _Slot(win, main=_pooled())


def _release(slot: _Slot, renderers) -> None:
    """Give a renderer's window back for the next one (or close it when enough are kept)."""
    win = slot.win
    for ren in renderers:
        ren.ReleaseGraphicsResources(win)
        win.RemoveRenderer(ren)
    free = _SLOTS.setdefault(tuple(win.GetSize()), [])
    if slot.main and _pooled() and len(free) < _SLOTS_KEPT and slot.uses < _SLOT_USES:
        free.append(slot)
    else:
        win.Finalize()


@atexit.register
def _close_slots() -> None:
    release_parked()
    for free in _SLOTS.values():
        for slot in free:
            slot.win.Finalize()
        free.clear()


def _lamp_cone(world: World, lamp_shadows: bool | None) -> float:
    """Lamps' cone angle.  VTK bakes shadow maps for directional and spot lights only: lamps become
    80-degree downward spots when `lamp_shadows` (one more shadow map each), else 180-degree point
    lights.  Default: lamp shadows in scenes without a sun (indoor), where they are the only shadows."""
    if lamp_shadows is None:
        lamp_shadows = world.scene.sun is None
    return 80.0 if lamp_shadows else 180.0


def _reuse_key(width, height, hfov_deg, shadows, lamp_cone) -> tuple:
    """The settings a kept renderer must have been made with to take a world (render_reuse.py)."""
    return (int(width), int(height), float(hfov_deg), bool(shadows), float(lamp_cone))


class Renderer(SceneActors, Lamps, ShadowMaps, ViewProbe, FlatTwins, Reuse):
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
        self.lamp_cone = _lamp_cone(world, lamp_shadows)
        if shadow_resolution is None:
            # the sun's map spans the whole ground and needs the texels; a lamp's 160-degree map at 1024
            # texels looks the same as at 2048 (mean pixel difference 0.005 of 255 in the living room, with
            # the shadow fixes) at a third of the bake time and a quarter of the memory
            shadow_resolution = 2048 if world.scene.sun is not None else 1024
        self._slot = _slot(vtk, self.width, self.height)
        self.win = self._slot.win
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
        self._flat_setup()
        self.sun_twin = vtk.vtkLight()  # see SUN_TWIN_RAD
        self.sun_twin.SetLightTypeToSceneLight()
        self.sun_twin.SetPositional(False)
        self.sun_twin.SetIntensity(0.0)
        self.sun_twin.SwitchOff()
        self.ren.AddLight(self.sun_twin)
        self._lamp_lights: list = []
        polys, merged = shared_geometry()
        self._polys: dict = polys
        self._textures: dict = {}
        self.actors: dict[tuple[str, str], object] = {}  # (object id, part id) -> the actor drawing that part
        self.groups: dict[str, list[ActorGroup]] = {}  # object id -> its actors
        self._group_sig: dict[str, tuple] = {}
        self._merged: dict[tuple, object] = (
            merged  # merged polydata of rigid part groups (shared by equal objects)
        )
        self._pose_key: dict[str, tuple] = {}  # object id -> pose key its actor matrices were set for
        self._reversed_polys: dict[int, tuple] = {}  # id(poly) -> (poly, its faces wound the other way)
        self.proxies: dict[str, object] = {}
        self.ghosts: dict[str, object] = {}  # object id -> its shadow-only stand-in
        self._ghost_key: dict[str, tuple] = {}
        self._roles: dict[
            int, tuple
        ] = {}  # id(actor) -> (shadow role, twin on, lights hidden, own lights, plain, light kinds)
        self._lamp_src: list[
            tuple[str | None, bool]
        ] = []  # per lamp light: (its object, it lights that object alone)
        self._light_order: dict[int, tuple] = {}  # id(renderer) -> the lights it holds, in order
        self._sources: dict[
            int, list
        ] = {}  # id(renderer) -> per light: (its object, it lights that object alone)
        self._kinds: dict[int, tuple] = {}  # id(renderer) -> per light: (positional, spot)
        self._proxy_key: dict[str, tuple] = {}
        self._stand_ins: dict[tuple, object] = {}  # probe stand-in actors by pose (render_probe.py)
        self._actor_bounds: dict[str, tuple] = {}  # object -> (pose key, actors, bounds) (render_probe.py)
        self._sig: dict = {}
        self._ground_day: float | None = None
        self._order_dirty = True
        self._built_version = -1
        self._ground = self._make_ground()
        self._anchor_bounds()
        self._culler = self.ren.GetCullers().GetItemAsObject(0)  # frustum culling, off while lamp maps bake
        self._passes = None
        if shadows:
            self._passes, self._bake_seq, self._reuse_seq, self._bake_only = self._shadow_passes(
                shadow_resolution
            )
        self._seg_mode = False
        self._cutaway = False  # the frame's camera cuts away ceilings and roofs (`Camera.cutaway`)
        self._changed = world.watch()  # objects assigned since the last `sync`
        self._scene_sig: tuple | None = None  # what every object's look depends on, at the last `sync`
        self._baked = None  # (global key, object keys, object boxes) at the last shadow bake
        self.bakes = 0
        self._reuse_key = _reuse_key(self.width, self.height, self.hfov, self.shadows, self.lamp_cone)
        self._reuse_setup()

    @classmethod
    def open(
        cls, world: World, width: int = 640, height: int = 480, hfov_deg: float = 90.0, shadows: bool = True
    ) -> Renderer:
        """A renderer for `world`: the one the process kept from a world of an equal scene, re-bound to
        this one (render_reuse.py), else a new one."""
        if _pooled():
            got = unpark(world, _reuse_key(width, height, hfov_deg, shadows, _lamp_cone(world, None)))
            if got is not None:
                return got
        return cls(world, width, height, hfov_deg, shadows=shadows)

    def close(self) -> None:
        """Done with this world: kept for the next world of an equal scene when it can be
        (render_reuse.py), else its window is handed on and its resources released."""
        if self.win is not None and _pooled() and park(self):
            return
        self._release_now()

    def _release_now(self) -> None:
        if self.win is not None:
            self.ren.SetPass(None)  # before its passes and renderers release their resources
            if self._passes is not None:
                self._passes.ReleaseGraphicsResources(self.win)
            _release(self._slot, (self.ren, self.xray, *self._flat_renderers()))
            self.win = None

    def sync(self) -> None:
        """Bring the actors in line with the world: the objects assigned since the last sync, those
        whose look depends on the camera (`cull`), or every object when something they all depend on
        changed (daylight, lamps, the sun's twin, the scene, the set of objects)."""
        w = self.world
        rebuilt = self._built_version != w.version or len(self.groups) != len(w.objects)
        if rebuilt:
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
        sig = (
            day,
            self._seg_mode,
            self._cutaway,
            bool(self.sun_twin.GetSwitch()),
            tuple(self._sources.get(id(self.ren), ())),
            tuple(self._sources.get(id(self.xray), ())),
            self._kinds.get(id(self.ren)),
            self._kinds.get(id(self.xray)),
            id(w.scene),  # the last two: which scene and day-night (`_rebind` puts the new world's)
            id(w.day_night),
        )
        if rebuilt or sig != self._scene_sig:
            todo = list(w.objects.values())
        else:
            todo = [st for st in w.objects.values() if st.id in self._changed or st.render == "cull"]
        carried = self._carrying
        if carried:
            todo = self._carried_over(todo, sig)
        self._note_look(sig)
        self._scene_sig = sig
        self._changed.clear()
        for st in todo:
            self._sync_object(st, day)
        if carried:
            self._world_order()
        if self._order_dirty:
            self._order()

    # --- frames -------------------------------------------------------------------------------------
    def _set_camera(self, cam: Camera) -> None:
        self._cutaway = bool(cam.cutaway)
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
        return self._draw(self._prepare(cam))

    def pass_frame(self, cam: Camera) -> None:
        """What `render(cam)` does to the renderer, without the image: the scene is synced and the
        shadow maps re-baked when `render` would re-bake them (the bake alone, not the frame), so
        later frames come out exactly as if this one had been rendered (bakes depend on what was
        seen)."""
        if self._prepare(cam):
            self._bake()

    def _prepare(self, cam: Camera) -> bool:
        """Camera and scene for a frame from `cam`; whether the shadow maps must be re-baked for it."""
        self._seg_mode = False
        self._set_camera(Camera(cam.eye, cam.yaw_deg, cam.pitch_deg, cam.hfov_deg, cam.cutaway))
        self.sync()
        return bool(self.shadows and self._need_bake(cam))

    def _bake(self) -> None:
        """Bake the shadow maps as `_draw(bake=True)` would, without drawing the frame: the maps are
        what later frames read; the frame itself was never wanted."""
        self._set_passes(self._bake_only, bake=True)
        self.xray.DrawOff()
        self.win.Render()
        self.xray.DrawOn()

    def _set_passes(self, opaque, bake: bool) -> None:
        self._passes.SetOpaquePass(opaque)
        self.ren.SetPass(self._passes)
        # lamp maps need the baker's shaders on every prop, which it sets up on those the camera's
        # culling kept only: bake them with culling off (a sun map needs no such help: "shadow shaders")
        cull = not (
            bake
            and any(
                lt.GetPositional() and lt.GetConeAngle() < 90.0 for lt in self._lamp_lights if lt.GetSwitch()
            )
        )
        cullers = self.ren.GetCullers()
        if not cull and cullers.GetNumberOfItems():
            cullers.RemoveAllItems()
        elif cull and not cullers.GetNumberOfItems():
            cullers.AddItem(self._culler)

    def _draw(self, bake: bool) -> np.ndarray:
        if self.shadows:
            self._set_passes(self._bake_seq if bake else self._reuse_seq, bake)
        scene = self.world.scene
        if scene.fog is None:
            self.win.Render()
            return tinted(self._grab(), scene.tint)
        self.xray.DrawOff()  # the x-ray layer clears depth: read it without that layer
        self.win.Render()
        depth = self._depth()
        self.xray.DrawOn()
        if not self._xray_empty():  # then draw it (an empty layer adds nothing but its depth clear)
            self.win.Render()
        fog = scene.fog
        color = np.asarray(fog.color if fog.color is not None else self.ren.GetBackground(), dtype=float)
        return tinted(fogged(self._grab(), depth, fog, color), scene.tint)

    def _depth(self) -> np.ndarray:
        arr = self.vtk.vtkFloatArray()
        self.win.GetZbufferData(0, 0, self.width - 1, self.height - 1, arr)
        z = self.nps.vtk_to_numpy(arr).reshape(self.height, self.width)[::-1]
        ndc = 2.0 * z - 1.0
        depth = 2.0 * NEAR * FAR / (FAR + NEAR - ndc * (FAR - NEAR))
        return np.where(z >= 1.0, np.inf, depth).astype(np.float32)


def sun_direction(world: World) -> np.ndarray:
    """Unit vector towards the sun now."""
    az, el, _ = world.daylight()
    a, e = np.radians(az), np.radians(el)
    return np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])


__all__ = ["Camera", "Renderer", "look_at", "id_color", "sun_direction", "GROUND_ID"]
