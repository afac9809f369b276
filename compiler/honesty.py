"""Checks between passes 6 and 7: an anomaly changes no excluded object, and nothing the
auditor is told gives it away.

* E613: an anomaly that changes (targets, or has an effect on) an object the scene marks
  `benign` — a deliberate oddity that evaluation excludes — cannot be scored.
* E540: the scene description, the hint or an interactive object's name names a target
  together with a defect term of its category (`wac.compiler.giveaway`).
  An object only the faulty world has (spawned, anachronistic, extra) is given away by its name
  alone when no clean object is called that.
* W541: the task id does the same, or names a scene-wide anomaly's defect alone
  (`meadow_strobing_daylight`).  Task ids reach the auditor (context.json, the bundle
  directory) unless the build is sealed, so this is a warning that `--strict` makes an error;
  the shipped corpus gives neutral ids and builds clean with `--strict`.
"""

from __future__ import annotations

import re

from wac.bundle import model as B
from wac.compiler import nodes as N
from wac.compiler.anomalies import Lowered
from wac.compiler.assemble import Built
from wac.compiler.diagnostics import Collector
from wac.compiler.giveaway import Finding, Target, find_giveaways, find_new_names, find_terms, words
from wac.compiler.spans import Span
from wac.taxonomy.registry import registry


def check_benign(
    built: Built, anomalies: tuple[N.Anomaly, ...], lowered: list[Lowered], diag: Collector
) -> None:
    benign = {b.object: b.reason for b in built.scene.benign}
    if not benign:
        return
    for a, low in zip(anomalies, lowered, strict=True):
        changed = list(dict.fromkeys([*low.targets, *(e.target for e in low.effects if e.target)]))
        for oid in changed:
            if oid not in benign:
                continue
            span = next((n.span for n in a.operand if n.text == oid), a.span)
            reason = f" ({benign[oid]})" if benign[oid] else ""
            diag.error(
                "E613",
                f"`{low.spec.name}` changes `{oid}`, which the scene marks `benign`{reason}",
                span,
                f"benign objects are excluded from evaluation, so a defect there is never scored; "
                f"pick another target or drop `benign {oid}` from the scene",
            )


def _targets(built: Built, lowered: list[Lowered], materials: dict[str, B.Material]) -> list[Target]:
    reg = registry()
    out = []
    for low in lowered:
        cat = reg.category(low.category)
        names: list[tuple[str, str]] = []
        clean: set[str] = set()
        for tid in low.targets:
            o = built.objects.get(tid) or next((n for n in low.new_objects if n.id == tid), None)
            if o is None:
                continue
            names += [(n, o.name) for n in (o.name, *o.synonyms, tid)]
            clean |= set(words(tid)) | set(words(o.prefab or "")) | set(words(o.kind))
            for p in o.parts:
                m = materials.get(p.material)
                clean |= set(words(p.material.split("~")[0]))
                if m is not None:
                    clean |= set(words(m.category))
        out.append(Target(tuple(names), tuple(low.spec.defect_terms + cat.defect_terms), frozenset(clean)))
    return out


def check_giveaway(
    task: N.TaskDecl,
    scene: N.SceneDecl,
    built: Built,
    lowered: list[Lowered],
    context: B.AgentContext,
    materials: dict[str, B.Material],
    diag: Collector,
) -> None:
    targets = _targets(built, lowered, materials)
    desc = task.body.setting("description") or scene.body.setting("description")
    hint = task.body.setting("hint")
    texts = [("the scene description", context.scene_description, False, desc.span if desc else task.span)]
    if hint is not None and context.hint:
        texts.append(("the hint", context.hint, False, hint.span))
    # an interactive object's name reaches the agent through `interact` ("you try to use the …")
    for name in sorted({o.name for o in built.scene.objects if o.interactions}):
        decl = next(
            (built.things[o.id] for o in built.scene.objects if o.name == name and o.id in built.things), None
        )
        texts.append(("an interactive object's name", name, True, decl.span if decl else task.span))
    new, clean = _new_names(built, lowered)
    for where, text, whole, span in texts:
        found = find_giveaways([(where, text, whole)], targets) or find_new_names(
            [(where, text, whole)], new, clean
        )
        for f in found:
            diag.error("E540", _message(f), span, _hint(f))
    if (built.task_settings or {}).get("example", {}).get("flag"):
        return  # a demonstration is named for its category and shown as such
    the_id = [("the task id", task.name, True)]
    found = find_giveaways(the_id, targets) or find_new_names(the_id, new, clean)
    for f in found:
        diag.warn("W541", _message(f), task_name_span(task), _hint(f))
    if found:
        return
    id_words = words(task.name)
    for low in lowered:  # an id may name the defect alone: `market_invisible_wall`, `factory_floor_hole`
        op = words(low.spec.name)
        if any(id_words[i : i + len(op)] == op for i in range(len(id_words) - len(op) + 1)):
            diag.warn(
                "W541",
                f'the task id gives the anomaly away: "{task.name}" names its operator ({low.spec.name})',
                task_name_span(task),
                "the auditor reads the task id: rename the task so that its id does not name the defect, "
                "or seal the build",
            )
            return
    reg = registry()
    scene_wide = [
        t
        for low in lowered
        if not low.targets
        for t in low.spec.defect_terms + reg.category(low.category).defect_terms
    ]
    for f in find_terms(the_id, scene_wide)[:1]:  # a scene-wide anomaly (no target) named by its defect
        diag.warn("W541", _message(f), task_name_span(task), _hint(f))


def _new_names(built: Built, lowered: list[Lowered]) -> tuple[list[tuple[str, str]], list[str]]:
    """Names of the objects only the perturbed world has, and what the clean scene's objects are
    called (names, synonyms, prefab kinds)."""
    new = [(n, o.name) for low in lowered for o in low.new_objects for n in (o.name, *o.synonyms, o.id)]
    clean = [n for o in built.objects.values() for n in (o.name, *o.synonyms, o.prefab or "", o.kind) if n]
    return new, clean


def _message(f: Finding) -> str:
    if not f.term:
        return f'{f.where} gives the anomaly away: "{f.sentence}" names {f.name}, which only the faulty world has'
    if not f.name:
        return f'{f.where} gives the anomaly away: "{f.sentence}" names the defect ({f.term}) of a scene-wide anomaly'
    return f'{f.where} gives the anomaly away: "{f.sentence}" names the target ({f.name}) and its defect ({f.term})'


_FIXES = {
    "the scene description": "describe the scene without saying what is wrong with the {name}",
    "the hint": "hint at the kind of defect without naming the {name}",
    "an interactive object's name": "name the object for what it is, not for its defect",
    "the task id": "rename the task so that its id does not name both the {name} and its defect, or seal the build",
}


def _hint(f: Finding) -> str:
    if not f.name:
        return f"the auditor reads {f.where}: name the place, not what goes wrong in it"
    if not f.term:
        return f"the auditor reads {f.where}: leave out the {f.name}, which the clean scene does not have"
    return f"the auditor reads {f.where}: " + _FIXES[f.where].format(name=f.name)


def task_name_span(task: N.TaskDecl) -> Span:
    sp = task.span
    line = sp.source.line(sp.line)
    m = re.compile(rf"task\s+({re.escape(task.name)})\b").search(line, sp.column - 1)
    if m is None:
        return sp
    return Span(sp.source, sp.line, m.start(1) + 1, sp.line, m.end(1) + 1)
