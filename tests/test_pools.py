"""`wac.backends.local_pool`: an exception inside the block (Ctrl-C) cancels the queued jobs and
kills the running workers at once; a normal exit waits for all the work."""

from __future__ import annotations

import time

import pytest

from wac.backends import local_pool


@pytest.fixture(autouse=True)
def python_sigint():
    """Ctrl-C as a fresh `wac` process gets it: Python's handler, SIGINT unblocked.  Tests that run
    before these in the same process (pools, libraries with their own handlers) may leave either
    changed, and a SIGINT then never becomes a KeyboardInterrupt."""
    import signal

    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    yield
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    signal.signal(signal.SIGINT, handler)


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_an_interrupt_kills_running_workers_and_drops_the_queue(context):
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt), local_pool(2, context) as ex:
        futs = [ex.submit(_sleep, 60) for _ in range(8)]
        while not any(f.running() for f in futs):
            time.sleep(0.05)
        workers = list(ex._processes.values())
        raise KeyboardInterrupt
    assert time.monotonic() - t0 < 30, "the pool waited for its 60-second jobs"
    deadline = time.monotonic() + 30  # killed; on a loaded machine a killed process may take a moment to go
    while any(p.is_alive() for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert workers and not any(p.is_alive() for p in workers)
    assert sum(f.cancelled() for f in futs) >= 2  # the queue beyond the pool's prefetch: dropped


def test_a_normal_exit_waits_for_every_job():
    with local_pool(2, "fork") as ex:
        futs = [ex.submit(_sleep, 0.1) for _ in range(5)]
    assert [f.result() for f in futs] == [0.1] * 5


def test_a_ctrl_c_that_lands_on_another_thread_stops_the_wait_at_once():
    """The kernel may hand Ctrl-C to any thread of the process; a lock wait without a timeout in
    the main thread is then not interrupted, and `wac eval` sat in `as_completed` until the next
    episode finished (a minute and more on the large scenes).  `wac.backends.as_completed` wakes
    regularly and raises the KeyboardInterrupt at once."""
    import signal
    import threading
    from concurrent.futures import Future

    from wac.backends import as_completed

    slow: Future = Future()
    threading.Timer(20, slow.set_result, (None,)).start()  # the stdlib version would wait for this

    def interrupt_from_this_thread():
        time.sleep(0.3)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    threading.Thread(target=interrupt_from_this_thread, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        list(as_completed([slow]))
    assert time.monotonic() - t0 < 5


def _stuck_chunk(root, cwd, paths, sealed=False, stage=None):
    time.sleep(60)
    return []


def test_a_ctrl_c_stops_a_parallel_build_at_once(tmp_path, monkeypatch):
    """`wac build -j 2` waits on its chunks through `wac.backends.as_completed`: a Ctrl-C that lands
    on another thread stops it at once and kills the workers, instead of waiting for a chunk."""
    import signal
    import threading

    from wac.compiler import pipeline

    for i in range(4):
        (tmp_path / f"t{i}.wa").write_text("", encoding="utf-8")
    monkeypatch.setattr(pipeline, "_compile_chunk", _stuck_chunk)  # the forked workers inherit it
    started = threading.Event()

    def interrupt_from_this_thread():
        started.wait(60)
        time.sleep(0.5)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    from concurrent.futures import ProcessPoolExecutor

    real_submit = ProcessPoolExecutor.submit

    def submit(self, *args, **kwargs):
        started.set()
        return real_submit(self, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", submit)
    threading.Thread(target=interrupt_from_this_thread, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        t0 = time.monotonic()
        pipeline.compile_project([tmp_path], tmp_path, jobs=2)
    assert time.monotonic() - t0 < 20, "the build waited for its 60-second chunks"
