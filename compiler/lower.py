"""Pass 7, lower: the checked task becomes the bundle's models (task, context, rubric, plan)."""

from __future__ import annotations

from dataclasses import dataclass

from wac.bundle import model as B
from wac.compiler.anomalies import Lowered
from wac.compiler.assemble import Built
from wac.compiler.layout import Layout
from wac.compiler.rubric import entry

INSTRUCTIONS = (
    "Inspect the assigned 3D environment for bugs. Explore it and gather visual evidence. "
    "Report each distinct bug with a clear description, a category and evidence frame refs. "
    "Do not assume every unusual object is a bug. Use the full {budget}-action budget for exploration "
    "and verification, even after finding a first bug; finish earlier only if the environment fails. "
    "Report bugs with flag_bug/update_bug and finish with done. If you find no bug, say so explicitly in done."
)


@dataclass(frozen=True)
class Lowered3:
    task: B.CompiledTask
    context: B.AgentContext
    rubric: B.Rubric
    plan: B.SelfCheckPlan
    assets: tuple  # (asset model, source path)


def lower_task(
    task_id: str,
    source: str,
    built: Built,
    lowered: list[Lowered],
    meta: dict,
    layout: Layout,
    plan: B.SelfCheckPlan,
) -> Lowered3:
    scene = built.scene.model_copy(update={"materials": dict(sorted(layout.materials.used.items()))})
    anomalies = tuple(
        B.Anomaly(
            operator=low.spec.name,
            category=low.category,
            family=_family(low.category),
            targets=low.targets,
            params={k: (tuple(v) if isinstance(v, list) else v) for k, v in sorted(low.params.items())},
            trigger=low.trigger,
            effects=low.effects,
            anchor=i == 0,
            affects=low.affects,
        )
        for i, low in enumerate(lowered)
    )
    assets = tuple(
        (B.Asset(id=a.digest, file=f"assets/{a.digest}.{a.format}", format=a.format, source=a.source), a.path)
        for a in sorted(layout.assets.values(), key=lambda a: a.digest)
    )
    from wac.taxonomy.registry import registry

    cat = registry().category(lowered[0].category)
    hint = meta.get("hint") or cat.hint
    task = B.CompiledTask(
        id=task_id,
        source=source,
        scene=scene,
        exploration=built.exploration,
        anomalies=anomalies,
        assets=tuple(a for a, _ in assets),
        meta=B.TaskMeta(
            hint=hint,
            difficulty=meta.get("difficulty"),
            tags=tuple(meta.get("tags") or ()),
            example=bool(meta.get("example")),
            multi_anomaly=bool(meta.get("multi_anomaly")),
        ),
    )
    # no list of interactive objects: built per task it can single out the target (a mechanism
    # anomaly's object, e.g. a task whose only interactive object is its target); agents find what
    # can be used by trying, as wac's own task text says nothing of it either (docs/bundle.md)
    context = B.AgentContext(
        task_id=task_id,
        instructions=INSTRUCTIONS.format(budget=built.exploration.budget_actions),
        scene_description=scene.description,
        interactive_objects=(),
        hint=hint,
        example=cat.id.value,
        budget_actions=built.exploration.budget_actions,
        anomaly_count=len(lowered),
    )
    objects = {o.id: o for o in scene.objects}
    rubric = B.Rubric(
        task_id=task_id, entries=tuple(entry(low, objects, i == 0) for i, low in enumerate(lowered))
    )
    return Lowered3(task, context, rubric, plan, assets)


def _family(category: str) -> str:
    from wac.taxonomy.registry import registry

    return registry().category(category).family.value


def context_markdown(ctx: B.AgentContext) -> str:
    lines = [
        "# Auditing task",
        "",
        "## Instructions",
        "",
        ctx.instructions,
        "",
        "## Scene",
        "",
        ctx.scene_description,
        "",
    ]
    if ctx.hint:
        lines += ["## Anomaly-type hint", "", ctx.hint, ""]
    if ctx.anomaly_count > 1:
        lines += [f"The scene contains {ctx.anomaly_count} anomalies.", ""]
    lines += ["## Budget", "", f"{ctx.budget_actions} environment actions.", ""]
    return "\n".join(lines)
