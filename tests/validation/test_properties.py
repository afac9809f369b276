"""The differential property over random scenes: for EVERY category, a random small valid scene with
a random applicable anomaly compiles, and its self-check plan shows the anomaly in the perturbed
world and not in the clean one.

Example counts are CI-sized (2 per category); `WAC_VALIDATION_EXAMPLES=25 pytest -m slow …` or the
`slow` test below runs more.
"""

from __future__ import annotations

import os
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from validation_helpers import build

from wac.validation.bundlecheck import check_bundle

CI_EXAMPLES = int(os.environ.get("WAC_VALIDATION_EXAMPLES", "2"))
LONG_EXAMPLES = 12

SCENE = """
scene gen_scene {{
    description "A generated test yard."
    type {type}
    era {era}
    ground {ground} size (30, 30)
    sun azimuth {sun_az} deg elevation 50 deg intensity 1
    ambient 0.4
{extra_scene}    bounds from (-8, -8) to (8, 8)
    start at ({sx}, -6) yaw 90 deg
{objects}
}}

task gen_task on gen_scene {{
    anomaly {anomaly}
}}
"""

coord = st.floats(-2.5, 2.5).map(lambda v: round(v, 1))
near_y = st.floats(-0.5, 2.5).map(lambda v: round(v, 1))


@st.composite
def scenes(draw, category: str) -> str:
    """Source text of one scene + task whose anomaly belongs to `category`."""
    tx, ty = draw(coord), draw(near_y)
    sx = draw(st.floats(-1.0, 1.0).map(lambda v: round(v, 1)))
    kw = {
        "type": "urban",
        "era": "modern",
        "ground": "asphalt",
        "sun_az": draw(st.sampled_from([120, 135, 225])),
        "extra_scene": "",
        "sx": sx,
    }
    objects = []
    # distractors at the sides, off the path from the start to the target
    for i in range(draw(st.integers(0, 3))):
        side = draw(st.sampled_from([-6.5, 6.5]))
        objects.append(
            f"    box_{i}: box size (0.6, 0.6, {draw(st.sampled_from([0.5, 1.0, 1.5]))}) at ({side}, "
            f"{-5 + 3 * i}) material stone"
        )
    t = f"at ({tx}, {ty})"
    if category == "missing_support":
        objects.append(f"    target_1: {draw(st.sampled_from(['crate', 'barrel', 'sack']))} {t}")
        anomaly = f"float target_1 by {draw(st.sampled_from([0.25, 0.4, 0.6]))} m"
    elif category == "intersection":
        objects.append(f"    target_1: {draw(st.sampled_from(['crate', 'bench', 'barrel']))} {t}")
        anomaly = f"sink target_1 by {draw(st.sampled_from([0.2, 0.3]))} m"
    elif category == "scale":
        objects.append(f"    target_1: {draw(st.sampled_from(['chair', 'mailbox', 'bench']))} {t}")
        objects.append(f"    other_1: crate at ({tx + 2.0}, {ty})")
        anomaly = f"scale target_1 by {draw(st.sampled_from([0.5, 2, 2.5]))}"
    elif category == "missing_collision":
        objects.append(
            f"    target_1: box size (5, 0.1, 1.2) at ({sx}, {draw(st.sampled_from([-3.0, -2.0]))}) "
            f'material wood {{ name "wooden fence" }}'
        )
        anomaly = "remove_collision target_1"
    elif category == "unexpected_collision":
        anomaly = f"invisible_wall at ({sx}, {draw(st.sampled_from([-3.0, -2.0]))}) size (3, 0.35, 2.6)"
    elif category == "abnormal_trajectory":
        objects.append(f"    target_1: bin {t} mass 12 kg")
        anomaly = "overturn target_1 angle 180 deg when contact"
    elif category == "visibility":
        objects.append(f"    target_1: {draw(st.sampled_from(['bench', 'crate', 'mailbox']))} {t}")
        anomaly = "hide target_1"
    elif category == "view_dependent":
        objects.append(f"    target_1: crate {t}")
        anomaly = f'recolor target_1 to "#e01010" when beyond {draw(st.sampled_from([5, 6]))} m'
    elif category == "shadow_lighting":
        objects.append(f"    target_1: {draw(st.sampled_from(['column', 'lamp_post']))} {t}")
        anomaly = f"displace_shadow target_1 by ({draw(st.sampled_from([2, -2]))}, {draw(st.sampled_from([1.5, -1.5]))})"
    elif category == "material":
        objects.append(f"    target_1: {draw(st.sampled_from(['crate', 'barrel']))} {t}")
        anomaly = f"swap_material target_1 to {draw(st.sampled_from(['stone', 'metal', 'glass']))}"
    elif category == "existence":
        objects.append(f"    target_1: {draw(st.sampled_from(['crate', 'boulder', 'barrel']))} {t}")
        anomaly = "hide target_1 when revisit"
    elif category == "static_attribute":
        objects.append(f"    target_1: {draw(st.sampled_from(['crate', 'barrel', 'bench']))} {t}")
        anomaly = f"move target_1 by ({draw(st.sampled_from([1.2, -1.2]))}, 0) when revisit"
    elif category == "operational_state":
        kw["extra_scene"] = "    day_night period 40 s transition gradual\n"
        objects.append(f"    lamp_1: street_lamp {t}")
        anomaly = f"abrupt_day_night period {draw(st.sampled_from([1, 2]))} s"
    elif category == "improper_configuration":
        objects.append(f"    target_1: {draw(st.sampled_from(['mailbox', 'traffic_cone', 'chair']))} {t}")
        anomaly = draw(st.sampled_from(["invert target_1", "tilt target_1 by 30 deg"]))
    elif category == "historical":
        kw.update(type="historical", era="medieval", ground="cobblestone")
        objects.append(f"    barrel_1: barrel at ({tx + 1.5}, {ty})")
        objects.append(f"    sack_1: sack at ({tx - 1.5}, {ty})")
        anomaly = f"anachronism cone_1 as traffic_cone {t}"
    else:  # pragma: no cover
        raise AssertionError(category)
    return textwrap.dedent(SCENE.format(objects="\n".join(objects), anomaly=anomaly, **kw))


