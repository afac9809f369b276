"""Shadows of the renderer: the shader replacements that fix VTK's shadow maps and carry the shadow
anomalies (objects left out of the sun's map, the sun's twin, shadow-only "ghosts"), and when the
maps are re-baked.  `ShadowMaps` is a part of `render.Renderer` (its state is set up there)."""

from __future__ import annotations

import numpy as np

from .camera import NEAR, Camera
from .render_lights import light_kind_replacements
from .world import ObjectState

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


def shadow_role(st: ObjectState) -> str:
    """How an object's drawn parts take part in the shadow maps (`_shadow_replacements`)."""
    return "cast" if st.casts_shadow and st.shadow_offset is None else "self"


def unlit(prop, color) -> None:
    """A flat colour that still goes through the lit shader (the shadow pass cannot compile
    unlit shaders: they lack the view-space position its shadow lookup needs)."""
    prop.SetLighting(True)
    prop.SetAmbient(1.0)
    prop.SetDiffuse(0.0)
    prop.SetSpecular(0.0)
    prop.SetColor(*color)
    prop.SetAmbientColor(*color)


class ShadowMaps:
    """Shadow maps, the sun's twin, shadow shaders and ghosts of a `Renderer`.

    Owns `_baked`, `bakes`, `_roles`, `ghosts`, `_ghost_key`, `_bake_seq`/`_reuse_seq`/`_bake_only`; reads the
    renderer's VTK objects (`vtk`, `ren`, `xray`, `sun`, `sun_twin`, `_lamp_lights`, `_sources`), the
    actors (`groups`, `proxies`, `_pose_key`, `_group_sig`, `_anchor_box`) and `world`."""

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
        only = vtk.vtkSequencePass()  # the bake alone, for a frame nobody sees (`Renderer.pass_frame`)
        alone = vtk.vtkRenderPassCollection()
        alone.AddItem(shadows.GetShadowMapBakerPass())
        only.SetPasses(alone)
        steps = vtk.vtkRenderStepsPass()
        steps.SetOpaquePass(seq)
        return steps, seq, reuse, only

    def _sync_twin(self) -> None:
        """The sun's twin is on while the sun shines and a shown object casts no shadow of its own on
        others (see SUN_TWIN_RAD)."""
        w = self.world
        on = (
            self.shadows
            and bool(self.sun.GetSwitch())
            and any(
                st.present and not st.held and st.visible and shadow_role(st) == "self"
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
        kinds = self._kinds.get(id(self.xray if in_xray else self.ren), ())
        if self._roles.get(id(actor)) == (role, twin, hidden, own, plain, kinds):
            return
        self._roles[id(actor)] = (role, twin, hidden, own, plain, kinds)
        sp = actor.GetShaderProperty()
        sp.ClearAllFragmentShaderReplacements()
        reps = _shadow_replacements(role, twin, self.width / self.height, own)
        reps += [(f"uniform vec3 lightColor{k};", f"const vec3 lightColor{k} = vec3(0.0);") for k in hidden]
        reps += light_kind_replacements(kinds)
        if plain:
            reps.append(("void main()", "// drawn without the shadow pass\nvoid main()"))
        for old, new in reps:
            sp.AddFragmentShaderReplacement(old, False, new, False)

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
            unlit(actor.GetProperty(), (0.0, 0.0, 0.0))
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
