"""Deliberately broken tasks: each must be caught, by the compiler or by the self-check, with a precise message.

The recall of the validator on this suite (caught with the expected message / all) is printed by
`test_recall_on_the_broken_suite` and reported in docs/performance.md.
"""

from __future__ import annotations

import pytest
from compiler_cases import COMPILER_CASES
from validation_helpers import BROKEN, build

from wac.validation.bundlecheck import check_bundle

# file -> (who catches it, words the message must contain)
CASES = {
    "revisit_never_fires.wa": (
        "selfcheck",
        "trigger never fired during the plan: the target was never seen within 0.5 m",
    ),
    "revisit_radius_too_big.wa": ("compiler", "the revisit trigger can never fire"),
    # a walk through the target must have room beyond it: the compiler sees the edge of the area and
    # fixed solids (the self-check saw the corner crate's walk run into the edge), the self-check
    # what moves (a crate too heavy to shove behind a door)
    "collision_off_path.wa": ("compiler", "there is no room to walk through the corner crate"),
    "ghost_door_onto_the_edge.wa": ("compiler", "the walk of 2.8 m leaves the exploration area"),
    "ghost_door_heavy_crate.wa": (
        "selfcheck",
        "the walk is stopped before it passes shed_door_1 (door) in the clean world too",
    ),
    "clean_scene_floats.wa": ("compiler", "floats 0.50 m above the ground in the clean scene"),
    "float_too_small.wa": ("selfcheck", "too small to see"),
    "existence_in_view.wa": ("selfcheck", "can happen while the auditor watches"),
    "visible_from_start.wa": ("selfcheck", "before the 'before' view"),
    "beyond_budget.wa": ("compiler", "more than the budget of 3"),
    # the shadow/lighting and material checks judge pixels, not the world's state
    "shadow_hidden_behind.wa": (
        "selfcheck",
        "this view shows 0 px where the sun puts its shadow and 0 px where the world draws it",
    ),
    "shadow_moved_a_few_cm.wa": ("compiler", "a shadow moved by less than 0.5 m is hard to see"),
    # issue 27: too subtle for an auditor who never saw the clean look, caught before any run
    "material_too_subtle.wa": (
        "compiler",
        "the `swap_material` anomaly is not evident in the perturbed world",
    ),
    # issue 9: the pixel rule (invisible changes), watched changes, consequences, multi-anomaly
    # the self-check's pixel rule caught these three as invisible changes; since E538 the compiler
    # refuses a change that is a symmetry of its target before anything runs
    "round_bin_turned.wa": ("compiler", "`rotate` cannot be seen: `bin_1` looks exactly as it did"),
    "crate_quarter_turn.wa": ("compiler", "`rotate` cannot be seen: `crate_1` looks exactly as it did"),
    "upside_down_bin.wa": ("compiler", "`invert` cannot be seen: `bin_1` looks exactly as it did"),
    # ... and one it cannot judge (the pallet carries a cup), left to the pixel rule
    "pallet_half_turn.wa": ("selfcheck", "invisible change: at no evidence view do pallet_1"),
    "copy_inside_original.wa": ("selfcheck", "the copy stands (almost) where the original is"),
    "copy_behind_original.wa": (
        "selfcheck",
        "invisible change: at no evidence view do crate_1, crate_1_copy",
    ),
    "recolor_to_own_colour.wa": ("compiler", "the `recolor` anomaly is not evident in the perturbed world"),
    "red_crate_turns_red.wa": ("compiler", "the `recolor` anomaly is not evident in the perturbed world"),
    # caught by the compiler since issue 27: a cup 1.2x its size is no defect to an auditor who never saw it
    "cup_grows_far.wa": ("compiler", "the `scale` anomaly is not evident in the perturbed world on its own"),
    # caught by the compiler since E536 (the perturbed world's objects may not interpenetrate)
    "spawn_bottle_inside_crate.wa": ("compiler", "`bottle_9` interpenetrates `crate_1`"),
    "spawn_knocks_barrels.wa": ("compiler", "`box_9` interpenetrates `barrel_1`"),
    "benign_barrel_pushed.wa": ("compiler", "`barrel_4` interpenetrates `barrel_3`"),
    "multi_second_invisible.wa": ("compiler", "`rotate` cannot be seen: `bin_1` looks exactly as it did"),
    "multi_second_never_fires.wa": (
        "selfcheck",
        "anomaly 2 (`hide bin_1`): trigger: the revisit trigger never fired",
    ),
}

_caught: dict[str, bool] = {}
CASES.update(COMPILER_CASES)


def _catch(name: str, tmp_path) -> tuple[str, str]:
    """(who caught it, the message) for one broken task: 'compiler', 'selfcheck' or 'nobody'."""
    result = build([BROKEN / "tasks" / name], BROKEN, tmp_path / "out")
    if result.diagnostics:
        return "compiler", "\n".join(d.message for d in result.diagnostics)
    (bundle,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    res = check_bundle(bundle)
    if res.passed:
        return "nobody", ""
    return "selfcheck", "\n".join(res.reasons)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_broken_task_is_caught_with_a_precise_message(name, tmp_path):
    who, words = CASES[name]
    caught_by, message = _catch(name, tmp_path)
    _caught[name] = caught_by == who and words in message
    assert caught_by == who, f"{name}: expected the {who} to catch it, got {caught_by}: {message}"
    assert words in message, f"{name}: message lacks {words!r}:\n{message}"


def test_recall_on_the_broken_suite(capsys):
    if len(_caught) < len(CASES):
        pytest.skip("run together with the per-task tests (it reports their results)")
    caught = sum(_caught.values())
    with capsys.disabled():
        by = {
            w: sum(1 for n, (who, _) in CASES.items() if who == w and _caught[n])
            for w in ("compiler", "selfcheck")
        }
        total = {w: sum(1 for who, _ in CASES.values() if who == w) for w in ("compiler", "selfcheck")}
        print(
            f"\nvalidator recall on the broken suite: {caught}/{len(CASES)} = {caught / len(CASES):.0%} "
            f"(compiler {by['compiler']}/{total['compiler']}, self-check {by['selfcheck']}/{total['selfcheck']})"
        )
    assert caught == len(CASES)
