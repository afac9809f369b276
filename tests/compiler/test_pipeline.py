"""End-to-end compiler behaviour: diagnostics users see, bundles they get."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wac.cli import main
from wac.compiler.pipeline import compile_project

TASK = """
task fence_walkthrough on yard {
    difficulty easy
    anomaly remove_collision fence_3
}
"""


def build(project, out: Path | None = None):
    return compile_project([project.root / "tasks"], project.root, out=out)


def messages(result) -> list[str]:
    return [d.message for d in result.diagnostics]


def test_a_task_builds_into_a_complete_bundle(project, tmp_path):
    project("fence.wa", TASK)
    out = tmp_path / "out"
    result = build(project, out)
    assert result.ok, [d.render() for d in result.diagnostics]
    bundle = out / "fence_walkthrough"
    names = sorted(str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file())
    assert names == [
        "agent/context.json",
        "agent/context.md",
        "manifest.json",
        "rubric.json",
        "rubric.md",
        "selfcheck.json",
        "selfcheck.py",
        "task.json",
    ]
    task = json.loads((bundle / "task.json").read_text())
    anomaly = task["anomalies"][0]
    assert anomaly["category"] == "missing_collision" and anomaly["family"] == "interactive_physics"
    assert anomaly["effects"] == [
        {"kind": "set_solid", "target": "fence_3", "solid": False}
        | {k: None for k in anomaly["effects"][0] if k not in ("kind", "target", "solid")}
    ]
    rubric = json.loads((bundle / "rubric.json").read_text())["entries"][0]
    assert "wooden fence" in rubric["target"] and "walk" in rubric["target"]
    index = json.loads((out / "index.json").read_text())
    assert index["tasks"][0]["id"] == "fence_walkthrough"
    assert index["tasks"][0]["version_id"] == json.loads((bundle / "manifest.json").read_text())["version_id"]


def test_builds_are_byte_identical(project, tmp_path):
    project("fence.wa", TASK)
    a, b = tmp_path / "a", tmp_path / "b"
    assert build(project, a).ok and build(project, b).ok
    files_a = {p.relative_to(a): p.read_bytes() for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b): p.read_bytes() for p in b.rglob("*") if p.is_file()}
    assert files_a == files_b


def test_agent_files_do_not_reveal_the_target(project, tmp_path):
    project("fence.wa", TASK)
    out = tmp_path / "out"
    assert build(project, out).ok
    bundle = out / "fence_walkthrough"
    rubric = json.loads((bundle / "rubric.json").read_text())["entries"][0]
    agent_text = (bundle / "agent/context.json").read_text() + (bundle / "agent/context.md").read_text()
    for secret in (rubric["target"], rubric["expected"], rubric["inspection"], "fence_3", "remove_collision"):
        assert secret not in agent_text
    assert "Missing collision" in agent_text  # the hint is given, as in the paper


def test_unknown_object_suggests_the_right_one(project):
    project("typo.wa", "task t on yard {\n    anomaly remove_collision fense_3\n}\n")
    result = build(project)
    (d,) = result.diagnostics
    assert d.message == "unknown object `fense_3`"
    assert d.hint == "did you mean `fence_3`?"
    assert (d.span.line, d.span.column) == (3, 30)
    rendered = d.render()
    assert rendered.startswith("tasks/typo.wa:3:30: error[E601]") or ":3:30: error[E601]" in rendered
    assert "^^^^^^^" in rendered


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("anomaly float crate_2 by 0.4", "`by` is 0.4 m"),  # bare lengths are metres: 0.4 is fine → no error
        ("anomaly float crate_2 by 0.01 m", "must be at least 0.05 m"),
        ("anomaly tilt crate_2 by 30", "needs a unit"),
        ("anomaly remove_collision cup_1 extra 3", "unknown clause `extra`"),
        ("anomaly set_mass crate_2 mass 0.1 kg when contact", "it is static"),
        ("anomaly hide crate_2 when revisit leave 90 m", "can never fire"),
        ("anomaly anachronism tv_1 as box size (1, 1, 1) at (2, 2)", "does not conflict"),
        ("anomaly flaot crate_2 by 0.4 m", "did you mean `float`?"),
        ("anomaly move crate_2 by (0, 2)", "needs a trigger"),
        ("anomaly remove_support crate_2", "rests on the ground"),
    ],
)
def test_anomaly_diagnostics(project, body, expected):
    project("t.wa", f"task t on yard {{\n    {body}\n}}\n")
    result = build(project)
    text = "\n".join(d.render() for d in result.diagnostics)
    if expected.startswith("`by` is 0.4 m"):
        assert result.ok, text
    else:
        assert expected in text, text


def test_clean_scene_problems_are_caught(project):
    project(
        "t.wa",
        """
    task t on yard {
        floaty: box size (1, 1, 1) at (5, 5, 0.8)
        clash: box size (1, 1, 1) at (3, 3.2)
        anomaly remove_collision fence_3
    }
    """,
    )
    text = "\n".join(m for m in messages(build(project)))
    assert "`floaty` (floaty) floats 0.80 m above the ground in the clean scene" in text
    assert "`clash` (clash) and `crate_1` (crate) interpenetrate" in text


def test_start_and_reachability(project):
    project(
        "a.wa", "task a on yard {\n    start at (0, 0) yaw 0 deg\n    anomaly remove_collision fence_3\n}\n"
    )
    project(
        "b.wa",
        """
    task b on yard {
        wall_n: box size (16, 0.2, 2) at (0, 6)
        anomaly float crate_1 by 0.5 m
        start at (0, 7) yaw 0 deg
        bounds from (-8, -8) to (8, 8)
    }
    """,
    )
    text = "\n".join(messages(build(project)))
    assert "the start (0, 0) is inside `fence_3`" in text
    assert "cannot be reached" in text


def test_imports_cannot_escape_the_project_root(project, tmp_path):
    project("t.wa", TASK, header='import "../../../etc/passwd.wa"\nimport "../scenes/yard.wa"\n')
    text = "\n".join(messages(build(project)))
    assert "outside the project root" in text


def test_failed_build_leaves_previous_output_untouched(project, tmp_path):
    p = project("fence.wa", TASK)
    out = tmp_path / "out"
    assert build(project, out).ok
    before = {q: q.read_bytes() for q in out.rglob("*") if q.is_file()}
    p.write_text(p.read_text().replace("fence_3", "fense_3"))
    assert not build(project, out).ok
    after = {q: q.read_bytes() for q in out.rglob("*") if q.is_file()}
    assert before == after
    assert not any(x.name.startswith(".out.tmp") for x in tmp_path.iterdir())


def test_unchanged_tasks_are_not_rebuilt(project, tmp_path):
    project("fence.wa", TASK)
    project("float.wa", "task floaty_crate on yard {\n    anomaly float crate_2 by 0.4 m\n}\n")
    out = tmp_path / "out"
    first = build(project, out)
    assert first.compiled == 2
    again = build(project, out)
    assert again.up_to_date and again.reused == 2
    (project.root / "tasks" / "float.wa").write_text(
        'import "../scenes/yard.wa"\ntask floaty_crate on yard {\n    anomaly float crate_2 by 0.5 m\n}\n'
    )
    third = build(project, out)
    assert third.compiled == 1 and third.reused == 1


def test_cli_exit_codes_and_no_tracebacks(project, capsys):
    project("bad.wa", "task t on yard {\n    anomaly remove_collision fense_3\n}\n")
    root = str(project.root)
    assert main(["check", f"{root}/tasks", "--root", root]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "did you mean `fence_3`?" in err
    assert main(["check", f"{root}/nope"]) == 2
    assert main(["frobnicate"]) == 2


def test_json_diagnostics(project, capsys):
    project("bad.wa", "task t on yard {\n    anomaly remove_collision fense_3\n}\n")
    root = str(project.root)
    assert main(["check", f"{root}/tasks", "--root", root, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    (d,) = data["diagnostics"]
    assert d["code"] == "E601" and d["line"] == 3 and d["hint"] == "did you mean `fence_3`?"


def test_floating_what_does_not_rest_on_anything_is_refused(project):
    project(
        "t.wa",
        """
    task t on yard {
        sign_1: box size (0.6, 0.05, 0.4) at (0, -0.075, 0.6) attached_to fence_3 { name "sign" }
        anomaly float sign_1 by 0.3 m
    }
    """,
    )
    (d,) = build(project).diagnostics
    assert d.message == "`sign_1` hangs from `fence_3`; it rests on nothing, so floating it is no defect"


def test_attached_objects_may_sit_a_little_into_their_host(project):
    project(
        "t.wa",
        """
    task t on yard {
        sign_1: box size (0.6, 0.08, 0.4) at (0, -0.08, 0.6) attached_to fence_3 { name "sign" }
        anomaly remove_collision fence_3
    }
    """,
    )
    assert build(project).ok


def test_an_attached_object_passing_through_its_host_is_refused(project):
    # being attached does not stop two solids from passing through each other (issue 27)
    project(
        "t.wa",
        """
    task t on yard {
        sign_1: box size (0.6, 0.2, 0.4) at (0, 0, 0.6) attached_to fence_3 { name "sign" }
        anomaly remove_collision fence_3
    }
    """,
    )
    (d,) = build(project).diagnostics
    assert d.code == "E502" and "although `sign_1` is attached to `fence_3`" in d.message


def test_an_attached_object_that_touches_nothing_floats(project):
    project(
        "t.wa",
        """
    task t on yard {
        sign_1: box size (0.6, 0.05, 0.4) at (0, -0.4, 0.6) attached_to fence_3 { name "sign" }
        anomaly remove_collision fence_3
    }
    """,
    )
    (d,) = build(project).diagnostics
    assert d.code == "E501" and "is attached to `fence_3` but hangs 0.33 m away from it" in d.message


def test_interact_statement_enables_an_interaction(project, tmp_path):
    project(
        "t.wa",
        """
    task t on yard {
        interact crate_2 push
        anomaly float crate_2 by 0.4 m
    }
    """,
    )
    out = tmp_path / "out"
    result = build(project, out)
    assert result.ok, [d.render() for d in result.diagnostics]
    task = json.loads((out / "t" / "task.json").read_text())
    crate = next(o for o in task["scene"]["objects"] if o["id"] == "crate_2")
    assert crate["interactions"] == ["push"]
    # the agent is not told which objects can be used: here the list would be the target alone
    assert json.loads((out / "t" / "agent/context.json").read_text())["interactive_objects"] == []
    assert "Interactive objects" not in (out / "t" / "agent/context.md").read_text()


def test_a_scene_names_its_environment_and_its_coverage_limit(project, tmp_path):
    """`environment NAME coverage D` reaches the bundle and the index; reports group by it."""
    from wac.audit.metrics import coverage_limit_m
    from wac.bundle.model import CompiledTask as Task

    scene = project.root / "scenes" / "yard.wa"
    text = scene.read_text()
    head, brace, rest = text.partition("{")
    scene.write_text(head + brace + "\n    environment farm_yard coverage 9 m" + rest)
    project("fence.wa", TASK)
    out = tmp_path / "out"
    result = build(project, out)
    assert result.ok, [d.render() for d in result.diagnostics]
    task = Task.model_validate_json((out / "fence_walkthrough" / "task.json").read_text())
    assert task.scene.environment.name == "farm_yard"
    assert coverage_limit_m(task.scene) == 9.0
    index = json.loads((out / "index.json").read_text())
    assert index["tasks"][0]["environment"] == "farm_yard"


def test_a_scene_without_an_environment_keeps_its_bytes(project, tmp_path):
    from wac.audit.metrics import DISTANCE_LIMIT_M, coverage_limit_m
    from wac.bundle.model import CompiledTask as Task

    project("fence.wa", TASK)
    out = tmp_path / "out"
    assert build(project, out).ok
    raw = (out / "fence_walkthrough" / "task.json").read_text()
    assert '"environment"' not in raw
    task = Task.model_validate_json(raw)
    assert coverage_limit_m(task.scene) == DISTANCE_LIMIT_M[task.scene.scene_type]


def test_a_parallel_build_writes_what_one_process_writes(project, tmp_path):
    """`wac build -j 2`: its workers write the bundles into the staging directory themselves; the
    build directory, the index and `Result.tasks` are those of a one-process build, and a failed
    parallel build leaves the previous one untouched with no staging directory behind."""
    project("fence.wa", TASK)
    for i, h in enumerate(("0.3", "0.4", "0.5")):
        project(
            f"float_{i}.wa", f"task floaty_crate_{i} on yard {{\n    anomaly float crate_2 by {h} m\n}}\n"
        )
    one, two = tmp_path / "one", tmp_path / "two"
    a = compile_project([project.root / "tasks"], project.root, out=one, jobs=1)
    b = compile_project([project.root / "tasks"], project.root, out=two, jobs=2)
    assert a.ok and b.ok and a.compiled == b.compiled == 4
    files = {p.relative_to(one): p.read_bytes() for p in one.rglob("*") if p.is_file()}
    assert files == {p.relative_to(two): p.read_bytes() for p in two.rglob("*") if p.is_file()}
    assert a.index == b.index and set(a.tasks) == set(b.tasks)
    assert all(dict(b.tasks[t]) == a.tasks[t] for t in a.tasks)
    assert b.tasks["fence_walkthrough"]["rubric.json"] == a.tasks["fence_walkthrough"]["rubric.json"]

    for f in (project.root / "tasks").iterdir():  # every file changes: all four compile again
        f.write_text(f.read_text().replace("crate_2 by 0.5", "crate_9 by 0.5") + "# edited\n")
    failed = compile_project([project.root / "tasks"], project.root, out=two, jobs=2)
    assert not failed.ok and failed.compiled == 3 and any("crate_9" in m for m in messages(failed))
    assert {p.relative_to(two): p.read_bytes() for p in two.rglob("*") if p.is_file()} == files
    assert not any(x.name.startswith(".two.tmp") for x in tmp_path.iterdir())


def test_a_parallel_build_keeps_the_tasks_of_a_scene_together(tmp_path):
    """Workers lay out each scene they meet: the files that import the same scene go to one chunk
    (a scene is laid out once in the whole build), a scene bigger than a share of the work is split
    so every worker stays busy, and the largest chunks go first."""
    from wac.compiler.pipeline import _chunks

    (tmp_path / "scenes").mkdir()
    files = []
    for scene, n in (("yard", 3), ("hall", 9), ("shop", 1)):
        (tmp_path / scene).mkdir()
        for i in range(n):
            f = tmp_path / scene / f"t{i}.wa"
            f.write_text(f'# a task\nimport "../scenes/{scene}.wa"\n\ntask {scene}_{i} on {scene} {{}}\n')
            files.append(f)
    own = tmp_path / "own.wa"  # declares its own scene: a group of its own
    own.write_text("scene s {}\n")
    files.append(own)
    chunks = _chunks(files, jobs=2)
    assert sorted(p for c in chunks for p in c) == sorted(files)
    assert [len(c) for c in chunks] == [4, 4, 3, 1, 1, 1]  # hall split in shares of ceil(14 / 4)
    for c in chunks:
        assert len({p.parent for p in c}) == 1  # one scene's tasks (or one file) per chunk
