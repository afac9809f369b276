"""Generated documentation for the taxonomy: docs/taxonomy.md and the `wac taxonomy` table.

Both are rendered from the registry (`categories.yaml`, `operators.yaml`), so they cannot
drift from what the compiler uses; a test compares docs/taxonomy.md with `render_markdown`.
Regenerate with `python -m wac.taxonomy.docs [PATH]` (default: docs/taxonomy.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

from wac.taxonomy.registry import CategorySpec, OperatorSpec, Param, Registry, registry

# Every bug type of the reference runtime (WorldAuditBench bugs.js).  Each must be covered by
# an operator's `reference:` list or be listed under `out_of_scope:` in categories.yaml.
REFERENCE_BUG_TYPES: tuple[str, ...] = (
    "air_wall",
    "fake_floor",
    "float",
    "portal_misroute",
    "door_ghost",
    "door_phantom",
    "mechanism_delay",
    "frozen_anim",
    "door_autoclose",
    "anim_accelerated",
    "anim_interrupted",
    "drift",
    "wall_trap",
    "interact_through_wall",
    "corrupted_frame",
    "extra_asset",
    "dead_gem",
    "no_collision",
    "missing_tex",
    "oversize",
    "vanish",
    "tilt",
    "mirrored",
    "flip_normals",
    "wrong_mat",
    "ghost_mesh",
    "emissive",
    "no_shadow",
    "mesh_offset",
    "mesh_scale",
    "mesh_tilt",
    "mesh_clone",
    "mesh_nosolid",
    "floor_hole",
    "mesh_drift",
    "mesh_missing_tex",
    "mesh_sideview_cull",
    "mesh_xray",
    "mesh_vanish_unseen",
    "mesh_move_unseen",
    "mesh_tremble",
    "mesh_despawn_on_leave",
    "mesh_reset_on_leave",
    "mesh_pile",
    "mesh_lod_pop",
    "mesh_colorflip",
)

_EVIDENCE_WORDS = {
    "single_view": "a single view",
    "several_views": "several viewpoints",
    "interaction": "movement or interaction",
    "revisit": "leaving and revisiting",
    "time": "waiting and watching over time",
}

DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "taxonomy.md"


# ---------------------------------------------------------------------------- helpers


def _cell(text: object) -> str:
    """Make text safe for one cell of a Markdown table."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _num(x: object) -> str:
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def _value(v: object) -> str:
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(_num(i) for i in v) + ")"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return _num(v)


def param_text(p: Param) -> str:
    """One parameter, e.g. ``by`` (length, required, 0.05–5): how far the target is raised."""
    bits = [p.type]
    if p.required:
        bits.append("required")
    elif p.default is not None:
        bits.append(f"default {_value(p.default)}")
    if p.min is not None or p.max is not None:
        lo = _num(p.min) if p.min is not None else ""
        hi = _num(p.max) if p.max is not None else ""
        bits.append(f"{lo}–{hi}")
    if p.choices:
        bits.append("one of " + "/".join(p.choices))
    text = f"`{p.name}` ({', '.join(bits)})"
    return f"{text}: {p.doc}" if p.doc else text


def _code(reg: Registry, cid: str) -> str:
    return reg.category(cid).code


def _trigger_classes(op: OperatorSpec, cid: str) -> list[str]:
    return [t for t, c in op.categories if c == cid]


def operator_categories(reg: Registry, op: OperatorSpec) -> str:
    """The categories an operator implants, e.g. `SP-SC Scale / … (static); SpC-VD … (distance)`."""
    seen: dict[str, list[str]] = {}
    for trig, cid in op.categories:
        seen.setdefault(cid, []).append(trig)
    if len(seen) == 1:
        cid = next(iter(seen))
        c = reg.category(cid)
        return f"{c.code} {c.name}"
    parts = []
    for cid, trigs in seen.items():
        c = reg.category(cid)
        parts.append(f"{c.code} {c.name} ({', '.join(trigs)})")
    return "; ".join(parts)


def reference_coverage(reg: Registry) -> dict[str, tuple[str, ...]]:
    """Reference bug type -> the wac operators that cover it (in operators.yaml order)."""
    cover: dict[str, list[str]] = {}
    for op in reg.operators:
        for ref in op.reference:
            cover.setdefault(ref, []).append(op.name)
    return {k: tuple(v) for k, v in cover.items()}


