"""A newcomer's walk-through: every command of README.md and docs/tutorial.md, run in order in a
fresh folder, its exit status and the output the page shows checked.

What the test reads in a page (the convention for writing one):

* A **command** is a line starting with `$ ` inside a ```console block; the lines after it, up to
  the next `$ ` line or the end of the block, are its **output as shown**.  Nothing else is run:
  ```sh, ```text, ```wa and ```json blocks, and ```console blocks without a `$ ` line (an
  illustration), are prose.
* Every command runs with bash in the page's folder, the commands of a page one after another in
  one fresh temporary folder, as a reader typing them would (a `cd` carries over to the next
  command), with the installed `wac` first on PATH and a fresh `WAC_CACHE_DIR`.
* Its **exit status** must be 0, unless the block is preceded by `<!-- walkthrough: exit N -->`.
* Its **output** (stdout and stderr together) must contain every non-blank line shown, in the order
  shown, after both sides are normalised: runs of blanks collapse; durations (`0.87 s`), a table's
  last column of seconds, hex digests (version ids, SHA-256) and reviewer tokens are masked.  `…` in
  a shown line stands for any text; a line `…` marks lines left out (any printed line the page
  does not show is allowed: pages trim).
* Files the reader is told to write or change are HTML comments the page renders invisibly, put
  before the block they describe: `<!-- walkthrough: file "PATH" -->` writes the next fenced
  block's text to PATH; `<!-- walkthrough: edit "PATH", "OLD", "NEW" -->` replaces the one
  occurrence of OLD in PATH; `<!-- walkthrough: restore "PATH", … -->` writes PATH's last `file`
  block again (undoing the edits).  Arguments are Python string literals.
* A command that cannot run here is in `SKIP`, by its text, with the reason: each shows as a
  skipped test of its own, never silently dropped.  A command that serves until stopped is in
  `SERVE`: it is started on a free port, its first shown line awaited and a page fetched, then it
  is stopped with Ctrl-C (SIGINT).

README.md's commands run from a fresh folder holding a copy of the clone's `docs/tutorial/` (what
they read); docs/tutorial.md's run from an empty folder, as the tutorial builds its project from
nothing.  README's command table is a syntax summary with placeholders and is not run.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"README.md": ROOT / "README.md", "docs/tutorial.md": ROOT / "docs" / "tutorial.md"}

SKIP = {
    "make run": "builds and self-checks all 351 shipped tasks (about 9 minutes on 2 cores)",
    "make test": "is the test suite this test is part of",
}
SERVE = {"wac review tut --db review.sqlite"}

COMMAND_TIMEOUT_S = 300
SERVE_TIMEOUT_S = 60


# -- reading a page --------------------------------------------------------------------------


@dataclass
class Step:
    kind: str  # run | file | edit | restore
    line: int  # 1-based line in the page
    command: str = ""
    shown: list[str] = field(default_factory=list)
    exit: int = 0
    args: tuple[str, ...] = ()
    text: str = ""


DIRECTIVE = re.compile(r"^<!-- walkthrough: (\w+)(.*?)-->\s*$")
FENCE = re.compile(r"^```(\S*)\s*$")


def _literals(text: str, where: str) -> tuple:
    text = text.strip()
    if not text:
        return ()
    try:
        value = ast.literal_eval(f"({text},)")
    except (SyntaxError, ValueError) as exc:
        raise AssertionError(f"{where}: walkthrough arguments are not Python literals: {text}") from exc
    return tuple(value)


def read_page(name: str) -> list[Step]:
    """The page's steps in order: commands with their shown output, files written, edits."""
    lines = PAGES[name].read_text(encoding="utf-8").splitlines()
    steps: list[Step] = []
    pending: list[tuple[str, tuple, int]] = []
    i = 0
    while i < len(lines):
        m = DIRECTIVE.match(lines[i])
        if m:
            kind, args = m.group(1), _literals(m.group(2), f"{name}:{i + 1}")
            if kind in ("edit", "restore"):
                steps.append(Step(kind, i + 1, args=args))
            elif kind in ("file", "exit"):
                pending.append((kind, args, i + 1))
            else:
                raise AssertionError(f"{name}:{i + 1}: unknown walkthrough directive {kind!r}")
            i += 1
            continue
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i + 1
        j = start
        while j < len(lines) and not FENCE.match(lines[j]):
            j += 1
        body = lines[start:j]
        exit_code = 0
        for kind, args, at in pending:
            if kind == "file":
                steps.append(Step("file", at, args=args, text="\n".join(body) + "\n"))
            else:
                exit_code = int(args[0])
        pending = []
        if lang == "console":
            for k, text in enumerate(body):
                if text.startswith("$ "):
                    steps.append(Step("run", start + k + 1, command=text[2:].strip(), exit=exit_code))
                elif steps and steps[-1].kind == "run" and steps[-1].line > start:
                    steps[-1].shown.append(text)
        i = j + 1
    assert not pending, f"{name}: a walkthrough directive at the end of the page has no block"
    return steps


