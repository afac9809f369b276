"""`oracle`: a PIPELINE CHECK that reads ground truth; its numbers are not an auditor's.

It replays the self-check plan's exposing actions (`selfcheck.json`, skipping the `mark`
pseudo-actions) and files the rubric's finding: for every rubric entry (the anchor first) a
confirmed bug whose description carries the target text, the object's name, the defect terms
and the inspection condition, with the entry's category, citing the frames of the plan's
captioned steps.  If the oracle does not pass the judge on a task, the compiler, runtime,
session or judge is broken, not an agent.  In a `ReviewSession` (two-stage) it cannot act, so it
cites the recorded frames that exist: the exposing steps' frames when the explorer made them
(an oracle explorer), else the last recorded ones.

`--agent-option explore=false` files the same findings without acting, citing the start view: a
correct text with no evidence behind it, the judge's evidence rule's test case (docs/evaluation.md).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .base import AgentError

FINAL_REF = re.compile(r"^(a\d+) ")
MAX_EVIDENCE = 4


def bundle_dir(session) -> Path:
    """The session's bundle directory (ground truth: only the oracle asks for it)."""
    for cand in (
        getattr(session, "bundle", None),
        getattr(getattr(session, "env", None), "bundle_dir", None),
    ):
        if cand:
            return Path(cand)
    out = getattr(session, "out", None)
    if out is not None and (Path(out) / "episode.json").is_file():
        return Path(json.loads((Path(out) / "episode.json").read_text(encoding="utf-8"))["bundle"])
    raise AgentError("the oracle needs the session's bundle directory (pass bundle=...)")


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def finding(entry) -> str:
    """A report of one rubric entry that names the object, the defect and the condition that shows it."""
    names = list(dict.fromkeys(entry.object_names))
    parts = [_sentence(entry.target)]
    if names:
        # the name alone: synonyms are often shared by the scene's other objects of the kind ("vehicle"
        # for each of eight cars), and a report naming many objects is not specific (audit/keyword.py)
        parts.append(f"Object: the {names[0]}.")
    if entry.defect_terms:
        parts.append(f"Defect: {', '.join(entry.defect_terms[:4])}.")
    if entry.inspection:
        insp = entry.inspection.strip()
        parts.append(f"Condition, observed when I did this: {insp[0].lower() + insp[1:]}")
        parts[-1] = _sentence(parts[-1])
    if entry.expected:
        parts.append(f"Expected instead: {_sentence(entry.expected)}")
    return " ".join(parts)


def _cap(refs: list[str]) -> list[str]:
    refs = list(dict.fromkeys(refs))
    return refs if len(refs) <= MAX_EVIDENCE else refs[:1] + refs[-(MAX_EVIDENCE - 1) :]


class OracleAgent:
    name = "oracle"
    pipeline_check = True
    reads_images = False  # acts on tool text only (poses, outcomes, refs)

    def __init__(
        self, seed: int | str = 0, bundle: str | None = None, explore: bool | str = True, **_ignored
    ) -> None:
        """`bundle` overrides where the rubric is read from (default: the session's bundle);
        `explore=false` files the findings from the start view without acting."""
        self.seed = int(seed)
        self.bundle = Path(bundle) if bundle else None
        if isinstance(explore, str):
            if explore.lower() not in ("true", "false", "yes", "no", "1", "0"):
                raise AgentError(f"explore must be true or false, got {explore!r}")
            explore = explore.lower() in ("true", "yes", "1")
        self.explore = explore

    def _replay(self, session) -> tuple[list[str], str]:
        """Run the plan's actions; the refs of its captioned steps and the latest frame ref."""
        steps = list(session.plan.steps)
        derived = getattr(session, "closer_steps", None)
        if session.options.closer_start and derived:  # `wac derive closer-start`: the rest of the route
            steps = list(derived)
        elif session.options.closer_start:  # the start is already the exposing view point
            first = next((i for i, s in enumerate(steps) if s.caption), 0)
            steps = steps[first:]
        current, captioned = "a0", []
        for s in steps:
            if s.action != "mark":
                res = session.call(s.action, dict(s.args))
                if res.error:
                    break
                m = FINAL_REF.match(res.text)
                current = m.group(1) if m else f"a{session.actions_used}"
            if s.caption:
                captioned.append(current)
        return captioned, current

    def _recorded(self, session) -> tuple[list[str], str]:
        """Review: the exposing steps' refs an oracle explorer would have made, where recorded."""
        have = session.archive.refs()
        n, want = 0, []
        for s in session.plan.steps:
            if s.action != "mark":
                n += 1
            if s.caption:
                want.append(f"a{n}")
        found = [r for r in want if r in have]
        return (found or have[-2:]), (have[-1] if have else "a0")

    def run(self, session) -> None:
        from wac.bundle.reader import Bundle
        from wac.errors import BundleError

        bundle = Bundle(self.bundle or bundle_dir(session))
        try:
            rubric = bundle.rubric()  # the pipeline-check agent reads ground truth on purpose
        except BundleError as exc:
            raise AgentError(f"the oracle cannot read its rubric: {exc}") from exc
        session.call("observe")
        if session.plan is None or not self.explore:
            captioned, last = [], "a0"
        elif any(t.env_action for t in session.tools):
            captioned, last = self._replay(session)
        else:
            captioned, last = self._recorded(session)
        entries = sorted(rubric.entries, key=lambda e: not e.anchor)
        for i, entry in enumerate(entries):
            # the plan exposes the anchor: its captioned frames; another entry cites no frame, so the
            # judge's evidence rule looks for the target in any frame of the episode (audit/evidence.py)
            evidence = _cap(captioned if captioned else [last]) if i == 0 else []
            session.call(
                "flag_bug",
                {
                    "description": finding(entry),
                    "category": entry.category,
                    "status": "confirmed",
                    "evidence": evidence,
                },
            )
        if not session.done:
            session.call(
                "done",
                {
                    "summary": f"PIPELINE CHECK (oracle): filed the rubric's "
                    f"{len(entries)} finding(s) after replaying the self-check plan."
                },
            )
