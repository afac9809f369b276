"""Live worlds that reviewers play in the browser: one `WorldEnv` per play session, frames as JPEG.

All simulation runs on one worker thread (`PlayHub.run`): VTK's offscreen context and pybullet
are created and used there only, whichever request thread asks.  A play session belongs to the
reviewer who started it; it keeps the actions that succeeded, so switching between the clean
and the perturbed world replays them (the runtime is deterministic: same actions, same poses)
and the reviewer looks at the same place in the other world.  Idle sessions are closed, and at
most `max_worlds` are open at once (the least recently used goes first).

The first frame is not waited for from scratch: the hub loads the runtime (pybullet, VTK) when
it is created, and `prepare` builds a task's world while its page loads in the browser, so the
page's first `start` takes that world (at most `READY_KEPT` prepared worlds wait unused).
"""

from __future__ import annotations

import io
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from wac.errors import PlayError, UsageError, WacError  # noqa: F401 - re-exported

VARIANTS = ("clean", "perturbed")
READY_KEPT = 2  # prepared worlds kept for pages that have not started them yet


@dataclass
class Play:
    id: str
    owner: str
    task_id: str
    version_id: str
    bundle: Path
    variant: str
    env: object
    actions: list[dict | str] = field(default_factory=list)
    last: object = None  # the last StepResult
    used: float = field(default_factory=time.monotonic)


def jpeg(frame: np.ndarray, quality: int = 85) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(frame).save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