def _key(command: str) -> str:
    """A command without its trailing comment, to look it up in SKIP and SERVE."""
    return re.sub(r"\s+#.*$", "", command).strip()


# -- comparing output --------------------------------------------------------------------------

MASKS = [
    (re.compile(r"^[A-Za-z0-9_-]{32}$"), "<token>"),  # a reviewer token, alone on its line
    (re.compile(r"\b[0-9a-f]{64}\b"), "<sha256>"),
    (re.compile(r"\b[0-9a-f]{16}\b"), "<version>"),
    (re.compile(r"\b\d+(\.\d+)? s\b"), "<t> s"),
    (re.compile(r"(?<=\s)\d+\.\d+$"), "<t>"),  # a table's seconds column
]


def normalise(line: str) -> str:
    line = " ".join(line.split())
    for pattern, mask in MASKS:
        line = pattern.sub(mask, line)
    return line


def _matcher(shown: str):
    parts = [re.escape(p) for p in normalise(shown).split("…")]
    return re.compile(".*".join(parts)) if len(parts) > 1 else None


def missing_lines(shown: list[str], printed: str) -> list[str]:
    """The shown lines not found, in order, among the printed ones (empty: all found)."""
    got = [normalise(x) for x in printed.splitlines()]
    at = 0
    for line in shown:
        want = normalise(line)
        if not want or want == "…":
            continue
        rx = _matcher(line)
        for k in range(at, len(got)):
            if (rx.fullmatch(got[k]) is not None) if rx else got[k] == want:
                at = k + 1
                break
        else:
            return [line]
    return []


# -- running a page ---------------------------------------------------------------------------


def _wac_bin() -> Path:
    here = Path(sys.executable).parent / "wac"
    found = here if here.exists() else (Path(shutil.which("wac")) if shutil.which("wac") else None)
    assert found, "no `wac` command installed beside this Python or on PATH"
    return found.parent


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{_wac_bin()}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as they were written
    env["WAC_CACHE_DIR"] = str(tmp / ".cache-wac")
    env.pop("VIRTUAL_ENV", None)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fetch(url: str, deadline: float) -> int:
    """The HTTP status of GET url, retried while the server is still binding its port."""
    while True:
        try:
            with urllib.request.urlopen(url, timeout=30) as page:
                return page.status
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


