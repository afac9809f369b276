"""Operators as the reference runtime describes them, from the task language: their own operator and
trigger forms (phantom_door, vanish, the `interact` trigger), their applicability checks, and a
self-check that passes on a shipped scene."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

from wac.compiler.pipeline import compile_project

ROOT = Path(__file__).resolve().parents[2]
KNOWN_PARAM_KEYS = {"type", "min", "max", "default", "required", "choices", "doc"}


def _project(tmp_path: Path, body: str, scene: str = "living_room") -> Path:
    shutil.copytree(ROOT / "tasks_src" / "scenes", tmp_path / "scenes")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "t.wa").write_text(f'import "../scenes/{scene}.wa"\n' + textwrap.dedent(body))
    return tmp_path


def _build(root: Path, out: Path | None = None):
    return compile_project([root / "tasks"], root, out=out)


def _messages(result) -> list[str]:
    return [d.render() for d in result.diagnostics]


def test_every_parameter_spec_in_operators_yaml_has_only_known_keys():
    """An unquoted comma in a flow mapping splits a `doc` into stray keys (the old `scale by` doc
    read 'a factor or per-axis (x')."""
    ops = yaml.safe_load((ROOT / "taxonomy" / "operators.yaml").read_text())
    bad = {
        f"{op}.{name}": sorted(set(spec) - KNOWN_PARAM_KEYS)
        for op, body in ops.items()
        for name, spec in (body.get("params") or {}).items()
        if set(spec) - KNOWN_PARAM_KEYS
    }
    assert not bad


@pytest.mark.parametrize(
    "anomaly",
    [
        "phantom_door door_1 when interact",
        "ghost_door door_1 when interact",
        "jam door_1 at 0.5 when interact",
        "autoclose door_1 when interact",
        "speed_door door_1 when interact",
    ],
)
def test_door_operators_take_the_interaction_trigger(tmp_path, anomaly):
    root = _project(tmp_path, f"task t on living_room {{\n    anomaly {anomaly}\n}}\n")
    res = _build(root)
    assert res.ok, _messages(res)


def test_operators_that_cannot_be_interaction_triggered_say_which_triggers_they_take(tmp_path):
    root = _project(tmp_path, "task t on living_room {\n    anomaly tilt chair_1 when interact\n}\n")
    msgs = _messages(_build(root))
    assert len(msgs) == 1 and "E603" in msgs[0] and "`tilt` cannot take the trigger `interact`" in msgs[0]


def test_shadow_anomalies_need_a_light_that_casts_shadows(tmp_path):
    (tmp_path / "scenes").mkdir()
    (tmp_path / "scenes" / "dark.wa").write_text(
        textwrap.dedent(
            """\
            scene dark {
                description "A windowless store room lit by nothing but ambient light."
                type indoor
                ground concrete size (10, 10)
                no_sun
                ambient 0.6
                bounds from (-4, -4) to (4, 4)
                start at (0, -3) yaw 90 deg
                crate_1: crate at (0, 1)
                crate_2: crate at (2, 1)
            }
            """
        )
    )
    (tmp_path / "tasks").mkdir()
    for op in ("remove_shadow crate_1", "displace_shadow crate_1 by (1, 1)"):
        (tmp_path / "tasks" / "t.wa").write_text(
            f'import "../scenes/dark.wa"\ntask t on dark {{\n    anomaly {op}\n}}\n'
        )
        msgs = _messages(_build(tmp_path))
        assert len(msgs) == 1 and "E607" in msgs[0] and "no sun and no lit lamp" in msgs[0], msgs
    # a ceiling light casts the shadows there: then the anomaly applies
    text = (tmp_path / "scenes" / "dark.wa").read_text()
    (tmp_path / "scenes" / "dark.wa").write_text(
        text.replace("    ambient 0.6\n", "    ambient 0.6\n    light ceiling at (0, 0, 2.5)\n")
    )
    assert _build(tmp_path).ok, _messages(_build(tmp_path))


def test_push_into_deeper_than_the_object_is_refused(tmp_path):
    root = _project(
        tmp_path, "task t on living_room {\n    anomaly push_into chair_4 into chair_3 depth 2 m\n}\n"
    )
    msgs = _messages(_build(root))
    assert len(msgs) == 1 and "E607" in msgs[0] and "is more than `chair_4` measures" in msgs[0], msgs
    (root / "tasks" / "t.wa").write_text(
        'import "../scenes/living_room.wa"\ntask t on living_room {\n    anomaly push_into chair_4 into chair_3 depth 0.25 m\n}\n'
    )
    assert _build(root).ok


@pytest.mark.slow
@pytest.mark.parametrize(
    "anomaly",
    [
        "phantom_door door_1",
        "phantom_door door_1 when interact",
        "jam door_1 at 0.5 when interact",
        "vanish sofa_1",
        "corrupted_frame sofa_1 opacity 0.35",
    ],
)
def test_new_forms_pass_their_self_check(tmp_path, anomaly):
    pytest.importorskip("pybullet")
    from wac.validation.bundlecheck import check_bundle

    root = _project(
        tmp_path,
        f"task t on living_room {{\n    difficulty medium\n    start at (0.5, -2) yaw 0 deg\n    anomaly {anomaly}\n}}\n",
    )
    res = _build(root, tmp_path / "build")
    assert res.ok, _messages(res)
    r = check_bundle(tmp_path / "build" / "t")
    assert r.passed, r.reasons


def test_a_revisit_target_in_view_at_the_start_is_observed_from_the_start(tmp_path):
    """The revisit trigger is armed by the first sighting; walking to a viewpoint first (turning on
    the way) could fire it before the "before" view, so the plan observes it where it is seen."""
    import json

    root = _project(
        tmp_path,
        "task t on riverside_meadow {\n    start at (-2, -9.5) yaw 90 deg\n    anomaly hide boulder_1 when revisit\n}\n",
        scene="riverside_meadow",
    )
    res = _build(root, tmp_path / "build")
    assert res.ok, _messages(res)
    steps = json.loads((tmp_path / "build" / "t" / "selfcheck.json").read_text())["steps"]
    before = steps[: next(i for i, s in enumerate(steps) if s["action"] == "mark")]
    assert not [s for s in before if s["action"] == "move"]
    assert all(abs(s["args"]["degrees"]) < 45 for s in before if s["action"] == "turn")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["factory_sunken_forklift", "factory_fence_gap", "factory_02"])
def test_plans_keep_clear_of_dynamic_objects(tmp_path, name):
    """Brushing a dynamic object moves it (a second change besides the anomaly): plan walks keep the
    agent's radius + 0.3 m from every dynamic object where the area allows."""
    import json

    pytest.importorskip("pybullet")
    import numpy as np

    from wac.runtime.env import WorldEnv

    res = compile_project([ROOT / "tasks_src" / "factory"], ROOT, out=tmp_path / "build")
    assert res.ok, _messages(res)
    bundle = tmp_path / "build" / name
    plan = json.loads((bundle / "selfcheck.json").read_text())
    env = WorldEnv(bundle, variant="clean", width=64, height=48, film_interval_s=None)
    try:
        dyn = [st for st in env.world.objects.values() if st.spec.dynamic and st.spec.solid]
        assert dyn, "the scene has dynamic objects to keep clear of"
        r = env.task.exploration.agent_radius_m
        gaps = []

        def watch():
            foot = env.physics.agent_position()
            for st in dyn:
                lo, hi = env.world.aabb(st)
                dx = max(lo[0] - foot[0], 0.0, foot[0] - hi[0])
                dy = max(lo[1] - foot[1], 0.0, foot[1] - hi[1])
                gaps.append(float(np.hypot(dx, dy)))

        env.add_tick_listener(watch)
        for step in plan["steps"]:
            if step["action"] != "mark":
                env.step({"action": step["action"], **step["args"]})
        assert min(gaps) >= r + 0.3 - 0.1
    finally:
        env.close()


