"""Physics of a running world: pybullet in DIRECT mode, bodies from solid parts, the agent capsule.

Static objects become fixed compound bodies that are re-posed kinematically (doors, drift,
tremble); dynamic objects are simulated and their poses written back to the `World`.  Non-solid
parts become collision-free "ghost" bodies that rays still hit (view tests, the crosshair).
The agent is an upright dynamic capsule driven by velocity, so solids block it and it pushes
dynamic objects.  Liquids have no collider: the ground has a hole under them and a floor at
their bottom, so the agent sinks in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wac.errors import WacError

from .geometry import PartPose, euler_from_matrix, part_matrix, rotation_matrix
from .world import ObjectState, PartState, World

DT = 1.0 / 120.0
GRAVITY = -9.81
AGENT_MASS = 70.0
GROUP_SOLID, GROUP_GHOST, GROUP_AGENT, GROUP_REACH = 1, 2, 4, 8
# pybullet ray queries carry filter group 1: ray-only bodies need bit 1 in their mask, which is
# harmless because no solid body has their group bit in its own mask.
GROUP_RAYS = GROUP_SOLID
RAY_ALL = GROUP_SOLID | GROUP_GHOST


def _pybullet():
    try:
        import pybullet
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise WacError("the runtime needs the 'pybullet' package: pip install 'wac[runtime]'") from exc
    return pybullet


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
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


@dataclass(frozen=True)
class BodyRef:
    """What a pybullet body stands for: an object (and part group), the ground, or a blocker."""

    kind: str  # object | ground | blocker | liquid_floor
    object_id: str | None = None
    hinged: str | None = None  # part id of a separately posed part (hinge / spin)


class Physics:
    """One pybullet client holding the world's bodies and the agent."""

    def __init__(self, world: World, agent_radius: float, eye_height: float) -> None:
        self.p = _pybullet()
        self.world = world
        self.cid = self.p.connect(self.p.DIRECT)
        self.agent_radius = agent_radius
        self.agent_height = eye_height + 0.15
        self.refs: dict[int, BodyRef] = {}
        self.offsets: dict[int, np.ndarray] = {}  # body -> its frame relative to the object/part base
        self._posed: dict[int, bytes] = {}  # body -> last kinematic pose set (skip unchanged)
        self.bodies: dict[str, list[tuple[int, str | None]]] = {}  # object id -> [(body, part id or None)]
        self.versions: dict[str, int] = {}
        self.ground_bodies: list[int] = []
        self.ground_version = -1
        self.agent = -1
        self._reset_sim()

    # --- set-up --------------------------------------------------------------------------
    def _reset_sim(self) -> None:
        p, c = self.p, self.cid
        p.resetSimulation(physicsClientId=c)
        p.setGravity(0, 0, GRAVITY, physicsClientId=c)
        p.setPhysicsEngineParameter(fixedTimeStep=DT, numSubSteps=1, deterministicOverlappingPairs=1,
                                    physicsClientId=c)
        self.refs.clear()
        self.offsets.clear()
        self._posed.clear()
        self.bodies.clear()
        self.versions.clear()
        self.ground_bodies = []
        self.ground_version = -1
        self._build_agent()
        self.sync(full=True)

    def close(self) -> None:
        if self.cid is not None and self.p.isConnected(self.cid):
            self.p.disconnect(self.cid)
        self.cid = None

    def _build_agent(self) -> None:
        p, c = self.p, self.cid
        r = self.agent_radius
        cyl = max(self.agent_height - 2 * r, 0.1)
        shape = p.createCollisionShape(p.GEOM_CAPSULE, radius=r, height=cyl, physicsClientId=c)
        self.agent = p.createMultiBody(AGENT_MASS, shape, -1, [0, 0, self.agent_height / 2], physicsClientId=c)
        p.changeDynamics(self.agent, -1, lateralFriction=0.0, spinningFriction=0.0, rollingFriction=0.0,
                         restitution=0.0, localInertiaDiagonal=[0, 0, 0], linearDamping=0.0, angularDamping=0.0,
                         physicsClientId=c)
        p.setCollisionFilterGroupMask(self.agent, -1, GROUP_AGENT, GROUP_SOLID, physicsClientId=c)
        self.refs[self.agent] = BodyRef("agent")

    def _shape(self, st: ObjectState, ps: PartState, base_inv: np.ndarray):
        """Collision shape args for one part, in the frame given by `base_inv` (world -> body)."""
        p = self.p
        m = base_inv @ self.world.part_world(st, ps)
        lin = m[:3, :3]
        scale = np.linalg.norm(lin, axis=0)
        rot = lin / np.maximum(scale, 1e-12)
        orthonormal = np.allclose(rot.T @ rot, np.eye(3), atol=1e-6) and np.linalg.det(rot) > 0  # no mirror
        size = np.asarray(ps.part.size, dtype=float) * scale
        if ps.part.shape == "box" and orthonormal:
            centre = m[:3, 3] + rot @ np.array([0, 0, size[2] / 2])
            return dict(shapeType=p.GEOM_BOX, halfExtents=(size / 2).tolist()), centre, rot
        mesh = self.world.mesh(ps)
        verts = (m @ np.c_[mesh.vertices, np.ones(len(mesh.vertices))].T).T[:, :3]
        centre = verts.mean(axis=0)
        return dict(shapeType=p.GEOM_MESH, vertices=(verts - centre).tolist()), centre, np.eye(3)

    def _make_body(self, st: ObjectState, parts: list[PartState], base: np.ndarray, mass: float,
                   group: int, mask: int, ref: BodyRef, place: np.ndarray | None = None) -> int | None:
        """One rigid body (a multibody with fixed links when there are several parts); shapes are
        expressed relative to `base`, and the body is put at `place` (default `base`)."""
        p, c = self.p, self.cid
        if not parts:
            return None
        inv = np.linalg.inv(base)
        shapes, pos, orn = [], [], []
        for ps in parts:
            args, centre, rot = self._shape(st, ps, inv)
            shapes.append(p.createCollisionShape(physicsClientId=c, **args))
            pos.append(centre.tolist())
            orn.append(_quat(rot))
        n = len(shapes)
        masses = [mass / n] * n if mass > 0 else [0.0] * n
        body = self._multibody(shapes, pos, orn, masses, base if place is None else place)
        fr = st.friction if st.friction is not None else 0.6
        rs = st.restitution if st.restitution is not None else 0.0
        for link in range(-1, n - 1):
            p.setCollisionFilterGroupMask(body, link, group, mask, physicsClientId=c)
            p.changeDynamics(body, link, lateralFriction=fr, restitution=rs, rollingFriction=0.01,
                             spinningFriction=0.01, physicsClientId=c)
        self.refs[body] = ref
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
            masses[0], shapes[0], -1, world0[:3, 3].tolist(), _quat(world0[:3, :3]),
            linkMasses=masses[1:], linkCollisionShapeIndices=shapes[1:], linkVisualShapeIndices=[-1] * (n - 1),
            linkPositions=lpos, linkOrientations=lorn, linkInertialFramePositions=[[0, 0, 0]] * (n - 1),
            linkInertialFrameOrientations=[[0, 0, 0, 1]] * (n - 1), linkParentIndices=[0] * (n - 1),
            linkJointTypes=[p.JOINT_FIXED] * (n - 1), linkJointAxis=[[0, 0, 1]] * (n - 1),
            physicsClientId=c,
        )
        self.offsets[body] = b0
        return body

    def _remove_object(self, oid: str) -> None:
        for body, _ in self.bodies.pop(oid, []):
            self.p.removeBody(body, physicsClientId=self.cid)
            self.refs.pop(body, None)
            self.offsets.pop(body, None)
            self._posed.pop(body, None)

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
            b = self._make_body(st, solid, base, st.mass_kg, GROUP_SOLID, GROUP_SOLID | GROUP_AGENT,
                                BodyRef("object", st.id))
            # Dynamic objects start asleep where they were placed (as game engines do): a floated
            # or interpenetrating object keeps its pose until something touches it.
            self.p.changeDynamics(b, -1, activationState=self.p.ACTIVATION_STATE_ENABLE_SLEEPING,
                                  physicsClientId=self.cid)
            self.p.changeDynamics(b, -1, activationState=self.p.ACTIVATION_STATE_SLEEP, physicsClientId=self.cid)
            out.append((b, None))
        else:
            fixed = [ps for ps in solid if not (ps.part.hinge or ps.part.spin)]
            b = self._make_body(st, fixed, base, 0.0, GROUP_SOLID, GROUP_SOLID | GROUP_AGENT, BodyRef("object", st.id))
            if b is not None:
                out.append((b, None))
            for ps in solid:
                if ps.part.hinge or ps.part.spin:
                    pb = self._make_body(st, [ps], self._part_base(st, ps, visual=True), 0.0, GROUP_SOLID,
                                         GROUP_SOLID | GROUP_AGENT, BodyRef("object", st.id, ps.part.id),
                                         place=self._part_base(st, ps))
                    out.append((pb, ps.part.id))
        if ghost and not st.is_liquid:
            b = self._make_body(st, ghost, base, 0.0, GROUP_GHOST, GROUP_RAYS, BodyRef("object", st.id, "#ghost"))
            if b is not None:
                out.append((b, "#ghost"))
        if "through_walls" in st.mechanism:
            b = self._make_body(st, list(st.parts.values()), base, 0.0, GROUP_REACH, GROUP_RAYS,
                                BodyRef("object", st.id, "#reach"))
            if b is not None:
                out.append((b, "#reach"))
        self.bodies[st.id] = out

    def _part_base(self, st: ObjectState, ps: PartState, visual: bool = False) -> np.ndarray:
        """Body frame of a separately posed part: the object frame moved by the part's hinge/spin
        motion (the collider's swing, which ghost/phantom/jam mechanisms may decouple from the visual)."""
        base = self._object_base(st)
        hinge = ps.hinge_deg
        if not visual and ps.part.hinge and st.collider_frac is not None:
            hinge = st.collider_frac * ps.part.hinge.swing_deg
        rest = part_matrix(ps.part, PartPose(ps.position, ps.rotation_deg, 0.0, 0.0))
        moved = part_matrix(ps.part, PartPose(ps.position, ps.rotation_deg, hinge, ps.spin_deg))
        s = np.diag(list(st.scale) + [1.0])
        delta = s @ moved @ np.linalg.inv(rest) @ np.linalg.inv(s)
        return base @ delta

    def _build_ground(self) -> None:
        p, c = self.p, self.cid
        for b in self.ground_bodies:
            p.removeBody(b, physicsClientId=c)
            self.refs.pop(b, None)
        self.ground_bodies = []
        gx, gy = self.world.scene.ground.size
        holes = [(np.asarray(cn[:2]) - np.asarray(sz[:2]) / 2, np.asarray(cn[:2]) + np.asarray(sz[:2]) / 2)
                 for cn, sz in self.world.holes]
        floors = []
        for st in self.world.objects.values():
            if st.is_liquid and st.present and not st.solid:
                lo, hi = self.world.aabb(st)
                if all(ps.part.shape in ("cylinder", "sphere", "capsule", "cone") for ps in st.parts.values()):
                    c, h = (lo + hi) / 2, (hi - lo) / 2 * 0.85  # round pond: between in- and circumscribed
                    lo, hi = np.r_[c[:2] - h[:2], lo[2]], np.r_[c[:2] + h[:2], hi[2]]
                holes.append((lo[:2], hi[:2]))
                floors.append((lo, hi, hi[2] - st.liquid_depth))
        xs = sorted({-gx / 2, gx / 2, *[float(np.clip(v, -gx / 2, gx / 2)) for h in holes for v in (h[0][0], h[1][0])]})
        ys = sorted({-gy / 2, gy / 2, *[float(np.clip(v, -gy / 2, gy / 2)) for h in holes for v in (h[0][1], h[1][1])]})
        for x0, x1 in zip(xs, xs[1:], strict=False):
            for y0, y1 in zip(ys, ys[1:], strict=False):
                if x1 - x0 < 1e-6 or y1 - y0 < 1e-6:
                    continue
                cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
                if any(h[0][0] <= cx <= h[1][0] and h[0][1] <= cy <= h[1][1] for h in holes):
                    continue
                self.ground_bodies.append(self._box((cx, cy, -0.5), (x1 - x0, y1 - y0, 1.0), BodyRef("ground")))
        for lo, hi, depth in floors:
            c2 = ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, depth - 0.5)
            self.ground_bodies.append(self._box(c2, (hi[0] - lo[0] + 0.2, hi[1] - lo[1] + 0.2, 1.0), BodyRef("liquid_floor")))
        for pos, size, rot in self.world.blockers:
            m = rotation_matrix(rot)
            centre = np.asarray(pos, dtype=float) + m @ np.array([0, 0, size[2] / 2])
            self.ground_bodies.append(self._box(tuple(centre), size, BodyRef("blocker"), m))
        self.ground_version = self.world.version

    def _box(self, centre, size, ref: BodyRef, rot: np.ndarray | None = None) -> int:
        p, c = self.p, self.cid
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[s / 2 for s in size], physicsClientId=c)
        b = p.createMultiBody(0, shape, -1, list(centre), _quat(rot if rot is not None else np.eye(3)), physicsClientId=c)
        p.setCollisionFilterGroupMask(b, -1, GROUP_SOLID, GROUP_SOLID | GROUP_AGENT, physicsClientId=c)
        p.changeDynamics(b, -1, lateralFriction=0.8, restitution=1.0 if ref.kind == "ground" else 0.0, physicsClientId=c)
        self.refs[b] = ref
        return b

    # --- per-tick synchronisation ---------------------------------------------------------
    def sync(self, full: bool = False) -> None:
        """Bring bodies in line with the world: rebuild changed objects, re-pose kinematic ones."""
        p, c = self.p, self.cid
        if full or self.ground_version != self.world.version:
            self._build_ground()
        for oid in [o for o in self.bodies if o not in self.world.objects]:
            self._remove_object(oid)
        for st in self.world.objects.values():
            if full or self.versions.get(st.id) != st.shape_version:
                self._build_object(st)
                continue
            if st.simulated and not st.motion:
                continue
            for body, part in self.bodies.get(st.id, []):
                if part is None or part.startswith("#"):
                    m = self._object_base(st)
                else:
                    m = self._part_base(st, st.parts[part])
                m = m @ self.offsets[body]
                key = m.tobytes()
                if self._posed.get(body) == key:
                    continue
                self._posed[body] = key
                p.resetBasePositionAndOrientation(body, m[:3, 3].tolist(), _quat(m[:3, :3]), physicsClientId=c)

    def read_back(self) -> None:
        """Copy simulated poses of dynamic bodies into the world."""
        p, c = self.p, self.cid
        for st in self.world.objects.values():
            if not (st.simulated) or st.motion:
                continue
            for body, part in self.bodies.get(st.id, []):
                if part is not None:
                    continue
                pos, q = p.getBasePositionAndOrientation(body, physicsClientId=c)
                m = np.eye(4)
                m[:3, :3], m[:3, 3] = _matrix(q), pos
                m = m @ np.linalg.inv(self.offsets[body])
                st.position = m[:3, 3] - st.motion_offset
                st.rotation_deg = np.array(euler_from_matrix(m[:3, :3]))

    def set_dynamics(self, st: ObjectState) -> None:
        """Apply mass/restitution/friction changes to an object's body."""
        for body, part in self.bodies.get(st.id, []):
            if part is not None:
                continue
            kw = {}
            if st.simulated:
                kw["mass"] = st.mass_kg
            if st.restitution is not None:
                kw["restitution"] = st.restitution
            if st.friction is not None:
                kw["lateralFriction"] = st.friction
            if kw:
                self.p.changeDynamics(body, -1, physicsClientId=self.cid, **kw)

    def kick(self, st: ObjectState, linear=(0.0, 0.0, 0.0), angular=(0.0, 0.0, 0.0)) -> None:
        """Add a velocity change to a dynamic object."""
        p, c = self.p, self.cid
        for body, part in self.bodies.get(st.id, []):
            if part is None and st.simulated:
                p.changeDynamics(body, -1, activationState=p.ACTIVATION_STATE_WAKE_UP, physicsClientId=c)
                v, w = p.getBaseVelocity(body, physicsClientId=c)
                p.resetBaseVelocity(body, (np.add(v, linear)).tolist(), (np.add(w, angular)).tolist(), physicsClientId=c)

    # --- agent -----------------------------------------------------------------------------
    def place_agent(self, x: float, y: float, z: float | None = None) -> None:
        zc = self.agent_height / 2 if z is None else z + self.agent_height / 2
        self.p.resetBasePositionAndOrientation(self.agent, [x, y, zc], [0, 0, 0, 1], physicsClientId=self.cid)
        self.p.resetBaseVelocity(self.agent, [0, 0, 0], [0, 0, 0], physicsClientId=self.cid)

    def agent_position(self) -> np.ndarray:
        """Agent foot point (x, y, z of the capsule bottom)."""
        pos, _ = self.p.getBasePositionAndOrientation(self.agent, physicsClientId=self.cid)
        return np.array([pos[0], pos[1], pos[2] - self.agent_height / 2])

    def step(self, vx: float = 0.0, vy: float = 0.0) -> None:
        """One fixed time step with the agent walking at (vx, vy) m/s."""
        p, c = self.p, self.cid
        v, _ = p.getBaseVelocity(self.agent, physicsClientId=c)
        vz = v[2]
        foot = self.agent_position()
        if foot[2] < -20.0:  # fell out of the world: stop there
            vz, vx, vy = 0.0, 0.0, 0.0
            p.changeDynamics(self.agent, -1, mass=0, physicsClientId=c)
        p.resetBaseVelocity(self.agent, [vx, vy, vz], [0, 0, 0], physicsClientId=c)
        p.stepSimulation(physicsClientId=c)

    def set_agent_collision(self, oid: str, enabled: bool) -> None:
        """Let the agent pass through (or collide with) an object's solid bodies."""
        p, c = self.p, self.cid
        for body, part in self.bodies.get(oid, []):
            if part is not None and part.startswith("#"):
                continue
            for link in range(-1, p.getNumJoints(body, physicsClientId=c)):
                p.setCollisionFilterPair(self.agent, body, -1, link, int(enabled), physicsClientId=c)

    def agent_contacts(self) -> set[str]:
        """Ids of objects the agent touches now."""
        out = set()
        for cp in self.p.getContactPoints(bodyA=self.agent, physicsClientId=self.cid):
            ref = self.refs.get(cp[2])
            if ref and ref.kind == "object":
                out.add(ref.object_id)
        return out

    def touching(self, oid: str, margin: float = 0.05) -> bool:
        """Whether the agent is within `margin` of an object's solid bodies."""
        for body, part in self.bodies.get(oid, []):
            if part is not None and part.startswith("#"):
                continue
            if self.p.getClosestPoints(self.agent, body, margin, physicsClientId=self.cid):
                return True
        return False

    # --- rays -------------------------------------------------------------------------------
    def ray(self, a, b, mask: int = RAY_ALL) -> tuple[BodyRef | None, float, np.ndarray]:
        """First hit along a->b: (what, fraction, point)."""
        hit = self.p.rayTest(list(a), list(b), collisionFilterMask=mask, physicsClientId=self.cid)[0]
        if hit[0] < 0:
            return None, 1.0, np.asarray(b, dtype=float)
        return self.refs.get(hit[0]), float(hit[2]), np.asarray(hit[3])

    def rays(self, starts, ends, mask: int = RAY_ALL) -> list[tuple[BodyRef | None, float]]:
        res = self.p.rayTestBatch([list(s) for s in starts], [list(e) for e in ends], collisionFilterMask=mask,
                                  physicsClientId=self.cid)
        return [(None, 1.0) if h[0] < 0 else (self.refs.get(h[0]), float(h[2])) for h in res]
