"""`wac export hf` / `wac import hf`: the reference's task table, loadable with `datasets`, round-tripping."""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("pyarrow")

import pyarrow.parquet as pq  # noqa: E402

from wac.audit.hf_dataset import COLUMNS, TABLE, export_hf, import_hf, schema  # noqa: E402
from wac.cli import main  # noqa: E402
from wac.errors import UsageError  # noqa: E402
from wac.taxonomy import reference as R  # noqa: E402


@pytest.fixture(scope="module")
def exported(built, tmp_path_factory):
    out = tmp_path_factory.mktemp("hf") / "ds"
    export_hf(built, out)
    return out


def _files(d):
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_the_table_has_the_reference_columns_and_types(built, exported):
    table = pq.read_table(exported / TABLE)
    assert tuple(table.column_names) == COLUMNS and table.schema.equals(schema())
    rows = table.to_pylist()
    index = json.loads((built / "index.json").read_text())["tasks"]
    assert [r["task_id"] for r in rows] == [e["id"] for e in index if not e["example"]]
    by_id = {e["id"]: e for e in index}
    for r in rows:
        e = by_id[r["task_id"]]
        assert r["engine"] == "wac" and r["environment"] == e["scene"]
        assert R.category(r["subcategory"]) == e["category"] and R.family_id(r["category"]) == e["family"]
        rubric = json.loads((built / r["task_id"] / "rubric.json").read_text())["entries"][0]
        assert r["rubric"]["anomaly"].startswith(rubric["target"]) and r["rubric"]["expected"].startswith(
            rubric["expected"]
        )
        ctx = json.loads((built / r["task_id"] / "agent" / "context.json").read_text())
        assert r["input"] == {
            "instruction": ctx["instructions"],
            "scene_description": ctx["scene_description"],
        }
        assert (exported / r["map"] / "task.json").is_file()
    card = (exported / "README.md").read_text()
    assert card.startswith("---\n") and f"path: {TABLE}" in card and f"{len(rows)} tasks" in card


def test_datasets_loads_it(exported, tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ds = datasets.load_dataset(str(exported), split="test", cache_dir=str(tmp_path / "hf_cache"))
    assert ds.column_names == list(COLUMNS) and len(ds) == pq.read_table(exported / TABLE).num_rows
    first = ds[0]
    assert set(first["input"]) == {"instruction", "scene_description"} and set(first["rubric"]) == {
        "anomaly",
        "expected",
    }


def test_export_then_import_round_trips_byte_for_byte(built, exported, tmp_path):
    back = tmp_path / "back"
    summary = import_hf(exported, back)
    assert summary["tasks"] == pq.read_table(exported / TABLE).num_rows
    original = {k: v for k, v in _files(built).items() if k != ".wac-cache.json"}
    assert _files(back) == original
    again = tmp_path / "again"
    export_hf(back, again)
    assert (again / TABLE).read_bytes() == (exported / TABLE).read_bytes()  # deterministic table


def test_a_sealed_build_exports_under_its_opaque_ids(sealed, tmp_path):
    out = tmp_path / "ds"
    export_hf(sealed, out)
    rows = pq.read_table(out / TABLE).to_pylist()
    assert rows and all(r["task_id"].startswith("task_") for r in rows)


def test_tampered_or_foreign_datasets_are_refused(exported, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(exported, bad)
    row = pq.read_table(bad / TABLE).to_pylist()[0]
    ctx = bad / row["map"] / "agent" / "context.md"
    ctx.write_text(ctx.read_text() + "tampered\n")
    with pytest.raises(UsageError, match="differs from its manifest"):
        import_hf(bad, tmp_path / "out")
    foreign = tmp_path / "foreign"
    (foreign / "dataset").mkdir(parents=True)
    shutil.copy2(exported / TABLE, foreign / TABLE)
    with pytest.raises(UsageError, match="only datasets exported by"):
        import_hf(foreign, tmp_path / "out2")
    assert not (tmp_path / "out").exists() and not (tmp_path / "out2").exists()


def test_the_command_line(built, tmp_path, capsys):
    assert main(["export", "hf", str(built), "-o", str(tmp_path / "ds"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tasks"] > 50
    assert main(["export", "hf", str(built), "-o", str(tmp_path / "ds")]) == 2  # not empty
    assert main(["import", "hf", str(tmp_path / "ds"), "-o", str(tmp_path / "b")]) == 0
    assert (tmp_path / "b" / "index.json").is_file()
    assert "not empty" in capsys.readouterr().err
