"""Stepping up onto walkable objects (stairs, platforms): a lift for the agent capsule in `Physics.step`.

The capsule's rounded foot rides over low edges by itself, but how high depends on its radius.
Onto a walkable object (`SceneObject.walkable`) the agent steps up any edge no higher than
`AGENT_STEP_M`, whatever its radius, as a character controller does: rays probe ahead of the
walking agent, and a flat walkable top ahead of it, above its feet and no higher than a step, lifts
it onto that top.  Slopes are left to the capsule, which slides up them; anything that is not
walkable (a crate, a wall, a kerb) is never probed, so the agent meets it exactly as before.
"""

from __future__ import annotations

import math

from wac.bundle.model import AGENT_STEP_M

DT = 1.0 / 120.0  # the physics step (physics.DT; imported there, so not from there)
RAY_SOLID = 1 | 16  # physics_bodies.RAY_SOLID: solids, fixed or not

FLAT_NZ = 0.99  # a hit whose normal is this close to up is a tread, not a slope
MIN_RISE_M = 0.01  # lower edges are left to the capsule


def probe_step(phys, vx: float, vy: float, foot) -> float | None:
    """Height of the walkable tread the agent walking at (vx, vy) should be lifted onto, or None."""
    speed = math.hypot(vx, vy)
    if speed == 0.0:
        return None
    ux, uy = vx / speed, vy / speed
    r = phys.agent_radius
    top = float(foot[2]) + AGENT_STEP_M + 0.005
    low = float(foot[2]) + MIN_RISE_M
    starts, ends = [], []
    for d in (0.5 * r, r, r + speed * DT + 0.02):
        x, y = float(foot[0]) + ux * d, float(foot[1]) + uy * d
        starts.append([x, y, top])
        ends.append([x, y, low])
    best = None
    for hit in phys.p.rayTestBatch(starts, ends, collisionFilterMask=RAY_SOLID, physicsClientId=phys.cid):
        if hit[0] < 0 or hit[2] <= 1e-6 or hit[4][2] < FLAT_NZ or hit[0] not in phys.walkable_bodies:
            continue
        z = float(hit[3][2])
        best = z if best is None else max(best, z)
    return best


def step_up(phys, vx: float, vy: float, foot) -> bool:
    """Lift the agent onto the walkable tread ahead of it, if there is one; returns whether it did."""
    tread = probe_step(phys, vx, vy, foot)
    if tread is None:
        return False
    centre = [float(foot[0]), float(foot[1]), tread + 0.002 + phys.agent_height / 2]
    phys.p.resetBasePositionAndOrientation(phys.agent, centre, [0, 0, 0, 1], physicsClientId=phys.cid)
    return True
