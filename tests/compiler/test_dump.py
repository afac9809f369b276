"""`wac check --dump ast|effects|plan FILE`: what a task file lowers to, as deterministic JSON."""

from __future__ import annotations

import json

import pytest

from wac.cli import main, parser
from wac.compiler.dump import DUMPS
from wac.compiler.pipeline import compile_project

TASK = """
task fence_walkthrough on yard {
    difficulty easy
    anomaly remove_collision fence_3
}
"""


def run_dump(capsys, what: str, path, root) -> tuple[int, str, str]:
    code = main(["check", "--dump", what, str(path), "--root", str(root)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_dump_ast_shows_the_parsed_task_with_positions(project, capsys):
    path = project("fence.wa", TASK)
    code, out, _ = run_dump(capsys, "ast", path, project.root)
    assert code == 0
    module = json.loads(out)
    (task,) = module["tasks"]
    assert (task["node"], task["name"], task["scene"], task["at"]) == (
        "TaskDecl",
        "fence_walkthrough",
        "yard",
        "3:1",
    )
    (anomaly,) = task["body"]["anomalies"]
    assert anomaly["operator"] == "remove_collision" and anomaly["at"] == "5:5"
    assert anomaly["operand"] == [{"node": "Name", "text": "fence_3", "at": "5:30"}]
    assert run_dump(capsys, "ast", path, project.root)[1] == out  # the same bytes every time


def test_dump_effects_and_plan_are_what_the_bundle_holds(project, capsys, tmp_path):
    path = project("fence.wa", TASK)
    code, out, _ = run_dump(capsys, "effects", path, project.root)
    assert code == 0
    assert json.loads(out) == {
        "fence_walkthrough": [
            {
                "operator": "remove_collision",
                "category": "missing_collision",
                "targets": ["fence_3"],
                "trigger": {},
                "effects": [{"kind": "set_solid", "target": "fence_3", "solid": False}],
            }
        ]
    }
    code, plan_out, _ = run_dump(capsys, "plan", path, project.root)
    assert code == 0
    result = compile_project([path], project.root, out=tmp_path / "out")
    bundle = result.tasks["fence_walkthrough"]
    assert json.loads(plan_out) == {"fence_walkthrough": json.loads(bundle["selfcheck.json"])}
    assert json.loads(plan_out)["fence_walkthrough"]["observable"] == "displacement_through"
    assert run_dump(capsys, "effects", path, project.root)[1] == out
    assert run_dump(capsys, "plan", path, project.root)[1] == plan_out


@pytest.mark.parametrize("what", DUMPS)
def test_dump_of_a_broken_task_reports_its_errors_and_prints_nothing(project, capsys, what):
    path = project("bad.wa", "task t on yard {\n    anomaly remove_collision fense_3\n}\n")
    code, out, err = run_dump(capsys, what, path, project.root)
    if what == "ast":  # it parses: the AST exists even though the task does not check
        assert code == 0 and json.loads(out)["tasks"][0]["name"] == "t"
    else:
        assert code == 1 and out == ""
        assert "E601" in err and "did you mean `fence_3`?" in err


def test_dump_of_a_syntax_error_is_an_error(project, capsys):
    path = project("broken.wa", "task t on yard {\n    anomaly remove_collision\n")
    code, out, err = run_dump(capsys, "ast", path, project.root)
    assert code == 1 and out == "" and "error[E" in err


def test_dump_takes_one_file(project, capsys):
    project("fence.wa", TASK)
    code, out, err = run_dump(capsys, "effects", project.root / "tasks", project.root)
    assert code == 2 and out == "" and "--dump takes exactly one task file" in err


def test_the_cli_offers_every_dump_and_no_other(capsys):
    for what in DUMPS:
        assert parser().parse_args(["check", "--dump", what, "t.wa"]).dump == what
    with pytest.raises(SystemExit):
        parser().parse_args(["check", "--dump", "bytecode", "t.wa"])
