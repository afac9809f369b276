"""What `interact` says is what the agent could perceive (issue 14): it names only the object seen
under the crosshair, never one the perturbed world hides (the hidden bollard that kept its
collision was "the bollard cannot be used"), and says the attempt, never a mechanism's result, so
a dead or delayed mechanism reads the same as a working one (it answered "nothing happens")."""

from __future__ import annotations

import pytest
from rt_scenes import anomaly, box, door, lamp, task

from wac.bundle.model import SetMechanism, SetVisible


def _pair(make_env, objects, effects, targets):
    t = task(objects, anomalies=[anomaly(effects, targets)])
    return make_env(t, "clean"), make_env(t, "perturbed")


@pytest.mark.parametrize("interactive", [False, True])
def test_interact_never_names_an_object_the_perturbed_world_hides(make_env, interactive):
    kw = {"interactions": ("push",)} if interactive else {}
    bollard = box("bollard_1", (0.4, 0.4, 2.0), (1.2, 0.0, 0.0), material="metal", name="bollard", **kw)
    hide = SetVisible(target="bollard_1", visible=False, keeps_collision=True)
    c, p = _pair(make_env, [bollard], [hide], ["bollard_1"])
    seen = c.step("interact").outcome
    assert "bollard" in seen  # in the clean world it stands in view, within reach
    hidden = p.step("interact").outcome
    assert "bollard" not in hidden and hidden == "nothing to interact with within reach"
    assert "blocked" in p.step("move 2").outcome  # its collision is still there: the frame shows that


@pytest.mark.parametrize(("mechanism", "value"), [("dead", None), ("delay", 2.0), ("jam", 0.2)])
def test_a_broken_mechanism_reads_like_a_working_one(make_env, mechanism, value):
    eff = SetMechanism(target="door_1", mechanism=mechanism, value=value)
    c, p = _pair(make_env, [door("door_1", (1.8, 0.0, 0.0))], [eff], ["door_1"])
    clean, perturbed = c.step("interact").outcome, p.step("interact").outcome
    assert clean == perturbed == "you try to open or close the door"
    for word in ("nothing happens", "cannot", "stuck", "jammed", "delay", "broken", "does not"):
        assert word not in perturbed
    # and the state does differ: the text is not hiding a no-op
    assert c.world.get("door_1").open_frac != p.world.get("door_1").open_frac or mechanism == "delay"


def test_a_dark_lamp_switch_reads_like_a_working_one(make_env):
    eff = SetMechanism(target="lamp_1", mechanism="dead")
    c, p = _pair(make_env, [lamp("lamp_1", (1.2, 0.0, 0.0))], [eff], ["lamp_1"])
    assert c.step("interact").outcome == p.step("interact").outcome == "you press the street lamp's switch"
