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


# -- give-aways in disguise and in other languages (E540 after normalisation, E544, W546) ----------


def test_a_giveaway_written_with_look_alike_letters_is_refused_and_says_how(project):
    project(
        "t.wa",
        'task t on yard {\n    hint "One cr\u0430te is fl\u043eating"\n    anomaly float crate_2 by 0.4 m\n}\n',
    )
    (d,) = build(project).diagnostics
    assert d.code == "E540" and "names the target (crate) and its defect" in d.message
    assert 'U+0430 CYRILLIC SMALL LETTER A (reads as "a")' in d.message
    assert '"One cr\u0430te is fl\u043eating"' in d.message  # the sentence as the auditor reads it


def test_a_word_that_mixes_scripts_is_refused_even_without_a_giveaway(project):
    project(
        "t.wa",
        'task t on yard {\n    hint "Something is \u043eff here"\n    anomaly float crate_2 by 0.4 m\n}\n',
    )
    (d,) = build(project).diagnostics
    assert d.code == "E544" and "mixes scripts inside one word" in d.message and "Cyrillic" in d.message
    assert (d.span.line, d.span.column) == (3, 5)


@pytest.mark.parametrize(
    "hint, says",
    [
        ("Eine Kiste schwebt über dem Gras", "it reads as German"),
        ("Une caisse flotte au-dessus de l'herbe", "it reads as French"),
        ("yashchik visit v vozdukhe", "a transliteration"),
        ("箱が浮いている", "(Japanese)"),
    ],
)
def test_a_hint_in_another_language_is_refused(project, hint, says):
    project("t.wa", f'task t on yard {{\n    hint "{hint}"\n    anomaly float crate_2 by 0.4 m\n}}\n')
    (d,) = build(project).diagnostics
    assert d.code == "E544" and d.message.startswith("the hint is not in English") and says in d.message


def test_a_task_in_german_done_right_builds(project):
    project(
        "t.wa",
        """
        task t on yard {
            language de
            description "Ein kleiner Hof mit einem Zaun, zwei Holzkisten, einem Tisch und einer Laterne."
            hint "Fehlender Halt: etwas ruht auf nichts"
            anomaly float crate_2 by 0.4 m
        }
        """,
    )
    result = build(project)
    assert result.ok and result.warnings == [], [d.render() for d in result.diagnostics]


def test_a_task_in_german_is_checked_in_german(project):
    project(
        "t.wa",
        """
        task t on yard {
            language de
            description "Ein kleiner Hof, in dem eine Holzkiste frei in der Luft hängt."
            hint "Fehlender Halt"
            anomaly float crate_2 by 0.4 m
        }
        """,
    )
    (d,) = build(project).diagnostics
    assert d.code == "E540"
    assert 'names the target (crate, as "kiste") and its defect (in der luft)' in d.message
    assert d.hint.endswith("without saying what is wrong with the crate")


@pytest.mark.parametrize(
    "statement, says, hint",
    [
        ("language ja", "cannot check give-aways in Japanese", "en, de, fr, es"),
        ("language english", "`english` is not an ISO 639-1 language code", "write `language en`"),
        ("language xx", "`xx` is not an ISO 639-1 language code", "two-letter ISO 639-1 code"),
    ],
)
def test_a_language_wac_cannot_check_is_refused(project, statement, says, hint):
    project("t.wa", f"task t on yard {{\n    {statement}\n    anomaly float crate_2 by 0.4 m\n}}\n")
    (d,) = build(project).diagnostics
    assert d.code == "E544" and says in d.message and hint in d.hint
    assert (d.span.line, d.span.column) == (3, 14)


def test_a_task_in_another_language_needs_its_own_hint_and_description(project):
    project("t.wa", "task t on yard {\n    language fr\n    anomaly float crate_2 by 0.4 m\n}\n")
    diags = build(project).diagnostics
    assert [d.code for d in diags] == ["E544", "E544"]
    messages = sorted(d.message for d in diags)
    assert messages[0].startswith("the scene description is not in French: it reads as English")
    assert messages[1].startswith(
        "the task declares `language fr`, but its hint is the category's English name"
    )


