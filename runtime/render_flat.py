"""Flat-coloured frames of the renderer: the segmentation (`render_ids`: object ids and depth) and
the view probe's counts (render_probe.py) are drawn by a flat twin of the scene (`FlatTwins`, a part
of `render.Renderer`).

Every drawn actor of the scene (objects' actors, proxies, the ground and its skirt) has a twin: an
actor over the same geometry and the same matrix, with an unlit property of one colour, in two
renderers of its own that mirror the scene's layers (`flat`, `flat_xray`).  Before each flat frame
the twins take their originals' visibility, matrix, geometry and face culling, in the originals'
draw order (which decides a tie between coplanar faces); the scene's renderers are switched off
for it.  The scene's actors are never touched: giving them unlit properties for a flat frame, as
was done, made VTK rebuild the shaders and buffers of every drawn actor twice a sample (to flat
and back), more than the frame itself cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .camera import Camera


def id_color(index: int) -> tuple[float, float, float]:
    """Flat colour encoding an object index (index + 2 so that 0 = sky and 1 = ground)."""
    v = index + 2
    return ((v & 255) / 255.0, ((v >> 8) & 255) / 255.0, ((v >> 16) & 255) / 255.0)


@dataclass
class _Twin:
    actor: object  # the twin
    poly: object  # the original's geometry it was given
    colour: tuple[float, float, float]  # its id colour


class FlatTwins:
    """The flat twin of a `Renderer`'s scene (reads `vtk`, `win`, `cam`, `ren`, `xray`, `groups`,
    `proxies`, `_ground`, `_skirt`, `world`; see the module docstring).  `render_scene` adds each
    object it syncs to `_flat_dirty`: only those objects' twins are looked at again."""

    def _flat_setup(self) -> None:
        vtk = self.vtk
        self.flat = vtk.vtkRenderer()
        self.flat_xray = vtk.vtkRenderer()  # layer 1, as `xray`: clears depth, draws over layer 0
        for ren, layer in ((self.flat, 0), (self.flat_xray, 1)):
            ren.SetLayer(layer)
            ren.SetAutomaticLightCreation(False)
            ren.SetInteractive(False)
            ren.SetActiveCamera(self.cam)
            ren.SetBackground(0.0, 0.0, 0.0)
            ren.DrawOff()
            self.win.AddRenderer(ren)
        self._twins: dict[object, _Twin] = {}  # original actor -> its twin
        self._twin_layout: tuple | None = None  # the scene's props (modification times) laid out for
        self._twin_order: tuple = ((), ())  # ids of the originals drawn by (flat, flat_xray), in order
        self._twin_stale: set | None = None  # originals whose twins may differ from them (None: all)
        self._twin_shown: set = set()  # originals whose twins are visible
        self._flat_dirty: set[str] = set()  # objects synced since the twins were (`_sync_object`)
        self._flats: dict[tuple, object] = {}  # (colour, culling) -> an unlit property (`_flat`)

    def _flat_rebind(self) -> None:
        """A new world for the same actors (render_reuse.py): every twin is looked at again."""
        self._twin_layout = None
        self._twin_stale = None
        self._flat_dirty.clear()

    def _flat_renderers(self) -> tuple:
        return (self.flat, self.flat_xray)

    def _flat_colours(self) -> dict:
        """Original actor -> its id colour, for every actor the segmentation draws."""
        objects = self.world.objects
        colours = {}
        for oid, groups in self.groups.items():
            c = id_color(objects[oid].index)
            for g in groups:
                colours[g.actor] = c
        for oid, actor in self.proxies.items():
            colours[actor] = id_color(objects[oid].index)
        colours[self._ground] = colours[self._skirt] = id_color(-1)
        return colours

    def _lay_out_twins(self) -> None:
        """A twin for every original, in the originals' layers and draw order."""
        colours = self._flat_colours()
        layers = []
        for ren in (self.ren, self.xray):
            props = ren.GetViewProps()
            props.InitTraversal()
            found = (props.GetNextProp() for _ in range(props.GetNumberOfItems()))
            layers.append([a for a in found if a in colours])
        for acts in layers:
            for a in acts:
                tw = self._twins.get(a)
                if tw is None:
                    mapper = a.GetMapper()
                    m = self.vtk.vtkPolyDataMapper()
                    m.SetScalarVisibility(mapper.GetScalarVisibility())
                    t = self.vtk.vtkActor()
                    t.SetMapper(m)
                    t.SetVisibility(False)
                    self._twins[a] = _Twin(t, None, colours[a])
                else:
                    tw.colour = colours[a]
        order = tuple(tuple(map(id, acts)) for acts in layers)
        if order != self._twin_order:  # actors were added, removed, re-ordered or changed layers
            for ren, acts in zip(self._flat_renderers(), layers, strict=True):
                ren.RemoveAllViewProps()
                for a in acts:
                    ren.AddActor(self._twins[a].actor)
            self._twin_order = order
            live = {a for acts in layers for a in acts}
            for gone in [a for a in self._twins if a not in live]:
                del self._twins[gone]
            self._twin_shown &= live
        self._twin_stale = None

    def _sync_twins(self, paint: dict | None = None) -> None:
        """Bring the twins in line with their originals (matrix, geometry, face culling).  Each twin
        shows in its id colour while its original is drawn; with `paint` (original -> colour, the
        probe's) only those show, each in its colour, whether its original is drawn now or not."""
        layout = (self.ren.GetViewProps().GetMTime(), self.xray.GetViewProps().GetMTime())
        if layout != self._twin_layout:
            self._lay_out_twins()
            self._twin_layout = layout
        stale = set(self._twins) if self._twin_stale is None else self._twin_stale
        for oid in self._flat_dirty:
            stale.update(g.actor for g in self.groups.get(oid, ()))
            if oid in self.proxies:
                stale.add(self.proxies[oid])
        self._flat_dirty.clear()
        twins = self._twins
        if paint is None:
            for a in stale:
                tw = twins.get(a)
                if tw is not None:
                    self._show_twin(a, tw, tw.colour if a.GetVisibility() else None)
            self._twin_stale = set()
            return
        for a in self._twin_shown - paint.keys():
            twins[a].actor.SetVisibility(False)
            stale.add(a)
        self._twin_shown.clear()
        for a, colour in paint.items():
            tw = twins.get(a)
            if tw is not None:
                self._show_twin(a, tw, colour)
                stale.add(a)
        self._twin_stale = stale  # as the originals again at the next segmentation

    def _show_twin(self, a, tw: _Twin, colour) -> None:
        """Show `a`'s twin in `colour` where `a` is now (None: hide it)."""
        t = tw.actor
        if colour is None:
            t.SetVisibility(False)
            self._twin_shown.discard(a)
            return
        poly = a.GetMapper().GetInput()
        if tw.poly is not poly:
            tw.poly = poly
            t.GetMapper().SetInputData(poly)
        t.SetUserMatrix(a.GetUserMatrix())
        t.SetProperty(self._flat(colour, a.GetProperty()))
        t.SetVisibility(True)
        self._twin_shown.add(a)

    def _flat_render(self, xray: bool) -> None:
        """Draw the flat renderers alone, the x-ray twin layer only if `xray` (the scene's renderers
        are switched off meanwhile)."""
        self.ren.DrawOff()
        self.xray.DrawOff()
        self.flat.DrawOn()
        self.flat_xray.SetDraw(xray)
        try:
            self.win.Render()
        finally:
            self.flat.DrawOff()
            self.flat_xray.DrawOff()
            self.ren.DrawOn()
            self.xray.DrawOn()

    def render_ids(self, cam: Camera, with_depth: bool = False):
        """Object-index image (int32, 0 = sky, -1 = ground), optionally with metric depth (inf = sky)."""
        self._set_camera(cam)
        self.sync()
        self._sync_twins()
        alone = with_depth and self._xray_empty(self.flat_xray)  # ids and depth from one frame
        self._flat_render(xray=not alone)
        img = self._grab().astype(np.int32)
        code = img[..., 0] + (img[..., 1] << 8) + (img[..., 2] << 16)
        ids = np.where(code == 0, 0, code - 2)
        depth = None
        if alone:
            depth = self._depth()
        elif with_depth:  # the x-ray layer clears depth: read it without that layer
            self._flat_render(xray=False)
            depth = self._depth()
        return (ids, depth) if with_depth else ids

    def render_depth(self, cam: Camera) -> np.ndarray:
        """Metric depth along the view axis (float32 H x W, inf where nothing was drawn)."""
        return self.render_ids(cam, with_depth=True)[1]

    def _flat(self, color, like):
        """An unlit property of exactly `color`, keeping face culling of `like` (made once each)."""
        key = (*color, like.GetFrontfaceCulling(), like.GetBackfaceCulling())
        flat = self._flats.get(key)
        if flat is None:
            flat = self._flats[key] = self._new_flat(color, like)
        return flat

    def _new_flat(self, color, like):
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

    def _xray_empty(self, layer=None) -> bool:
        """Whether an x-ray layer (default: the scene's) draws nothing now."""
        props = (self.xray if layer is None else layer).GetViewProps()
        props.InitTraversal()
        for _ in range(props.GetNumberOfItems()):
            if props.GetNextProp().GetVisibility():
                return False
        return True
