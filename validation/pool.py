"""Many self-checks at once: the bundles under build directories, checked in a process pool
(`wac.backends.local_pool`, spawned workers: VTK/EGL and pybullet do not survive fork)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from wac.bundle.reader import PLAN, TASK, where_instead
from wac.errors import NoBundle

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
            from wac.backends import as_completed, local_pool

            # a fresh interpreter per worker: VTK/EGL and pybullet do not survive fork
            with local_pool(jobs, "spawn") as ex:
                futs = {ex.submit(safe_check, str(b), out): i for i, b in enumerate(bundles)}
                for f in as_completed(futs):
                    finished(futs[f], f.result())
    finally:
        if bar:
            bar.close()
    return [results[i] for i in range(len(bundles))]