class PlayHub:
    """The open play sessions and the one thread that simulates them."""

    def __init__(
        self,
        width: int = 640,
        height: int = 480,
        max_worlds: int = 4,
        idle_s: float = 1800.0,
        quality: int = 85,
    ) -> None:
        self.width, self.height = width, height
        self.max_worlds = max_worlds
        self.idle_s = idle_s
        self.quality = quality
        self.plays: dict[str, Play] = {}
        self._ready: dict[tuple, object] = {}  # (owner, task, version, variant) -> a fresh world
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wac-play")
        self._pool.submit(_load_runtime)  # the imports are paid before the first page asks

    def run(self, fn, *args):
        """Run `fn(*args)` on the simulation thread and wait for it."""
        return self._pool.submit(fn, *args).result()

    # --- the public operations (called from request threads) -------------------------------
    def start(
        self, owner: str, task_id: str, version_id: str, bundle: Path, variant: str
    ) -> tuple[dict, bytes]:
        self._check_variant(variant)
        return self.run(self._start, owner, task_id, version_id, Path(bundle), variant)

    def prepare(
        self, owner: str, task_id: str, version_id: str, bundle: Path, variant: str = "perturbed"
    ) -> None:
        """Build the world a page is about to `start`, without waiting for it."""
        self._check_variant(variant)
        self._pool.submit(self._prepare, (owner, task_id, version_id, variant), Path(bundle))

    def act(self, owner: str, play_id: str, action: dict) -> tuple[dict, bytes]:
        return self.run(self._act, self._get(owner, play_id), action)

    def switch(self, owner: str, play_id: str, variant: str) -> tuple[dict, bytes]:
        self._check_variant(variant)
        return self.run(self._switch, self._get(owner, play_id), variant)

    def reset(self, owner: str, play_id: str) -> tuple[dict, bytes]:
        play = self._get(owner, play_id)
        return self.run(self._switch, play, play.variant, True)

    def frame(self, owner: str, play_id: str) -> tuple[dict, bytes]:
        play = self._get(owner, play_id)
        return self.run(self._frame, play)

    def close(self, owner: str, play_id: str) -> None:
        play = self._get(owner, play_id)
        self.run(self._close, play)

    def shutdown(self) -> None:
        for play in list(self.plays.values()):
            self.run(self._close, play)
        self.run(self._drop_ready)
        self._pool.shutdown(wait=True)

    # --- on the simulation thread -----------------------------------------------------------
    def _new_env(self, bundle: Path, variant: str):
        from wac.runtime.env import WorldEnv

        return WorldEnv(bundle, variant=variant, width=self.width, height=self.height, film_interval_s=None)

    def _prepare(self, key: tuple, bundle: Path) -> None:
        if key in self._ready:
            return
        while len(self._ready) >= READY_KEPT:  # the oldest prepared world goes first
            self._ready.pop(next(iter(self._ready))).close()
        try:
            self._ready[key] = self._new_env(bundle, key[3])
        except Exception:  # noqa: BLE001 - `start` builds it again and reports the error to the page
            pass

    def _drop_ready(self) -> None:
        while self._ready:
            self._ready.popitem()[1].close()

    def _start(self, owner, task_id, version_id, bundle, variant):
        self._evict()
        env = self._ready.pop((owner, task_id, version_id, variant), None) or self._new_env(bundle, variant)
        play = Play(secrets.token_urlsafe(12), owner, task_id, version_id, bundle, variant, env)
        play.last = env.history[0]
        with self._lock:
            self.plays[play.id] = play
        return self._answer(play, play.last)

    def _act(self, play: Play, action: dict):
        if not isinstance(action, dict | str):
            raise UsageError(
                'an action is text ("move 2") or an object like {"action": "move", "distance_m": 2}'
            )
        play.used = t0 = time.monotonic()
        res = play.env.try_step(action)
        if res.ok:
            play.actions.append(action if isinstance(action, str) else dict(action))
            play.last = res
        return self._answer(play, res, t0=t0)

    def _switch(self, play: Play, variant: str, reset: bool = False):
        play.used = time.monotonic()
        env = self._new_env(play.bundle, variant)
        actions = [] if reset else play.actions
        last = env.history[0]
        kept = []
        for a in actions:
            res = env.try_step(a)
            if res.ok:
                kept.append(a)
                last = res
        play.env.close()
        play.env, play.variant, play.actions, play.last = env, variant, kept, last
        return self._answer(play, last, f"switched to the {variant} world" if not reset else "reset")

    def _frame(self, play: Play):
        play.used = time.monotonic()
        return self._answer(play, play.last)

    def _close(self, play: Play) -> None:
        with self._lock:
            self.plays.pop(play.id, None)
        play.env.close()

    def _evict(self) -> None:
        now = time.monotonic()
        for play in sorted(self.plays.values(), key=lambda p: p.used):
            if now - play.used > self.idle_s or len(self.plays) >= self.max_worlds:
                self._close(play)

    def _answer(
        self, play: Play, res, note: str | None = None, t0: float | None = None
    ) -> tuple[dict, bytes]:
        env = play.env
        t1 = time.monotonic()
        frame = jpeg(res.frame, self.quality)
        pose = res.pose.as_dict()
        state = {
            "play": play.id,
            "task_id": play.task_id,
            "variant": play.variant,
            "step": env.steps,
            "budget": env.budget,
            "budget_left": env.budget - env.steps,
            "pose": pose,
            "sim_time": round(env.sim_time, 3),
            "ok": bool(res.ok),
            "outcome": note or res.outcome,
            "action": res.action.describe() if res.action is not None else None,
            "ref": f"{play.variant} a{env.steps}",
            "actions": list(play.actions),
            # where the server's time went: the simulated step (with its frame) and the JPEG
            "step_ms": round((t1 - t0) * 1000, 1) if t0 is not None else None,
            "jpeg_ms": round((time.monotonic() - t1) * 1000, 1),
        }
        return state, frame

    # --- helpers ----------------------------------------------------------------------------
    @staticmethod
    def _check_variant(variant: str) -> None:
        if variant not in VARIANTS:
            raise PlayError(f"variant must be 'clean' or 'perturbed', got {variant!r}")

    def _get(self, owner: str, play_id: str) -> Play:
        with self._lock:
            play = self.plays.get(play_id)
        if play is None or play.owner != owner:
            raise PlayError(
                "no such play session (it may have been closed after a long idle time); start again"
            )
        return play


def _load_runtime() -> None:
    import wac.runtime.env  # noqa: F401 - pybullet, VTK and the renderer, loaded once
