"""What the auditor is told gives nothing away; anomalies stay off benign objects; the perturbed
world holds one change (E540, W541, E613, E536, E537)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wac.cli import main
from wac.compiler.giveaway import Target, find_giveaways, stem, words
from wac.compiler.pipeline import compile_project


def build(project, out=None, strict=False):
    """The build with only the honesty warnings (the yard's start sees most of it: W542 is tested in
    test_start_view.py)."""
    res = compile_project([project.root / "tasks"], project.root, out=out, strict=strict)
    keep = [d for d in res.diagnostics if d.code != "W542"]
    return dataclasses.replace(res, diagnostics=keep, warnings=[w for w in res.warnings if w.code != "W542"])


def codes(result) -> list[str]:
    return [d.code for d in result.diagnostics]


# -- the give-away matcher -------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b",
    [
        ("floats", "floating"),
        ("float", "floated"),
        ("crates", "crate"),
        ("boxes", "box"),
        ("flipped", "flip"),
        ("vanishes", "vanished"),
        ("glasses", "glass"),
        ("lorries", "lorry"),
    ],
)
def test_inflections_share_a_stem(a, b):
    assert stem(a) == stem(b)


def test_ids_and_camel_case_split_into_words():
    assert words("floating_crate_2") == words("FloatingCrate") == words("floating crate")
    assert words("mid-air") == words("mid air")


FLOAT_CRATE = Target(
    names=(("crate", "crate"), ("crate_1", "crate")),
    terms=("floating", "hovering", "mid-air", "wood", "gap"),
    clean_words=frozenset({"wood"}),
)


@pytest.mark.parametrize(
    "text",
    [
        "The floating crate.",
        "A yard where one of the crates floats above the grass.",
        "Crates hovering in mid-air!",
        "Look at the crate: it is floating",
    ],
)
def test_target_and_defect_in_one_sentence_are_found(text):
    (f,) = find_giveaways([("the hint", text, False)], [FLOAT_CRATE])
    assert f.name == "crate" and f.where == "the hint"


@pytest.mark.parametrize(
    "text",
    [
        "A yard with wooden crates and a table.",  # the clean material is no give-away
        "Crates stand by the fence. Something floats.",  # different sentences
        "A yard with a floating dock.",  # another object
    ],
)
def test_neutral_text_is_not_flagged(text):
    assert find_giveaways([("the scene description", text, False)], [FLOAT_CRATE]) == []


_SEPARATORS = st.sampled_from(["_", " ", "-", ""])


@given(sep=_SEPARATORS, upper=st.booleans(), plural=st.booleans(), order=st.booleans())
def test_any_spelling_of_target_and_defect_is_found(sep, upper, plural, order):
    noun = "crates" if plural else "crate"
    parts = ["floating", noun] if order else [noun, "floating"]
    if sep == "" or upper:
        parts = [p.capitalize() for p in parts]
    text = (sep or "").join(parts)
    assert find_giveaways([("the task id", text, True)], [FLOAT_CRATE]), text


# -- through the compiler ---------------------------------------------------------------------


def test_a_description_that_names_target_and_defect_is_refused(project):
    project(
        "t.wa",
        """
        task t on yard {
            description "A yard where the fence lets you walk through it."
            anomaly remove_collision fence_3
        }
        """,
    )
    result = build(project)
    (d,) = result.diagnostics
    assert d.code == "E540" and (d.span.line, d.span.column) == (4, 5)
    assert "wooden fence" in d.message and "walk through" in d.message
    assert "without saying what is wrong" in d.hint


def test_a_hint_that_names_the_target_by_synonym_is_refused(project):
    project(
        "t.wa",
        'task t on yard {\n    hint "a barrier you can pass through"\n    anomaly remove_collision fence_3\n}\n',
    )
    assert codes(build(project)) == ["E540"]


def test_the_category_hint_and_a_neutral_description_pass(project):
    project("t.wa", "task t on yard {\n    anomaly float crate_2 by 0.4 m\n}\n")
    result = build(project)
    assert result.ok and result.warnings == []


def test_a_task_id_that_gives_the_anomaly_away_warns_and_strict_refuses(project, tmp_path, capsys):
    project("t.wa", "task floating_crate on yard {\n    anomaly float crate_2 by 0.4 m\n}\n")
    result = build(project)
    assert result.ok
    (w,) = result.warnings
    assert w.code == "W541" and w.severity == "warning" and (w.span.line, w.span.column) == (2, 6)
    strict = build(project, strict=True)
    assert codes(strict) == ["W541"] and strict.diagnostics[0].severity == "error"
    out = tmp_path / "out"
    assert main(["build", str(project.root / "tasks"), "--root", str(project.root), "-o", str(out)]) == 0
    assert "warning[W541]" in capsys.readouterr().err
    # a strict build does not reuse the file that warned
    code = main(
        ["build", str(project.root / "tasks"), "--root", str(project.root), "-o", str(out), "--strict"]
    )
    assert code == 1 and "error[W541]" in capsys.readouterr().err


def test_json_output_lists_warnings(project, capsys):
    project("t.wa", "task floating_crate on yard {\n    anomaly float crate_2 by 0.4 m\n}\n")
    assert main(["check", str(project.root / "tasks"), "--root", str(project.root), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(w["code"] for w in data["warnings"]) == ["W541", "W542"] and data["ok"]


# -- benign objects ---------------------------------------------------------------------------


def test_an_anomaly_on_a_benign_object_is_refused(project):
    scene = project.root / "scenes" / "yard.wa"
    text = scene.read_text().rstrip().removesuffix("}")
    scene.write_text(text + '    benign crate_2 reason "a prop"\n}\n')
    project("t.wa", "task t on yard {\n    anomaly float crate_2 by 0.4 m\n}\n")
    (d,) = build(project).diagnostics
    assert d.code == "E613" and "`crate_2`" in d.message and "(a prop)" in d.message
    assert (d.span.line, d.span.column) == (3, 19)


# -- the perturbed world ----------------------------------------------------------------------


def test_a_move_into_another_object_is_a_second_defect(project):
    project("t.wa", "task t on yard {\n    anomaly move crate_2 by (3, -3) when revisit\n}\n")
    (d,) = build(project).diagnostics
    assert d.code == "E536" and "`crate_2` interpenetrates `fence_3`" in d.message


def test_an_intersection_operator_may_intersect(project):
    project("t.wa", "task t on yard {\n    anomaly push_into crate_2 into fence_3\n}\n")
    assert "E536" not in codes(build(project))


def test_a_move_out_of_the_bounds_is_refused(project):
    project("t.wa", "task t on yard {\n    anomaly move crate_2 by (-20, 0) when revisit\n}\n")
    (d,) = build(project).diagnostics
    assert d.code == "E537" and "(-23.0, 3.0)" in d.message


def test_a_task_id_that_names_the_operator_warns(project):
    project(
        "t.wa",
        "task yard_invisible_wall on yard {\n    anomaly invisible_wall at (0, -3) size (3, 0.3, 2)\n}\n",
    )
    result = build(project)
    assert result.ok, [d.render() for d in result.diagnostics]
    (w,) = result.warnings
    assert w.code == "W541" and "names its operator (invisible_wall)" in w.message


# -- names that give an anomaly away on their own ------------------------------------------------

SPAWN = "task {id} on yard {{\n    anomaly spawn new_9 as {prefab} at (2, -4) when revisit\n}}\n"


def test_a_task_id_naming_an_object_only_the_faulty_world_has_warns(project):
    project("t.wa", SPAWN.format(id="yard_traffic_cone", prefab="traffic_cone"))
    result = build(project)
    assert result.ok, [d.render() for d in result.diagnostics]
    (w,) = result.warnings
    assert w.code == "W541" and "only the faulty world has" in w.message
    assert "leave out" in w.hint


def test_naming_a_spawned_object_of_a_kind_the_clean_scene_has_is_no_giveaway(project):
    project("t.wa", SPAWN.format(id="yard_crate", prefab="crate"))  # the yard has crates
    result = build(project)
    assert result.ok and result.warnings == [], [w.render() for w in result.warnings]


def test_a_hint_naming_an_object_only_the_faulty_world_has_is_an_error(project):
    text = SPAWN.format(id="t", prefab="traffic_cone").replace(
        "{\n", '{\n    hint "Look near the traffic cone."\n', 1
    )
    project("t.wa", text)
    (d,) = build(project).diagnostics
    assert d.code == "E540" and "only the faulty world has" in d.message


def test_a_task_id_naming_a_scene_wide_defect_alone_warns(project):
    project(
        "t.wa",
        "task yard_blocked_path on yard {\n    anomaly invisible_wall at (0, -3) size (3, 0.3, 2)\n}\n",
    )
    result = build(project)
    assert result.ok, [d.render() for d in result.diagnostics]
    (w,) = result.warnings
    assert w.code == "W541" and "names the defect (blocked) of a scene-wide anomaly" in w.message
    project("t.wa", "task yard_path on yard {\n    anomaly invisible_wall at (0, -3) size (3, 0.3, 2)\n}\n")
    assert build(project).warnings == []


def test_a_defect_phrase_written_as_one_word_still_counts():
    """Ids spell phrases run together: `car_passthrough` names "pass through"."""
    car = Target(names=(("car", "car"),), terms=("pass through", "walk through"))
    (f,) = find_giveaways([("the task id", "creek_car_passthrough", True)], [car])
    assert (f.name, f.term) == ("car", "pass through")
    assert find_giveaways([("the task id", "creek_car_walkthrough_b", True)], [car])
    assert not find_giveaways([("the task id", "creek_car_pass", True)], [car])
