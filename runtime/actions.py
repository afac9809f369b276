"""The environment actions: names, arguments and ranges of the reference harness, parsed and checked.

move(distance_m, direction forward|back), turn(degrees, positive = right), look(degrees, positive =
down), interact(), wait(seconds), with the ranges of `wac.bundle.actions`
(UCSB-NLP-Chang/WorldAuditBench agent/tools.py).  Bad actions raise `ActionError` (a UsageError).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wac.bundle.actions import LOOK_DEG, MOVE_M, TURN_DEG, WAIT_S
from wac.errors import ActionError, BudgetExhausted  # noqa: F401 - re-exported
from wac.suggest import did_you_mean

NAMES = ("move", "turn", "look", "interact", "wait")


@dataclass(frozen=True)
class Action:
    """One environment action, e.g. Action("move", {"distance_m": 2, "direction": "forward"})."""

    name: str
    args: tuple[tuple[str, object], ...] = ()

    @staticmethod
    def of(name: str, **args) -> Action:
        return Action(name, tuple(sorted(args.items())))

    @property
    def kwargs(self) -> dict:
        return dict(self.args)

    @staticmethod
    def parse(text: str) -> Action:
        """'move 3', 'move 2 back', 'turn -45', 'look 20', 'interact', 'wait 2'."""
        words = text.strip().split()
        if not words:
            raise ActionError("empty action")
        name, rest = words[0].lower(), words[1:]
        try:
            if name == "move":
                direction = "forward"
                nums = []
                for w in rest:
                    if w in ("forward", "back", "backward"):
                        direction = "back" if w.startswith("back") else "forward"
                    else:
                        nums.append(float(w.removesuffix("m")))
                if len(nums) != 1:
                    raise ActionError(f"'{text}': move takes one distance in metres")
                return Action.of("move", distance_m=nums[0], direction=direction)
            if name in ("turn", "look"):
                if len(rest) != 1:
                    raise ActionError(f"'{text}': {name} takes one angle in degrees")
                return Action.of(name, degrees=float(rest[0].removesuffix("deg")))
            if name == "wait":
                if len(rest) != 1:
                    raise ActionError(f"'{text}': wait takes one duration in seconds")
                return Action.of("wait", seconds=float(rest[0].removesuffix("s")))
            if name == "interact":
                if rest:
                    raise ActionError(f"'{text}': interact takes no arguments")
                return Action.of("interact")
        except ValueError as exc:
            raise ActionError(f"'{text}': {exc}") from None
        raise ActionError(unknown_action(name))

    def describe(self) -> str:
        a = self.kwargs
        if self.name == "move":
            return f"move {a['direction']} {float(a['distance_m']):.2f} m"
        if self.name == "turn":
            d = float(a["degrees"])
            return f"turn {abs(d):.0f} deg {'right' if d >= 0 else 'left'}"
        if self.name == "look":
            d = float(a["degrees"])
            return f"look {abs(d):.0f} deg {'down' if d >= 0 else 'up'}"
        if self.name == "wait":
            return f"wait {float(a['seconds']):.1f} s"
        return self.name


def unknown_action(name: str) -> str:
    """The message for an action name that is none of `NAMES` (only action names are suggested)."""
    hint = did_you_mean(str(name).lower(), NAMES)
    return f"unknown action {name!r}{'; ' + hint if hint else ''} (actions: {', '.join(NAMES)})"


def validate(action: Action) -> Action:
    """Check names and ranges (the reference harness's); raise ActionError with a clear message."""
    a = action.kwargs

    def num(key: str, lo: float, hi: float) -> float:
        if key not in a:
            raise ActionError(f"{action.name} needs '{key}'")
        try:
            v = float(a[key])
        except (TypeError, ValueError):
            raise ActionError(f"{action.name}: '{key}' must be a number, got {a[key]!r}") from None
        if not math.isfinite(v) or v < lo - 1e-9 or v > hi + 1e-9:
            raise ActionError(f"{action.name}: '{key}' must be between {lo:g} and {hi:g}, got {v:g}")
        return v

    extra = set(a) - {
        "move": {"distance_m", "direction"},
        "turn": {"degrees"},
        "look": {"degrees"},
        "wait": {"seconds"},
        "interact": set(),
    }.get(action.name, set())
    if action.name not in NAMES:
        raise ActionError(unknown_action(action.name))
    if extra:
        raise ActionError(f"{action.name}: unexpected argument(s) {', '.join(sorted(extra))}")
    if action.name == "move":
        d = num("distance_m", *MOVE_M)
        direction = a.get("direction", "forward")
        if direction not in ("forward", "back"):
            raise ActionError(f"move: direction must be 'forward' or 'back', got {direction!r}")
        return Action.of("move", distance_m=d, direction=direction)
    if action.name in ("turn", "look"):
        return Action.of(
            action.name, degrees=num("degrees", *(TURN_DEG if action.name == "turn" else LOOK_DEG))
        )
    if action.name == "wait":
        return Action.of("wait", seconds=num("seconds", *WAIT_S))
    return Action.of("interact")


def coerce(action) -> Action:
    """An `Action` from an Action, text ('move 2 back'), a dict {'action'|'name': ..., args} or (name, args)."""
    if isinstance(action, Action):
        return action
    if isinstance(action, str):
        return Action.parse(action)
    if isinstance(action, dict):
        d = dict(action)
        name = d.pop("action", None) or d.pop("name", None)
        if not isinstance(name, str):
            raise ActionError("an action dict needs 'action' (or 'name')")
        args = d.pop("args", None)
        if isinstance(args, dict):
            d.update(args)
        return Action.of(name, **d)
    if isinstance(action, tuple) and len(action) == 2 and isinstance(action[0], str):
        return Action.of(action[0], **dict(action[1] or {}))
    raise ActionError(f"cannot read an action from {action!r}")
