"""The physics body of a heightfield terrain (`wac.bundle.terrain` gives the heights).

Holes (liquids, floor holes) are not cut into a heightfield: the compiler refuses them (E434).
"""

from __future__ import annotations

from wac.bundle.model import Ground
from wac.bundle.terrain import samples


def heightfield(p, cid: int, ground: Ground) -> int:
    """A static pybullet heightfield over the whole ground, from the shared samples."""
    xs, ys, h = samples(ground)
    shape = p.createCollisionShape(
        p.GEOM_HEIGHTFIELD,
        meshScale=[float(xs[1] - xs[0]), float(ys[1] - ys[0]), 1.0],
        heightfieldData=h.ravel().tolist(),  # row after row of y, x varying fastest
        numHeightfieldRows=len(xs),
        numHeightfieldColumns=len(ys),
        physicsClientId=cid,
    )
    # pybullet centres a heightfield on the middle of its height range
    centre = [(xs[0] + xs[-1]) / 2, (ys[0] + ys[-1]) / 2, (float(h.min()) + float(h.max())) / 2]
    return p.createMultiBody(0, shape, -1, centre, [0, 0, 0, 1], physicsClientId=cid)
