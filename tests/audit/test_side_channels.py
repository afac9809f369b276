"""Side channels (issue 14): what the tools say may differ between the clean and the perturbed world
only where the difference is a perceivable physical outcome, from the documented list below
(docs/auditing.md "What tool texts may reveal").  Each task is run with the same scripted
actions (its self-check's exposing actions, then an interaction and a wait) in both worlds.

Allowed differences, each normalised away before the texts are compared:

1. how far a move went and why it stopped: "moved A m of B m", "(blocked)", "(stopped at the edge
   of the area)", "; dropped X m" (the frame shows where the agent stands);
2. the pose and time that follow from it: position, heading, pitch, simulated time;
3. what an interaction names: the object the agent sees under the crosshair, or that there is none
   ("nothing to interact with within reach"), since the frame shows it.

Anything else that differs (a mechanism's result, an object named that the frame does not show, a
rubric word) is a side channel and fails the test.  CI replays `corpus_sample` (one task per
category, one per interaction mechanism); `WAC_FULL_CORPUS=1` replays every shipped task.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from corpus_sample import MECHANISMS, corpus_sample

from wac.audit.session import AuditSession, SessionOptions
from wac.runtime.perception import ATTEMPTS

SMALL = SessionOptions(example=False, width=48, height=36)
MAX_SCRIPT = 10  # exposing actions replayed per task (CI-sized)

_NUM = r"-?\d+(?:\.\d+)?"
_RULES = (
    (re.compile(rf"moved {_NUM} m of ({_NUM}) m"), r"moved <d> m of \1 m"),
    (re.compile(r" \((?:blocked|stopped at the edge of the area)\)"), ""),
    (re.compile(rf"; dropped {_NUM} m"), ""),
    (re.compile(r"; respawned at the start"), ""),  # the view jumps back to the start: perceivable
    (re.compile(r"frames: a(\d+)\.f1\.\.a\1\.f\d+ \(film\)"), r"frames: a\1.f1..<n> (film)"),
    (re.compile(rf"pos \(x={_NUM}, y={_NUM}\) yaw {_NUM} pitch {_NUM}"), "<pose>"),
    (re.compile(rf"heading {_NUM} deg|pitch {_NUM} deg"), "<angle>"),
    (re.compile(rf"sim \+{_NUM}s|t={_NUM} s"), "<time>"),
)


def _interaction_forms(names: list[str]) -> re.Pattern:
    alts = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))
    verbs = [re.escape(t).replace(r"\{name\}", f"(?:{alts})") for t in ATTEMPTS.values()]
    forms = ["nothing to interact with within reach", f"the (?:{alts}) cannot be used", *verbs]
    forms.append(f"you use the (?:{alts})")
    return re.compile("|".join(f"(?:{f})" for f in forms))


def normalise(text: str, interaction: re.Pattern) -> str:
    for pat, rep in _RULES:
        text = pat.sub(rep, text)
    return interaction.sub("<interaction>", text)


def _script(bundle: Path) -> list[tuple[str, dict]]:
    plan = json.loads((bundle / "selfcheck.json").read_text())
    steps = [(s["action"], dict(s["args"])) for s in plan["steps"] if s["action"] != "mark"][:MAX_SCRIPT]
    return steps + [("interact", {}), ("wait", {"seconds": 1.0})]


def _texts(bundle: Path, variant: str, script) -> list[str]:
    from dataclasses import replace

    with AuditSession(bundle, None, replace(SMALL, variant=variant)) as s:
        out = [s.call("observe").text]
        for name, args in script:
            out.append(s.call(name, args).text)
        return out


def _names(bundle: Path) -> list[str]:
    task = json.loads((bundle / "task.json").read_text())
    objs = list(task["scene"]["objects"])
    objs += [e["object"] for a in task["anomalies"] for e in a["effects"] if e.get("object")]
    return [n for o in objs for n in (o["name"], *o.get("synonyms", ()))]


def _eval_tasks(built: Path) -> list[str]:
    index = json.loads((built / "index.json").read_text())["tasks"]
    return [e["id"] for e in index if not e.get("example")]


def test_tool_texts_differ_only_by_perceivable_outcomes(built):
    """On `corpus_sample` (one task per category, one per interaction mechanism; every shipped
    task with `WAC_FULL_CORPUS=1`)."""
    leaks = []
    for tid in corpus_sample(built, MECHANISMS):
        bundle = built / tid
        script = _script(bundle)
        form = _interaction_forms(_names(bundle))
        clean = [normalise(t, form) for t in _texts(bundle, "clean", script)]
        pert = [normalise(t, form) for t in _texts(bundle, "perturbed", script)]
        for i, (c, p) in enumerate(zip(clean, pert, strict=True)):
            if c != p:
                what = "observe" if i == 0 else f"{script[i - 1][0]} {script[i - 1][1]}"
                leaks.append(f"{tid}: {what}: clean {c!r} / perturbed {p!r}")
    assert not leaks, "tool texts reveal the perturbation:\n" + "\n".join(leaks[:20])


@pytest.mark.parametrize("outcome", ["nothing happens", "cannot be used", "opens", "switches on"])
def test_the_normaliser_keeps_mechanism_results_apart(outcome):
    """The allowed list must not swallow the side channel it guards against."""
    form = _interaction_forms(["door"])
    a = normalise("a1 interact -> you try to open or close the door | <pose>", form)
    b = normalise(f"a1 interact -> you try to use the door; {outcome} | <pose>", form)
    assert a != b


def test_the_task_text_does_not_single_out_a_target(built):
    """Tasks on one scene read alike: nothing in the initial input depends on which object is the target."""
    by_scene: dict[str, dict[str, str]] = {}
    for tid in _eval_tasks(built):
        task = json.loads((built / tid / "task.json").read_text())
        ctx = json.loads((built / tid / "agent" / "context.json").read_text())
        names = sorted({n for n in _names(built / tid) if n})
        from wac.audit.session import task_text
        from wac.bundle.model import AgentContext

        text = task_text(AgentContext.model_validate(ctx), None, SessionOptions(hint=False))
        mentioned = tuple(n for n in names if re.search(rf"\b{re.escape(n)}\b", text, re.I))
        by_scene.setdefault(task["scene"]["name"], {})[tid] = mentioned
        targets = {x for a in task["anomalies"] for x in a["targets"]}
        objs = {o["id"]: o["name"] for o in task["scene"]["objects"]}
        for t in targets:
            assert objs.get(t) not in set(ctx.get("interactive_objects") or ()) or "interact with" not in text
    for scene, tasks in by_scene.items():
        assert len(set(tasks.values())) <= 1, f"tasks on {scene} mention different objects: {tasks}"


def test_the_interactive_object_list_does_not_single_out_targets(built):
    """No list of interactive objects reaches the agent.  Built per task from its scene, it singled
    out targets: reef_dark_floodlight's only interactive object was its target (the survey light),
    and a task-level `interact` on a target lists it for that task alone.  So the bundle's agent
    context (agent/context.json and context.md, which other harnesses may show) carries none, the
    same for every task on a scene whichever object the anomaly changes, and wac's own task text
    (the same in both worlds, see test_tool_texts_differ_only_by_perceivable_outcomes) has none."""
    from wac.audit.session import task_text
    from wac.bundle.model import AgentContext

    lists: dict[tuple, dict[str, tuple[str, ...]]] = {}
    would_single_out, targeted = [], 0
    for tid in _eval_tasks(built):
        task = json.loads((built / tid / "task.json").read_text())
        ctx = json.loads((built / tid / "agent" / "context.json").read_text())
        objects = task["scene"]["objects"]
        listed = tuple(ctx["interactive_objects"])
        assert listed == (), tid
        assert "nteractive objects" not in (built / tid / "agent" / "context.md").read_text(), tid
        text = task_text(AgentContext.model_validate(ctx), 40, SessionOptions())
        assert "nteractive objects" not in text, tid
        lists.setdefault((task["scene"]["name"], frozenset(o["id"] for o in objects)), {})[tid] = listed
        # what a per-task list built from the scene would have said
        usable = {o["name"] for o in objects if o.get("interactions")}
        names = {o["id"]: o["name"] for o in objects}
        targets = {names[t] for a in task["anomalies"] for t in a["targets"] if t in names}
        targeted += bool(usable & targets)
        if usable and usable <= targets:
            would_single_out.append(tid)
    differ = {k[0]: v for k, v in lists.items() if len(set(v.values())) > 1}
    assert not differ, f"tasks on one scene list different interactive objects: {differ}"
    # the reason for the rule is still in the corpus: lists built per task would name targets alone
    assert would_single_out and targeted >= 5
