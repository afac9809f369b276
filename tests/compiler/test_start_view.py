"""W542: a task whose start view already covers its target (App. E coverage at frame a0) is
flagged, with a start pose that does not; applying the suggestion clears the warning.  W543: a
target within the coverage limit of the start (one turn shows it) is flagged where the area has a
start beyond the limit."""

from __future__ import annotations

import re
import textwrap

import pytest

from wac.cli import main
from wac.compiler.pipeline import compile_project

# a 24 x 8 m street with a 6 m coverage limit: crate_1 4 m ahead of the start, crate_2 9 m
STREET = """
scene street {
    description "A long street with crates and a bench."
    type urban
    era modern
    environment test_town coverage 6 m
    ground asphalt size (40, 20)
    day_night period 60 s
    bounds from (-12, -4) to (12, 4)
    start at (-10, 0) yaw 0 deg
    crate_1: box size (0.6, 0.6, 0.6) at (-6, 0) material wood { name "crate" }
    crate_2: box size (0.6, 0.6, 0.6) at (-1, 1.5) material wood { name "crate" }
    bench_1: box size (1.6, 0.5, 0.45) at (6, -2.5) material wood { name "bench" }
}
"""

HEADER = 'import "../scenes/street.wa"\n'


@pytest.fixture
def street(project):
    (project.root / "scenes" / "street.wa").write_text(textwrap.dedent(STREET))

    def write(body: str):
        return project("t.wa", body, header=HEADER)

    write.root = project.root
    return write


def build(root, strict=False):
    return compile_project([root / "tasks"], root, strict=strict)


def w542(result):
    return [w for w in result.warnings if w.code == "W542"]


def w543(result):
    return [w for w in result.warnings if w.code == "W543"]


def suggested(hint: str) -> str:
    m = re.search(r"`(start at \([^`]*\) yaw [-\d.]+ deg)`", hint)
    assert m, hint
    return m.group(1)


def test_a_target_in_the_start_view_warns_with_a_start_that_does_not_show_it(street):
    street("task t on street {\n    anomaly float crate_1 by 0.4 m\n}\n")
    res = build(street.root)
    assert res.ok  # a warning: the bundle is still written
    (w,) = w542(res)
    assert "`crate_1`" in w.message and "4.0 m ahead" in w.message and "6 m" in w.message
    assert (w.span.line, w.span.column) == (2, 6)  # the task's name: the scene declares the start
    start = suggested(w.hint)
    # applying the suggestion: the task builds, warning-free, and still self-checks within budget
    street(f"task t on street {{\n    {start}\n    anomaly float crate_1 by 0.4 m\n}}\n")
    again = build(street.root)
    assert again.ok and w542(again) == [], [d.render() for d in again.warnings]
    x, y = map(float, re.search(r"\(([-\d.]+), ([-\d.]+)\)", start).groups())
    assert ((x + 6) ** 2 + y**2) ** 0.5 >= 7.0  # beyond the limit (6 m) and the margin


def test_the_span_is_the_tasks_own_start_when_it_declares_one(street):
    street("task t on street {\n    start at (-9, 0) yaw 0 deg\n    anomaly float crate_1 by 0.4 m\n}\n")
    (w,) = w542(build(street.root))
    assert (w.span.line, w.span.column) == (3, 5)


@pytest.mark.parametrize(
    "start, anomaly",
    [
        ("start at (-10, 0) yaw 180 deg", "anomaly float crate_1 by 0.4 m"),  # behind the start
        ("start at (-10, 0) yaw 90 deg", "anomaly float crate_1 by 0.4 m"),  # 90 deg off: outside the cone
        ("start at (-10, 0) yaw 0 deg", "anomaly float crate_2 by 0.4 m"),  # 9.1 m: beyond the 6 m limit
        ("start at (-10, 0) yaw 0 deg", "anomaly abrupt_day_night"),  # scene-wide: no place to cover
    ],
)
def test_no_warning_when_the_start_view_does_not_cover_the_target(street, start, anomaly):
    street(f"task t on street {{\n    {start}\n    {anomaly}\n}}\n")
    res = build(street.root)
    assert res.ok and w542(res) == [], [d.render() for d in res.warnings]


def test_the_scene_types_limit_applies_without_an_environment_limit(street):
    # without `coverage 6 m` the urban limit (14 m) makes crate_2, 9.1 m ahead, covered
    text = textwrap.dedent(STREET).replace("environment test_town coverage 6 m", "environment test_town")
    (street.root / "scenes" / "street.wa").write_text(text)
    street("task t on street {\n    anomaly float crate_2 by 0.4 m\n}\n")
    (w,) = w542(build(street.root))
    assert "`crate_2`" in w.message and "14 m" in w.message


def test_a_multi_anomaly_task_is_checked_for_its_anchor_only(street):
    body = "task t on street {{\n    multi_anomaly yes\n    anomaly {}\n    anomaly {}\n}}\n"
    street(body.format("scale bench_1 by 3.5", "float crate_1 by 0.4 m"))  # an extra in view: drawn at random
    res = build(street.root)
    assert res.ok and w542(res) == []
    street(body.format("float crate_1 by 0.4 m", "scale bench_1 by 3.5"))
    (w,) = w542(build(street.root))
    assert "the anchor's target (`crate_1`)" in w.message


