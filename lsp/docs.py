"""Hover text: an operator's spec and category, a prefab's size, era and parts, an object's resolved
pose, size and material, a statement's doc, and a diagnostic code's entry in docs/errors.md."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from wac.compiler import nodes as N
from wac.compiler import schema as SC
from wac.compiler.assemble import Built
from wac.compiler.fmt import word
from wac.compiler.resolve import Visible
from wac.taxonomy.registry import PARAM_TYPES, registry

ERRORS_MD = Path(__file__).resolve().parents[1] / "docs" / "errors.md"  # a source checkout's docs
CODE = re.compile(r"^[EW]\d{3}$")


@lru_cache(maxsize=1)
def error_entries() -> dict[str, str]:
    """Code -> its section of docs/errors.md (empty when the docs are not installed)."""
    try:
        text = ERRORS_MD.read_text(encoding="utf-8")
    except OSError:
        return {}
    out: dict[str, str] = {}
    for m in re.finditer(r"^### ([EW]\d{3})\n(.*?)(?=^##)", text + "\n##", re.M | re.S):
        out[m[1]] = m[2].strip()
    return out


def code_doc(code: str) -> str | None:
    """A code's summary and fix (its example left out: a hover stays short)."""
    entry = error_entries().get(code)
    if entry is None:
        return None
    blocks = entry.split("\n\n")
    left_out = [b.startswith(("```", "Example", "`")) for b in blocks]
    # an example and the sentence that leads into it ("In a task on …:") are left out together
    kept = [
        b
        for i, b in enumerate(blocks)
        if not left_out[i] and not (b.rstrip().endswith(":") and i + 1 < len(blocks) and left_out[i + 1])
    ]
    return f"**{code}**: " + "\n\n".join(kept)


def operator_doc(name: str) -> str | None:
    op = registry().operator(name)
    if op is None:
        return None
    reg = registry()
    cats = []
    for trigger, cid in op.categories:
        c = reg.category(cid)
        cats.append(
            f"{c.name} (`{cid.value}`, {c.family.value}{'' if trigger == 'static' else ', ' + trigger})"
        )
    lines = [f"**anomaly operator `{op.name}`**: {op.summary}", "", "category: " + "; ".join(cats)]
    lines.append(f"operand: {op.operand}; triggers: {', '.join(op.triggers)}")
    if op.requires:
        lines.append(f"requires: {', '.join(op.requires)}")
    for p in op.params:
        unit = f" {PARAM_TYPES[p.type].unit}" if PARAM_TYPES[p.type].unit else ""
        bounds = f" [{p.min:g}, {p.max:g}]" if p.min is not None and p.max is not None else ""
        req = "required" if p.required else f"default {p.default}"
        lines.append(f"- `{p.name}`: {p.type}{unit}{bounds}, {req}: {p.doc}")
    return "\n".join(lines)


def prefab_doc(pf: N.PrefabDecl, extent: tuple[float, ...] | None) -> str:
    body = pf.body
    words = {s.keyword: " ".join(_word(a) for a in s.args) for s in body.settings}
    lines = [f"**prefab `{pf.name}`**" + (f": {words['description']}" if "description" in words else "")]
    if "era" in words:
        lines.append(f"era: {words['era']}")
    if "kind" in words:
        lines.append(f"kind: {words['kind']}")
    if extent is not None:
        lines.append(f"size: {extent[0]:g} x {extent[1]:g} x {extent[2]:g} m (default parameters, facing +x)")
    params = [s for s in body.settings if s.keyword == "param"]
    if params:
        lines.append("params: " + ", ".join(" ".join(_word(a) for a in s.args) for s in params))
    lines.append("parts: " + ", ".join(f"`{t.id}` ({t.kind})" for t in body.things))
    return "\n\n".join(lines)


def _word(w) -> str:
    try:
        return word(w)
    except AssertionError:
        return "?"


def object_doc(world: Built, oid: str) -> str:
    o = world.objects[oid]
    x, y, z = o.position
    size = tuple(round(b - a, 2) for a, b in zip(o.aabb_min, o.aabb_max, strict=True))
    materials = sorted({p.material for p in o.parts})
    lines = [
        f"**object `{o.id}`**: {o.name}" + (f" ({o.prefab})" if o.prefab else ""),
        f"at ({x:g}, {y:g}, {z:g}) m, yaw {o.rotation_deg[0]:g} deg"
        + (f", on `{o.support}`" if o.support else ""),
        f"size {size[0]:g} x {size[1]:g} x {size[2]:g} m; material {', '.join(materials)}",
        f"{'solid' if o.solid else 'not solid'}, {'dynamic' if o.dynamic else 'static'}; {len(o.parts)} part(s)",
    ]
    return "\n\n".join(lines)


def material_doc(m: N.MaterialDecl) -> str:
    clauses = ", ".join(f"{c.key} {_word(c.value)}" for c in m.clauses)
    return f"**material `{m.name}`**" + (f": {clauses}" if clauses else "")


def statement_doc(word: str) -> str | None:
    for context, table in SC.CONTEXTS.items():
        if word in table:
            s = table[word]
            example = f"\n\n`{s.example}`" if s.example else ""
            return f"**`{word}`** ({context} statement): {s.doc}{example}"
    if word in SC.GENERATORS:
        return f"**`{word}`** (generator): {SC.GENERATORS[word].doc}"
    return None


def hover_markdown(
    word: str, vis: Visible | None, world: Built | None, codes: list[str], extent=lambda name: None
) -> str | None:
    """The hover text for a word (and the codes of the diagnostics under the cursor); `extent` measures
    a prefab."""
    parts: list[str] = []
    if CODE.match(word):
        parts.append(code_doc(word) or "")
    elif world is not None and word in world.objects:
        parts.append(object_doc(world, word))
    elif (doc := operator_doc(word)) is not None:
        parts.append(doc)
    elif vis is not None and word in vis.prefabs:
        parts.append(prefab_doc(vis.prefabs[word], extent(word)))
    elif vis is not None and word in vis.materials:
        parts.append(material_doc(vis.materials[word]))
    elif vis is not None and word in vis.scenes:
        scene = vis.scenes[word][0]
        desc = scene.body.setting("description")
        parts.append(f"**scene `{word}`**" + (f": {_word(desc.args[0])}" if desc and desc.args else ""))
    elif (doc := statement_doc(word)) is not None:
        parts.append(doc)
    parts += [doc for c in dict.fromkeys(codes) if (doc := code_doc(c))]
    text = "\n\n---\n\n".join(p for p in parts if p)
    return text or None
