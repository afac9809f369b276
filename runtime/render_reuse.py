"""A renderer handed on to the next world of an equal scene (`Reuse`, a part of `render.Renderer`).

A task's clean and perturbed worlds, and the tasks of a scene a self-check worker takes one after
the other, are built from equal scenes: a new renderer would make the same actors again, upload
the same geometry and build the same shaders, and the old one would tear down as many (a third
of a world's start-up).  A closed renderer is therefore kept (`park`), and `Renderer.open` hands
it to the next world whose scene equals its own (`_rebind`), with the actors of the objects that
are still as the scene declares them in both worlds.

What makes the frames the same as a new renderer's: actors are carried over for the objects of
the scene only (not for objects added at run time, nor for one drawn as a proxy or in another
mode), and only when the world-wide look every actor was synced for (daylight, lamps, sun twin,
cut-away, the scene) never changed in the old world and is the new one's at its first sync; else
all are made anew.  An object neither world has assigned since it was loaded (`World.touched`) is
as the scene declares it in both, and its actors are left alone; one that either world assigned (a
dynamic object's settled pose, an object the old run moved) is synced as a changed object is during
a run: its pose, material, layer and shader are each redone when their inputs differ from the
actor's.  After that first sync the objects' actors are held in world order and the x-ray layer
redrawn in it, as a new renderer's first sync leaves them (the order decides ties between
coplanar faces).  Renderers with shadow maps are never kept: a VTK shadow pass keeps something of
the lamps it baked (docs/performance.md).
"""

from __future__ import annotations

REBINDS_MAX = 32  # worlds per kept renderer: a GL context keeps a little of each; then a new one
_PARKED: list = []  # at most one closed renderer waiting for a world of its scene


class Reuse:
    """Hand-over of a `Renderer` between worlds of equal scenes (see the module docstring).  Owns
    `_first_sig`, `_reusable`, `_carrying`, `_untouched`, `_kept_sig`, `rebinds`; reads the scene actors' tables."""

    def _reuse_setup(self) -> None:
        self._first_sig: tuple | None = None  # the world-wide look at the first sync
        self._reusable = not self.shadows  # False once that look changed (or with shadow maps)
        self._carrying = False  # actors were carried over from another world, not synced yet
        self._untouched: set[str] = set()  # objects carried over that the old world never assigned
        self._kept_sig: tuple | None = None  # the look they were synced for, in the new world's terms
        self.rebinds = 0

    def _matches(self, world, key: tuple) -> bool:
        return (
            self.win is not None
            and key == self._reuse_key
            and self.rebinds < REBINDS_MAX
            and (world.scene is self.world.scene or world.scene == self.world.scene)
            and world.asset_files == self.world.asset_files
        )

    def _parkable(self) -> bool:
        return bool(self._reusable and self._first_sig is not None and self._slot.main)

    def _rebind(self, world) -> None:
        """Take `world` (of an equal scene): keep the actors of objects untouched so far, drop the rest."""
        old = self.world
        kept = {
            o.id
            for o in world.scene.objects
            if o.id in old.objects and old.objects[o.id].render is None and o.id not in self.proxies
        }
        for oid in [o for o in [*self.groups, *self.proxies] if o not in kept]:
            self._forget(oid)
        self._untouched = kept - old.touched
        first = self._first_sig
        self._kept_sig = (*first[:-2], id(world.scene), id(world.day_night))
        self._carrying = True
        self.world = world
        self._changed = world.watch()
        self._built_version = -1
        self._scene_sig = None
        self._first_sig = None
        self._order_dirty = True
        self._stand_ins.clear()
        self._flat_rebind()
        self.rebinds += 1

    def _forget(self, oid: str) -> None:
        """Drop an object's actors, proxy and per-object caches (made anew at its next sync)."""
        self._drop(oid)
        proxy = self.proxies.pop(oid, None)
        if proxy is not None:
            self.ren.RemoveActor(proxy)
            self._roles.pop(id(proxy), None)  # an id Python may give a new actor
            self._sig.pop(id(proxy), None)
        self._proxy_key.pop(oid, None)
        self._actor_bounds.pop(oid, None)

    def _carried_over(self, todo: list, sig: tuple) -> list:
        """The objects of a first sync after `_rebind` that still need syncing: all but those whose
        kept actors show them as the scene declares them (untouched in both worlds).  The actors of
        an object either world assigned are synced as a changed object's are during a run (its pose,
        material, layer and shader, each redone when its inputs differ); all actors are dropped when
        the world-wide look is not the one they were synced for."""
        self._carrying = False
        if sig != self._kept_sig:
            for oid in list(self.groups):
                self._forget(oid)
            return todo
        same = self._untouched - self.world.touched
        return [st for st in todo if not (st.id in same and st.id in self.groups)]

    def _note_look(self, sig: tuple) -> None:
        if self._first_sig is None:
            self._first_sig = sig
        elif sig != self._first_sig:
            self._reusable = False

    def _world_order(self) -> None:
        """Objects' actors in world order, the x-ray layer drawn in it: as a new renderer's first sync."""
        self.groups = {oid: self.groups[oid] for oid in self.world.objects if oid in self.groups}
        layered = [g.actor for gs in self.groups.values() for g in gs if self.xray.HasViewProp(g.actor)]
        for a in layered:
            self.xray.RemoveActor(a)
        for a in layered:
            self.xray.AddActor(a)


def park(renderer) -> bool:
    """Keep a closed renderer for the next world of its scene (the one kept before is released)."""
    if not renderer._parkable():
        return False
    release_parked()
    _PARKED.append(renderer)
    return True


def unpark(world, key: tuple):
    """The kept renderer, re-bound to `world`, when it drew an equal scene with the same settings;
    else it is released (one renderer's actors and window at a time: a worker's memory stays flat)."""
    if _PARKED and _PARKED[-1]._matches(world, key):
        r = _PARKED.pop()
        r._rebind(world)
        return r
    release_parked()
    return None


def release_parked() -> None:
    """Release the kept renderer (`render._close_slots` calls this before closing the windows)."""
    while _PARKED:
        _PARKED.pop()._release_now()
