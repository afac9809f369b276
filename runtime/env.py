"""The first-person environment every consumer drives: `WorldEnv` (Gymnasium-shaped) over a bundle.

Actions follow the reference harness (UCSB-NLP-Chang/WorldAuditBench agent/tools.py) names and
ranges: move(distance_m 0.3-4, direction forward|back), turn(degrees -180..180, positive = right),
look(degrees -90..90, positive = down), interact(), wait(seconds 0.5-5).  Each costs one budget
step and advances simulated time (timing.py: wac's model walks 1.4 m/s, turns 120 deg/s, looks
90 deg/s and interacts 0.5 s; `timing.REFERENCE` is the reference runtime's); film frames are
taken every `film_interval_s` of simulated time during an action.  The clean variant ignores the anomalies; the perturbed one runs them under their
triggers and logs every trigger transition to `events` (never part of what the agent sees).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wac.bundle.model import CompiledTask
from wac.bundle.reader import Bundle
from wac.errors import UsageError, WacError

from . import mechanics
from .actions import Action, ActionError, BudgetExhausted, coerce, validate
from .perception import attempt_text
from .physics import DT, RAY_ALL, Physics
from .render import Camera, Renderer
from .timing import WAC, Timing
from .triggers import AnomalyTriggers, LiveAnomaly, TriggerEvent, TriggerState
from .world import World

REACH_M = 3.0
CONTROL_EVERY = 6  # physics steps per control tick (0.05 s)
PITCH_LIMIT = 89.0
RESPAWN_DEPTH_M = 10.0  # an agent that falls this far below the ground respawns at the start
SETTLE_S = 6.0  # how long an action keeps time running for a falling agent to land or respawn


@dataclass(frozen=True)
class AgentPose:
    """Agent foot position, heading (yaw ccw from +x) and pitch (positive = down)."""

    x: float
    y: float
    z: float
    yaw_deg: float
    pitch_deg: float

    def as_dict(self) -> dict:
        return {
            "x": round(self.x, 4),
            "y": round(self.y, 4),
            "z": round(self.z, 4),
            "yaw_deg": round(self.yaw_deg, 3),
            "pitch_deg": round(self.pitch_deg, 3),
        }


@dataclass(frozen=True)
class FilmFrame:
    t_sim: float
    frame: np.ndarray | None  # None: not rendered (`WorldEnv(film_images=False)`)
    pose: AgentPose | None = None  # the agent's pose when the frame was taken


@dataclass(frozen=True)
class StepResult:
    """What one action returns: final frame, film frames, pose, time, outcome and budget."""

    step: int
    action: Action | None
    frame: np.ndarray | None  # None: not rendered (`WorldEnv(step_images=False)`; `WorldEnv.view`)
    film: tuple[FilmFrame, ...]
    pose: AgentPose
    sim_time: float
    sim_elapsed: float
    outcome: str
    moved_m: float
    budget_left: int
    done: bool
    ok: bool = True


def load_task(bundle_or_task) -> tuple[CompiledTask, Path | None]:
    """A CompiledTask from a task object, an open `Bundle`, a bundle directory (verified against its
    manifest: a damaged bundle is not run) or its task.json (read as it is)."""
    if isinstance(bundle_or_task, CompiledTask):
        return bundle_or_task, None
    if isinstance(bundle_or_task, Bundle):
        return bundle_or_task.task(), bundle_or_task.path
    bundle = Bundle.open(bundle_or_task, verify=Path(bundle_or_task).is_dir())
    return bundle.task(), bundle.path


class WorldEnv(AnomalyTriggers):
    """A first-person world over one bundle variant (see module docstring)."""

    def __init__(
        self,
        bundle_or_task,
        variant: str = "clean",
        seed: int = 0,
        width: int = 640,
        height: int = 480,
        film_interval_s: float | None = 0.5,
        hfov_deg: float = 90.0,
        shadows: bool = True,
        record_dir: str | Path | None = None,
        start: tuple[float, float, float, float] | None = None,
        budget: int | None = None,
        film_images: bool = True,
        step_images: bool = True,
        timing: Timing = WAC,
    ) -> None:
        """`start` (x, y, yaw_deg, pitch_deg) and `budget` override the task's start pose and action budget
        (the runner's closer-start and budget-multiplier ablations).  `film_images=False` keeps the film
        frames' times and poses but makes no image for them (for agents that never look); the world and
        the final frames come out exactly as with images (`Renderer.pass_frame`).  `step_images=False` does
        the same for the start frame and the frame at the end of each action (`StepResult.frame` is
        None; `view()` renders the current one when wanted): for checks that look at a few frames only."""
        if variant not in ("clean", "perturbed"):
            raise UsageError(f"variant must be 'clean' or 'perturbed', got {variant!r}")
        self.task, self.bundle_dir = load_task(bundle_or_task)
        self.variant = variant
        self.seed = seed
        self.width, self.height, self.hfov = width, height, hfov_deg
        self.film_interval = film_interval_s if film_interval_s and film_interval_s > 0 else None
        self.timing = timing  # seconds per action and film sampling (timing.py)
        self.film_images = film_images
        self.step_images = step_images or record_dir is not None  # a recording keeps every step's frame
        self.shadows = shadows
        self.record_dir = Path(record_dir) if record_dir else None
        self.start_override = tuple(float(v) for v in start) if start is not None else None
        self.budget_override = int(budget) if budget is not None else None
        if self.budget_override is not None and self.budget_override < 1:
            raise UsageError(f"budget must be at least 1 action, got {budget}")
        self.recorder = None
        self.world: World | None = None
        self.physics: Physics | None = None
        self.renderer: Renderer | None = None
        self.history: list[StepResult] = []
        self.events: list[TriggerEvent] = []
        self._tick_listeners: list = []
        self._frame_listeners: list = []
        self.reset(seed=seed)

    # --- lifecycle -------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> StepResult:
        """Rebuild the world at the start pose; returns the start observation (step 0)."""
        if seed is not None:
            self.seed = seed
        self.rng = np.random.default_rng(self.seed)
        ex = self.task.exploration
        if self.physics is not None:
            self.physics.close()
        if self.renderer is not None:
            self.renderer.close()
        self.world = World(self.task, self.bundle_dir)
        self.physics = Physics(self.world, ex.agent_radius_m, ex.eye_height_m)
        self.renderer = Renderer.open(self.world, self.width, self.height, self.hfov, shadows=self.shadows)
        self.eye_height = ex.eye_height_m
        x, y, yaw, pitch = self.start_override or (*ex.start.position, ex.start.yaw_deg, ex.start.pitch_deg)
        self.physics.place_agent(x, y)
        self.yaw = float(yaw)
        self.pitch = float(np.clip(pitch, -PITCH_LIMIT, PITCH_LIMIT))
        self.ticks = 0
        self.steps = 0
        self.budget = self.budget_override or ex.budget_actions
        self.history = []
        self.events = []
        self._interacted: set[str] = set()
        # one-way solids and what has trapped the agent (`_one_way`, `_trap_blocks`)
        self._one_ways = self.world.selection(
            lambda st: st.mechanism_state.trapped or "one_way" in st.mechanism
        )
        self._bounds = np.asarray(ex.bounds, dtype=float)
        self._bounds_xs = [float(v) for v in self._bounds[:, 0]] if len(self._bounds) else []
        self._bounds_ys = [float(v) for v in self._bounds[:, 1]] if len(self._bounds) else []
        self.anomalies: list[LiveAnomaly] = []
        if self.variant == "perturbed":
            for i, an in enumerate(self.task.anomalies):
                self.anomalies.append(LiveAnomaly(i, an, TriggerState(an.trigger)))
        for an in self.anomalies:
            if an.trig.initial():
                an.trig.active = True
                an.trig.fired = 1
                self._switch(an, True, "world loaded")
        mechanics.advance(self.world, 0.0, self.rng)
        self.physics.sync()
        self._freeze_overlaps()
        for _ in range(CONTROL_EVERY):  # settle contacts
            self.physics.step()
        self.physics.read_back()
        self.ticks = 0
        self.world.sim_time = 0.0
        self._control_tick()
        if self.step_images:
            frame = self._frame()
        else:  # drawn by `view()` when wanted
            frame = None
            self.renderer.pass_frame(self.camera())
        res = StepResult(0, None, frame, (), self.pose(), 0.0, 0.0, "start", 0.0, self.budget, False)
        self.history.append(res)
        if self.record_dir is not None:
            from .trajectory import TrajectoryWriter

            self.recorder = TrajectoryWriter(self.record_dir, self)
            self.recorder.write_step(res)
        return res

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
            self.recorder = None
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None
        if self.physics is not None:
            self.physics.close()
            self.physics = None

    def __enter__(self) -> WorldEnv:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- observation -----------------------------------------------------------------------
    @property
    def sim_time(self) -> float:
        return self.ticks * DT

    def pose(self) -> AgentPose:
        foot = self.physics.agent_position()
        return AgentPose(float(foot[0]), float(foot[1]), float(foot[2]), self._norm(self.yaw), self.pitch)

    @staticmethod
    def _norm(a: float) -> float:
        a = math.fmod(a + 180.0, 360.0)
        return a + 180.0 if a < 0 else a - 180.0

    def camera(self) -> Camera:
        foot = self.physics.agent_position()
        return Camera(
            (float(foot[0]), float(foot[1]), float(foot[2]) + self.eye_height),
            self.yaw,
            self.pitch,
            self.hfov,
        )

    def _frame(self) -> np.ndarray:
        return self.renderer.render(self.camera())

    def view(self) -> np.ndarray:
        """The frame the agent sees now: the last action's, rendered again when it was not kept
        (`step_images=False`); free, and it leaves the world as it was."""
        frame = self.history[-1].frame
        return frame if frame is not None else self._frame()

    def observe(self) -> StepResult:
        """The current frame and state; free (no budget, no time)."""
        last = self.history[-1]
        return StepResult(
            self.steps,
            None,
            self._frame(),
            (),
            self.pose(),
            self.sim_time,
            0.0,
            last.outcome,
            0.0,
            self.budget - self.steps,
            self.steps >= self.budget,
        )

    def frames(self) -> list[np.ndarray]:
        """Final frames so far, index = step (0 = start); film frames are in `history[i].film`."""
        return [h.frame for h in self.history]

    def render_ids(self, with_depth: bool = False):
        """Internal: object-index image (and depth) from the agent's eye; never shown to agents."""
        return self.renderer.render_ids(self.camera(), with_depth=with_depth)

    def object_index(self, oid: str) -> int:
        return self.world.get(oid).index

    # --- actions ----------------------------------------------------------------------------
    def step(self, action) -> StepResult:
        """Run one action (an `Action`, a dict {"action"|"name": ..., args} or text like 'move 2')."""
        action = self._coerce(action)
        if self.steps >= self.budget:
            raise BudgetExhausted(
                f"action budget exhausted ({self.budget} actions used): no more environment actions"
            )
        action = validate(action)
        self.steps += 1
        t0 = self.sim_time
        a = action.kwargs
        self._start_film(t0, action.name, float(a.get("seconds", self.timing.interact_s)))
        moved = 0.0
        if action.name == "move":
            moved, outcome = self._move(float(a["distance_m"]), a["direction"])
        elif action.name == "turn":
            outcome = self._rotate("yaw", -float(a["degrees"]), self.timing.turn_dps)
        elif action.name == "look":
            outcome = self._rotate("pitch", float(a["degrees"]), self.timing.look_dps)
        elif action.name == "wait":
            self._advance(float(a["seconds"]))
            outcome = f"waited {float(a['seconds']):.1f} s"
        else:
            outcome = self._interact()
        fell = self._fall_and_respawn()
        if fell:  # the reference says only that the agent respawned (core.js `respawned`)
            outcome = outcome.split("; dropped")[0] + fell
        if self.step_images:
            frame = self._frame()
        else:
            frame = None
            self.renderer.pass_frame(self.camera())
        for listener in self._frame_listeners:
            listener(self.steps, None)
        res = StepResult(
            self.steps,
            action,
            frame,
            tuple(self._film),
            self.pose(),
            self.sim_time,
            self.sim_time - t0,
            outcome,
            moved,
            self.budget - self.steps,
            self.steps >= self.budget,
        )
        self.history.append(res)
        if self.recorder is not None:
            self.recorder.write_step(res)
        return res

    def try_step(self, action) -> StepResult:
        """Like `step`, but errors become a refused result (ok=False) instead of exceptions."""
        try:
            return self.step(action)
        except WacError as exc:
            return StepResult(
                self.steps,
                None,
                self.history[-1].frame,
                (),
                self.pose(),
                self.sim_time,
                0.0,
                f"ERROR: {exc}",
                0.0,
                self.budget - self.steps,
                self.steps >= self.budget,
                ok=False,
            )

    @staticmethod
    def _coerce(action) -> Action:
        return coerce(action)

    def _start_film(self, t0: float, action: str, duration: float) -> None:
        self._film: list[FilmFrame] = []
        self._film_stride = self.timing.film_stride(self.film_interval or 0.0, action, duration)
        first = t0 if self.timing.film_from_start else t0 + self._film_stride
        self._next_film = first if self.film_interval else math.inf
        self._film_last_tick = self.timing.film_from_start  # the reference films its last instant too

    def _advance(self, seconds: float, vel: tuple[float, float] = (0.0, 0.0), per_tick=None) -> None:
        """Advance simulated time, stepping physics, mechanics and triggers; record film frames."""
        n = max(1, int(round(seconds / DT)))
        for i in range(n):
            if per_tick is not None:
                vel = per_tick(i, n) or (0.0, 0.0)
            self.physics.step(*vel)
            self.ticks += 1
            if self.ticks % CONTROL_EVERY == 0 or i == n - 1:
                self._control_tick()
            if self.sim_time >= self._next_film - 1e-9 and (i < n - 1 or self._film_last_tick):
                image = self._frame() if self.film_images else self.renderer.pass_frame(self.camera())
                self._film.append(FilmFrame(round(self.sim_time, 4), image, self.pose()))
                self._next_film += self._film_stride
                if self.timing.film_max is not None and len(self._film) >= self.timing.film_max:
                    self._next_film = math.inf
                for listener in self._frame_listeners:
                    listener(self.steps, len(self._film))

    def _control_tick(self) -> None:
        w = self.world
        dt = self.sim_time - w.sim_time
        w.sim_time = self.sim_time
        self.physics.read_back()
        mechanics.advance(w, dt, self.rng)
        if self.anomalies:
            self._update_triggers()
        self.physics.sync()
        self._one_way()
        for listener in self._tick_listeners:
            listener()

    def add_tick_listener(self, fn) -> None:
        """Call `fn()` after every control tick (checks sample the world at that rate; agents never see it)."""
        self._tick_listeners.append(fn)

    def add_frame_listener(self, fn) -> None:
        """Call `fn(step, k)` just after each frame of an action is taken, the world as that frame shows
        it: film frame `k` (1-based) during action `step`, `k=None` for its final frame.  The start
        frame (step 0) is taken in `reset`, before anyone can listen: the world is still as it shows."""
        self._frame_listeners.append(fn)

    def _fall_and_respawn(self) -> str:
        """As the reference runtime: a fall keeps time running until the agent lands or has fallen
        `RESPAWN_DEPTH_M` (then it respawns at the start pose, and the outcome says only that)."""
        settle = 0.0
        while self.physics.agent_falling() and settle < SETTLE_S:
            if self.physics.agent_position()[2] <= -RESPAWN_DEPTH_M:
                break
            self._advance(0.1)
            settle += 0.1
        if self.physics.agent_position()[2] > -RESPAWN_DEPTH_M:
            return ""
        ex = self.task.exploration
        x, y, yaw, pitch = self.start_override or (*ex.start.position, ex.start.yaw_deg, ex.start.pitch_deg)
        self.physics.place_agent(x, y)
        self.yaw, self.pitch = float(yaw), float(np.clip(pitch, -PITCH_LIMIT, PITCH_LIMIT))
        self._advance(DT)
        return "; respawned at the start"

    # one-way solids ---------------------------------------------------------------------------
    def _one_way(self) -> None:
        """Open one-way solids to an agent in front of their entry face; trap it once inside."""
        foot = self.physics.agent_position()
        for st in self._one_ways():
            if "one_way" not in st.mechanism or not st.present:
                continue
            lo, hi = self.world.aabb(st)
            n = np.asarray(st.mechanism_state.one_way_normal)
            c = (lo[:2] + hi[:2]) / 2
            half = float(np.abs(n) @ ((hi[:2] - lo[:2]) / 2))
            inside = bool(np.all(foot[:2] >= lo[:2]) and np.all(foot[:2] <= hi[:2]))
            if inside:
                st.update_mechanism_state(trapped=True)
            in_front = float((foot[:2] - c) @ n) > half - 0.05
            passable = in_front or inside or st.mechanism_state.trapped
            if st.mechanism_state.passable != (passable, st.shape_version):
                self.physics.set_agent_collision(st.id, not passable)
                st.update_mechanism_state(passable=(passable, st.shape_version))

    def _trapped_now(self) -> bool:
        return any(st.mechanism_state.trapped for st in self.world.objects.values())

    def _trap_blocks(self, x: float, y: float) -> bool:
        """Whether a step to (x, y) would leave a one-way solid that has trapped the agent."""
        r = self.task.exploration.agent_radius_m
        for st in self._one_ways():
            if st.mechanism_state.trapped and st.present:
                lo, hi = self.world.aabb(st)
                m = np.minimum(r, (hi[:2] - lo[:2]) / 2 - 0.01)
                if not (lo[0] + m[0] <= x <= hi[0] - m[0] and lo[1] + m[1] <= y <= hi[1] - m[1]):
                    pos = self.physics.agent_position()
                    was_in = lo[0] + m[0] <= pos[0] <= hi[0] - m[0] and lo[1] + m[1] <= pos[1] <= hi[1] - m[1]
                    if was_in:
                        return True
        return False

    # movement ---------------------------------------------------------------------------------
    def _inside(self, x: float, y: float) -> bool:
        poly = self._bounds
        if len(poly) < 3:
            return True
        xs, ys = self._bounds_xs, self._bounds_ys  # floats: per physics step, numpy scalars cost
        x, y = float(x), float(y)
        inside = False
        j = len(poly) - 1
        for i in range(len(poly)):
            if (ys[i] > y) != (ys[j] > y) and x < (xs[j] - xs[i]) * (y - ys[i]) / (
                ys[j] - ys[i] + 1e-300
            ) + xs[i]:
                inside = not inside
            j = i
        return inside

    def _move(self, distance: float, direction: str) -> tuple[float, str]:
        sign = 1.0 if direction == "forward" else -1.0
        yaw = math.radians(self.yaw)
        ux, uy = sign * math.cos(yaw), sign * math.sin(yaw)
        start = self.physics.agent_position()
        duration = distance / self.timing.walk_mps
        edge = [False]
        trapped = [False]

        def per_tick(i: int, n: int):
            pos = self.physics.agent_position()
            travelled = float(np.hypot(pos[0] - start[0], pos[1] - start[1]))
            if edge[0] or travelled >= distance - 1e-4:
                return (0.0, 0.0)
            step = min(self.timing.walk_mps * DT, distance - travelled)
            nx, ny = pos[0] + ux * step, pos[1] + uy * step
            if not self._inside(nx, ny):
                edge[0] = True
                return (0.0, 0.0)
            if self._trap_blocks(nx, ny):
                trapped[0] = True
                return (0.0, 0.0)
            v = step / DT
            return (ux * v, uy * v)

        self._advance(duration, per_tick=per_tick)
        end = self.physics.agent_position()
        moved = float(np.hypot(end[0] - start[0], end[1] - start[1]))
        outcome = f"moved {moved:.2f} m of {distance:.2f} m {direction}"
        if edge[0]:
            outcome += " (stopped at the edge of the area)"
        elif trapped[0] or moved < distance - 0.1 and self._trapped_now():
            outcome += " (blocked)"
        elif moved < distance - 0.1:
            outcome += " (blocked)"
        if end[2] < start[2] - 0.3:
            outcome += f"; dropped {start[2] - end[2]:.2f} m"
        return moved, outcome

    def _rotate(self, which: str, delta: float, speed: float) -> str:
        duration = abs(delta) / speed
        start = self.yaw if which == "yaw" else self.pitch
        n = max(1, int(round(duration / DT)))

        def per_tick(i: int, _n: int):
            v = start + delta * (i + 1) / n
            if which == "yaw":
                self.yaw = v
            else:
                self.pitch = float(np.clip(v, -PITCH_LIMIT, PITCH_LIMIT))
            return (0.0, 0.0)

        self._advance(max(duration, DT), per_tick=per_tick)
        if which == "yaw":
            self.yaw = self._norm(start + delta)
            return (
                f"turned {abs(delta):.0f} deg {'left' if delta > 0 else 'right'}; heading {self.yaw:.0f} deg"
            )
        self.pitch = float(np.clip(start + delta, -PITCH_LIMIT, PITCH_LIMIT))
        return f"looked {abs(delta):.0f} deg {'down' if delta > 0 else 'up'}; pitch {self.pitch:.0f} deg"

    # interaction ------------------------------------------------------------------------------
    def crosshair(self, reach: float = REACH_M):
        """(object id or None, distance) of what the crosshair hits within reach."""
        cam = self.camera()
        eye = np.asarray(cam.eye)
        end = eye + cam.forward() * reach
        ref, frac, _ = self.physics.ray(eye, end, RAY_ALL)
        hit = (
            (ref.object_id, frac * reach)
            if ref is not None and ref.kind == "object"
            else (None, frac * reach)
        )
        from .physics_bodies import GROUP_REACH

        ref2, frac2, _ = self.physics.ray(eye, end, GROUP_REACH)
        if ref2 is not None and ref2.object_id != hit[0]:
            return ref2.object_id, frac2 * reach
        return hit

    def _seen(self, reach: float = REACH_M):
        """The object the agent sees under the crosshair within reach: what an interaction may name
        (not an invisible collider, not what hides behind a wall)."""
        if self.renderer is None:
            return None
        ids, depth = self.render_ids(with_depth=True)
        h, w = ids.shape[:2]
        i, d = int(ids[h // 2, w // 2]), float(depth[h // 2, w // 2])
        if i <= 0 or not d <= reach:
            return None
        return next((st for st in self.world.objects.values() if st.index == i), None)

    def _interact(self) -> str:
        """Use what the crosshair reaches.  The text says what the agent could perceive: the object it
        sees and the attempt, never the result (the frames show whether anything happened), so the
        clean and the perturbed world answer alike."""
        seen = self._seen()
        text = attempt_text(seen.spec if seen is not None else None)
        oid, dist = self.crosshair()
        if oid is None:
            self._advance(self.timing.interact_s)
            return text
        st = self.world.get(oid)
        self._interacted.add(oid)
        kinds = list(st.spec.interactions)
        mech = st.mechanism
        if not kinds or "dead" in mech:
            self._advance(self.timing.interact_s)
            return text
        act = self._interaction(st, kinds[0])
        if "delay" in mech:
            st.pending = [*st.pending, (self.sim_time + (mech["delay"] or 3.0), act)]
        else:
            act()
        self._advance(self.timing.interact_s)
        return text

    def _interaction(self, st, kind: str):
        name = st.spec.name
        w = self.world

        def run() -> str:
            if kind == "open":
                opening = st.door_target < 0.5
                st.door_target = 1.0 if opening else 0.0
                return f"the {name} {'opens' if opening else 'closes'}"
            if kind == "toggle":
                on = not w.lamp_lit(st)
                st.lit_override = on
                if st.lit is None:
                    st.lit = on
                return f"the {name} switches {'on' if on else 'off'}"
            if kind == "push":
                foot = self.physics.agent_position()
                d = st.world_position()[:2] - foot[:2]
                d = d / max(np.linalg.norm(d), 1e-6)
                self.physics.kick(st, linear=(d[0] * 1.5, d[1] * 1.5, 0.0))
                return f"you push the {name}"
            if kind == "pick_up":
                st.held = True
                st.bump()
                return f"you pick up the {name}"
            return f"you use the {name}"

        return run


__all__ = [
    "Action",
    "ActionError",
    "AgentPose",
    "BudgetExhausted",
    "FilmFrame",
    "StepResult",
    "WorldEnv",
    "load_task",
    "validate",
]