def test_extra_asset_takes_any_out_of_place_object_and_refuses_one_that_fits(tmp_path):
    """The reference's extra_asset: an asset that should not be in the scene.  Out of its era, it is
    evident on its own; out of place only by the kind of scene its prefab is made for (a forklift in
    a living room), it is no historical incompatibility an auditor could name (issue 27: E550); a
    fitting one is refused outright (E612)."""
    import json

    root = _project(
        tmp_path, "task t on living_room {\n    anomaly extra_asset torch_9 as torch_stand at (-2, 2)\n}\n"
    )
    res = _build(root, tmp_path / "build")
    assert res.ok, _messages(res)
    rubric = json.loads((tmp_path / "build" / "t" / "rubric.json").read_text())
    assert "medieval era in a modern scene" in json.dumps(rubric)
    (root / "tasks" / "t.wa").write_text(
        'import "../scenes/living_room.wa"\ntask t on living_room {\n    anomaly extra_asset forklift_9 as forklift at (-2, 2)\n}\n'
    )
    msgs = _messages(_build(root))
    assert len(msgs) == 1 and "E550" in msgs[0] and "was in use in the modern era" in msgs[0], msgs
    (root / "tasks" / "t.wa").write_text(
        'import "../scenes/living_room.wa"\ntask t on living_room {\n    anomaly extra_asset chair_9 as chair at (-2, 2)\n}\n'
    )
    msgs = _messages(_build(root))
    assert len(msgs) == 1 and "E612" in msgs[0] and "fits this indoor scene" in msgs[0], msgs


