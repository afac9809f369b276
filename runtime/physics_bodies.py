"""The bodies of a running world in pybullet: compound bodies from an object's solid parts,
ghost bodies for non-solid parts, the ground (flat with holes and liquid floors, or a heightfield)
and invisible blockers.  A mixin of `Physics` (physics.py), which owns the client (`p`, `cid`) and
the body tables it fills (`refs`, `offsets`, `bodies`, `versions`, `com`, `ground_bodies`,
`walkable_bodies`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .geometry import PartPose, part_matrix, rotation_matrix
from .terrain import heightfield
from .world import ObjectState, PartState

GROUP_SOLID, GROUP_GHOST, GROUP_AGENT, GROUP_REACH, GROUP_FIXED = 1, 2, 4, 8, 16
# GROUP_FIXED: solids physics never moves (static objects, the ground).  They meet the agent and
# dynamic bodies as GROUP_SOLID ones do, but not each other: Bullet would otherwise compute the
# contact points of every touching fixed pair (an object on the ground, a window in its wall) at
# every step, though no impulse can move either (most of a large scene's step time).
MASK_SOLID = GROUP_SOLID | GROUP_AGENT | GROUP_FIXED  # what a body that may move meets
MASK_FIXED = GROUP_SOLID | GROUP_AGENT  # what a fixed body meets: no other fixed body
MASK_AGENT = GROUP_SOLID | GROUP_FIXED
# pybullet ray queries carry filter group 1: ray-only bodies need bit 1 in their mask, which is
# harmless because no solid body has their group bit in its own mask.
GROUP_RAYS = GROUP_SOLID
RAY_SOLID = GROUP_SOLID | GROUP_FIXED  # rays that stop at solids
RAY_ALL = RAY_SOLID | GROUP_GHOST


def _quat(r: np.ndarray) -> tuple[float, float, float, float]:
    """Rotation matrix -> pybullet quaternion (x, y, z, w) (Shepperd's method, no scipy overhead)."""
    m = np.asarray(r, dtype=float)
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0:
        s = 2.0 * np.sqrt(tr + 1.0)
        q = (0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s)
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = ((m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s)
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = ((m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s)
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = ((m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s)
    w, x, y, z = q
    n = float(np.sqrt(w * w + x * x + y * y + z * z))
    return (float(x) / n, float(y) / n, float(z) / n, float(w) / n)


def _matrix(q) -> np.ndarray:
    """pybullet quaternion (x, y, z, w) -> rotation matrix."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


@dataclass(frozen=True)
class BodyRef:
    """What a pybullet body stands for: an object (and part group), the ground, or a blocker."""

    kind: str  # object | ground | blocker | liquid_floor
    object_id: str | None = None
    hinged: str | None = None  # part id of a separately posed part (hinge / spin)

    @property
    def meets_nothing(self) -> bool:
        """A body only rays hit (`#ghost` non-solid parts, `#reach` copies): nothing collides with it."""
        return (self.hinged or "").startswith("#")


_SHAPES: dict[tuple, tuple] = {}  # (part shape, size, mesh file, part -> body frame) -> `_shape`'s answer
_SHAPES_MAX = 20_000


class Bodies:
    """Building and removing the world's bodies (mixed into `Physics`)."""

    def _shape(self, st: ObjectState, ps: PartState, base_inv: np.ndarray):
        """Collision shape args for one part, in the frame given by `base_inv` (world -> body); the
        same part in the same frame gives the same args, so they are kept (`_SHAPES`) for the next
        world of the process (a task's clean and perturbed worlds, the tasks of a scene)."""
        m = base_inv @ self.world.part_world(st, ps)
        part = ps.part
        mesh = None
        if part.shape == "mesh":
            w = self.world
            mesh = (str(w.bundle_dir), w.asset_files.get(part.mesh, part.mesh))
        key = (part.shape, tuple(part.size), mesh, m.tobytes())
        got = _SHAPES.get(key)
        if got is None:
            if len(_SHAPES) >= _SHAPES_MAX:
                _SHAPES.clear()
            got = _SHAPES[key] = self._new_shape(ps, m)
        return got

    def _collision_shape(self, args: dict, same: tuple) -> int:
        """The client's collision shape for `_shape` args, shared by every body whose args are equal
        (`same`: their shape type and exact numbers; equal objects turned alike, fence pickets).  A
        convex hull costs pybullet about 80 us to make; a shared shape collides exactly as a copy."""
        got = self._shape_ids.get(same)
        if got is None:
            got = self._shape_ids[same] = self.p.createCollisionShape(physicsClientId=self.cid, **args)
        return got

    def _new_shape(self, ps: PartState, m: np.ndarray):
        p = self.p
        lin = m[:3, :3]
        scale = np.linalg.norm(lin, axis=0)
        rot = lin / np.maximum(scale, 1e-12)
        orthonormal = np.allclose(rot.T @ rot, np.eye(3), atol=1e-6) and np.linalg.det(rot) > 0  # no mirror
        size = np.asarray(ps.part.size, dtype=float) * scale
        if ps.part.shape == "box" and orthonormal:
            centre = m[:3, 3] + rot @ np.array([0, 0, size[2] / 2])
            half = (size / 2).tolist()
            return dict(shapeType=p.GEOM_BOX, halfExtents=half), centre, rot, ("box", *half)
        mesh = self.world.mesh(ps)
        verts = (m @ np.c_[mesh.vertices, np.ones(len(mesh.vertices))].T).T[:, :3]
        centre = verts.mean(axis=0)
        local = verts - centre
        return (
            dict(shapeType=p.GEOM_MESH, vertices=local.tolist()),
            centre,
            np.eye(3),
            ("mesh", local.shape, local.tobytes()),
        )

    def _make_bodies(
        self,
        st: ObjectState,
        parts: list[PartState],
        base: np.ndarray,
        mass: float,
        group: int,
        mask: int,
        ref: BodyRef,
        place: np.ndarray | None = None,
    ) -> list[int]:
        """The bodies of some parts; shapes are expressed relative to `base`, and the bodies are put
        at `place` (default `base`).  Parts that may move under physics (`mass` > 0, or a dynamic
        object's `GROUP_SOLID` body) make one multibody with fixed links; parts physics never moves
        make one static rigid body each, which a step costs a fifth of a fixed multibody link (Bullet
        integrates every multibody, awake or not: most of a large scene's step time)."""
        p, c = self.p, self.cid
        if not parts:
            return []
        inv = np.linalg.inv(base)
        shapes, pos, orn = [], [], []
        for ps in parts:
            args, centre, rot, same = self._shape(st, ps, inv)
            shapes.append(self._collision_shape(args, same))
            pos.append(centre.tolist())
            orn.append(_quat(rot))
        at = base if place is None else place
        if mass > 0 or group == GROUP_SOLID:
            n = len(shapes)
            bodies = [self._multibody(shapes, pos, orn, [mass / n] * n if mass > 0 else [0.0] * n, at)]
            links = range(-1, n - 1)
        else:
            bodies = [self._static(shape, q, o, at) for shape, q, o in zip(shapes, pos, orn, strict=True)]
            links = range(-1, 0)
        fr = st.friction if st.friction is not None else 0.6
        rs = st.restitution if st.restitution is not None else 0.0
        for body in bodies:
            for link in links:
                p.setCollisionFilterGroupMask(body, link, group, mask, physicsClientId=c)
                p.changeDynamics(
                    body,
                    link,
                    lateralFriction=fr,
                    restitution=rs,
                    rollingFriction=0.01,
                    spinningFriction=0.01,
                    physicsClientId=c,
                )
            self.refs[body] = ref
        return bodies

    def _static(self, shape: int, pos, orn, base: np.ndarray) -> int:
        """A static rigid body for one shape at (pos, orn) in the `base` frame."""
        frame = np.eye(4)
        frame[:3, :3], frame[:3, 3] = _matrix(orn), pos
        m = base @ frame
        body = self.p.createMultiBody(
            0.0,
            shape,
            -1,
            m[:3, 3].tolist(),
            _quat(m[:3, :3]),
            useMaximalCoordinates=True,
            physicsClientId=self.cid,
        )
        self.offsets[body] = frame
        return body

    def _multibody(self, shapes, pos, orn, masses, base) -> int:
        """Base link = first shape (offset by its centre); the rest hang off it on fixed joints."""
        p, c = self.p, self.cid
        n = len(shapes)
        # Express everything relative to the base link, whose frame sits at the first shape's centre.
        r0 = _matrix(orn[0])
        b0 = np.eye(4)
        b0[:3, :3], b0[:3, 3] = r0, pos[0]
        world0 = base @ b0
        inv0 = np.linalg.inv(b0)
        lpos, lorn = [], []
        for q, o in zip(pos[1:], orn[1:], strict=True):
            m = np.eye(4)
            m[:3, :3], m[:3, 3] = _matrix(o), q
            rel = inv0 @ m
            lpos.append(rel[:3, 3].tolist())
            lorn.append(_quat(rel[:3, :3]))
        body = p.createMultiBody(
            masses[0],
            shapes[0],
            -1,
            world0[:3, 3].tolist(),
            _quat(world0[:3, :3]),
            linkMasses=masses[1:],
            linkCollisionShapeIndices=shapes[1:],
            linkVisualShapeIndices=[-1] * (n - 1),
            linkPositions=lpos,
            linkOrientations=lorn,
            linkInertialFramePositions=[[0, 0, 0]] * (n - 1),
            linkInertialFrameOrientations=[[0, 0, 0, 1]] * (n - 1),
            linkParentIndices=[0] * (n - 1),
            linkJointTypes=[p.JOINT_FIXED] * (n - 1),
            linkJointAxis=[[0, 0, 1]] * (n - 1),
            physicsClientId=c,
        )
        self.offsets[body] = b0
        self.com[body] = np.mean([[0.0, 0.0, 0.0], *lpos], axis=0)  # equal link masses
        return body

    def _remove_object(self, oid: str) -> None:
        for body, _ in self.bodies.pop(oid, []):
            self.p.removeBody(body, physicsClientId=self.cid)
            self.refs.pop(body, None)
            self.offsets.pop(body, None)
            self._posed.pop(body, None)
            self.com.pop(body, None)
            self._read.pop(body, None)
            self.walkable_bodies.discard(body)
            self.awake.discard(body)
            self._waking.discard(body)
        self._pose_keys.pop(oid, None)
        self._stir()

    def _object_base(self, st: ObjectState) -> np.ndarray:
        """Rigid object frame (no scale) -> world."""
        m = np.eye(4)
        m[:3, :3] = rotation_matrix(st.rotation_deg)
        m[:3, 3] = st.world_position()
        return m

    def _build_object(self, st: ObjectState) -> None:
        self._remove_object(st.id)
        self.versions[st.id] = st.shape_version
        if not st.present or st.held:
            return
        base = self._object_base(st)
        out: list[tuple[int, str | None]] = []
        dynamic = st.simulated
        solid = [ps for ps in st.parts.values() if st.is_solid_part(ps)]
        ghost = [ps for ps in st.parts.values() if not st.is_solid_part(ps)]
        if not st.present:
            ghost = []
        if dynamic and solid:
            (b,) = self._make_bodies(
                st, solid, base, st.mass_kg, GROUP_SOLID, MASK_SOLID, BodyRef("object", st.id)
            )
            # Dynamic objects start asleep where they were placed (as game engines do): a floated
            # or interpenetrating object keeps its pose until something touches it.
            self.p.changeDynamics(
                b, -1, activationState=self.p.ACTIVATION_STATE_ENABLE_SLEEPING, physicsClientId=self.cid
            )
            self.p.changeDynamics(
                b, -1, activationState=self.p.ACTIVATION_STATE_SLEEP, physicsClientId=self.cid
            )
            out.append((b, None))
        else:
            fixed = [ps for ps in solid if not (ps.part.hinge or ps.part.spin)]
            # a dynamic object held still (frozen, massless) may be given mass later: not fixed
            group, mask = (GROUP_SOLID, MASK_SOLID) if st.spec.dynamic else (GROUP_FIXED, MASK_FIXED)
            out += [
                (b, None)
                for b in self._make_bodies(st, fixed, base, 0.0, group, mask, BodyRef("object", st.id))
            ]
            for ps in solid:
                if ps.part.hinge or ps.part.spin:
                    bodies = self._make_bodies(
                        st,
                        [ps],
                        self._part_base(st, ps, visual=True),
                        0.0,
                        group,
                        mask,
                        BodyRef("object", st.id, ps.part.id),
                        place=self._part_base(st, ps),
                    )
                    out += [(b, ps.part.id) for b in bodies]
        if ghost and not st.is_liquid:
            ref = BodyRef("object", st.id, "#ghost")
            out += [
                (b, "#ghost") for b in self._make_bodies(st, ghost, base, 0.0, GROUP_GHOST, GROUP_RAYS, ref)
            ]
        if "through_walls" in st.mechanism:
            ref = BodyRef("object", st.id, "#reach")
            bodies = self._make_bodies(st, list(st.parts.values()), base, 0.0, GROUP_REACH, GROUP_RAYS, ref)
            out += [(b, "#reach") for b in bodies]
        self.bodies[st.id] = out
        if st.spec.walkable:
            self.walkable_bodies.update(b for b, part in out if part is None or not part.startswith("#"))

    def _part_base(self, st: ObjectState, ps: PartState, visual: bool = False) -> np.ndarray:
        """Body frame of a separately posed part: the object frame moved by the part's hinge/spin
        motion (the collider's swing, which ghost/phantom/jam mechanisms may decouple from the visual)."""
        base = self._object_base(st)
        hinge = ps.hinge_deg
        if not visual and ps.part.hinge and st.collider_frac is not None:
            hinge = st.collider_frac * ps.part.hinge.swing_deg
        key = (st.id, ps.part.id, ps.position, ps.rotation_deg, np.asarray(st.scale, dtype=float).tobytes())
        frame = self._rest.get(key)
        if frame is None:  # scale and rest pose only change with a rebuild: invert them once
            rest = part_matrix(ps.part, PartPose(ps.position, ps.rotation_deg, 0.0, 0.0))
            s = np.diag(list(st.scale) + [1.0])
            frame = self._rest[key] = (s, np.linalg.inv(rest) @ np.linalg.inv(s))
        moved = part_matrix(ps.part, PartPose(ps.position, ps.rotation_deg, hinge, ps.spin_deg))
        return base @ (frame[0] @ moved @ frame[1])

    def _build_ground(self) -> None:
        p, c = self.p, self.cid
        for b in self.ground_bodies:
            p.removeBody(b, physicsClientId=c)
            self.refs.pop(b, None)
        self.ground_bodies = []
        if self.world.scene.ground.terrain is not None:
            b = heightfield(self.p, self.cid, self.world.scene.ground)
            p.setCollisionFilterGroupMask(b, -1, GROUP_FIXED, MASK_FIXED, physicsClientId=c)
            p.changeDynamics(b, -1, lateralFriction=0.8, restitution=1.0, physicsClientId=c)
            self.refs[b] = BodyRef("ground")
            self.ground_bodies.append(b)
            self._flat = None
            self._build_blockers()
            return
        gx, gy = self.world.scene.ground.size
        holes = [
            (np.asarray(cn[:2]) - np.asarray(sz[:2]) / 2, np.asarray(cn[:2]) + np.asarray(sz[:2]) / 2)
            for cn, sz in self.world.holes
        ]
        floors = []
        for st in self.world.objects.values():
            if st.is_liquid and st.present and not st.solid:
                lo, hi = self.world.aabb(st)
                if all(
                    ps.part.shape in ("cylinder", "sphere", "capsule", "cone") for ps in st.parts.values()
                ):
                    c, h = (lo + hi) / 2, (hi - lo) / 2 * 0.85  # round pond: between in- and circumscribed
                    lo, hi = np.r_[c[:2] - h[:2], lo[2]], np.r_[c[:2] + h[:2], hi[2]]
                holes.append((lo[:2], hi[:2]))
                floors.append((lo, hi, hi[2] - st.liquid_depth))
        xs = sorted(
            {
                -gx / 2,
                gx / 2,
                *[float(np.clip(v, -gx / 2, gx / 2)) for h in holes for v in (h[0][0], h[1][0])],
            }
        )
        ys = sorted(
            {
                -gy / 2,
                gy / 2,
                *[float(np.clip(v, -gy / 2, gy / 2)) for h in holes for v in (h[0][1], h[1][1])],
            }
        )
        for x0, x1 in zip(xs, xs[1:], strict=False):
            for y0, y1 in zip(ys, ys[1:], strict=False):
                if x1 - x0 < 1e-6 or y1 - y0 < 1e-6:
                    continue
                cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
                if any(h[0][0] <= cx <= h[1][0] and h[0][1] <= cy <= h[1][1] for h in holes):
                    continue
                self.ground_bodies.append(
                    self._box((cx, cy, -0.5), (x1 - x0, y1 - y0, 1.0), BodyRef("ground"))
                )
        self._flat = (
            gx / 2,
            gy / 2,
            tuple((tuple(map(float, lo)), tuple(map(float, hi))) for lo, hi in holes),
        )
        for lo, hi, depth in floors:
            c2 = ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, depth - 0.5)
            self.ground_bodies.append(
                self._box(c2, (hi[0] - lo[0] + 0.2, hi[1] - lo[1] + 0.2, 1.0), BodyRef("liquid_floor"))
            )
        self._build_blockers()

    def _build_blockers(self) -> None:
        for pos, size, rot in self.world.blockers:
            m = rotation_matrix(rot)
            centre = np.asarray(pos, dtype=float) + m @ np.array([0, 0, size[2] / 2])
            self.ground_bodies.append(self._box(tuple(centre), size, BodyRef("blocker"), m))
        self.ground_version = self.world.version

    def _box(self, centre, size, ref: BodyRef, rot: np.ndarray | None = None) -> int:
        p, c = self.p, self.cid
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[s / 2 for s in size], physicsClientId=c)
        b = p.createMultiBody(
            0,
            shape,
            -1,
            list(centre),
            _quat(rot if rot is not None else np.eye(3)),
            useMaximalCoordinates=True,
            physicsClientId=c,
        )
        p.setCollisionFilterGroupMask(b, -1, GROUP_FIXED, MASK_FIXED, physicsClientId=c)
        p.changeDynamics(
            b, -1, lateralFriction=0.8, restitution=1.0 if ref.kind == "ground" else 0.0, physicsClientId=c
        )
        self.refs[b] = ref
        return b

    # --- per-tick synchronisation ---------------------------------------------------------
