"""The generated rubric, one defect at a time (issue 33, item 6): each task here is a shipped
anomaly whose rubric had an empty, unrendered or wrong field; tests/taxonomy/test_rubric_corpus.py
audits the whole corpus."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wac.compiler.pipeline import compile_project
from wac.compiler.rubric import _fill, _Words
from wac.errors import TaxonomyError
from wac.taxonomy.registry import _rubric

ROOT = Path(__file__).resolve().parents[2]

TASKS = {  # task id -> (scene file, scene, body)
    "wall": (
        "medieval_market",
        "medieval_market",
        "start at (4.5, -14) yaw 180 deg\n anomaly invisible_wall at (-3, -1) size (0.35, 3, 2.6)",
    ),
    "daynight": ("riverside_meadow", "riverside_meadow", "anomaly abrupt_day_night period 1 s"),
    "through": ("ancient_chinese_city_courtyard", "courtyard_house", "anomaly xray bed_1"),
    "blink": ("sponza_atrium_court", "sponza_atrium", "anomaly flicker torches_s_2 period 0.8 s"),
    "tint": ("airfield_field", "airfield_field", 'anomaly recolor bag_carts_2 to "#d01818" when revisit'),
    "shine": ("airfield_field", "airfield_field", 'anomaly glow tug color "#40ff90"'),
    "wing": ("airfield_field", "airfield_field", "anomaly misalign plane_h part wing by (0, 0, 0.6)"),
    "small": ("airfield_field", "airfield_field", "anomaly scale plane_3 by 0.35"),
    "sack": (
        "medieval_market",
        "medieval_market",
        "start at (6.5, -8) yaw 180 deg\n anomaly swap_material sack_1 to leather when revisit",
    ),
    "partition": (
        "living_room",
        "living_room",
        "start at (-5.5, -1.5) yaw 0 deg\n anomaly remove_collision wall_mid_centre",
    ),
    "desk": (
        "living_room",
        "living_room",
        "start at (3, 4) yaw 180 deg\n anomaly relocate chair_5 onto table_2",
    ),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The tasks above (and the intersection demonstration) compiled once into one build."""
    root = tmp_path_factory.mktemp("rubric")
    for folder in ("scenes", "prefabs"):
        shutil.copytree(ROOT / "tasks_src" / folder, root / folder)
    (root / "tasks").mkdir()
    for tid, (file, scene, body) in TASKS.items():
        (root / "tasks" / f"{tid}.wa").write_text(
            f'import "../scenes/{file}.wa"\n\ntask {tid} on {scene} {{\n {body}\n}}\n'
        )
    shutil.copy(ROOT / "taxonomy" / "examples" / "intersection.wa", root / "tasks" / "intersection.wa")
    res = compile_project([root / "tasks"], root, out=root / "build")
    assert res.ok, [d.render() for d in res.diagnostics]
    return root / "build"


def rubric(built: Path, tid: str) -> tuple[dict, str]:
    entry = json.loads((built / tid / "rubric.json").read_text())["entries"][0]
    return entry, (built / tid / "rubric.md").read_text()


def test_an_anomaly_of_no_object_says_where_it_is_instead_of_an_empty_field(built):
    e, md = rubric(built, "wall")
    assert e["object_names"] == []
    assert e["place"] == "the open way near (-3, -1), where an invisible barrier stands"
    assert "**Object names.** none: the anomaly is not an object" in md
    assert "**Where.** The open way near (-3, -1), where an invisible barrier stands." in md
    assert "**Object names.** \n" not in md


def test_a_dynamic_anomaly_spells_out_its_condition(built):
    """The invisible wall has no trigger: its condition is the walk into it, said with its place."""
    e, md = rubric(built, "wall")
    assert e["dynamic"] is True
    assert e["condition"].startswith("walking through the open way near (-3, -1): the agent stops short")
    assert "its condition" not in md
    assert "**Condition.** Walking through the open way near (-3, -1)" in md


