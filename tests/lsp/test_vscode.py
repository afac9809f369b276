"""docs/editors.md's commands run as shown: `wac lsp --help`, and the VS Code extension packaged to
a `.vsix` with npm and `vsce` (slow; skipped where there is no npm), whose contents are checked.

The page's conventions are test_walkthrough.py's: a `$ ` line of a ```console block is a command,
the lines after it its output as shown (`…` stands for any text, a line `…` for lines left out);
the commands run in order with bash, a `cd` carrying over, in a fresh folder holding a copy of the
clone's `editors/vscode/` sources."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "editors.md"
EXTENSION = ROOT / "editors" / "vscode"
SOURCES = (
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "language-configuration.json",
    "README.md",
    "LICENSE",
    ".vscodeignore",
    "src",
    "syntaxes",
)
SKIP = {"code --install-extension wac.vsix": "VS Code is not installed here (the .vsix is checked below)"}


def commands() -> list[tuple[str, list[str]]]:
    """(command, output lines shown) of every `$ ` line of the page's console blocks."""
    out: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", PAGE.read_text(), re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                out.append((line[2:], []))
            elif out and line.strip():
                out[-1][1].append(line)
    return out


def shows(output: str, shown: list[str]) -> bool:
    """Every shown line in the output, in order (`…` is any text; blanks collapse)."""
    text = re.sub(r"[ \t]+", " ", output)
    at = 0
    for line in shown:
        if line.strip() == "…":
            continue
        pattern = ".*".join(re.escape(re.sub(r"[ \t]+", " ", p.strip())) for p in line.split("…"))
        m = re.compile(pattern).search(text, at)
        if m is None:
            return False
        at = m.end()
    return True


def test_the_page_shows_the_commands_this_test_runs():
    cmds = [c for c, _ in commands()]
    assert cmds[0] == "wac lsp --help" and "npm run package" in cmds and set(SKIP) <= set(cmds)


@pytest.mark.slow  # about 30 s: `npm ci` (from npm's cache when warm) and the TypeScript build
@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_the_extension_packages_to_a_vsix_as_the_page_shows(tmp_path: Path):
    work = tmp_path / "editors" / "vscode"
    work.mkdir(parents=True)
    for name in SOURCES:
        src = EXTENSION / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    cwd = tmp_path
    for cmd, shown in commands():
        if cmd in SKIP:
            continue
        run = subprocess.run(
            ["bash", "-c", f"{cmd} && pwd"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
        )
        output = run.stdout + run.stderr
        assert run.returncode == 0, f"$ {cmd}\n{output[-3000:]}"
        assert shows(output, shown), f"$ {cmd}: the output does not show {shown}:\n{output[-3000:]}"
        cwd = Path(run.stdout.strip().splitlines()[-1])  # a `cd` carries over
    with zipfile.ZipFile(work / "wac.vsix") as vsix:
        names = set(vsix.namelist())
    assert {
        "extension/package.json",
        "extension/out/extension.js",
        "extension/syntaxes/wac.tmLanguage.json",
        "extension/language-configuration.json",
        "extension/node_modules/vscode-languageclient/package.json",
    } <= names
    assert not any(n.startswith("extension/src/") for n in names)
