"""The Inspect and Hugging Face recipes of docs/inspect.md and docs/datasets.md, run as written with
the network refused: `inspect eval … --model wac/replay` and the failure check, a failed episode
scored as a failure, and `load_dataset(DIR)` returning this export's rows after another export."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("pybullet")
pytest.importorskip("datasets")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from wac.audit.inspect_tasks import wac_audit  # noqa: E402
from wac.audit.metrics import run_metrics  # noqa: E402
from wac.errors import WacError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # the venv's `inspect` and `wac`
A = ["tasks_src/city/bin_pile.wa", "tasks_src/meadow/floating_boulder.wa"]  # city_02, meadow_04
B = ["tasks_src/meadow/floating_boulder.wa", "tasks_src/meadow/glowing_rock.wa"]  # meadow_04, meadow_07
SMALL = dict(width=160, height=120, example=False)


def _compile(sources: list[str], out: Path) -> Path:
    from wac.compiler.pipeline import compile_project

    res = compile_project([ROOT / s for s in sources] + [ROOT / "taxonomy" / "examples"], ROOT, out=out)
    assert res.ok, [d.message for d in res.diagnostics]
    return out


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("offline_builds")
    return {"A": _compile(A, base / "A"), "B": _compile(B, base / "B")}


@pytest.fixture
def offline(tmp_path) -> dict:
    """The environment of a machine without network: every proxy refuses, the Hub is off, and
    tiktoken has no encoding cached (a developer's cached one would hide a download)."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in {"no_proxy", "inspect_log_dir"}}
    refuse = "http://127.0.0.1:9"
    env.update(HTTPS_PROXY=refuse, HTTP_PROXY=refuse, https_proxy=refuse, http_proxy=refuse)
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TIKTOKEN_CACHE_DIR=str(tmp_path / "tiktoken"))
    env.update(HF_DATASETS_CACHE=str(tmp_path / "hf_cache"), PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")
    return env


def _section(doc: str, heading: str, lang: str) -> str:
    """The first ```lang block of the section under the heading `heading` (to the next `## `)."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    section = re.split(rf"^#+ {re.escape(heading)}\n", text, flags=re.M)[1].split("\n## ", 1)[0]
    return re.search(rf"```{lang}\n(.*?)```", section, flags=re.S).group(1)


def _commands(block: str) -> list[str]:
    return [c for c in block.replace("\\\n", " ").splitlines() if c.strip()]


def _sh(command: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def _folder(tmp_path: Path, name: str, build: Path) -> Path:
    """A working folder whose `build/` is `build`, as the docs assume."""
    d = tmp_path / name
    d.mkdir()
    (d / "build").symlink_to(build, target_is_directory=True)
    return d


def _logs(d: Path) -> list:
    return sorted((read_eval_log(str(p)) for p in d.glob("*.eval")), key=lambda log: log.eval.created)


# --- Inspect ---------------------------------------------------------------------------------------


def test_the_offline_inspect_recipe_runs_as_written(builds, tmp_path, offline):
    cwd = _folder(tmp_path, "work", builds["A"])
    block = _section("inspect.md", "Without a model or a network", "bash")
    assert "--model wac/replay" in block
    for command in _commands(block):
        done = _sh(command, cwd, offline)
        assert done.returncode == 0, done.stderr[-3000:]
    default, scripted = _logs(cwd / "logs")
    for log in (default, scripted):
        assert log.status == "success", log.error
        assert [s.error for s in log.samples] == [None, None]
        assert all(s.scores["wac_judge"].metadata["episode_error"] is None for s in log.samples)
    by_id = {s.id: s.scores["wac_judge"] for s in scripted.samples}
    assert by_id["city_02"].value == "C" and by_id["meadow_04"].value == "I"  # the flag names city_02's bins
    assert scripted.results.scores[0].metrics["accuracy"].value == pytest.approx(0.5)
    report = json.loads((cwd / "runs/inspect/tasks/city_02/report.json").read_text())
    assert report["done"] and report["bugs"][0]["category"] == "intersection"
    assert (cwd / "runs/inspect/tasks/city_02/judgment.json").is_file()
    assert not list((cwd / "runs/inspect/tasks").glob("*/error.json"))


def test_the_documented_failure_check(builds, tmp_path, offline):
    """The check of docs/inspect.md exits 0 and lists nothing after a clean run; after a run whose
    model fails (Inspect's mockllm, which downloads a tokenizer) the eval set exits 1, the log
    check lists the log, and every sample scores I with its episode error, while plain
    `inspect eval` still exits 0."""
    block = _section("inspect.md", "When an episode fails", "bash")
    evalset, check = _commands(block)
    assert evalset.startswith("inspect eval-set ") and check.startswith("inspect log list ")

    clean = _folder(tmp_path, "clean", builds["A"])
    assert _sh(evalset, clean, offline).returncode == 0
    listed = _sh(check, clean, offline)
    assert listed.returncode == 0 and listed.stdout.strip() == ""
    assert [log.status for log in _logs(clean / "logs/smoke")] == ["success"]

    failing = _folder(tmp_path, "failing", builds["A"])
    mock = evalset.replace("--model wac/replay", "--model mockllm/model")
    done = _sh(mock, failing, offline)
    assert done.returncode == 1, done.stdout[-3000:]
    listed = _sh(check, failing, offline)
    assert listed.stdout.count(".eval") == 1
    (log,) = _logs(failing / "logs/smoke")
    assert log.status == "error"
    for s in log.samples:
        assert s.error is not None and "o200k_base" in s.error.message  # the tokenizer download
        score = s.scores["wac_judge"]
        assert score.value == "I" and score.metadata["episode_error"] == "model"
        assert "episode error (model)" in score.explanation
        error = json.loads((failing / "runs/inspect/tasks" / s.id / "error.json").read_text())
        assert error["kind"] == "model"
    assert log.results.scores[0].metrics["accuracy"].value == 0.0
    assert run_metrics(failing / "runs/inspect")["summary"]["episode_error"] == 2  # wac report agrees

    plain = mock.replace("inspect eval-set ", "inspect eval ").replace(" --retry-attempts 0", "")
    assert _sh(plain, failing, offline).returncode == 0  # Inspect's own exit status says nothing
    assert _logs(failing / "logs/smoke")[-1].status == "error"


def _one_move(messages, tools, tool_choice, config):
    """Mock model: move, then done (usage set, so Inspect never counts tokens)."""
    moved = any(m.role == "tool" for m in messages)
    name, args = ("done", {"summary": "x"}) if moved else ("move", {"distance_m": 1, "direction": "forward"})
    out = ModelOutput.for_tool_call("mockllm/model", name, args)
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


def test_a_crash_in_the_episode_scores_as_a_failure(builds, tmp_path, monkeypatch):
    from wac.audit.session import AuditSession

    def broken(self, **kwargs):
        raise RuntimeError("the simulator fell over")

    monkeypatch.setattr(AuditSession, "_t_move", broken)
    run = tmp_path / "run"
    task = wac_audit(build=str(builds["A"]), tasks="city_02", run_dir=str(run), **SMALL)
    model = get_model("mockllm/model", custom_outputs=_one_move)
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "error"  # the sample errored, so the eval's log says so
    (sample,) = log.samples
    assert "the simulator fell over" in sample.error.message
    score = sample.scores["wac_judge"]
    assert score.value == "I" and score.metadata["episode_error"] == "crash"
    assert score.metadata["family"] == "static_physics"
    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == 0.0 and metrics["static_physics"].value == 0.0
    error = json.loads((run / "tasks/city_02/error.json").read_text())
    assert error["kind"] == "crash" and "the simulator fell over" in error["traceback"]
    assert run_metrics(run)["tasks"][0]["status"] == "episode_error"


def test_an_inspect_limit_ends_the_episode_and_it_is_judged(builds, tmp_path):
    run = tmp_path / "run"
    task = wac_audit(build=str(builds["A"]), tasks="city_02", run_dir=str(run), **SMALL)
    model = get_model("wac/replay", actions="turn 90; turn 90; turn 90; turn 90; done")
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", message_limit=4)
    (sample,) = log.samples
    assert sample.error is None and sample.limit is not None and sample.limit.type == "message"
    score = sample.scores["wac_judge"]
    assert score.value == "I" and score.metadata["episode_error"] is None
    report = json.loads((run / "tasks/city_02/report.json").read_text())
    assert report["done"] and "message limit" in report["summary"]


def test_the_replay_model_checks_its_script():
    with pytest.raises(WacError, match="actions:1: .*mvoe"):
        get_model("wac/replay", actions="mvoe 3", memoize=False)
    with pytest.raises(WacError, match="the wac models are: wac/replay"):
        get_model("wac/oracle", memoize=False)
    with pytest.raises(WacError, match="not temperature"):
        get_model("wac/replay", temperature="0", memoize=False)


# --- Hugging Face datasets ---------------------------------------------------------------------------


def _load(python: str, cwd: Path, env: dict) -> list[dict]:
    """The documented load, in a new process: the rows it returns."""
    code = python + "\nimport json\nprint(json.dumps(tasks.to_list()))\n"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _rows(dataset: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(dataset / "dataset" / "tasks.parquet").to_pylist()


def test_load_dataset_returns_this_exports_rows_after_another_export(builds, tmp_path, offline):
    export = _section("datasets.md", "Publishing a corpus as a dataset", "bash").strip()
    python = _section("datasets.md", "Publishing a corpus as a dataset", "python")
    assert export == "wac export hf build/ -o hf/wac-tasks" and "hf/wac-tasks" in python

    one, two = _folder(tmp_path, "one", builds["A"]), _folder(tmp_path, "two", builds["B"])
    for d in (one, two):  # two folders of the same name (`wac-tasks`), one cache, in a row
        done = _sh(export, d, offline)
        assert done.returncode == 0, done.stderr
        assert _load(python, d, offline) == _rows(d / "hf/wac-tasks")
    ids = {d: [r["task_id"] for r in _rows(d / "hf/wac-tasks")] for d in (one, two)}
    assert ids[one] == ["city_02", "meadow_04"] and ids[two] == ["meadow_04", "meadow_07"]

    # the same folder exported again from another build, loaded by a new process
    shutil.rmtree(one / "hf/wac-tasks")
    (one / "build").unlink()
    (one / "build").symlink_to(builds["B"], target_is_directory=True)
    assert _sh(export, one, offline).returncode == 0
    assert [r["task_id"] for r in _load(python, one, offline)] == ids[two]

    # and within one process: load, export another build over it, load again
    script = f"""
import json, os, shutil, subprocess
ns = {{}}
exec({python!r}, ns)
first = [r["task_id"] for r in ns["tasks"]]
shutil.rmtree("hf/wac-tasks")
os.unlink("build")
os.symlink({str(builds["A"])!r}, "build")
subprocess.run({export!r}, shell=True, check=True)
exec({python!r}, ns)
print(json.dumps([first, [r["task_id"] for r in ns["tasks"]]]))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=one, env=offline, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [ids[two], ids[one]]
