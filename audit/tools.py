"""The auditor's tools (the paper's Table 6), shaped like the reference harness's.

Names, arguments and ranges follow UCSB-NLP-Chang/WorldAuditBench `agent/tools.py` and
`agent/vlm/mcp/server.py`, so agents and prompts written for it run against wac unchanged.
Schemas are JSON Schema (draft 2020-12) objects; `openai_tools()` wraps them in the OpenAI
function-calling format and the MCP server publishes them as tool input schemas.
"""

from __future__ import annotations

from dataclasses import dataclass

from wac.bundle.actions import LOOK_DEG, MOVE_M, TURN_DEG, WAIT_S

from .ledger import CATEGORIES
from .limits import (
    MAX_CODE_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_NOTE_CHARS,
    MAX_SUMMARY_CHARS,
)

ENV_ACTIONS = ("move", "turn", "look", "interact", "wait")
MAX_INSPECT = 4
MAX_HISTORY_SPAN = 40


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict
    env_action: bool = False  # costs one step of the action budget and advances simulated time

    def openai(self) -> dict:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def _obj(properties: dict | None = None, required: tuple[str, ...] = ()) -> dict:
    return {
        "type": "object",
        "properties": properties or {},
        "required": list(required),
        "additionalProperties": False,
    }


_REFS = {
    "type": "array",
    "items": {"type": "string", "pattern": r"^a\d+(\.f\d+)?$"},
    "description": "frame refs like a12 (final view of action 12) or a12.f3 (film frame 3 of action 12)",
}

LIVE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "observe",
        "Start the episode or re-read the current observation: the task, the current view, "
        "the remaining budget, your notes and the bug list. Does not advance time or use budget.",
        _obj(),
    ),
    ToolSpec(
        "read_example",
        "Read the in-context demonstration for this task's anomaly type (definition, "
        "1-3 images, reference answer). No environment action or time passes.",
        _obj(
            {
                "code": {
                    "type": "string",
                    "maxLength": MAX_CODE_CHARS,
                    "description": "omit to read the assigned example",
                }
            }
        ),
    ),
    ToolSpec(
        "move",
        "Walk in a straight line. Stops early if something blocks the way.",
        _obj(
            {
                "distance_m": {
                    "type": "number",
                    "minimum": MOVE_M[0],
                    "maximum": MOVE_M[1],
                    "description": "metres to walk",
                },
                "direction": {"type": "string", "enum": ["forward", "back"]},
            },
            ("distance_m", "direction"),
        ),
        env_action=True,
    ),
    ToolSpec(
        "turn",
        "Turn in place.",
        _obj(
            {
                "degrees": {
                    "type": "number",
                    "minimum": TURN_DEG[0],
                    "maximum": TURN_DEG[1],
                    "description": "positive = turn RIGHT, negative = LEFT",
                }
            },
            ("degrees",),
        ),
        env_action=True,
    ),
    ToolSpec(
        "look",
        "Tilt the view up or down.",
        _obj(
            {
                "degrees": {
                    "type": "number",
                    "minimum": LOOK_DEG[0],
                    "maximum": LOOK_DEG[1],
                    "description": "positive = look DOWN, negative = UP",
                }
            },
            ("degrees",),
        ),
        env_action=True,
    ),
    ToolSpec(
        "interact",
        "Press/use/open what you are aiming at (must be within about 3 m). "
        "Use wait afterwards to observe delayed changes.",
        _obj(),
        env_action=True,
    ),
    ToolSpec(
        "wait",
        "Stand still and observe for a while (watch how things behave over time).",
        _obj({"seconds": {"type": "number", "minimum": WAIT_S[0], "maximum": WAIT_S[1]}}, ("seconds",)),
        env_action=True,
    ),
    ToolSpec(
        "inspect",
        f"Bring archived frames back into view at full resolution (up to {MAX_INSPECT} refs), "
        "optionally zooming into a region of them.",
        _obj(
            {
                "refs": {**_REFS, "minItems": 1, "maxItems": MAX_INSPECT},
                "region": {
                    "type": "array",
                    "items": {"type": "number", "minimum": 0, "maximum": 1},
                    "minItems": 4,
                    "maxItems": 4,
                    "description": "optional [x0, y0, x1, y1] in 0..1 image coordinates to crop and zoom",
                },
            },
            ("refs",),
        ),
    ),
    ToolSpec(
        "history",
        f"Re-read what you did and observed in a range of earlier actions (text only, at most "
        f"{MAX_HISTORY_SPAN} actions; use inspect for the images).",
        _obj(
            {
                "from_action": {"type": "integer", "minimum": 0},
                "to_action": {"type": "integer", "minimum": 0},
            },
            ("from_action", "to_action"),
        ),
    ),
    ToolSpec(
        "write_notes",
        "Append one short entry to your notes (durable memory that survives context "
        "compaction; cite frame refs like a12). observe shows the notes.",
        _obj({"text": {"type": "string", "minLength": 1, "maxLength": MAX_NOTE_CHARS}}, ("text",)),
    ),
    ToolSpec(
        "flag_bug",
        "Report a bug at your current position. Returns its id.",
        _obj(
            {
                "description": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_DESCRIPTION_CHARS,
                    "description": "what is wrong, which object, how you know",
                },
                "category": {"type": "string", "enum": list(CATEGORIES)},
                "status": {"type": "string", "enum": ["suspect", "confirmed"]},
                "evidence": _REFS,
            },
            ("description", "category", "status"),
        ),
    ),
    ToolSpec(
        "update_bug",
        "Revise a reported bug: change its description, status (suspect / confirmed / "
        "retracted) or evidence.",
        _obj(
            {
                "id": {"type": "string", "maxLength": 16},
                "description": {"type": "string", "maxLength": MAX_DESCRIPTION_CHARS},
                "status": {"type": "string", "enum": ["suspect", "confirmed", "retracted"]},
                "evidence": _REFS,
            },
            ("id",),
        ),
    ),
    ToolSpec("list_bugs", "List the bugs reported so far.", _obj()),
    ToolSpec(
        "done",
        "Finish the inspection.",
        _obj({"summary": {"type": "string", "maxLength": MAX_SUMMARY_CHARS}}, ("summary",)),
    ),
)


def live_tools(*, example: bool = True) -> tuple[ToolSpec, ...]:
    """The interactive paradigm's tools (without `read_example` when the example is ablated)."""
    return tuple(t for t in LIVE_TOOLS if example or t.name != "read_example")


def review_tools(*, example: bool = True) -> tuple[ToolSpec, ...]:
    """The two-stage analyser's tools: everything but the environment actions."""
    return tuple(t for t in live_tools(example=example) if t.name not in ENV_ACTIONS)


def openai_tools(specs) -> list[dict]:
    return [t.openai() for t in specs]