def test_a_target_the_lexicon_has_no_name_for_is_refused_until_it_has_one(project):
    scene = project.root / "scenes" / "yard.wa"
    text = scene.read_text().rstrip().removesuffix("}")
    scene.write_text(
        text + '    gizmo_1: box size (0.5, 0.5, 0.5) at (2, -2) material wood { name "beehive" }\n}\n'
    )
    task = (
        'task t on yard {{\n    language de\n    description "Ein kleiner Hof."\n    hint "Fehlender Halt"\n'
        "    anomaly float gizmo_1 by 0.3 m\n}}\n"
    )
    project("t.wa", task.format())
    (d,) = build(project).diagnostics
    assert d.code == "E544" and 'wac knows no German name for `gizmo_1` ("beehive")' in d.message
    assert "synonym" in d.hint
    scene.write_text(
        text
        + '    gizmo_1: box size (0.5, 0.5, 0.5) at (2, -2) material wood { name "beehive"; synonyms ["Bienenstock"] }\n}\n'
    )
    result = build(project)
    assert result.ok, [d.render() for d in result.diagnostics]


def test_a_task_id_in_transliteration_warns(project):
    project("t.wa", "task letayushchiy_yashchik on yard {\n    anomaly float crate_2 by 0.4 m\n}\n")
    result = build(project)
    assert result.ok
    (w,) = result.warnings
    assert w.code == "W546" and "a transliteration" in w.message


# -- names a correct report would use (E545) --------------------------------------------------------


def test_a_bare_shape_named_after_its_shape_is_refused_at_the_target(project):
    project(
        "t.wa",
        "task t on yard {\n    box_7: box size (0.5, 0.5, 0.5) at (2, -2) material wood\n    anomaly float box_7 by 0.3 m\n}\n",
    )
    (d,) = build(project).diagnostics
    assert d.code == "E545" and '`box_7` has no `name`: its rubric name "box" comes from its id' in d.message
    assert (d.span.line, d.span.column) == (4, 19) and "name an observer would use" in d.hint


def test_a_placeholder_name_is_refused_at_the_name_clause(project):
    project(
        "t.wa",
        'task t on yard {\n    p_1: box size (0.5, 0.5, 0.5) at (2, -2) material wood { name "object 2" }\n'
        "    anomaly float p_1 by 0.3 m\n}\n",
    )
    (d,) = build(project).diagnostics
    assert d.code == "E545" and 'is named "object 2"' in d.message and "written like an id" in d.message
    assert (d.span.line, d.span.column) == (3, 62)


def test_an_instance_named_as_another_prefab_is_refused(project):
    project(
        "t.wa",
        'task t on yard {\n    b_1: barrel at (2, -2) { name "crate" }\n    anomaly float b_1 by 0.3 m\n}\n',
    )
    (d,) = build(project).diagnostics
    assert d.code == "E545" and "the name of another standard prefab (`crate`)" in d.message
    assert '`name "barrel"`' in d.hint


def test_an_added_object_is_held_to_the_same_rule(project):
    project(
        "t.wa",
        "task t on yard {\n    anomaly spawn thing_9 as box size (0.4, 0.4, 0.4) at (2, -4) when revisit\n}\n",
    )
    (d,) = build(project).diagnostics
    assert d.code == "E545" and '`thing_9` has no `name`: its rubric name "thing"' in d.message
    project(
        "t.wa", 'task t on yard {\n    anomaly spawn new_9 as crate at (2, -4) name "item" when revisit\n}\n'
    )
    (d,) = build(project).diagnostics
    assert d.code == "E545" and (d.span.line, d.span.column) == (3, 45) and '`name "crate"`' in d.hint


def test_unusual_real_names_pass(project):
    project(
        "t.wa",
        'task t on yard {\n    s_1: cylinder radius 0.15 height 0.4 at (2, -2) material metal { name "samovar" }\n'
        "    anomaly float s_1 by 0.2 m\n}\n",
    )
    result = build(project)
    assert result.ok, [d.render() for d in result.diagnostics]


def test_every_anomaly_of_a_multi_anomaly_task_is_held_to_the_name_rule(project):
    project(
        "t.wa",
        "task t on yard {\n    multi_anomaly yes\n    obj_4: box size (0.4, 0.4, 0.4) at (2, -4) material wood\n"
        "    anomaly float crate_2 by 0.4 m\n    anomaly float obj_4 by 0.3 m\n}\n",
    )
    (d,) = build(project).diagnostics
    assert d.code == "E545" and "`obj_4`" in d.message and (d.span.line, d.span.column) == (6, 19)


def test_the_message_names_the_disguise_not_an_honest_accent(project):
    project(
        "t.wa",
        'task t on yard {\n    hint "A caf\u00e9 yard where one cra\u200bte floats"\n    anomaly float crate_2 by 0.4 m\n}\n',
    )
    (d,) = build(project).diagnostics
    assert d.code == "E540" and "U+200B ZERO WIDTH SPACE" in d.message and "U+00E9" not in d.message
