"""The self-check's world-alone stage (issue 27, `validation/world_alone.py`): a bundle is judged as the
auditor sees it, so one made by hand, imported or built by an older wac is held to the compiler's rule."""

from __future__ import annotations

from validation_helpers import HERE, build

from wac.bundle import model as B
from wac.bundle.reader import Bundle
from wac.validation.bundlecheck import check_bundle
from wac.validation.world_alone import world_problems

SUITE = HERE / "auditor"


def _bundle(name: str, tmp_path):
    out = tmp_path / "out"
    result = build([SUITE / "valid" / f"{name}.wa"], SUITE, out)
    assert not [d for d in result.diagnostics if d.severity == "error"]
    (path,) = [p for p in out.iterdir() if p.is_dir()]
    return path


def test_a_valid_bundle_passes_the_stage(tmp_path):
    res = check_bundle(_bundle("world_stool_on_cart", tmp_path))
    assert res.passed, res.reasons
    assert res.alone == "ok"


def test_a_hand_edited_bundle_whose_change_shows_nothing_is_refused(tmp_path):
    task = Bundle.open(_bundle("world_stool_on_cart", tmp_path)).task()
    assert world_problems(task) == []
    # the stool set down on open ground instead of on the cart: still a usable stool
    (an,) = task.anomalies
    stool = next(o for o in task.scene.objects if o.id == "stool_1")
    moved = B.SetPose(target="stool_1", position=(1.5, -3.0, stool.position[2]))
    edited = task.model_copy(update={"anomalies": (an.model_copy(update={"effects": (moved,)}),)})
    ((index, message),) = world_problems(edited)
    assert index == 0 and "the `relocate` anomaly is not evident in the perturbed world on its own" in message


def test_a_hole_dug_under_a_loose_barrel_is_a_second_change(tmp_path):
    task = Bundle.open(_bundle("world_plaza_paving", tmp_path)).task()
    (an,) = task.anomalies
    barrel = next(o for o in task.scene.objects if o.id == "barrel_1")
    hole = B.AddHole(position=(barrel.position[0], barrel.position[1], 0.0), size=(1.2, 1.2, 1.0))
    edited = task.model_copy(update={"anomalies": (an.model_copy(update={"effects": (hole,)}),)})
    messages = [m for _, m in world_problems(edited)]
    assert any(
        "`barrel_1` (barrel) rests on nothing solid (the ground under it has a hole)" in m for m in messages
    )
