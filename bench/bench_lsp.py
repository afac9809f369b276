"""Language-server latency: diagnostics after a keystroke, and on save, for a shipped task file of
the largest shipped scene.

    .venv/bin/python bench/bench_lsp.py [--file tasks_src/…/task.wa] [--rounds 30]

Keystroke: the buffer changes (a newline typed and deleted), then the cheap passes run on it
and their diagnostics are converted for the client (what `wac lsp` does after its 0.15 s debounce,
which is not counted): median and 90th percentile over `--rounds`, with the project's loader warm
(the scene laid out once, as after the first analysis); and in the scene's own file, whose every
edit lays the scene out again.  Save: the whole compile of the file in
the warm server (median of 3), against `wac build FILE` in a fresh process and a fresh output
directory (median of 3), and the same compile in-process but cold (a new loader, imports done).
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wac.compiler.pipeline import compile_project
from wac.lsp.analysis import Projects
from wac.lsp.convert import lsp_diagnostics

ROOT = Path(__file__).resolve().parents[1]


def largest_scene_task() -> tuple[Path, str, int]:
    """A task file of the shipped scene with the most objects: (file, scene, objects)."""
    projects = Projects([ROOT])
    best: tuple[int, str] = (0, "")
    for scene_file in sorted((ROOT / "tasks_src" / "scenes").glob("*.wa")):
        analysis = projects.analyse(scene_file)
        for name, world in analysis.worlds.items():
            best = max(best, (len(world.objects), name))
    objects, scene = best
    for f in sorted((ROOT / "tasks_src").rglob("*.wa")):
        if re.search(rf"^task \w+ on {scene}\b", f.read_text(), re.M) and "anomaly" in f.read_text():
            return f, scene, objects
    raise SystemExit(f"no shipped task on {scene}")


def keystrokes(path: Path, rounds: int) -> list[float]:
    projects = Projects([ROOT])
    text = path.read_text()
    projects.analyse(path)  # warm: the scene laid out once
    times = []
    for i in range(rounds):
        edited = text + ("\n" if i % 2 else "")  # a newline typed and deleted
        started = time.perf_counter()
        projects.update(path, edited)
        lsp_diagnostics(projects.analyse(path))
        times.append((time.perf_counter() - started) * 1000)
    return times


def saves(path: Path, rounds: int = 3) -> list[float]:
    projects = Projects([ROOT])
    projects.analyse(path)
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        projects.update(path, path.read_text())
        lsp_diagnostics(projects.analyse(path, full=True))
        times.append((time.perf_counter() - started) * 1000)
    return times


def builds(path: Path, rounds: int = 3) -> list[float]:
    wac = Path(sys.executable).parent / "wac"
    times = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as out:
            started = time.perf_counter()
            subprocess.run(
                [str(wac), "build", str(path), "-o", out, "-j", "1"],
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
            times.append((time.perf_counter() - started) * 1000)
    return times


def first_open(path: Path) -> float:
    """The cheap passes on a file just opened: the loader cold (the scene laid out)."""
    started = time.perf_counter()
    Projects([ROOT]).analyse(path)
    return (time.perf_counter() - started) * 1000


def cold_in_process(path: Path) -> float:
    started = time.perf_counter()
    compile_project([path], ROOT)
    return (time.perf_counter() - started) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", type=Path, help="a task file (default: one of the largest shipped scene)")
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args(argv)
    if args.file:
        path, scene, objects = args.file.resolve(), "?", 0
    else:
        path, scene, objects = largest_scene_task()
    opened = first_open(path)
    keys = sorted(keystrokes(path, args.rounds))
    analysis = Projects([ROOT]).analyse(path)
    found = analysis.visible.scenes.get(scene) if analysis.visible else None
    scene_keys = sorted(keystrokes(found[0].span.source.path, 5)) if found else []
    save = saves(path)
    build = builds(path)
    cold = cold_in_process(path)
    p90 = keys[min(len(keys) - 1, int(0.9 * len(keys)))]
    print(
        f"file: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} (scene `{scene}`, {objects} objects)\n"
    )
    print("| measure | ms |")
    print("|---|---|")
    print(
        f"| keystroke: cheap passes + conversion, median ({args.rounds} rounds) | {statistics.median(keys):.1f} |"
    )
    print(f"| keystroke: 90th percentile | {p90:.1f} |")
    if scene_keys:
        print(
            f"| keystroke in the scene's own file (its layout redone), median of 5 | {statistics.median(scene_keys):.0f} |"
        )
    print(f"| open: cheap passes with a cold loader (the scene laid out) | {opened:.0f} |")
    print(f"| save: whole compile in the warm server, median of 3 | {statistics.median(save):.0f} |")
    print(f"| `wac build FILE` in a fresh process, median of 3 | {statistics.median(build):.0f} |")
    print(f"| the same compile in-process, cold loader | {cold:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