@pytest.mark.slow
def test_extra_asset_passes_its_self_check(tmp_path):
    pytest.importorskip("pybullet")
    from wac.validation.bundlecheck import check_bundle

    root = _project(
        tmp_path,
        "task t on living_room {\n    start at (-2, -2) yaw 90 deg\n    anomaly extra_asset torch_9 as torch_stand at (-2, 2)\n}\n",
    )
    assert _build(root, tmp_path / "build").ok
    r = check_bundle(tmp_path / "build" / "t")
    assert r.passed, r.reasons


def test_corrupted_frame_shows_in_the_perturbed_world_only(tmp_path):
    """The self-check reads the tint on the target's pixels in the perturbed frames, and the clean
    frames as the reference; the task changes no object, so nothing else may differ."""
    pytest.importorskip("pybullet")
    from wac.validation.bundlecheck import check_bundle

    root = _project(
        tmp_path,
        "task t on living_room {\n    start at (0.5, -2) yaw 0 deg\n    anomaly corrupted_frame sofa_1\n}\n",
    )
    assert _build(root, tmp_path / "build").ok
    task = json.loads((tmp_path / "build" / "t" / "task.json").read_text())
    assert task["anomalies"][0]["effects"] == [
        {"kind": "set_frame_tint", "color": [1.0, 0.0, 0.2], "strength": 0.35}
    ]
    rubric = json.loads((tmp_path / "build" / "t" / "rubric.json").read_text())["entries"][0]
    assert "red overlay" in rubric["target"] and "tint" in rubric["defect_terms"]
    r = check_bundle(tmp_path / "build" / "t")
    assert r.passed, r.reasons
    assert r.perturbed.anomalous and not r.clean.anomalous


def test_corrupted_frame_opacity_is_bounded(tmp_path):
    root = _project(tmp_path, "task t on living_room {\n    anomaly corrupted_frame sofa_1 opacity 0.05\n}\n")
    msgs = _messages(_build(root))
    assert len(msgs) == 1 and "opacity" in msgs[0] and "0.15" in msgs[0]