class Walk:
    """A reader's shell session in `home`: the current folder carries over between commands."""

    def __init__(self, home: Path, page: str) -> None:
        self.home, self.cwd, self.page = home, home, page
        self.env = _env(home)
        self.files: dict[str, str] = {}
        self.ran: list[str] = []

    def where(self, step: Step) -> str:
        return f"{self.page}:{step.line}"

    def step(self, step: Step) -> None:
        if step.kind == "file":
            (path,) = step.args
            self.files[path] = step.text
            target = self.cwd / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(step.text, encoding="utf-8")
        elif step.kind == "edit":
            path, old, new = step.args
            target = self.cwd / path
            text = target.read_text(encoding="utf-8")
            assert text.count(old) == 1, f"{self.where(step)}: the edit's {old!r} is not once in {path}"
            target.write_text(text.replace(old, new), encoding="utf-8")
        elif step.kind == "restore":
            for path in step.args:
                assert path in self.files, f"{self.where(step)}: {path} was never written"
                (self.cwd / path).write_text(self.files[path], encoding="utf-8")
        elif _key(step.command) in SKIP:
            pass
        elif _key(step.command) in SERVE:
            self.serve(step)
        else:
            self.run(step)

    def run(self, step: Step) -> None:
        marker = self.home / ".walkthrough-cwd"
        script = f"set -o pipefail\n{step.command}\n__status=$?\npwd > {marker}\nexit $__status\n"
        t0 = time.monotonic()
        proc = subprocess.run(
            ["bash", "-c", script],
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )
        self.ran.append(f"{time.monotonic() - t0:5.1f} s  $ {step.command}")
        printed = proc.stdout
        context = f"{self.where(step)}: $ {step.command}\n--- printed (exit {proc.returncode}) ---\n{printed}"
        assert proc.returncode == step.exit, (
            f"exit status {proc.returncode}, the page says {step.exit}\n{context}"
        )
        missing = missing_lines(step.shown, printed)
        assert not missing, f"the page shows {missing[0]!r}, not printed in that order\n{context}"
        if marker.exists():
            self.cwd = Path(marker.read_text().strip())

    def serve(self, step: Step) -> None:
        """Start a serving command on a free port, await its first line, fetch a page, Ctrl-C it."""
        port = _free_port()
        command = f"exec {step.command} --port {port}"
        shown = [line.replace(":8765/", f":{port}/") for line in step.shown if line.strip()]
        proc = subprocess.Popen(
            ["bash", "-c", command],
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        printed: list[str] = []  # filled by a reader thread, so a silent server cannot hang the test

        def read() -> None:
            for x in proc.stdout:
                printed.append(x.rstrip("\n"))

        reader = threading.Thread(target=read)
        reader.start()
        try:
            deadline = time.monotonic() + SERVE_TIMEOUT_S
            while missing_lines(shown[:1], "\n".join(printed)) and time.monotonic() < deadline:
                if proc.poll() is not None:
                    reader.join(timeout=5)
                    break
                time.sleep(0.2)
            context = f"{self.where(step)}: $ {command}\n--- printed ---\n" + "\n".join(printed)
            assert not missing_lines(shown[:1], "\n".join(printed)), f"never printed {shown[:1]}\n{context}"
            assert _fetch(f"http://127.0.0.1:{port}/signin", deadline) == 200, context
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
            self.ran.append(f"served, then Ctrl-C  $ {step.command}")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            reader.join(timeout=10)


# -- tests -----------------------------------------------------------------------------------


@pytest.mark.parametrize("page", sorted(PAGES))
def test_page_reads(page: str) -> None:
    """Every directive parses and every command is either run or listed with a reason."""
    steps = read_page(page)
    runs = [s for s in steps if s.kind == "run"]
    assert runs, f"{page} has no `$ ` commands in ```console blocks"
    for s in steps:
        if s.kind == "edit":
            assert len(s.args) == 3, f"{page}:{s.line}: edit takes PATH, OLD, NEW"
        if s.kind in ("file", "restore"):
            assert s.args, f"{page}:{s.line}: {s.kind} needs a path"


def test_skipped_and_served_commands_are_in_the_pages() -> None:
    """A name in SKIP or SERVE that no page holds any more is a stale entry."""
    commands = {_key(s.command) for page in PAGES for s in read_page(page) if s.kind == "run"}
    stale = sorted((set(SKIP) | SERVE) - commands)
    assert not stale, f"SKIP/SERVE name commands no page has: {stale}"


def test_tutorial_files_are_the_repository_copies() -> None:
    """The scene and task the tutorial tells the reader to write are docs/tutorial/'s files."""
    written = {s.args[0]: s.text for s in read_page("docs/tutorial.md") if s.kind == "file"}
    for path in ("scenes/garden.wa", "tasks/floating_pot.wa"):
        assert written.get(path) == (ROOT / "docs" / "tutorial" / path).read_text(encoding="utf-8"), (
            f"docs/tutorial.md's {path} differs from docs/tutorial/{path}"
        )


def test_output_comparison() -> None:
    """The comparison masks what varies from run to run and nothing else."""
    printed = (
        "wac: checked 1 task(s) (1.33 s)\nx\ngarden_01  ok     6/30     4.5\nCj-44Q8yEFIr2EO2n7y041Qks1ikrT9x"
    )
    assert not missing_lines(["wac: checked 1 task(s) (0.80 s)", "…", "garden_01 ok 6/30 2.4"], printed)
    assert not missing_lines(["wac: checked … task(s) …", "abcdefghijklmnopqrstuvwxyz012345"], printed)
    assert missing_lines(["wac: checked 2 task(s) (1.33 s)"], printed)
    assert missing_lines(["garden_01 ok 6/30 4.5", "wac: checked 1 task(s) (1.33 s)"], printed)  # order


@pytest.mark.parametrize("command", sorted(SKIP))
def test_skipped_command(command: str) -> None:
    pytest.skip(f"`{command}` is not run by the walk-through: it {SKIP[command]}")


@pytest.mark.slow
@pytest.mark.parametrize("page", sorted(PAGES))
def test_walkthrough(page: str, tmp_path: Path) -> None:
    home = tmp_path / "walk"
    home.mkdir()
    if page == "README.md":  # the README's commands run in a clone: they read docs/tutorial/
        shutil.copytree(ROOT / "docs" / "tutorial", home / "docs" / "tutorial")
    walk = Walk(home, page)
    try:
        for step in read_page(page):
            walk.step(step)
    finally:
        print(f"\n{page}: ran in {home}\n" + "\n".join(walk.ran))