def test_a_scene_wide_anomaly_says_what_it_is_about_and_claims_no_lamp_that_stays_lit(built):
    """The meadow's lamp post is lit all day (a `lit` lamp stays lit through the cycle): the rubric
    may not tell the judge that lamps flip on and off."""
    e, md = rubric(built, "daynight")
    assert e["object_names"] == [] and e["place"] == "the whole scene's lighting (daylight)"
    assert e["target"] == "Day and night switch abruptly about every 1 s; the normal cycle is gradual."
    assert "1 s" in e["condition"]
    assert "**Where.** The whole scene's lighting (daylight)." in md


def test_a_static_anomaly_in_a_dynamic_category_is_not_dynamic(built):
    """An x-ray bed shows through the wall in one still frame: nothing changes, no condition."""
    e, md = rubric(built, "through")
    assert e["category"] == "visibility"
    assert e["dynamic"] is False and e["condition"] is None
    assert "**Dynamic.** no" in md and "**Condition.**" not in md


def test_a_change_in_time_without_a_trigger_is_dynamic_with_its_period(built):
    e, md = rubric(built, "blink")
    assert e["dynamic"] is True and "every 0.8 s" in e["condition"]
    assert "**Dynamic.** yes" in md


def test_a_triggered_change_names_its_trigger_and_a_colour_by_name(built):
    e, _ = rubric(built, "tint")
    assert e["condition"] == "the change happens after the agent looks away and comes back"
    assert e["target"] == "The baggage cart changes colour to red after the agent looks away and comes back."


def test_a_glow_is_named_by_its_colour_not_a_hex_code(built):
    e, _ = rubric(built, "shine")
    assert e["target"] == "The aircraft tug glows green with no light source to explain it."


def test_a_misaligned_part_states_its_offset_with_a_unit_and_no_zero_turn(built):
    e, _ = rubric(built, "wing")
    assert (
        e["target"]
        == "The wing of the light aircraft is misaligned with the rest of it (offset by (0, 0, 0.6) m)."
    )


def test_a_shrunk_object_is_a_fraction_of_its_size_not_times_smaller(built):
    e, _ = rubric(built, "small")
    assert "shrunk to 0.35 times its normal size" in e["target"] and "smaller" not in e["target"]


def test_the_expected_materials_read_as_words(built):
    e, _ = rubric(built, "sack")
    assert (
        e["expected"] == "It should be fabric or vegetation like matching surfaces whatever the agent does."
    )


def test_a_placing_word_is_not_an_object_name(built):
    """`wall_mid_centre` is a wall: "wall" is a name for it, "centre" is not."""
    e, _ = rubric(built, "partition")
    assert e["object_names"][0] == "wall mid centre"
    assert "wall" in e["object_names"] and "centre" not in e["object_names"]


@pytest.mark.parametrize("tid, other", [("intersection_demo", "right green bin"), ("desk", "desk")])
def test_every_object_the_anomaly_names_is_in_the_object_names(built, tid, other):
    """Pushed into, put onto: the second object is part of the defect the judge looks for."""
    e, _ = rubric(built, tid)
    assert other in e["object_names"]


def test_a_placeholder_nothing_fills_is_an_error_not_an_empty_string():
    with pytest.raises(TaxonomyError, match=r"float: a rubric template names \{nmae\}"):
        _fill("The {nmae} floats.", _Words("float", {"name": "chair"}))


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"operand": "none", "rubric": {"target": "t", "expected": "e", "inspection": "i"}}, "'place'"),
        ({"operand": "object", "rubric": {"target": "t", "expected": "e"}}, "'inspection'"),
        (
            {"operand": "object", "rubric": {"target": "t", "expected": "e", "inspection": "i", "when": "w"}},
            "'when'",
        ),
    ],
)
def test_the_registry_refuses_rubric_templates_it_cannot_render(spec, message):
    with pytest.raises(TaxonomyError, match=message):
        _rubric("op", spec)
