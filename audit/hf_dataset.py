"""`wac export hf` / `wac import hf`: a build as a Hugging Face dataset in the reference's task-table form.

The reference (WorldAuditBench) publishes one Parquet table, one row per evaluation task:
`task_id`, `engine`, `environment`, `category` (paper family), `subcategory` (code G1 … S3),
`map`, `input` {instruction, scene_description}, `rubric` {anomaly, expected}, every leaf a
string.  An export writes that table for a wac build, with the bundles themselves beside it
(so the dataset runs: `build/` is a wac build) and a dataset card:

    DIR/README.md              dataset card (its YAML header points `datasets` at the table)
    DIR/dataset/tasks.parquet  the task table (evaluation tasks only)
    DIR/build/                 the build: index.json and every bundle, demonstrations included

`datasets.load_dataset(DIR, split="test")` loads the table; `wac import hf DIR -o BUILD` checks
every bundle against its manifest and the table and writes a wac build again.

`datasets` keys its cache of a local dataset folder by the folder's name and the card's YAML
header only, never by the data files (not their contents, not even their mtime or full path): a
second export to the same folder, or to another folder of the same name, would load the first
one's rows.  So the card's config carries the table's sha256 (in its `description`), and a
different table is a different cache entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from wac.bundle.reader import INDEX, MANIFEST, Bundle, is_build, read_index, require_build
from wac.errors import UsageError
from wac.taxonomy import reference as R
from wac.taxonomy.registry import registry

ENGINE = "wac"
TABLE = "dataset/tasks.parquet"
BUILD = "build"
COLUMNS = ("task_id", "engine", "environment", "category", "subcategory", "map", "input", "rubric")


def _need_pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UsageError("dataset export needs pyarrow: pip install 'wac[hf]'") from None
    return pa, pq


def schema():
    """The reference table's Arrow schema: every leaf a string, `input` and `rubric` structs."""
    pa, _ = _need_pyarrow()
    s = pa.string()
    return pa.schema(
        [
            ("task_id", s),
            ("engine", s),
            ("environment", s),
            ("category", s),
            ("subcategory", s),
            ("map", s),
            ("input", pa.struct([("instruction", s), ("scene_description", s)])),
            ("rubric", pa.struct([("anomaly", s), ("expected", s)])),
        ]
    )


def _read_build(build: Path) -> list[dict]:
    return read_index(require_build(build))


def task_row(bundle: Path) -> dict:
    """One row of the task table for one bundle."""
    b = Bundle(bundle)
    task, ctx, rubric = b.task(), b.context(), b.rubric()  # the dataset's table holds the rubric
    anchor = next(e for e in rubric.entries if e.anchor)
    entries = [anchor] + [e for e in rubric.entries if not e.anchor]
    return {
        "task_id": task.id,
        "engine": ENGINE,
        "environment": task.scene.name,
        "category": R.family_name(anchor.family),
        "subcategory": R.code(anchor.category),
        "map": f"{BUILD}/{bundle.name}",
        "input": {"instruction": ctx.instructions, "scene_description": ctx.scene_description},
        "rubric": {
            "anomaly": " ".join(e.target for e in entries),
            "expected": " ".join(e.expected for e in entries),
        },
    }


def export_hf(build: str | Path, out: str | Path) -> dict:
    """Write the dataset for `build` into `out` (new or empty); returns a summary."""
    pa, pq = _need_pyarrow()
    build, out = Path(build), Path(out)
    entries = _read_build(build)
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty; choose a new directory")
    rows = [task_row(build / e["id"]) for e in entries if not e.get("example")]
    if not rows:
        raise UsageError(f"{build} has no evaluation task to export")
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        (tmp / "dataset").mkdir(parents=True)
        table = pa.Table.from_pylist(rows, schema=schema())
        pq.write_table(table, tmp / TABLE, compression="zstd", row_group_size=max(len(rows), 1))
        digest = hashlib.sha256((tmp / TABLE).read_bytes()).hexdigest()
        (tmp / BUILD).mkdir()
        shutil.copy2(build / INDEX, tmp / BUILD / INDEX)
        for e in entries:
            shutil.copytree(build / e["id"], tmp / BUILD / e["id"])
        (tmp / "README.md").write_text(dataset_card(rows, entries, digest), encoding="utf-8")
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {
        "tasks": len(rows),
        "examples": sum(1 for e in entries if e.get("example")),
        "table": str(out / TABLE),
        "sha256": digest,
    }


