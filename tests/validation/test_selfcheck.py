"""Self-checks of shipped tasks: one demonstration task per category passes, in both directions.

The in-context demonstration tasks of `taxonomy/examples/` (one principal per category, and the
alternatives of `taxonomy/examples/incontext/`) are built once
into a temporary directory; each must pass its self-check (the anomaly shows in the perturbed
world and not in the clean one), and the same bundle with its anomaly stripped (the clean world
posing as the perturbed one) must fail it.  The CLI's table, JSON and exit codes are checked too.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from validation_helpers import ROOT, build

from wac.bundle.integrity import write_manifest
from wac.bundle.model import CompiledTask
from wac.taxonomy.registry import registry
from wac.validation.bundlecheck import check_bundle
from wac.validation.selfcheck import main

# the demonstration tasks the self-check passes on (see the report for the ones it does not)
SAMPLE = [
    "abnormal_trajectory_demo",
    "existence_demo",
    "historical_demo",
    "improper_configuration_demo",
    "intersection_demo",
    "material_demo",
    "missing_collision_demo",
    "missing_support_demo",
    "operational_state_demo",
    "scale_demo",
    "shadow_lighting_demo",
    "static_attribute_demo",
    "unexpected_collision_demo",
    "view_dependent_demo",
    "visibility_demo",
]
SAMPLE += [d.id for c in registry().categories for d in c.demos if d.id not in SAMPLE]


@pytest.fixture(scope="module")
def demos(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demos") / "build"
    result = build([ROOT / "taxonomy" / "examples"], ROOT, out)
    assert result.ok, [d.render() for d in result.diagnostics]
    return out


@pytest.fixture(scope="module")
def results(demos):
    return {name: check_bundle(demos / name) for name in SAMPLE}


@pytest.mark.parametrize("name", SAMPLE)
def test_a_shipped_task_passes_its_self_check(results, name):
    r = results[name]
    assert r.perturbed_ok and r.clean_ok, r.reasons
    assert r.passed, r.reasons
    assert r.actions_needed <= r.budget


def test_the_sample_covers_every_category(results):
    from wac.taxonomy.registry import registry

    assert {r.category for r in results.values()} == {c.id.value for c in registry().categories}


@pytest.mark.parametrize(
    "name",
    [
        "missing_support_demo",
        "existence_demo",
        "unexpected_collision_demo",
        "shadow_lighting_demo",
        "material_demo",
    ],
)
def test_the_check_fails_when_the_perturbed_world_is_the_clean_one(demos, tmp_path, name):
    bundle = tmp_path / name
    shutil.copytree(demos / name, bundle)
    task = CompiledTask.model_validate_json((bundle / "task.json").read_text())
    stripped = task.model_copy(
        update={"anomalies": tuple(a.model_copy(update={"effects": ()}) for a in task.anomalies)}
    )
    (bundle / "task.json").write_text(stripped.model_dump_json())
    write_manifest(bundle)  # a deliberate edit: re-seal the bundle so that it loads
    r = check_bundle(bundle)
    assert not r.passed
    assert any(why.startswith("perturbed variant does not show the anomaly") for why in r.reasons), r.reasons


def test_shadow_and_material_are_judged_from_pixels_with_the_world_as_the_explanation(results):
    shadow = results["shadow_lighting_demo"].perturbed
    assert shadow.anomalous and "shadow falls 4.3 m from where the sun puts it" in shadow.detail
    assert (
        "px of ground" in shadow.detail
        and "(world: its shadow is displaced by (3.5, -2.5) m)" in shadow.detail
    )
    assert results["shadow_lighting_demo"].clean.detail.startswith("the clean frame agrees with the sun")
    material = results["material_demo"].perturbed
    assert (
        material.anomalous
        and "looks different" in material.detail
        and "differ from the clean frame" in material.detail
    )
    assert "(world: part pane_top is wood instead of glass)" in material.detail


def test_evidence_frames_are_written_with_captions(demos, tmp_path):
    r = check_bundle(demos / "missing_collision_demo", out_dir=tmp_path / "ev")
    meta = json.loads((tmp_path / "ev" / "evidence.json").read_text())
    assert r.frames and [f["file"] for f in meta["frames"]] == list(r.frames)
    assert any("fence" in f["caption"] for f in meta["frames"])
    assert all((tmp_path / "ev" / f).stat().st_size > 1000 for f in r.frames)


def test_cli_table_json_and_exit_codes(demos, capsys):
    assert main([str(demos / "scale_demo"), str(demos / "historical_demo"), "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "task" in out and "necessity" in out and "scale_demo" in out and "2 of 2 task(s) pass" in out
    assert main([str(demos / "scale_demo"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] == 1 and data["results"][0]["category"] == "scale"
    assert main(["/no/such/bundle"]) == 2
    assert "no such build directory or bundle" in capsys.readouterr().err


def test_a_failing_task_exits_1_with_the_reason(demos, tmp_path, capsys):
    bundle = tmp_path / "missing_collision_demo"
    shutil.copytree(demos / "missing_collision_demo", bundle)
    task = CompiledTask.model_validate_json((bundle / "task.json").read_text())
    stripped = task.model_copy(
        update={"anomalies": tuple(a.model_copy(update={"effects": ()}) for a in task.anomalies)}
    )
    (bundle / "task.json").write_text(stripped.model_dump_json())
    write_manifest(bundle)  # a deliberate edit: re-seal the bundle so that it loads
    assert main([str(bundle)]) == 1
    out = capsys.readouterr().out
    assert "FAIL missing_collision_demo" in out and "blocked" in out


def test_wac_validate_finds_no_counterexample_on_a_robust_task(demos, capsys):
    from wac.cli import main as wac

    assert wac(["validate", str(demos / "missing_support_demo"), "--examples", "3"]) == 0
    assert "ok: the anomaly manifests only in the perturbed world" in capsys.readouterr().out


def test_one_change_ignores_a_rounding_step_but_not_a_move():
    """Signatures round positions to 1 cm: a barrel at y = 5.8949 in one world and 5.8951 in the
    other rounds to 5.89 and 5.90 — float noise, not a second change; 5 cm is a change."""
    from types import SimpleNamespace

    from wac.validation.checks import check_one_change

    def sig(y):
        return (("present", True), ("position", (1.0, y, 0.0)), ("rotation", (0.0, 0.0, 0.0)))

    def run(y):
        states = {"barrel_9": sig(y)}
        return SimpleNamespace(
            samples=[SimpleNamespace(pose=(0.0, 0.0, 0.0, 0.0, 0.0))],
            states_start=states,
            states_end=states,
            world_start=(),
            world_end=(),
        )

    task = SimpleNamespace(anomalies=[], scene=SimpleNamespace(objects=[], benign=[]))
    assert check_one_change(task, run(5.89), run(5.90)) == ([], [])
    reasons, _ = check_one_change(task, run(5.89), run(5.94))
    assert reasons and "barrel_9 differs after load (position)" in reasons[0]


def test_the_plans_of_a_multi_anomaly_task_draw_their_start_views_once(built, monkeypatch):
    """Every plan of a multi-anomaly task starts in the same clean and perturbed worlds: their start
    views are drawn for the first plan only, and every verdict field comes out as when each plan's
    runs draw their own."""
    import wac.validation.bundlecheck as bc
    from wac.bundle.reader import Bundle
    from wac.runtime.render import Renderer

    bundle = built / "living_05_m2_c2"
    assert len(Bundle.open(bundle).plan().others) == 1
    drawn = []
    real_render = Renderer.render
    monkeypatch.setattr(Renderer, "render", lambda self, cam: drawn.append(1) or real_render(self, cam))

    def fields(r):
        return {k: v for k, v in r.as_dict().items() if k != "seconds"}

    shared = check_bundle(bundle)
    n_shared = len(drawn)
    drawn.clear()
    real_run = bc.run_steps
    monkeypatch.setattr(bc, "run_steps", lambda *a, starts=None, **kw: real_run(*a, **kw))
    own = check_bundle(bundle)
    assert shared.passed and fields(shared) == fields(own)
    assert len(drawn) - n_shared == 2  # the second plan's clean and perturbed start views


def test_a_sample_with_no_action_since_the_last_shows_what_that_one_drew(demos, monkeypatch):
    """A mark straight after the start view, and the final view after a captioned last step, take
    the images of the sample before (nothing moved, the view is the same): the run's samples are
    the ones drawing every sample gives, with two draws of each kind fewer."""
    import wac.validation.capture as cap
    from wac.runtime.render import Renderer
    from wac.validation.capture import Step, run_steps

    steps = [
        Step("mark", (), "the start again"),
        Step("turn", (("degrees", 40.0),), "turned"),
        Step("move", (("direction", "forward"), ("distance_m", 1.0)), "moved"),
    ]
    drawn = []
    real_render, real_ids = Renderer.render, Renderer.render_ids
    monkeypatch.setattr(Renderer, "render", lambda self, cam: drawn.append("rgb") or real_render(self, cam))
    monkeypatch.setattr(
        Renderer, "render_ids", lambda self, *a, **kw: drawn.append("ids") or real_ids(self, *a, **kw)
    )
    bundle = demos / "existence_demo"
    shared = run_steps(bundle, "perturbed", steps, depth=True)
    n_shared = list(drawn)
    drawn.clear()
    real_sample = cap._sample
    monkeypatch.setattr(cap, "_sample", lambda *a: real_sample(*a[:7]))  # always draws
    own = run_steps(bundle, "perturbed", steps, depth=True)
    assert [s.kind for s in own.samples] == ["start", "mark", "after", "after", "end"]
    for a, b in zip(shared.samples, own.samples, strict=True):
        assert np.array_equal(a.frame, b.frame) and np.array_equal(a.ids, b.ids)
        assert np.array_equal(a.depth, b.depth) and a.measure == b.measure and a.pose == b.pose
    assert drawn.count("rgb") - n_shared.count("rgb") == 2
    assert drawn.count("ids") - n_shared.count("ids") == 2
    assert not np.array_equal(own.samples[0].frame, own.samples[-1].frame)
