"""Judge prompt variants: `c4` (the paper's C.4 rules, wac's default) and `reference`.

`reference` adds the extra rules of the reference implementation's judge instructions
(WorldAuditBench `judge/judge_prompt.md` and `docs/binary-judge.md`) to C.4, as numbered rules
before the reply format: hedged guesses, text quoted from the in-context demonstration,
unclear screenshots and reports of normal behaviour.  docs/evaluation.md sets them side by side.
"""

from __future__ import annotations

from wac.errors import UsageError

PROMPTS = ("c4", "reference")

REFERENCE_RULES = (
    "8. Guesses do not count. A finding that lists several possible problems, or hedges between "
    'objects or defects without committing to one ("maybe the bench floats, or the wall is '
    'missing, or the light is off"), does not identify the target even if one guess is right. A '
    "committed finding marked suspect counts like a confirmed one.",
    "9. Text quoted or paraphrased from the in-context demonstration (its scene, objects or "
    "reference answer) is not a finding about the audited scene. Assign 0 when the matching finding "
    "only restates the demonstration.",
    "10. Unclear, dark, blurred or low-resolution screenshots are not by themselves evidence against "
    "a finding: when the images neither show nor contradict the target, score the text and say in "
    "the reason that the images were inconclusive.",
    "11. Describing the rubric's expected, normal behaviour as a bug, or declaring the target normal, "
    "does not identify the target; neither does a report that the scene has no bug. Bugs reported in "
    "parts of the scene that behave normally do not cancel a valid target finding (rule 2).",
)


def judge_prompt(base: str, name: str = "c4") -> str:
    """The judge's system prompt: `base` (C.4) for `c4`, with the reference's extra rules for `reference`."""
    if name == "c4":
        return base
    if name != "reference":
        raise UsageError(f"unknown judge prompt {name!r}; prompts are: {', '.join(PROMPTS)}")
    head, sep, tail = base.partition("\n\nReply with only")
    if not sep:
        raise ValueError("the C.4 prompt lost its reply-format paragraph")
    return head + "\n" + "\n".join(REFERENCE_RULES) + sep + tail
