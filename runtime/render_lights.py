"""Lamps of the renderer: one VTK light per lit emitter and scene light, the order lights are held
in (which the shaders and the shadow pass number), and each light's kind written into the shaders.
`Lamps` is a part of `render.Renderer`."""

from __future__ import annotations

import numpy as np


def light_kind_replacements(kinds: tuple[tuple[bool, bool], ...]) -> list[tuple[str, str]]:
    """Fragment-shader replacements that write each light's kind, (positional, spot), into the
    code VTK generates for it.  VTK's shader for positional lights asks per light and per fragment
    whether the light is positional and whether it is a spot (uniforms): llvmpipe runs both sides
    of each, the cone test's `pow` included, for every light and fragment.  With the answers
    constants the compiler drops the branch not taken; what is computed is the same, so frames are
    identical (a street frame with eleven lamps costs about two thirds as much)."""
    reps = []
    for k, (positional, spot) in enumerate(kinds):
        reps.append((f"if (lightPositional{k} == 0) {{", "if (false) {" if positional else "if (true) {"))
        reps.append((f"if (lightConeAngle{k} < 90.0) {{", "if (true) {" if spot else "if (false) {"))
    return reps


class Lamps:
    """The lamp lights of a `Renderer`, synced to the world.

    Owns `_lamp_lights`, `_lamp_src`, `_light_order`, `_sources`, `_kinds`; reads `vtk`, `ren`,
    `xray`, `sun`, `sun_twin`, `lamp_cone` and `world`."""

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
            # per light, in the shaders' order: (positional, spot), as `light_kind_replacements` writes
            self._kinds[id(ren)] = tuple(
                (bool(lt.GetPositional()), bool(lt.GetPositional()) and lt.GetConeAngle() < 90.0)
                for lt in want
            )
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
