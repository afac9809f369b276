"""How much of some objects the agent's camera shows: their pixels in a small segmentation render
(`ViewProbe`, a mixin of `Renderer`).

The runtime's triggers ask it whether an anomaly's target is in view (runtime/triggers.py)
and compare the answer with the threshold the self-check's pixel checks use (`wac.bundle.onscreen`):
a change that must happen unseen waits until the target is truly off screen.  The end of a long
hoarding still on screen keeps it in view although its centre has left the frame; 3 px of a far
crate do not, nor does a crate behind a wall.

A `Probe` says what to count: objects of the world (drawn as they are, or as they would be drawn
if they are hidden, removed or picked up now), stand-ins that are not in the world (an object about
to be added, a target at the pose a change will give it) and bare places (a box: where a hole
opens).  `ViewProbe.probe_px` keeps it cheap:

1. a geometric pre-test: the probe's bounds, projected, cover fewer on-screen pixels than
   `WATCH_PX` (off screen, behind the eye, or too small at that distance): 0, without rendering;
2. the occluders: the drawn actors whose bounds project onto the probe's screen rectangle and reach
   nearer than its far end.  Bounds are those of the last sync (only the candidates are synced
   again): an object that has since moved in front of the target is missed, which errs towards
   "in view", the safe side for a change that must not be watched;
3. the probe (white) and its occluders (black) drawn flat at the frame's resolution (at most
   `PROBE_W` wide, the frame's aspect), in a corner of the window; its white pixels, scaled to
   640x480.

Visibility, properties, textures, viewports and the background are restored afterwards, so the
frames that follow are the same bytes as without the probe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wac.bundle.onscreen import WATCH_PX, px640

from .camera import NEAR, Camera
from .geometry import part_matrix
from .render_scene import _vtk_matrix
from .world import ObjectState

# width (px) of the probe's render, the auditors' frame width: a narrower frame is probed at its own
# width, so the count is the frame's.  A 320 px probe of 640x480 frames disagreed on 30 of 3314 ticks
# of 7 corpus plans (28 of a far lamp post's 26-44 px: thin parts rasterise otherwise at the threshold)
PROBE_W = 640
WHITE, BLACK = (1.0, 1.0, 1.0), (0.0, 0.0, 0.0)
_CORNERS = np.array([[i, j, k] for i in (0, 1) for j in (2, 3) for k in (4, 5)])  # VTK bounds indexes


@dataclass(frozen=True)
class Probe:
    """What to count as the target: world objects, stand-ins outside the world, and bare places."""

    objects: tuple[str, ...] = ()
    stand_ins: tuple[ObjectState, ...] = ()
    places: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...] = ()  # (lo, hi) boxes


@dataclass(frozen=True)
class ScreenRect:
    """Where boxes fall on screen: normalised coordinates (-1..1, x right, y up) and the far depth."""

    x0: float
    x1: float
    y0: float
    y1: float
    far: float
    lo: np.ndarray  # the world bounds of the boxes
    hi: np.ndarray

    def px640(self) -> float:
        """The rectangle's area in pixels of a 640x480 frame: an upper bound of what it can show."""
        return (self.x1 - self.x0) * (self.y1 - self.y0) / 4 * 640 * 480


def _corners(bounds: np.ndarray) -> np.ndarray:
    """The 8 corners of each of n VTK bounds (xmin, xmax, ymin, ymax, zmin, zmax): n x 8 x 3."""
    return bounds[:, _CORNERS]