def test_a_small_area_gets_its_farthest_place_facing_away(project):
    # the yard (16 x 16 m, urban 14 m) has no place 15 m from crate_2 at (-3, 3)
    project("t.wa", "task t on yard {\n    anomaly float crate_2 by 0.4 m\n}\n")
    (w,) = w542(build(project.root))
    assert "no reachable place is 15 m or more from it" in w.hint and "facing away" in w.hint
    x, y = map(float, re.search(r"\(([-\d.]+), ([-\d.]+)\)", suggested(w.hint)).groups())
    assert x > 6 and y < -6  # the corner across the yard
    project("t.wa", f"task t on yard {{\n    {suggested(w.hint)}\n    anomaly float crate_2 by 0.4 m\n}}\n")
    again = build(project.root)
    assert again.ok and again.warnings == [], [
        d.render() for d in again.warnings
    ]  # no W543 either: no place is beyond the limit


def test_demonstrations_show_their_anomaly_on_purpose(street):
    street(
        'task t on street {\n    example yes\n    hint "Missing support"\n    anomaly float crate_1 by 0.4 m\n}\n'
    )
    res = build(street.root)
    assert res.ok and w542(res) == []


def test_strict_makes_it_an_error_and_the_terminal_shows_it(street, tmp_path, capsys):
    street("task t on street {\n    anomaly float crate_1 by 0.4 m\n}\n")
    strict = build(street.root, strict=True)
    assert [d.code for d in strict.diagnostics] == ["W542"] and strict.diagnostics[0].severity == "error"
    args = ["build", str(street.root / "tasks"), "--root", str(street.root), "-o", str(tmp_path / "out")]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "warning[W542]" in err and "hint: start where the target is out of view" in err


@pytest.mark.parametrize("yaw", [180, 90])
def test_a_target_within_the_limit_behind_the_start_warns_where_a_start_beyond_it_exists(street, yaw):
    # crate_1 4 m from the start, out of the view cone: the first turns of any explorer show it
    street(
        f"task t on street {{\n    start at (-10, 0) yaw {yaw} deg\n    anomaly float crate_1 by 0.4 m\n}}\n"
    )
    res = build(street.root)
    assert res.ok and w542(res) == []
    (w,) = w543(res)
    assert "`crate_1`" in w.message and "4.0 m away" in w.message and "6 m limit" in w.message
    assert (w.span.line, w.span.column) == (3, 5)
    start = suggested(w.hint)
    x, y = map(float, re.search(r"\(([-\d.]+), ([-\d.]+)\)", start).groups())
    assert ((x + 6) ** 2 + y**2) ** 0.5 >= 7.0
    street(f"task t on street {{\n    {start}\n    anomaly float crate_1 by 0.4 m\n}}\n")
    again = build(street.root)
    assert again.ok and again.warnings == [], [d.render() for d in again.warnings]


def test_no_look_around_warning_beyond_the_limit_in_a_small_area_or_for_a_demonstration(street, project):
    street("task t on street {\n    start at (-10, 0) yaw 180 deg\n    anomaly float crate_2 by 0.4 m\n}\n")
    assert build(street.root).warnings == []  # 9.1 m: beyond the 6 m limit
    street(
        'task t on street {\n    example yes\n    hint "Missing support"\n    start at (-10, 0) yaw 180 deg\n'
        "    anomaly float crate_1 by 0.4 m\n}\n"
    )
    assert build(street.root).warnings == []
    # the yard (16 x 16 m, urban 14 m): no place is beyond the limit of crate_2, so the heading is all
    # a start can hide, and facing away passes
    project(
        "t.wa", "task t on yard {\n    start at (6, -6) yaw 315 deg\n    anomaly float crate_2 by 0.4 m\n}\n"
    )
    res = build(project.root)
    assert res.ok and res.warnings == [], [d.render() for d in res.warnings]


def test_a_multi_anomaly_tasks_extras_may_lie_within_the_limit(street):
    body = "task t on street {{\n    multi_anomaly yes\n    start at (-10, 0) yaw 180 deg\n    anomaly {}\n    anomaly {}\n}}\n"
    street(body.format("scale bench_1 by 3.5", "float crate_1 by 0.4 m"))
    assert w543(build(street.root)) == []
    street(body.format("float crate_1 by 0.4 m", "scale bench_1 by 3.5"))
    (w,) = w543(build(street.root))
    assert "the anchor's target (`crate_1`)" in w.message


def test_strict_makes_the_look_around_warning_an_error(street):
    street("task t on street {\n    start at (-10, 0) yaw 180 deg\n    anomaly float crate_1 by 0.4 m\n}\n")
    strict = build(street.root, strict=True)
    assert [d.code for d in strict.diagnostics] == ["W543"] and strict.diagnostics[0].severity == "error"


def test_a_build_that_reuses_the_bundle_shows_its_warning_again(street, tmp_path, capsys):
    # the build cache keeps the warnings: an up-to-date rebuild must not hide them
    street("task t on street {\n    anomaly float crate_1 by 0.4 m\n}\n")
    out = tmp_path / "out"
    first = compile_project([street.root / "tasks"], street.root, out=out)
    again = compile_project([street.root / "tasks"], street.root, out=out)
    assert again.up_to_date and again.reused == 1 and again.compiled == 0
    assert [w.render() for w in again.warnings] == [w.render() for w in first.warnings] != []
    args = ["build", str(street.root / "tasks"), "--root", str(street.root), "-o", str(out)]
    capsys.readouterr()
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "warning[W542]" in err and "up to date" in err
    (street.root / "tasks" / "u.wa").write_text(
        HEADER + "task u on street {\n    anomaly float crate_2 by 0.4 m\n}\n"
    )
    partly = compile_project([street.root / "tasks"], street.root, out=out)  # t.wa reused, u.wa compiled
    assert partly.reused == 1 and partly.compiled == 1
    assert [w.code for w in partly.warnings] == ["W542"] and "`crate_1`" in partly.warnings[0].message