def parity_statements() -> dict[str, dict[str, str]]:
    """Reference bug type -> {observable, behaviour} (`taxonomy/parity.yaml`)."""
    from importlib import resources

    import yaml

    text = resources.files("wac.taxonomy").joinpath("parity.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def reference_types(reg: Registry) -> tuple[str, ...]:
    """The known reference bug types, then any extra ones named in the YAML files."""
    extra = [r for r in reference_coverage(reg) if r not in REFERENCE_BUG_TYPES]
    extra += [k for k, _ in reg.out_of_scope if k not in REFERENCE_BUG_TYPES and k not in extra]
    return REFERENCE_BUG_TYPES + tuple(extra)


def uncovered_reference_types(reg: Registry) -> tuple[str, ...]:
    cover = reference_coverage(reg)
    oos = dict(reg.out_of_scope)
    return tuple(r for r in reference_types(reg) if r not in cover and r not in oos)


# ---------------------------------------------------------------------------- markdown


def _category_section(reg: Registry, c: CategorySpec) -> list[str]:
    out = [f"### {c.code} — {c.name}", ""]
    out.append(f"Category id `{c.id}`, family {reg.family(c.family).name.lower()}.")
    out.append("")
    out.append(c.definition)
    out.append("")
    out.append(f"- **Evidence:** {', '.join(_EVIDENCE_WORDS.get(e, e) for e in c.evidence)}")
    if c.dynamic:
        out.append(
            "- **Dynamic:** yes — a report must describe the change and the condition that produces it"
        )
    else:
        out.append("- **Dynamic:** no — the defect is visible in the evidence frames themselves")
    out.append(f'- **Hint given to the auditor:** "{c.hint}"')
    out.append(f"- **Self-check:** measures `{c.observable}` with a `{c.plan}` plan")
    if c.defect_terms:
        out.append(f"- **Defect terms:** {', '.join(c.defect_terms)}")
    out.append("")

    ops = reg.operators_for(c.id)
    out.append("**Operators**")
    out.append("")
    if not ops:
        out.append("_None yet._")
    else:
        out.append("| Operator | Trigger classes | Operand | Parameters | Summary |")
        out.append("|---|---|---|---|---|")
        for op in ops:
            trig = ", ".join(_trigger_classes(op, c.id))
            others = [f"{t} → {_code(reg, k)}" for t, k in op.categories if k != c.id]
            if others:
                trig += " (also " + ", ".join(others) + ")"
            params = "; ".join(param_text(p) for p in op.params) or "—"
            out.append(
                f"| `{op.name}` | {_cell(trig)} | {op.operand} | {_cell(params)} | {_cell(op.summary)} |"
            )
    out.append("")

    d = c.demo
    out.append(f"**Demonstration** ([`taxonomy/examples/{d.task}`](../taxonomy/examples/{d.task}))")
    out.append("")
    for i, fig in enumerate(d.figures, 1):
        out.append(f"- Figure {i}: {fig}")
    out.append("")
    out.append(f"Reference explanation. {d.explanation}")
    out.append("")
    if d.measure:
        stem = d.task.removesuffix(".wa")
        out.append(
            f"- **Measured:** {d.measure} — `pytest tests/taxonomy/test_demonstrations.py -k {stem}_demo`"
        )
        out.append("")
    return out


def render_markdown(reg: Registry) -> str:
    """The content of docs/taxonomy.md, without the file's final newline (so that
    `print(render_markdown(reg))` and `wac taxonomy --markdown` produce the file exactly)."""
    out = [
        "# Anomaly taxonomy",
        "",
        "<!-- Generated by `python -m wac.taxonomy.docs` from taxonomy/categories.yaml and",
        "     taxonomy/operators.yaml. Do not edit by hand: a test compares this file with the registry. -->",
        "",
        f"wac implants one anomaly per task, drawn from {len(reg.categories)} categories in "
        f"{len(reg.families)} families (WorldAuditBench §3.2, Table 8). Each category names the evidence "
        "an auditor needs to expose it, whether the judge treats it as a dynamic bug, the anomaly-type "
        "hint the auditor is given, the quantity the self-check measures, the operators that implant it "
        "and its in-context demonstration.",
        "",
        "## Families",
        "",
        "| Family | Categories | Description |",
        "|---|---|---|",
    ]
    for f in reg.families:
        codes = ", ".join(c.code for c in reg.categories if c.family == f.id)
        out.append(f"| {f.name} (`{f.id}`) | {codes} | {_cell(f.description)} |")
    out.append("")

    out.append("## Categories")
    out.append("")
    out.append("| Code | Category | Family | Evidence | Dynamic | Operators |")
    out.append("|---|---|---|---|---|---|")
    for c in reg.categories:
        ops = ", ".join(f"`{o.name}`" for o in reg.operators_for(c.id)) or "—"
        out.append(
            f"| {c.code} | {_cell(c.name)} | {reg.family(c.family).name} | {', '.join(c.evidence)} "
            f"| {'yes' if c.dynamic else 'no'} | {ops} |"
        )
    out.append("")

    for f in reg.families:
        out.append(f"## {f.name}")
        out.append("")
        out.append(f.description)
        out.append("")
        for c in reg.categories:
            if c.family == f.id:
                out.extend(_category_section(reg, c))

    from wac.taxonomy.reference import markdown_section

    out.extend(markdown_section(reg))

    out.append("## Parity with the reference runtime")
    out.append("")
    out.append(
        "Every bug type of the reference runtime (WorldAuditBench `bugs.js`) maps to the wac "
        "operator(s) that express it, or is listed as out of scope with the reason."
    )
    out.append("")
    out.append(
        "The observable is what the reference produces (read from its `bugs.js` and `core.js`); "
        "`pytest tests/taxonomy/test_parity.py` measures each one with the mapped wac operator, "
        "one test per type (`-k TYPE` for one), and the last column says whether wac's behaviour is "
        "identical or how it differs (`taxonomy/parity.yaml`)."
    )
    out.append("")
    out.append(
        "| Reference bug type | wac operator(s) | Category | Observable (reference) | Behaviour identical / differs: how |"
    )
    out.append("|---|---|---|---|---|")
    cover = reference_coverage(reg)
    oos = dict(reg.out_of_scope)
    parity = parity_statements()
    for ref in reference_types(reg):
        seen = _cell(parity.get(ref, {}).get("observable", "—"))
        how = _cell(parity.get(ref, {}).get("behaviour", "—"))
        if ref in cover:
            ops = [reg.operator(n) for n in cover[ref]]
            names = ", ".join(f"`{o.name}`" for o in ops)
            cats: list[str] = []
            for o in ops:
                text = operator_categories(reg, o)
                if text not in cats:
                    cats.append(text)
            out.append(f"| `{ref}` | {names} | {_cell('; '.join(cats))} | {seen} | {how} |")
        elif ref in oos:
            out.append(f"| `{ref}` | — | out of scope: {_cell(oos[ref])} | {seen} | out of scope |")
        else:
            out.append(f"| `{ref}` | — | **not covered** | {seen} | — |")
    out.append("")

    unused = [o.name for o in reg.operators if not o.reference]
    if unused:
        out.append(
            "Operators without a reference counterpart (wac-only): "
            + ", ".join(f"`{n}`" for n in unused)
            + "."
        )
    return "\n".join(out).rstrip("\n")


# ---------------------------------------------------------------------------- plain text


def format_table(reg: Registry) -> str:
    """A plain-text table for `wac taxonomy`: family, code, category, evidence, operators
    (no final newline; the caller prints it)."""
    header = ("FAMILY", "CODE", "CATEGORY", "EVIDENCE", "OPERATORS")
    rows = [
        (
            reg.family(c.family).name,
            c.code,
            c.name,
            ", ".join(c.evidence),
            ", ".join(o.name for o in reg.operators_for(c.id)) or "-",
        )
        for c in reg.categories
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]

    def line(r: tuple[str, ...]) -> str:
        return "  ".join(r[i].ljust(widths[i]) for i in range(len(widths))) + "  " + r[-1]

    out = [line(header), "  ".join("-" * w for w in widths) + "  " + "-" * len(header[-1])]
    prev = None
    for r in rows:
        if prev is not None and r[0] != prev:
            out.append("")
        prev = r[0]
        out.append(line(r).rstrip())
    return "\n".join(out)


def write_markdown(path: Path | str = DOC_PATH) -> Path:
    path = Path(path)
    path.write_text(render_markdown(registry()) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":  # pragma: no cover
    print(write_markdown(sys.argv[1] if len(sys.argv) > 1 else DOC_PATH))
