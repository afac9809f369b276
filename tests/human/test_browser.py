"""End to end in a real Chromium (Debian's package, driven by Playwright): two participants each play
the assigned task to `done` (keys, a flag, a closed tab), the page leaks nothing of the ground truth,
and `wac human export` + `wac judge` + `wac report` give a "human" row with time per task.

`WAC_HUMAN_SCREENSHOT=docs/human_task_page.png` also saves the task page (640x480 frames) for docs/human.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from wac.audit.session import SessionOptions
from wac.cli import main as wac

from ..review.browser import chromium_path, launch, sign_in
from ..review.conftest import free_port
from .conftest import TASK, agent_context, leaks, make_db, secrets_of

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="needs Debian's chromium (.ci/run installs it)"
)

SHOT = os.environ.get("WAC_HUMAN_SCREENSHOT")
OPTS = SessionOptions(width=640, height=480) if SHOT else SessionOptions(width=160, height=120)


class Server:
    """`wac human BUILD` in a child process, as a lab starts it."""

    def __init__(self, build: Path, db: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        argv = ["human", str(build), "--db", str(db), "--port", str(self.port)]
        argv += ["--width", str(OPTS.width), "--height", str(OPTS.height)]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wac.cli", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        seen = []
        while not seen or self.url not in seen[-1]:
            line = self.proc.stdout.readline()
            assert line, "the server exited: " + "".join(seen)
            seen.append(line)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.url + "/signin", timeout=5).read()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise
                time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


def _record(page, seen: list[str]) -> None:
    """Keep every text the server sends this page (HTML, JSON, script, style) for the leak scan."""

    def keep(resp):
        if resp.headers.get("content-type", "").split(";")[0] in (
            "text/html", "application/json", "text/javascript", "application/javascript", "text/css",
        ):  # fmt: skip
            try:
                seen.append(resp.text())
            except Exception:  # noqa: BLE001 - a redirect has no body
                pass

    page.on("response", keep)


def _open_task(page, url: str) -> None:
    page.click("#tasks a")
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    assert page.url.startswith(url + "/task/")


def _press(page, key: str, step: int) -> None:
    page.keyboard.press(key)
    page.wait_for_selector(f'#frame[data-step="{step}"]', timeout=30_000)


def _flag(page, description: str) -> None:
    form = "#tool-flag_bug"
    page.fill(f"{form} [name=description]", description)
    page.select_option(f"{form} [name=category]", "improper_configuration")
    page.select_option(f"{form} [name=status]", "confirmed")
    page.fill(f"{form} [name=evidence]", "a1 a2")
    page.click(f"{form} button[type=submit]")
    page.wait_for_selector("#log .entry pre:has-text('Flagged b1')", timeout=30_000)


def _done(page) -> None:
    page.fill("#tool-done [name=summary]", "one bench is turned the wrong way")
    page.click("#tool-done button[type=submit]")
    page.wait_for_selector("#ended[data-ended='done']", timeout=30_000)


def test_two_participants_play_export_judge_and_report(browser, built, tmp_path, capsys):
    db = tmp_path / "h.sqlite"
    tokens = make_db(built, db)
    expected = agent_context(built, OPTS)
    server = Server(built, db)
    seen: list[str] = []
    try:
        for name in ("alice", "bob"):
            ctx, page = sign_in(browser, server.url, name, tokens[name])
            _record(page, seen)
            assert page.locator("#tasks tbody tr").count() == 1
            _open_task(page, server.url)
            assert page.evaluate("document.getElementById('context').textContent") == expected
            assert page.locator("#figures img").count() >= 2  # the example's figures and the start view
            assert page.inner_text("#clock") != "--:--"
            _press(page, "w", 1)
            _press(page, "d", 2)
            if name == "alice":  # a closed tab: the session goes on where it was
                page.close()
                page = ctx.new_page()
                _record(page, seen)
                page.goto(server.url + "/")
                _open_task(page, server.url)
                assert page.get_attribute("#frame", "data-step") == "2"
                assert page.evaluate("document.getElementById('context').textContent") == expected
            _flag(page, "the bench faces away from the street, unlike the others")
            if SHOT and name == "alice":
                page.set_viewport_size({"width": 1440, "height": 1100})
                page.evaluate("window.scrollTo(0, 0); document.activeElement.blur()")
                page.screenshot(path=SHOT)
            assert "38 left" in page.inner_text("#budget")
            _done(page)
            ctx.close()
    finally:
        server.stop()
    leaked = leaks(seen, secrets_of(built / TASK))
    assert not leaked, leaked

    run = tmp_path / "run"
    assert wac(["human", "export", str(built), "--db", str(db), "-o", str(run)]) == 0
    assert sorted(p.name for p in (run / "tasks").iterdir()) == [f"{TASK}.p1", f"{TASK}.p2"]
    assert json.loads((run / "run.json").read_text())["agent"] == "human"
    one = tmp_path / "slot1"  # one run per slot, under the plain task ids
    assert wac(["human", "export", str(built), "--db", str(db), "-o", str(one), "--slot", "1"]) == 0
    assert [p.name for p in (one / "tasks").iterdir()] == [TASK]
    assert wac(["judge", str(run)]) == 0
    capsys.readouterr()
    assert wac(["report", str(run)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("human (interactive)  2  ")
    assert "semantic consistency" in out and "time per task (mean): human (interactive)" in out
    metrics = json.loads((run / "report" / "report.json").read_text())
    assert metrics["summary"]["judged"] == 2 and metrics["summary"]["wall_seconds_mean"] > 0

    # beside an agent's run of the same task: one comparison, a human row and an agent row
    agent = tmp_path / "agent"
    size = ["--width", str(OPTS.width), "--height", str(OPTS.height)]
    replay = ["--agent", "replay", "--agent-option", "actions=move 1; turn 30"]
    assert wac(["eval", str(built), "--task", TASK, "--out", str(agent), *replay, *size]) == 0
    assert wac(["report", str(run), str(agent), "--out", str(tmp_path / "cmp")]) == 0
    table = (tmp_path / "cmp" / "report.md").read_text()
    assert "| human (interactive) | run | 2/2 |" in table
    assert "| replay (interactive) | agent | 1/1 |" in table
    assert "Time per task (mean seconds): human (interactive)" in table
