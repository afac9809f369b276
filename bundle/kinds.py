"""What a task's anomaly targets are, in the words an answer would use (bundle side: read from a
bundle's task.json).  The in-context example shown with a task must not share these with it
(wac.audit.examples), and `wac derive multi` keeps its draws from changing which example a task
gets (wac.compiler.derive)."""

from __future__ import annotations

PRIMITIVES = frozenset({"box", "cylinder", "sphere", "capsule", "cone", "mesh"})


def target_kinds(task: dict) -> frozenset[str]:
    """What a task's anomaly targets are, as words an answer would use: each target object's name,
    synonyms and prefab (not a bare shape), lower-cased.  `task` is a bundle's task.json."""
    objects = {o["id"]: o for o in task.get("scene", {}).get("objects", ())}
    for anomaly in task.get("anomalies", ()):
        for effect in anomaly.get("effects", ()):
            obj = effect.get("object") if isinstance(effect, dict) else None
            if obj:
                objects.setdefault(obj["id"], obj)  # an object the anomaly adds
    out: set[str] = set()
    for anomaly in task.get("anomalies", ()):
        for target in anomaly.get("targets", ()):
            o = objects.get(target)
            if o is None:
                continue
            words = [o.get("name", ""), *o.get("synonyms", ())]
            if o.get("prefab") and o["prefab"] not in PRIMITIVES:
                words += [o["prefab"], o["prefab"].replace("_", " ")]
            out.update(w.strip().lower() for w in words if w and w.strip())
    return frozenset(out)


def choose_demo(demos, kinds_of, avoid: frozenset[str] | set[str] = frozenset()):
    """The first demonstration whose target kinds (`kinds_of(demo)`) share nothing with `avoid`
    (the task's target kinds), or None when every one does."""
    avoid = {a.lower() for a in avoid}
    return next((d for d in demos if not (kinds_of(d) & avoid)), None)
