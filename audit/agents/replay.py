"""`replay:FILE`: runs a scripted list of actions, flags and a final `done`.

The script is one item per line or `;`-separated items, in the `wac play --actions` syntax
("move 2 forward", "move 1.5 back", "turn -30", "look 20", "wait 2", "interact"), plus:

    flag CATEGORY [suspect|confirmed] DESCRIPTION...   flag a bug (default status confirmed) citing
                                                       the latest frame as evidence
    note TEXT...                                       write_notes
    done SUMMARY...                                    finish (otherwise done is called at the end)

`#` starts a comment.  The whole script is checked when the agent is made, so a typo is a clear
error before any episode starts; at run time a refused action (e.g. an exhausted budget) is
logged by the session and the script goes on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .base import AgentError

FINAL_REF = re.compile(r"\b(a\d+) \(final\)")


@dataclass(frozen=True)
class Item:
    tool: str
    args: dict


def parse_script(text: str, where: str = "script") -> list[Item]:
    """Items of a replay script; AgentError (with the line number) for anything malformed."""
    from wac.audit.ledger import CATEGORIES
    from wac.runtime.actions import Action, ActionError, validate

    items: list[Item] = []
    for n, line in enumerate(text.splitlines(), start=1):
        for part in line.split("#", 1)[0].split(";"):
            part = part.strip()
            if not part:
                continue
            word, _, rest = part.partition(" ")
            word, rest = word.lower(), rest.strip()
            if word == "flag":
                category, _, rest = rest.partition(" ")
                status, _, desc = rest.strip().partition(" ")
                if status not in ("suspect", "confirmed"):
                    status, desc = "confirmed", rest.strip()
                if category not in CATEGORIES:
                    raise AgentError(
                        f"{where}:{n}: unknown category {category!r} in {part!r}; "
                        f"categories are: {', '.join(CATEGORIES)}"
                    )
                if not desc.strip():
                    raise AgentError(
                        f"{where}:{n}: flag needs a description: flag CATEGORY [STATUS] DESCRIPTION"
                    )
                items.append(
                    Item("flag_bug", {"category": category, "status": status, "description": desc.strip()})
                )
            elif word == "note":
                if not rest:
                    raise AgentError(f"{where}:{n}: note needs text")
                items.append(Item("write_notes", {"text": rest}))
            elif word == "done":
                items.append(Item("done", {"summary": rest or "Scripted replay finished."}))
            else:
                try:
                    action = validate(Action.parse(part))
                except ActionError as exc:
                    raise AgentError(f"{where}:{n}: {exc}") from None
                items.append(Item(action.name, action.kwargs))
    return items


class ReplayAgent:
    name = "replay"
    pipeline_check = False

    def __init__(
        self, arg: str | None = None, actions: str | None = None, seed: int | str = 0, **_ignored
    ) -> None:
        """`arg` is the script file (`replay:FILE`); `actions` gives the script inline instead."""
        if actions is not None:
            self.items = parse_script(str(actions), "actions")
        elif arg:
            path = Path(arg)
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise AgentError(f"replay: cannot read the script {arg}: {exc.strerror or exc}") from None
            self.items = parse_script(text, str(path))
        else:
            raise AgentError("the replay agent needs a script: replay:FILE")
        self.seed = int(seed)

    def run(self, session) -> None:
        session.call("observe")
        # the latest frame the agent was shown: the start view, or the last frame of a recording
        evidence = ["a0"] if session.paradigm == "interactive" else session.archive.refs()[-1:]
        for item in self.items:
            if session.done:
                break
            args = dict(item.args)
            if item.tool == "flag_bug" and evidence:
                args["evidence"] = list(evidence)
            res = session.call(item.tool, args)
            m = FINAL_REF.search(res.text)
            if m and not res.error:
                evidence = [m.group(1)]
        if not session.done:
            session.call("done", {"summary": "Scripted replay finished."})
