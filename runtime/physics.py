"""Physics of a running world: pybullet in DIRECT mode, bodies from solid parts, the agent capsule.

Static objects become fixed compound bodies that are re-posed kinematically (doors, drift,
tremble); dynamic objects are simulated and their poses written back to the `World`.  Non-solid
parts become collision-free "ghost" bodies that rays still hit (view tests, the crosshair).
The agent is an upright dynamic capsule driven by velocity, so solids block it.  Its push on
dynamic objects is force-limited (`PUSH_FORCE_N`, a person leaning in): it cannot walk into a
dynamic object faster than the object gives way, and it leans on it with at most that force, so
a heavy object blocks it and a light one is shoved away (`Physics._limit_push`).  Onto walkable
objects (stairs) it steps up edges of up to a step's height (`climb.py`).  Liquids have
no collider: the ground has a hole under them and a floor at their bottom, so the agent sinks in.

Steps are skipped while nothing can change (`Physics.step`): the agent stands still and rests,
every dynamic body has been at rest for `QUIET_STEPS`, and nothing kinematic moved near them.  A
walking step in free space on flat ground is walked, not simulated (`Physics._walk_freely`).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys

import numpy as np

from wac.bundle.terrain import height as terrain_height
from wac.errors import WacError

from .climb import step_up
from .geometry import euler_from_matrix
from .physics_bodies import (
    GROUP_AGENT,
    MASK_AGENT,
    RAY_ALL,
    Bodies,
    BodyRef,
    _matrix,
    _quat,
)
from .world import ObjectState, World

DT = 1.0 / 120.0
GRAVITY = -9.81
AGENT_MASS = 70.0
PUSH_FORCE_N = 250.0  # the most the agent leans on a dynamic object with, horizontally
PUSH_HEIGHT_M = 1.0  # hands' height above the feet: where a push meets an object taller than that
SHOVE_SPEED = (
    6.0  # m/s: the fastest a shove sends an object (hand speed of a hard shove); matters below ~0.4 kg
)
CONTACT_SLOP_M = 0.02  # a dynamic object this close counts as touched by the agent
QUIET_STEPS = 6  # steps of rest (agent and dynamic bodies) before steps are skipped
REST_V, REST_W = 2e-3, 2e-2  # m/s and rad/s below which a body counts as at rest
FREE_MARGIN_M = 0.1  # a walking step is simulated when any body but the ground is this near the agent
FLAT_FOOT_M = 1e-3  # the agent's feet this near the flat ground's top (z = 0) stand on it


def _pybullet():
    """pybullet, with its "pybullet build time" banner kept off stdout.

    pybullet printf's the banner when it is imported; C's stdio buffer then reaches stdout only at
    process exit, after our own output (a table, a JSON document, an MCP stream).  Sending fd 1 to
    stderr at exit, after Python has flushed its own stdout, moves the banner to stderr."""
    if "pybullet" in sys.modules:
        return sys.modules["pybullet"]
    try:
        import pybullet
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise WacError("the runtime needs the 'pybullet' package: pip install 'wac[runtime]'") from exc
    atexit.register(_banner_to_stderr)
    return pybullet


def _banner_to_stderr() -> None:
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        os.dup2(2, 1)


_F64 = np.dtype(float)


def _raw(v) -> bytes:
    """A vector's float64 bytes (without a conversion when it is a float64 array already)."""
    return v.tobytes() if type(v) is np.ndarray and v.dtype is _F64 else np.asarray(v, dtype=float).tobytes()


def _pose_key(st: ObjectState) -> tuple:
    """Everything a static object's body poses depend on (see `Physics.sync`); computed for every
    object at every control tick, so kept cheap."""
    parts = tuple((ps.position, ps.rotation_deg, ps.hinge_deg, ps.spin_deg) for ps in st.moving_parts)
    return (
        _raw(st.position),
        _raw(st.rotation_deg),
        _raw(st.scale),
        _raw(st.motion_offset),
        st.collider_frac,
        parts,
    )


