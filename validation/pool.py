"""Many self-checks at once: the bundles under build directories, checked in a process pool
(`wac.backends.local_pool`, spawned workers: VTK/EGL and pybullet do not survive fork)."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterator
from pathlib import Path

from wac.bundle.reader import PLAN, TASK, is_build, read_index, where_instead
from wac.errors import BundleError, NoBundle

from .bundlecheck import SelfCheckResult, safe_check


def find_bundles(paths: list[str]) -> list[Path]:
    """Bundle directories under the given build directories or bundles, sorted, de-duplicated."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file() and p.name in (TASK, PLAN):
            p = p.parent
        if (p / PLAN).is_file():
            out.append(p)
        elif p.is_dir():
            found = sorted(d for d in p.iterdir() if (d / PLAN).is_file())
            if not found:
                raise NoBundle(f"{raw}: no bundles here (a build directory or a bundle with {PLAN})")
            out += found
        else:
            raise NoBundle(f"{raw}: no such build directory or bundle{where_instead(raw)}")
    seen, uniq = set(), []
    for b in out:
        if b.resolve() not in seen:
            seen.add(b.resolve())
            uniq.append(b)
    return uniq


def run_many(
    bundles: list[Path],
    jobs: int = 1,
    out: str | None = None,
    progress: bool = False,
    on_result: Callable[[Path, SelfCheckResult], None] | None = None,
) -> list[SelfCheckResult]:
    """Self-check bundles in `jobs` processes; results in input order (`on_result` hears each as it
    arrives, so a run stopped half way keeps what it finished).  `progress`: a bar on a terminal, a
    line every 30 s elsewhere (`wac.progress`)."""
    from wac.progress import Progress

    results: dict[int, SelfCheckResult] = {}
    bar = Progress(len(bundles), "selfcheck") if progress else None

    def finished(i: int, r: SelfCheckResult) -> None:
        results[i] = r
        if on_result:
            on_result(bundles[i], r)
        if bar:
            bar.update(r.passed)

    try:
        if jobs <= 1 or len(bundles) == 1:
            for i, b in enumerate(bundles):
                finished(i, safe_check(str(b), out))
        else:
            from wac.backends import local_pool

            # a fresh interpreter per worker: VTK/EGL and pybullet do not survive fork
            with local_pool(jobs, "spawn", initializer=_settle_worker) as ex:
                calls = [(str(b), out) for b in bundles]
                for i, r in by_scene(ex, jobs, safe_check, calls, scenes_of(bundles)):
                    finished(i, r)
    finally:
        if bar:
            bar.close()
    return [results[i] for i in range(len(bundles))]


def by_scene(
    ex, jobs: int, fn: Callable, calls: list[tuple], scenes: list[str]
) -> Iterator[tuple[int, object]]:
    """`fn(*calls[i])` on the `jobs` workers of the process pool `ex`, each worker staying on a scene
    (`SceneQueue`): only `jobs` calls are in flight, so the worker that just finished is the one that
    takes the next call, of its scene.  Yields (i, result) as they finish; waking every 0.5 s, so a
    Ctrl-C is seen at once (`backends.as_completed`)."""
    from concurrent.futures import FIRST_COMPLETED, wait

    queue = SceneQueue(scenes)
    running = {}

    def submit(after: str | None) -> None:
        got = queue.next(after)
        if got is not None:
            running[ex.submit(fn, *calls[got[0]])] = got

    for _ in range(jobs):
        submit(None)
    while running:
        done, _ = wait(running, timeout=0.5, return_when=FIRST_COMPLETED)
        for fut in done:
            i, scene = running.pop(fut)
            submit(scene)  # the worker that just finished takes it: the others are busy
            yield i, fut.result()


def _settle_worker() -> None:
    """A self-check worker's start: import the simulator, then take what is in memory out of the
    garbage collector's sweeps (`gc.freeze`) and sweep less often.  A world allocates some hundred
    thousand small objects and frees them by reference counting; the collector's passes over the
    imported modules' objects were about 2% of a worker's time, and nothing here needs them sooner.
    Software GL (Mesa's llvmpipe) rasterises in the worker's own thread (`LP_NUM_THREADS=0`, unless
    set): the workers already fill the cores, and llvmpipe's own threads beside each cost about 5%
    more CPU over the corpus for the same frames (docs/performance.md)."""
    import gc
    import os

    os.environ.setdefault("LP_NUM_THREADS", "0")

    import wac.runtime.env  # noqa: F401 - VTK, pybullet, trimesh and the bundle models (this module has the checks)

    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)


def scenes_of(bundles: list[Path]) -> list[str]:
    """Each bundle's scene, from its build's index.json (a bundle no index names is its own group)."""
    indexes: dict[Path, dict[str, str]] = {}
    out = []
    for b in bundles:
        if b.parent not in indexes:
            indexes[b.parent] = _index_scenes(b.parent)
        out.append(indexes[b.parent].get(b.name) or f"bundle:{b}")
    return out


def _index_scenes(build: Path) -> dict[str, str]:
    """Task id -> scene from `build`'s index ({} where there is no readable one: no grouping)."""
    if not is_build(build):
        return {}
    try:
        tasks = read_index(build)
    except BundleError:
        return {}
    return {t["id"]: t["scene"] for t in tasks if isinstance(t, dict) and t.get("scene")}


class SceneQueue:
    """Bundles handed to workers so that a worker stays on one scene: the tasks of a scene share what
    a process keeps of it (the clean scene's detector findings, collision shapes, merged geometry),
    so each scene is loaded by as few workers as keep them all busy.  A worker that finishes a task
    takes the next of the same scene; when that scene is done, the largest scene no worker is on,
    else the largest one left (the end of a run shares scenes rather than leave a worker idle)."""

    def __init__(self, scenes: list[str]) -> None:
        self.left: dict[str, deque[int]] = {}
        for i, scene in enumerate(scenes):
            self.left.setdefault(scene, deque()).append(i)
        self.workers: Counter[str] = Counter()  # scene -> workers on it

    def next(self, after: str | None) -> tuple[int, str] | None:
        """The next (bundle index, scene) for a worker that finished a task of `after` (None: a new
        worker), or None when nothing is left."""
        if after is not None:
            self.workers[after] -= 1
        scene = after if after is not None and self.left.get(after) else None
        if scene is None:
            open_ = [s for s, q in self.left.items() if q]
            if not open_:
                return None
            alone = [s for s in open_ if not self.workers[s]]
            scene = max(alone or open_, key=lambda s: len(self.left[s]))
        self.workers[scene] += 1
        return self.left[scene].popleft(), scene