class ViewProbe:
    """`probe_px` for `Renderer` (reads `world`, `groups`, `proxies`, `ren`, `xray`, `win`, the frame
    size and the scene actors' sync)."""

    def probe_px(self, cam: Camera, probe: Probe) -> float:
        """The probe's pixels (640x480) in what `cam` would show now, occluders in front included."""
        w = self.world
        self._set_camera(cam)
        if self._built_version != w.version or len(self.groups) != len(w.objects):
            self.sync()  # objects were added or removed since the last frame
        day = w.daylight()[2]
        own = []
        for oid in probe.objects:
            st = w.objects.get(oid)
            if st is None:
                continue
            self._sync_object(st, day)
            own += [g.actor for g in self.groups.get(oid, [])]  # its geometry, whether drawn now or not
            proxy = self.proxies.get(oid)
            if proxy is not None and proxy.GetVisibility():
                own.append(proxy)
        extra = self._stand_in_actors(probe)
        own += extra
        if not own:
            return 0.0
        rect = self._screen_rect(cam, np.array([a.GetBounds() for a in own], dtype=float))
        if rect is None or rect.px640() < WATCH_PX:
            return 0.0
        occluders = self._occluders(cam, rect, {id(a) for a in own}, day)
        if any(a.GetBounds()[4] < -0.02 for a in own) or w.scene.ground.terrain is not None:
            occluders.append(self._ground)  # the ground hides what lies below it, a hill what is behind it
        return self._draw_probe(own, occluders, extra)

    # --- geometry -----------------------------------------------------------------------------------
    def _screen_rect(self, cam: Camera, bounds: np.ndarray) -> ScreenRect | None:
        """Where boxes (VTK bounds, n x 6) fall on screen; None when none of them can show."""
        world = _corners(bounds).reshape(-1, 3)
        lo, hi = world.min(axis=0), world.max(axis=0)
        pts = world - np.asarray(cam.eye, dtype=float)
        f, up = cam.forward(), cam.up()
        z = pts @ f
        if (z <= NEAR).all():
            return None
        if (z <= NEAR).any():  # a box around the eye: anywhere on screen
            return ScreenRect(-1.0, 1.0, -1.0, 1.0, float(z.max()), lo, hi)
        th = math.tan(math.radians(cam.hfov_deg) / 2)
        tv = th * self.height / self.width
        x, y = pts @ np.cross(f, up) / z / th, pts @ up / z / tv
        x0, x1 = max(float(x.min()), -1.0), min(float(x.max()), 1.0)
        y0, y1 = max(float(y.min()), -1.0), min(float(y.max()), 1.0)
        if x0 >= x1 or y0 >= y1:
            return None
        return ScreenRect(x0, x1, y0, y1, float(z.max()), lo, hi)

    def _occluders(self, cam: Camera, rect: ScreenRect, own: set[int], day: float) -> list:
        """The drawn actors that may stand between the eye and `rect` (see the module docstring)."""
        owner = {}
        acts = []
        bounds = []
        for oid, groups in self.groups.items():
            for g, b in zip(groups, self._bounds(oid, groups), strict=True):
                if g.actor.GetVisibility() and id(g.actor) not in own:
                    acts.append(g.actor)
                    owner[id(g.actor)] = oid
                    bounds.append(b)
        for oid, actor in self.proxies.items():
            if actor.GetVisibility() and id(actor) not in own:
                acts.append(actor)
                owner[id(actor)] = oid
                bounds.append(actor.GetBounds())
        if not acts:
            return []
        eye = np.asarray(cam.eye, dtype=float)
        bounds = np.array(bounds, dtype=float)
        pts = _corners(bounds) - eye
        f, up = cam.forward(), cam.up()
        z = pts @ f  # n x 8
        th = math.tan(math.radians(cam.hfov_deg) / 2)
        tv = th * self.height / self.width
        ahead = z > NEAR
        zs = np.where(ahead, z, 1.0)
        x, y = (pts @ np.cross(f, up)) / zs / th, (pts @ up) / zs / tv
        overlap = (
            (x.min(axis=1) < rect.x1)
            & (x.max(axis=1) > rect.x0)
            & (y.min(axis=1) < rect.y1)
            & (y.max(axis=1) > rect.y0)
        )
        straddles = ahead.any(axis=1) & ~ahead.all(axis=1)  # around the eye: may cover anything
        # a box outside the bounds of the eye and the probe's boxes (a floor under both, a ceiling over
        # both, a wall behind the eye) meets no line of sight between them
        lo, hi = np.minimum(rect.lo, eye), np.maximum(rect.hi, eye)
        between = ((bounds[:, 1::2] > lo + 0.01) & (bounds[:, 0::2] < hi - 0.01)).all(axis=1)
        pick = between & ahead.any(axis=1) & (z.min(axis=1) < rect.far) & (straddles | overlap)
        chosen = [acts[i] for i in np.nonzero(pick)[0]]
        for oid in {owner[id(a)] for a in chosen}:  # their bounds were last synced's: sync them now
            st = self.world.objects.get(oid)
            if st is not None:
                self._sync_object(st, day)
        return [a for a in chosen if a.GetVisibility()]

    def _bounds(self, oid: str, groups: list) -> list:
        """The world bounds of an object's actors, kept while its pose and actors are the same (VTK
        recomputes them on every call: a millisecond a probe in a furnished room)."""
        key = self._pose_key.get(oid)
        got = self._actor_bounds.get(oid)
        if got is None or got[0] is not key or got[1] is not groups:
            got = (key, groups, [g.actor.GetBounds() for g in groups])
            self._actor_bounds[oid] = got
        return got[2]

    # --- stand-ins ------------------------------------------------------------------------------------
    def _stand_in_actors(self, probe: Probe) -> list:
        """Actors for the probe's stand-ins and places, made once per pose (kept out of the renderer
        but for the probe's draw: VTK fits the shadow maps' light cameras to every prop it holds)."""
        cache = self._stand_ins
        if len(cache) > 256:  # stand-ins of a target that keeps moving: keep the cache small
            cache.clear()
        out = []
        for st in probe.stand_ins:
            base = st.matrix()
            if st.appearance_scale is not None:
                s = np.eye(4)
                s[:3, :3] *= st.appearance_scale
                base = base @ s
            for ps in st.parts.values():
                m = base @ part_matrix(ps.part, ps.pose())
                key = (st.id, ps.part.id, m.round(6).tobytes())
                if key not in cache:
                    poly = self._poly((ps.part.shape, ps.part.size, ps.part.mesh), self.world.mesh(ps))
                    cache[key] = self._probe_actor(poly, m)
                out.append(cache[key])
        for lo, hi in probe.places:
            key = ("place", tuple(round(float(v), 6) for v in (*lo, *hi)))
            if key not in cache:
                cube = self.vtk.vtkCubeSource()
                cube.SetBounds(lo[0], hi[0], lo[1], hi[1], lo[2], max(hi[2], lo[2] + 0.02))
                cube.Update()
                cache[key] = self._probe_actor(cube.GetOutput(), np.eye(4))
            out.append(cache[key])
        return out

    def _probe_actor(self, poly, m: np.ndarray):
        actor = self.vtk.vtkActor()
        actor.SetMapper(self._mapper(poly))
        actor.SetUserMatrix(_vtk_matrix(self.vtk, m))
        return actor

    # --- the draw -------------------------------------------------------------------------------------
    def _draw_probe(self, own: list, occluders: list, extra: list) -> float:
        """Draw `own` white and `occluders` black, nothing else, and count the white pixels (640x480):
        by the flat twins (render_flat.py) of the scene's actors, and the stand-ins themselves."""
        pw = min(PROBE_W, self.width)
        ph = min(self.height, max(1, round(pw * self.height / self.width)))
        paint = {a: BLACK for a in occluders}
        paint.update((a, WHITE) for a in own)
        self._sync_twins(paint)
        for a in extra:
            a.SetProperty(self._flat(WHITE, a.GetProperty()))
            self.flat.AddActor(a)
        view = (0.0, 0.0, pw / self.width, ph / self.height)
        for ren in self._flat_renderers():
            ren.SetViewport(*view)
        try:
            self._flat_render(xray=not self._xray_empty(self.flat_xray))
            arr = self.vtk.vtkUnsignedCharArray()
            self.win.GetPixelData(0, 0, pw - 1, ph - 1, 0, arr, 0)
            n = int(np.count_nonzero(self.nps.vtk_to_numpy(arr)[:, 0] == 255))  # white: R is enough
        finally:
            for ren in self._flat_renderers():
                ren.SetViewport(0.0, 0.0, 1.0, 1.0)
            for a in extra:
                self.flat.RemoveActor(a)
        return px640(n, pw, ph)


__all__ = ["PROBE_W", "Probe", "ScreenRect", "ViewProbe"]
