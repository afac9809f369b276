"""What an interaction may say: the object the agent sees and the attempt, never the result.

The same words in the clean and the perturbed world (docs/auditing.md "What tool texts may
reveal"): whether a door opened or a lamp lit is for the frames to show.
"""

from __future__ import annotations

ATTEMPTS = {
    "open": "you try to open or close the {name}",
    "toggle": "you press the {name}'s switch",
    "push": "you push the {name}",
    "pick_up": "you reach for the {name}",
}


def attempt_text(spec) -> str:
    """An interaction's outcome text: the object seen under the crosshair and the attempt (docs/auditing.md)."""
    if spec is None:
        return "nothing to interact with within reach"
    if not spec.interactions:
        return f"the {spec.name} cannot be used"
    return ATTEMPTS.get(spec.interactions[0], "you use the {name}").format(name=spec.name)