CATEGORIES = [
    "missing_support",
    "intersection",
    "scale",
    "missing_collision",
    "unexpected_collision",
    "abnormal_trajectory",
    "visibility",
    "view_dependent",
    "shadow_lighting",
    "material",
    "existence",
    "static_attribute",
    "operational_state",
    "improper_configuration",
    "historical",
]


def differential(source: str, category: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "gen.wa").write_text(source)
        result = build([root / "gen.wa"], root, root / "out")
        assume(
            result.ok
        )  # a random layout the compiler rejects (unreachable, overlapping) is not a test case
        r = check_bundle(root / "out" / "gen_task")
        assert r.category == category, r.category
        assert r.perturbed_ok, f"perturbed: {r.perturbed.detail}\n{source}"
        assert r.clean_ok, f"clean: {r.clean.detail}\n{source}"


def test_the_generators_cover_every_category():
    from wac.taxonomy.registry import registry

    assert set(CATEGORIES) == {c.id.value for c in registry().categories}


@pytest.mark.parametrize("category", CATEGORIES)
def test_differential_property_on_random_scenes(category):
    @settings(
        max_examples=CI_EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(scenes(category))
    def prop(source):
        differential(source, category)

    prop()


# found by this test: an overturn kick under a contact trigger fails when the agent meets the bin off-centre
# and keeps pushing (bin at (0, 0), start (0.5, -6): it tilts 7 deg instead of turning over); see the report
KNOWN: dict[str, str] = {}  # category -> why its long property run is expected to fail (none today)


@pytest.mark.slow
@pytest.mark.parametrize(
    "category",
    [
        pytest.param(c, marks=pytest.mark.xfail(reason=KNOWN[c], strict=False)) if c in KNOWN else c
        for c in CATEGORIES
    ],
)
def test_differential_property_long(category):
    @settings(
        max_examples=LONG_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(scenes(category))
    def prop(source):
        differential(source, category)

    prop()
