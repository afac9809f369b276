"""Fixtures for `wac review`: a small project copied from tasks_src/, its build, and a running server."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from wac.cli import main as wac

REPO = Path(__file__).resolve().parents[2]
TASKS = ("city/floating_mailbox.wa", "city/oversized_mailbox.wa")


def build_project(root: Path) -> Path:
    """Copy two shipped city tasks (and their scene) into `root` and build them into root/build."""
    for rel in ("scenes/city_street.wa", *TASKS):
        dst = root / "tasks_src" / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "tasks_src" / rel, dst)
    rebuild(root)
    return root / "build"


def rebuild(root: Path) -> None:
    rc = wac(
        ["build", str(root / "tasks_src" / "city"), "-o", str(root / "build"), "--root", str(root), "-j", "1"]
    )
    assert rc == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`wac review BUILD` in a child process, as a reviewer starts it."""

    def __init__(
        self, build: Path, db: Path, cache: Path, width: int = 320, height: int = 240, extra: tuple = ()
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "WAC_CACHE_DIR": str(cache / "examples")}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "wac.cli",
                "review",
                str(build),
                "--db",
                str(db),
                "--port",
                str(self.port),
                "--cache",
                str(cache / "review"),
                "--width",
                str(width),
                "--height",
                str(height),
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        seen = []
        while not seen or f"http://127.0.0.1:{self.port}/" not in seen[-1]:  # the URL line comes last
            line = self.proc.stdout.readline()
            assert line, "the server exited: " + "".join(seen)
            seen.append(line)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.url + "/signin", timeout=5).read()
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise
                time.sleep(0.1)

    def request(self, method: str, path: str, body=None, headers: dict | None = None):
        """(status, headers, body bytes) of one request; error statuses are returned, not raised."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers or {})
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, exc.read()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


def add_reviewer(db: Path, name: str) -> str:
    from wac.review.store import Store

    return Store(db).add_reviewer(name)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("review_project")
    build_project(root)
    return root


@pytest.fixture(scope="module")
def server(project: Path):
    srv = Server(project / "build", project / "review.sqlite", project / "cache")
    yield srv
    srv.stop()
