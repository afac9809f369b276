"""Geometric queries on a running world for checks and metrics (never shown to agents):
support gaps, interpenetration depth, visible pixels, and where the agent stands.
"""

from __future__ import annotations

import numpy as np

from .physics import RAY_ALL

LIFT = 0.02


def support_gap(env, oid: str, samples: int = 3) -> float:
    """Vertical distance from the object's underside to whatever is below it (0 = resting).

    Rays go down from a grid of points just under the object's bounds; the smallest free drop
    counts (an object resting on one leg has gap 0).  Non-solid surfaces count as support too.
    """
    st = env.world.get(oid)
    lo, hi = env.world.aabb(st)
    own = {b for b, _ in env.physics.bodies.get(oid, [])}
    best = np.inf
    for fx in np.linspace(0.1, 0.9, samples):
        for fy in np.linspace(0.1, 0.9, samples):
            x, y = lo[0] + fx * (hi[0] - lo[0]), lo[1] + fy * (hi[1] - lo[1])
            # start a little inside the object (rays ignore the shape they start in)
            start = np.array([x, y, lo[2] + LIFT])
            end = np.array([x, y, lo[2] - 10.0])
            hits = env.physics.p.rayTestBatch(
                [start.tolist()], [end.tolist()], collisionFilterMask=RAY_ALL, physicsClientId=env.physics.cid
            )
            body, frac = hits[0][0], hits[0][2]
            if body >= 0 and body not in own:
                best = min(best, max(frac * (10.0 + LIFT) - LIFT, 0.0))
    if not np.isfinite(best) and lo[2] <= LIFT:
        return 0.0  # starts inside the ground: sunk, not floating
    return float(best)


def penetration_depth(env, a: str, b: str) -> float:
    """How deep the solid colliders of two objects overlap (0 when apart or touching)."""
    ph = env.physics
    worst = 0.0
    for ba, pa in ph.bodies.get(a, []):
        if pa is not None and pa.startswith("#"):
            continue
        for bb, pb in ph.bodies.get(b, []):
            if pb is not None and pb.startswith("#"):
                continue
            for pt in ph.p.getClosestPoints(ba, bb, 0.0, physicsClientId=ph.cid):
                worst = max(worst, -float(pt[8]))
    return worst


def visible_pixels(env, oid: str) -> int:
    """How many pixels of the agent's current view show the object."""
    return int((env.render_ids() == env.object_index(oid)).sum())


def agent_height(env) -> float:
    """The agent's foot height (negative when sunk or fallen)."""
    return float(env.physics.agent_position()[2])
