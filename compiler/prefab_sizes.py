"""Sizes of the standard prefabs for docs/prefabs.md: each prefab is built with its default
parameters through the ordinary compiler and measured by its bounding box.

`python -m wac.compiler.prefab_sizes` rewrites the generated section of docs/prefabs.md."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from wac.compiler.pipeline import compile_project
from wac.compiler.resolve import load_stdlib
from wac.errors import SourceErrors

DOC = Path(__file__).resolve().parent.parent / "docs" / "prefabs.md"
BEGIN, END = "<!-- GEN:prefab_sizes -->", "<!-- /GEN:prefab_sizes -->"
SPACING_M = 25.0  # far enough apart that no two prefabs touch


def prefab_names() -> list[str]:
    return [p.name for mod in load_stdlib() for p in mod.prefabs]


def prefab_sizes() -> dict[str, tuple[float, float, float]]:
    """Prefab -> (x, y, z) extent in metres of its bounding box with default parameters, facing +x."""
    names = prefab_names()
    per_row = 8
    rows = (len(names) + per_row - 1) // per_row
    half = SPACING_M * (max(per_row, rows) + 1) / 2
    things = "\n".join(
        f"    p_{i}: {n} at ({(i % per_row) * SPACING_M - half + SPACING_M:g}, "
        f"{(i // per_row) * SPACING_M - half + SPACING_M:g})"
        for i, n in enumerate(names)
    )
    source = (
        "scene sizes {\n"
        '    description "Every standard prefab, far apart, to measure them."\n'
        "    type urban\n"
        f"    ground grass size ({2 * half + SPACING_M:g}, {2 * half + SPACING_M:g})\n"
        f"    bounds from ({-half:g}, {-half:g}) to ({half:g}, {half:g})\n"
        f"    start at ({-half + 1:g}, {-half + 1:g}) yaw 0 deg\n"
        f"{things}\n}}\n"
        "task sizes_task on sizes {\n    anomaly float p_0 by 0.5 m\n}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "t.wa").write_text(source, encoding="utf-8")
        res = compile_project([root / "t.wa"], root, out=root / "out")
        if not res.ok:
            raise SourceErrors(res.diagnostics)
        task = json.loads((root / "out" / "sizes_task" / "task.json").read_text(encoding="utf-8"))
    boxes = {o["id"]: (o["aabb_min"], o["aabb_max"]) for o in task["scene"]["objects"]}
    out = {}
    for i, name in enumerate(names):  # in the order of the standard library
        lo, hi = boxes[f"p_{i}"]
        out[name] = tuple(round(hi[k] - lo[k], 2) for k in range(3))
    return out


def sizes_table() -> str:
    lines = [
        BEGIN,
        "",
        "| prefab | x (length, m) | y (width, m) | z (height, m) |",
        "|---|---|---|---|",
    ]
    for name, (x, y, z) in prefab_sizes().items():
        lines.append(f"| `{name}` | {x:.2f} | {y:.2f} | {z:.2f} |")
    return "\n".join([*lines, "", END])


def write(path: Path = DOC) -> Path:
    text = path.read_text(encoding="utf-8")
    a, b = text.index(BEGIN), text.index(END) + len(END)
    path.write_text(text[:a] + sizes_table() + text[b:], encoding="utf-8")
    return path


if __name__ == "__main__":  # pragma: no cover
    try:
        print(write(Path(sys.argv[1]) if len(sys.argv) > 1 else DOC))
    except SourceErrors as exc:
        sys.exit("\n".join(d.render() for d in exc.diagnostics))