def dataset_card(rows: list[dict], entries: list[dict], table_sha256: str) -> str:
    """The dataset card: YAML header for `datasets`, then what is in it and how to use it.  The
    config's description names the table's sha256: `datasets` hashes the header (not the data
    files) into its cache key, so another table must give another header."""
    reg = registry()
    fams: dict[str, int] = {}
    for r in rows:
        fams[r["category"]] = fams.get(r["category"], 0) + 1
    envs = sorted({r["environment"] for r in rows})
    lines = [
        "---",
        "license: mit",
        "language:",
        "- en",
        "pretty_name: wac world-auditing tasks",
        "tags:",
        "- world-auditing",
        "- 3d",
        "- agents",
        "configs:",
        "- config_name: default",
        f"  description: wac task table, {len(rows)} rows, sha256 {table_sha256}",
        "  data_files:",
        "  - split: test",
        f"    path: {TABLE}",
        "---",
        "",
        "# wac world-auditing tasks",
        "",
        f"{len(rows)} tasks compiled by wac (the world-audit compiler) across {len(envs)} environments, "
        "in the task-table form of WorldAuditBench: an agent explores a 3D scene and must find the one "
        "anomaly implanted in it.",
        "",
        "| Family (`category`) | Tasks |",
        "|---|---:|",
        *[f"| {name} | {n} |" for name, n in sorted(fams.items())],
        "",
        "## Files",
        "",
        f"- `{TABLE}`: one row per evaluation task.",
        f"- `{BUILD}/`: a wac build, every task's bundle (`{BUILD}/<task_id>/`, the `map` column) and "
        f"{sum(1 for e in entries if e.get('example'))} in-context demonstrations (`*_demo`, not in the table).",
        "",
        "## Fields",
        "",
        "| Field | Meaning |",
        "|---|---|",
        "| `task_id`, `engine`, `environment` | task id (the bundle's), `wac`, the scene |",
        "| `category`, `subcategory` | anomaly family and reference code (G1 … S3) |",
        "| `input` | `instruction` and `scene_description`, what the auditor is told |",
        "| `rubric` | `anomaly`: what is wrong (with any condition needed to see it); `expected`: normal behaviour |",
        "| `map` | the bundle directory, relative to this dataset |",
        "",
        "Rubrics are evaluation answers: never give them (or anything outside a bundle's `agent/`) "
        "to the model being evaluated.",
        "",
        "## Use",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        'tasks = load_dataset("path/to/this/dataset", split="test")',
        "```",
        "",
        "```bash",
        "wac import hf path/to/this/dataset -o build/   # checks every bundle, writes a wac build",
        "wac eval build/ --agent oracle",
        "```",
        "",
        "## Codes",
        "",
        "| Code | Category |",
        "|---|---|",
        *[f"| {R.code(c.id.value)} | {c.name} |" for c in reg.categories],
        "",
    ]
    return "\n".join(lines)


def _verify_bundle(bundle: Path) -> None:
    manifest = Bundle(bundle).manifest()
    present = {str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file() and p.name != MANIFEST}
    if present != set(manifest.files):
        extra = sorted(present ^ set(manifest.files))
        raise UsageError(f"{bundle}: files differ from its manifest ({', '.join(extra[:3])})")
    for rel, digest in manifest.files.items():
        if hashlib.sha256((bundle / rel).read_bytes()).hexdigest() != digest:
            raise UsageError(f"{bundle / rel}: content differs from its manifest (a modified bundle)")


def import_hf(src: str | Path, out: str | Path) -> dict:
    """Check an exported dataset (every bundle against its manifest and its table row) and write
    its build to `out` (new or empty)."""
    _, pq = _need_pyarrow()
    src, out = Path(src), Path(out)
    if not (src / TABLE).is_file():
        raise UsageError(f"{src} has no {TABLE}; is it a dataset written by `wac export hf`?")
    if not is_build(src / BUILD):
        raise UsageError(
            f"{src} has no wac bundles ({BUILD}/index.json): only datasets exported by `wac export hf` "
            "can be imported (the reference's own tasks run in Unreal Engine or three.js, not in wac)"
        )
    table = pq.read_table(src / TABLE)
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise UsageError(f"{src / TABLE}: missing column(s) {', '.join(missing)}")
    rows = table.to_pylist()
    entries = _read_build(src / BUILD)
    ids = {e["id"] for e in entries}
    for row in rows:
        tid = row["task_id"]
        if tid not in ids:
            raise UsageError(f"{src / TABLE}: task {tid!r} has no bundle in {BUILD}/")
        bundle = src / row["map"]
        if bundle.resolve() != (src / BUILD / tid).resolve():
            raise UsageError(f"{src / TABLE}: task {tid!r} maps to {row['map']!r}, not {BUILD}/{tid}")
        _verify_bundle(bundle)
        if task_row(bundle) != {k: row[k] for k in COLUMNS}:
            raise UsageError(f"{src / TABLE}: the row of {tid!r} does not match its bundle")
    for e in entries:
        if e.get("example"):
            _verify_bundle(src / BUILD / e["id"])
    evaluated = {e["id"] for e in entries if not e.get("example")}
    if evaluated != {r["task_id"] for r in rows}:
        raise UsageError(f"{src / TABLE}: the table and {BUILD}/index.json list different tasks")
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty; choose a new directory")
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        shutil.copytree(src / BUILD, tmp)
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"tasks": len(rows), "examples": len(entries) - len(rows), "build": str(out)}


def cmd_export(args) -> int:
    summary = export_hf(args.build, args.output)
    print(
        json.dumps(summary, indent=2)
        if args.json
        else f"wac: exported {summary['tasks']} task(s) to {args.output}"
    )
    return 0


def cmd_import(args) -> int:
    summary = import_hf(args.dataset, args.output)
    print(
        json.dumps(summary, indent=2)
        if args.json
        else f"wac: imported {summary['tasks']} task(s) into {args.output}"
    )
    return 0


def register(subparsers) -> None:
    e = subparsers.add_parser("export", help="publish a build (hf: a Hugging Face dataset)")
    es = e.add_subparsers(dest="format", required=True, metavar="FORMAT")
    h = es.add_parser("hf", help="the reference's task table as Parquet, the bundles and a dataset card")
    h.add_argument("build", metavar="BUILD")
    h.add_argument("-o", "--output", required=True, metavar="DIR", help="new or empty directory")
    h.add_argument("--json", action="store_true")
    h.set_defaults(func=cmd_export)

    i = subparsers.add_parser("import", help="a published build back into a wac build")
    is_ = i.add_subparsers(dest="format", required=True, metavar="FORMAT")
    h = is_.add_parser("hf", help="a dataset written by `wac export hf`, checked bundle by bundle")
    h.add_argument("dataset", metavar="DIR")
    h.add_argument("-o", "--output", required=True, metavar="BUILD", help="new or empty directory")
    h.add_argument("--json", action="store_true")
    h.set_defaults(func=cmd_import)
