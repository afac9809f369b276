"""Where per-bundle work runs: the local process pool (default) or an existing Ray cluster.

`wac selfcheck`, `wac validate` and `wac eval` take `--backend ray [--address ADDR]`: each
bundle's job becomes one Ray task (one CPU), results come back in input order, exactly the
values the local run computes.  The cluster's workers must see the build (and run) directories
at the same paths (a shared file system) and have wac installed (`pip install 'wac[scale]'`).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterator, Sequence

from wac.errors import UsageError

BACKENDS = ("local", "ray")


def add_backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="where the bundles run: local processes (default) or an existing Ray cluster",
    )
    p.add_argument(
        "--address",
        help="--backend ray: the cluster (e.g. ray://head:10001 or auto; default $RAY_ADDRESS, "
        "else a Ray instance on this machine)",
    )


def _ray():
    try:
        import ray
    except ImportError:
        raise UsageError("--backend ray needs Ray: pip install 'wac[scale]'") from None
    return ray


def connect(address: str | None):
    """The `ray` module, connected to the cluster at `address` (once per process)."""
    ray = _ray()
    if not ray.is_initialized():
        try:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise UsageError(
                f"cannot reach a Ray cluster at {address or 'the default address'}: {exc}"
            ) from None
    return ray


def ray_map(fn: Callable, calls: Sequence[tuple], address: str | None = None) -> list:
    """`fn(*args)` for each args tuple, as Ray tasks of one CPU each; results in input order."""
    if not calls:
        return []
    ray = connect(address)
    remote = ray.remote(num_cpus=1, max_retries=0)(fn)
    return ray.get([remote.remote(*args) for args in calls])


@contextlib.contextmanager
def local_pool(jobs: int, context: str = "spawn", initializer=None, initargs=()) -> Iterator:
    """A process pool that an interrupt stops at once.

    A plain `with ProcessPoolExecutor()` block that raises (Ctrl-C) waits for every queued job and
    every running one.  Here any exception cancels the queued jobs and kills the running workers
    before it propagates; a normal exit waits for the work as usual.  `context` is the
    multiprocessing start method ("spawn" where VTK/EGL or pybullet run in the workers)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    ex = ProcessPoolExecutor(
        max_workers=jobs, mp_context=mp.get_context(context), initializer=initializer, initargs=initargs
    )
    try:
        yield ex
    except BaseException:
        stop_pool(ex)
        raise
    ex.shutdown(wait=True)


def stop_pool(executor) -> None:
    """Cancel an executor's queued jobs and kill its running workers (without waiting for them)."""
    # read the workers first: shutdown() drops the executor's reference to them
    procs = list((getattr(executor, "_processes", None) or {}).values())
    # cancel the queue here: shutdown(cancel_futures=True) leaves it to the pool's manager thread,
    # which, seeing the killed workers first, fails the queued jobs as BrokenProcessPool instead
    for item in list((getattr(executor, "_pending_work_items", None) or {}).values()):
        item.future.cancel()  # False for a job already handed to a worker
    executor.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        with contextlib.suppress(Exception):
            p.kill()
    for p in procs:
        with contextlib.suppress(Exception):
            p.join(5)


def as_completed(futures, poll_s: float = 0.5) -> Iterator:
    """Like `concurrent.futures.as_completed`, but the waiting thread wakes every `poll_s`.

    A Ctrl-C that the kernel hands to another thread of the process (a pool's manager or feeder
    thread) does not interrupt a lock wait without a timeout, so the main thread would only see
    the KeyboardInterrupt when the next job finished; waking regularly handles it at once."""
    from concurrent.futures import FIRST_COMPLETED, wait

    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=poll_s, return_when=FIRST_COMPLETED)
        yield from done


def result(future, poll_s: float = 0.5):
    """`future.result()`, waking every `poll_s` (see `as_completed`)."""
    from concurrent.futures import wait

    while not future.done():
        wait([future], timeout=poll_s)
    return future.result()
