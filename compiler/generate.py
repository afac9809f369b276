"""Pass 4a', generators: the objects that `row`, `grid`, `ring`, `scatter`, `room`, `stairs` and `ramp`
statements make.

Called by the assemble pass for the scene's body and then the task's: rows, grids, rings,
rooms, stairs and ramps first (pure geometry, placed with the hand-written objects), then each `scatter` in
statement order, which keeps clear of everything placed before it.
"""

from __future__ import annotations

from pathlib import Path

from wac.bundle import model as B
from wac.compiler import nodes as N
from wac.compiler.diagnostics import Collector
from wac.compiler.layout import Layout
from wac.compiler.placement import expand_fixed, scatter
from wac.compiler.rooms import expand_rooms
from wac.compiler.slopes import expand_slopes


def fixed_objects(
    body: N.Body,
    file: Path,
    layout: Layout,
    diag: Collector,
    ground: B.Ground | None = None,
    indoor: bool = False,
) -> list[tuple[N.Thing, Path]]:
    """The objects of the body's rows, grids, rings, rooms, stairs and ramps (`indoor`: the scene is
    of type indoor, where rooms have ceilings unless they say otherwise)."""
    if not body.generators:
        return []
    return (
        expand_fixed(body.generators, file, diag)
        + expand_rooms(body.generators, file, layout, diag, ceilings=indoor, ground=ground)
        + expand_slopes(body.generators, file, diag, ground)
    )


def scattered_objects(
    body: N.Body,
    file: Path,
    layout: Layout,
    diag: Collector,
    objects: dict[str, B.SceneObject],
    start: tuple[float, float] | None,
    place,
) -> tuple[dict[str, B.SceneObject], list[tuple[N.Thing, Path]]]:
    """Place the body's scatters one after the other with `place(things, existing)`; returns the
    objects with the scattered ones added, and the scattered declarations."""
    made: list[tuple[N.Thing, Path]] = []
    for gen in body.generators:
        if gen.keyword != "scatter" or diag:
            continue
        things = scatter(gen, file, layout, diag, objects, start)
        if things:
            objects = place(things, objects)
            made += things
    return objects, made