class Physics(Bodies):
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
        self.com: dict[int, np.ndarray] = {}  # body -> centre of mass in its base frame
        self.passable: set[str] = set()  # objects the agent currently walks through (no push)
        self.walkable_bodies: set[int] = set()  # bodies of walkable objects: the agent steps up onto them
        self.awake: set[int] = set()  # dynamic bodies woken for good and stepped since (see `_wake`)
        self._waking: set[int] = set()  # woken, not stepped yet
        self._kicks: list[tuple[int, tuple, tuple]] = []  # velocity changes held back one step
        self._pose_keys: dict[str, tuple] = {}  # object id -> pose key of its last kinematic re-pose
        self._read: dict[int, tuple] = {}  # body -> (position, orientation) last copied into the world
        self._rest: dict[tuple, tuple] = {}  # hinged/spinning part -> (scale, inverse rest frame)
        self.quiet = 0  # consecutive steps with nothing moving (see `step`)
        self.calm = 0  # consecutive steps with every dynamic body at rest (see `_walk_freely`)
        self._flat: tuple | None = None  # flat ground: (half size x, y, hole rectangles); None on terrain
        self.stepped = True  # a simulation step ran since the last `read_back`
        self.steps_run = self.steps_skipped = self.steps_walked = 0
        self._dynamic: tuple = (None, 0, [])  # (the world's objects, their number, the dynamic ones)
        self._changed = world.watch()  # objects assigned since the last `sync`
        self._synced_version = -1  # the world's version at the last `sync` that saw every object
        self._reset_sim()

    # --- set-up --------------------------------------------------------------------------
    def _reset_sim(self) -> None:
        p, c = self.p, self.cid
        p.resetSimulation(physicsClientId=c)
        p.setGravity(0, 0, GRAVITY, physicsClientId=c)
        p.setPhysicsEngineParameter(
            fixedTimeStep=DT, numSubSteps=1, deterministicOverlappingPairs=1, physicsClientId=c
        )
        self.refs.clear()
        self._shape_ids: dict[tuple, int] = {}  # shape type and numbers -> shape (`_collision_shape`)
        self.offsets.clear()
        self._posed.clear()
        self.com.clear()
        self.awake.clear()
        self._waking.clear()
        self._kicks.clear()
        self._pose_keys.clear()
        self._read.clear()
        self._stir()
        self.bodies.clear()
        self.walkable_bodies.clear()
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
        self.agent = p.createMultiBody(
            AGENT_MASS, shape, -1, [0, 0, self.agent_height / 2], physicsClientId=c
        )
        p.changeDynamics(
            self.agent,
            -1,
            lateralFriction=0.0,
            spinningFriction=0.0,
            rollingFriction=0.0,
            restitution=0.0,
            localInertiaDiagonal=[0, 0, 0],
            linearDamping=0.0,
            angularDamping=0.0,
            physicsClientId=c,
        )
        p.setCollisionFilterGroupMask(self.agent, -1, GROUP_AGENT, MASK_AGENT, physicsClientId=c)
        self.refs[self.agent] = BodyRef("agent")

    def sync(self, full: bool = False) -> None:
        """Bring bodies in line with the world: rebuild changed objects, re-pose kinematic ones.  Only
        objects assigned since the last sync are looked at (all of them when the world's set of
        objects changed), in world order."""
        p, c = self.p, self.cid
        if full or self.ground_version != self.world.version:
            self._build_ground()
            self._stir()
        objects = self.world.objects
        if not self.bodies.keys() <= objects.keys():
            for oid in [o for o in self.bodies if o not in objects]:
                self._remove_object(oid)
        if full or self._synced_version != self.world.version:
            todo = objects.items()
            self._synced_version = self.world.version
        elif self._changed:
            todo = sorted(
                ((o, objects[o]) for o in self._changed if o in objects), key=lambda kv: kv[1].index
            )
        else:
            return
        self._changed.clear()
        for oid, st in todo:  # keyed by object id
            if full or self.versions.get(oid) != st.shape_version:
                self._build_object(st)
                continue
            if st.simulated and not st.motion:
                continue
            bodies = self.bodies.get(oid)
            if not bodies:
                continue
            key = _pose_key(st)
            if self._pose_keys.get(oid) == key:
                continue  # nothing about its pose changed since the last re-pose
            self._pose_keys[oid] = key
            frames: dict[str | None, np.ndarray] = {}  # the object's frame, or a moving part's
            for body, part in bodies:
                whose = None if part is None or part.startswith("#") else part
                frame = frames.get(whose)
                if frame is None:
                    frame = frames[whose] = (
                        self._object_base(st) if whose is None else self._part_base(st, st.parts[whose])
                    )
                m = frame @ self.offsets[body]
                bkey = m.tobytes()
                if self._posed.get(body) == bkey:
                    continue
                self._posed[body] = bkey
                p.resetBasePositionAndOrientation(
                    body, m[:3, 3].tolist(), _quat(m[:3, :3]), physicsClientId=c
                )
                # `calm` counts at least as many steps as `quiet`: both are 0 while anything moves
                if self.calm and (part is None or not part.startswith("#")) and self._near_movers(body):
                    self._stir()  # a solid moved kinematically next to the agent or a dynamic body

    def _near_movers(self, body: int, margin: float = 0.1) -> bool:
        """Whether a body's bounds come within `margin` of the agent or a simulated body."""
        p, c = self.p, self.cid
        lo, hi = p.getAABB(body, physicsClientId=c)
        for link in range(p.getNumJoints(body, physicsClientId=c)):
            llo, lhi = p.getAABB(body, link, physicsClientId=c)
            lo, hi = np.minimum(lo, llo), np.maximum(hi, lhi)
        hits = (
            p.getOverlappingObjects(
                list(np.subtract(lo, margin)), list(np.add(hi, margin)), physicsClientId=c
            )
            or ()
        )
        for other, _ in hits:
            if other == self.agent:
                return True
            ref = self.refs.get(other)
            if ref is not None and ref.kind == "object" and ref.hinged is None:
                st = self.world.objects.get(ref.object_id)
                if st is not None and st.simulated:
                    return True
        return False

    def _dynamic_objects(self) -> list[ObjectState]:
        """The objects physics may move (dynamic in the scene), in world order; objects are only ever
        added to a world, so the list is rebuilt when their number changes."""
        objects = self.world.objects
        if self._dynamic[0] is not objects or self._dynamic[1] != len(objects):
            self._dynamic = (objects, len(objects), [st for st in objects.values() if st.spec.dynamic])
        return self._dynamic[2]

    def read_back(self) -> None:
        """Copy simulated poses of dynamic bodies into the world (nothing to do when no step ran)."""
        if not self.stepped:
            return
        self.stepped = False
        p, c = self.p, self.cid
        for st in self._dynamic_objects():
            if not (st.simulated) or st.motion:
                continue
            for body, part in self.bodies.get(st.id, []):
                if part is not None:
                    continue
                pos, q = p.getBasePositionAndOrientation(body, physicsClientId=c)
                if self._read.get(body) == (pos, q):
                    continue  # asleep or at rest: the world already holds this pose
                self._read[body] = (pos, q)
                m = np.eye(4)
                m[:3, :3], m[:3, 3] = _matrix(q), pos
                m = m @ np.linalg.inv(self.offsets[body])
                st.position = m[:3, 3] - st.motion_offset
                st.rotation_deg = np.array(euler_from_matrix(m[:3, :3]))

    def set_dynamics(self, st: ObjectState) -> None:
        """Apply mass/restitution/friction changes to an object's body (every link of it)."""
        p, c = self.p, self.cid
        for body, part in self.bodies.get(st.id, []):
            if part is not None:
                continue
            links = range(-1, p.getNumJoints(body, physicsClientId=c))
            kw = {}
            if st.simulated:
                kw["mass"] = st.mass_kg / len(links)  # spread over the links as `_make_bodies` does
            if st.restitution is not None:
                kw["restitution"] = st.restitution
            if st.friction is not None:
                kw["lateralFriction"] = st.friction
            if kw:
                for link in links:
                    p.changeDynamics(body, link, physicsClientId=c, **kw)
                self._wake(body)
                self._stir()

    def _wake(self, body: int) -> bool:
        """Wake a dynamic body for good; returns whether it was awake already.  A multibody woken from
        sleep drops whatever velocity or force it is given during its first step (its colliders still
        count as asleep), so callers hold those back one step; it never sleeps again, and `step` skips
        steps once everything is at rest anyway."""
        if body in self.awake:
            return True
        if body not in self._waking:
            p = self.p
            p.changeDynamics(
                body,
                -1,
                activationState=p.ACTIVATION_STATE_WAKE_UP | p.ACTIVATION_STATE_DISABLE_SLEEPING,
                physicsClientId=self.cid,
            )
            self._waking.add(body)
        self._stir()
        return False

    def kick(self, st: ObjectState, linear=(0.0, 0.0, 0.0), angular=(0.0, 0.0, 0.0)) -> None:
        """Add a velocity change to a dynamic object (after one step when it was asleep)."""
        for body, part in self.bodies.get(st.id, []):
            if part is None and st.simulated:
                if self._wake(body):
                    self._add_velocity(body, linear, angular)
                else:
                    self._kicks.append((body, linear, angular))
                self._stir()

    def _add_velocity(self, body: int, linear, angular) -> None:
        p, c = self.p, self.cid
        v, w = p.getBaseVelocity(body, physicsClientId=c)
        p.resetBaseVelocity(
            body, (np.add(v, linear)).tolist(), (np.add(w, angular)).tolist(), physicsClientId=c
        )

    # --- agent -----------------------------------------------------------------------------
    def place_agent(self, x: float, y: float, z: float | None = None) -> None:
        """Stand the agent at (x, y): on the ground there (a heightfield's height) unless z is given."""
        if z is None:
            z = terrain_height(self.world.scene.ground, x, y)
        zc = z + self.agent_height / 2
        self.p.resetBasePositionAndOrientation(self.agent, [x, y, zc], [0, 0, 0, 1], physicsClientId=self.cid)
        self.p.resetBaseVelocity(self.agent, [0, 0, 0], [0, 0, 0], physicsClientId=self.cid)
        self._stir()

    def agent_falling(self, speed: float = 0.5) -> bool:
        """Whether the agent is dropping faster than `speed` m/s."""
        v, _ = self.p.getBaseVelocity(self.agent, physicsClientId=self.cid)
        return v[2] < -speed

    def agent_position(self) -> np.ndarray:
        """Agent foot point (x, y, z of the capsule bottom)."""
        pos, _ = self.p.getBasePositionAndOrientation(self.agent, physicsClientId=self.cid)
        return np.array([pos[0], pos[1], pos[2] - self.agent_height / 2])

    def step(self, vx: float = 0.0, vy: float = 0.0) -> None:
        """One fixed time step with the agent walking at (vx, vy) m/s.

        Skipped while nothing can change: the agent is not walking, and it and every dynamic body
        have been at rest for `QUIET_STEPS` steps with nothing waking them since (a kick, a rebuilt
        or re-posed body, a mass change, a teleport: see the `_stir` sites).  A walking step in free
        space is not simulated either, but walked (`_walk_freely`).
        """
        p, c = self.p, self.cid
        walking = vx != 0.0 or vy != 0.0
        if not walking and self.quiet >= QUIET_STEPS:
            self.steps_skipped += 1
            return
        if walking and self.calm >= QUIET_STEPS and not self._kicks and self._walk_freely(vx, vy):
            self.steps_walked += 1
            return
        v, _ = p.getBaseVelocity(self.agent, physicsClientId=c)
        vz = v[2]
        foot = self.agent_position()
        if foot[2] < -20.0:  # fell out of the world: stop there
            vz, vx, vy = 0.0, 0.0, 0.0
            p.changeDynamics(self.agent, -1, mass=0, physicsClientId=c)
        elif walking:
            vx, vy = self._limit_push(vx, vy, foot)
            if self.walkable_bodies and step_up(self, vx, vy, foot):  # onto a stair ahead
                vz = max(vz, 0.0)
        p.resetBaseVelocity(self.agent, [vx, vy, vz], [0, 0, 0], physicsClientId=c)
        p.stepSimulation(physicsClientId=c)
        if self._waking:
            self.awake |= self._waking
            self._waking.clear()
        kicked = bool(self._kicks)
        if kicked:  # bodies woken before this step take their kicks now
            kicks, self._kicks = self._kicks, []
            for body, linear, angular in kicks:
                if body in self.refs:
                    self._add_velocity(body, linear, angular)
            walking = True  # not at rest: they move from the next step on
        self.steps_run += 1
        self.stepped = True
        others = not kicked and self._others_at_rest()
        self.calm = self.calm + 1 if others else 0
        self.quiet = 0 if walking or not (others and self._agent_at_rest()) else self.quiet + 1

    def _stir(self) -> None:
        """Something changed that may set bodies moving: step again until all is at rest."""
        self.quiet = self.calm = 0

    def _walk_freely(self, vx: float, vy: float) -> bool:
        """Move the agent one step at (vx, vy) without simulating, when that is what simulating does:
        it stands on flat ground (no hole under it, not sinking or falling), no body but the ground
        is within `FREE_MARGIN_M` of it before or after the step, and every dynamic body has been at
        rest for `QUIET_STEPS` (`calm`).  Bullet then adds v·dt to its position, friction being off,
        and leaves its height at rest on the ground (checked in tests/runtime/test_free_walk.py);
        returns whether it moved the agent."""
        flat = self._flat
        if flat is None:
            return False
        p, c = self.p, self.cid
        pos, _ = p.getBasePositionAndOrientation(self.agent, physicsClientId=c)
        x, y, zc = pos
        if abs(zc - self.agent_height / 2) > FLAT_FOOT_M:
            return False  # not standing on the flat ground (on an object, sunk, mid-air)
        v, _ = p.getBaseVelocity(self.agent, physicsClientId=c)
        if abs(v[2]) > REST_V:
            return False
        nx, ny = x + vx * DT, y + vy * DT
        reach = self.agent_radius + FREE_MARGIN_M
        lo = [min(x, nx) - reach, min(y, ny) - reach]
        hi = [max(x, nx) + reach, max(y, ny) + reach]
        hx, hy, holes = flat
        if lo[0] < -hx or lo[1] < -hy or hi[0] > hx or hi[1] > hy:
            return False
        for hlo, hhi in holes:
            if lo[0] < hhi[0] and hlo[0] < hi[0] and lo[1] < hhi[1] and hlo[1] < hi[1]:
                return False
        top = zc + self.agent_height / 2 + FREE_MARGIN_M
        near = p.getOverlappingObjects([lo[0], lo[1], FLAT_FOOT_M], [hi[0], hi[1], top], physicsClientId=c)
        for body, _ in near or ():
            ref = self.refs.get(body)
            if body != self.agent and (ref is None or not (ref.kind == "ground" or ref.meets_nothing)):
                return False
        p.resetBasePositionAndOrientation(self.agent, [nx, ny, zc], (0.0, 0.0, 0.0, 1.0), physicsClientId=c)
        p.resetBaseVelocity(self.agent, [vx, vy, v[2]], [0.0, 0.0, 0.0], physicsClientId=c)  # reset zeroed it
        return True

    def _agent_at_rest(self) -> bool:
        v, _ = self.p.getBaseVelocity(self.agent, physicsClientId=self.cid)
        return abs(v[0]) + abs(v[1]) + abs(v[2]) <= REST_V

    def _others_at_rest(self) -> bool:
        """Every simulated body is (nearly) still."""
        p, c = self.p, self.cid
        for st in self._dynamic_objects():
            if not st.simulated:
                continue
            for body, part in self.bodies.get(st.id, []):
                if part is None:
                    v, w = p.getBaseVelocity(body, physicsClientId=c)
                    if (
                        max(abs(v[0]), abs(v[1]), abs(v[2])) > REST_V
                        or max(abs(w[0]), abs(w[1]), abs(w[2])) > REST_W
                    ):
                        return False
        return True

    def _limit_push(self, vx: float, vy: float, foot: np.ndarray) -> tuple[float, float]:
        """Force-limited pushing: the agent's walking velocity towards each dynamic object it touches
        is cut to what the object gives way (plus the gap still to close), and it leans on the object
        with up to `PUSH_FORCE_N` (no faster than `SHOVE_SPEED`).  A heavy object whose friction
        holds against that force blocks the agent; a light one is shoved ahead of it."""
        p, c = self.p, self.cid
        reach = float(np.hypot(vx, vy)) * DT + CONTACT_SLOP_M
        r, h = self.agent_radius + reach, self.agent_height
        lo = [foot[0] - r, foot[1] - r, foot[2] - 0.05]
        hi = [foot[0] + r, foot[1] + r, foot[2] + h + 0.05]
        near = p.getOverlappingObjects(lo, hi, physicsClientId=c)
        if not near:
            return vx, vy
        seen = set()
        for body, _ in near:
            if body in seen:
                continue
            seen.add(body)
            ref = self.refs.get(body)
            if ref is None or ref.kind != "object" or ref.hinged is not None:
                continue
            st = self.world.objects.get(ref.object_id)
            if st is None or not st.simulated or st.motion or st.id in self.passable:
                continue
            pts = p.getClosestPoints(self.agent, body, reach, physicsClientId=c)
            if not pts:
                continue
            pt = min(pts, key=lambda q: q[8])
            nx, ny = -pt[7][0], -pt[7][1]  # contact normal on the object points at the agent; push = minus it
            n = float(np.hypot(nx, ny))
            if n < 0.7:  # mostly vertical: standing on it or brushing its top edge
                continue
            ux, uy = nx / n, ny / n
            want = vx * ux + vy * uy
            if want <= 0.0:
                continue  # walking away from it or along it
            ov, _ = p.getBaseVelocity(body, physicsClientId=c)
            give = ov[0] * ux + ov[1] * uy
            allowed = max(give, 0.0) + max(pt[8], 0.0) / DT
            if want > allowed:  # it does not give way as fast as the agent walks: the agent is held up
                vx, vy = vx - (want - allowed) * ux, vy - (want - allowed) * uy
            if pt[8] <= CONTACT_SLOP_M and want > give:
                self._lean(st, body, ux, uy, give, pt[6], float(foot[2]))
        return vx, vy

    def _lean(self, st: ObjectState, body: int, ux: float, uy: float, give: float, at, foot_z: float) -> None:
        """Push a dynamic object horizontally for one step, where a hand meets it: at the contact
        point raised to hip height (`PUSH_HEIGHT_M` above the feet, below the object's top, never
        below its centre of mass), so a tall light object tips over as a pushed wheelie bin does
        instead of sliding as if shoved through its centre."""
        p, c = self.p, self.cid
        mass = max(st.mass_kg, 1e-6)
        force = min(PUSH_FORCE_N, max(SHOVE_SPEED - give, 0.0) * mass / DT)
        if force <= 0.0:
            return
        pos, q = p.getBasePositionAndOrientation(body, physicsClientId=c)
        com = np.asarray(pos) + _matrix(q) @ self.com.get(body, np.zeros(3))
        top = p.getAABB(body, physicsClientId=c)[1][2]
        z = max(float(com[2]), min(foot_z + PUSH_HEIGHT_M, top - 0.05))
        point = [float(at[0]), float(at[1]), z]
        if not self._wake(body):
            return  # asleep until this step: the agent is held at the contact meanwhile
        p.applyExternalForce(body, -1, [force * ux, force * uy, 0.0], point, p.WORLD_FRAME, physicsClientId=c)

    def set_agent_collision(self, oid: str, enabled: bool) -> None:
        """Let the agent pass through (or collide with) an object's solid bodies."""
        p, c = self.p, self.cid
        for body, part in self.bodies.get(oid, []):
            if part is not None and part.startswith("#"):
                continue
            for link in range(-1, p.getNumJoints(body, physicsClientId=c)):
                p.setCollisionFilterPair(self.agent, body, -1, link, int(enabled), physicsClientId=c)
        if enabled:
            self.passable.discard(oid)
        else:
            self.passable.add(oid)
        self._stir()

    def agent_contacts(self) -> set[str]:
        """Ids of objects the agent touches now (in contact, or within `CONTACT_SLOP_M`: leaning on it)."""
        p, c = self.p, self.cid
        out = set()
        for cp in p.getContactPoints(bodyA=self.agent, physicsClientId=c):
            ref = self.refs.get(cp[2])
            if ref and ref.kind == "object":
                out.add(ref.object_id)
        lo, hi = p.getAABB(self.agent, physicsClientId=c)
        for body, _ in (
            p.getOverlappingObjects(
                list(np.subtract(lo, CONTACT_SLOP_M)), list(np.add(hi, CONTACT_SLOP_M)), physicsClientId=c
            )
            or ()
        ):
            ref = self.refs.get(body)
            if (
                ref
                and ref.kind == "object"
                and ref.object_id not in out
                and not (ref.hinged or "").startswith("#")
                and p.getClosestPoints(self.agent, body, CONTACT_SLOP_M, physicsClientId=c)
            ):
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
        res = self.p.rayTestBatch(
            [list(s) for s in starts],
            [list(e) for e in ends],
            collisionFilterMask=mask,
            physicsClientId=self.cid,
        )
        return [(None, 1.0) if h[0] < 0 else (self.refs.get(h[0]), float(h[2])) for h in res]
