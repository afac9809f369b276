"""The language reference's operator sections (docs/language.md §11), generated from the spec.

Everything an operator section says comes from where the compiler reads it: `taxonomy/operators.yaml`
(summary, categories, operand, parameters, notes), the trigger tables of `compiler/schema.py`, the
`requires` table of the operator units, and one `anomaly` line of a shipped task that uses the
operator.  The section sits between `<!-- GEN:operators -->` and `<!-- /GEN:operators -->`;
tests/docs/test_operator_docs.py compares it with `render`.  Regenerate with
`python -m wac.compiler.operator_docs [PATH]` (default: docs/language.md).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from wac.compiler import triggers as TR
from wac.compiler.operators import REQUIRES
from wac.taxonomy.registry import PARAM_TYPES, OperatorSpec, Param, Registry, registry

ROOT = Path(__file__).resolve().parent.parent
DOC_PATH = ROOT / "docs" / "language.md"
TASKS = ROOT / "tasks_src"
BEGIN, END = "<!-- GEN:operators -->", "<!-- /GEN:operators -->"

OPERANDS = {
    "object": "`OBJECT_ID` — one existing object",
    "objects": "`[ID, ID, …]` — a list of existing objects (a single id also works)",
    "new_object": "`NEW_ID as PREFAB CLAUSES…` — declares a new object with ordinary object clauses "
    "(`at`, `on`, `yaw`, …)",
    "none": "none — a place, given by the `at` parameter",
}
NO_TARGET = {
    "new_object": "— (the operator adds a new object; its id must not exist yet)",
    "none": "— (the anomaly is at a place, not on an object)",
}
ANOMALY = re.compile(r"^\s*anomaly\s+(\w+)\b")
CODE = re.compile(r'"(?:[^"\\]|\\.)*"|[^"#]+')  # strings and the text between them, up to a comment


def trigger_forms(trigger_class: str) -> str:
    """How a task writes a trigger class: "no trigger", "`when revisit` / `on_revisit`, …"."""
    if trigger_class == "static":
        return "no trigger"
    leading = {kind: word for word, kind in TR.LEADING_TRIGGERS.items()}
    forms = []
    for kind, cls in TR.TRIGGER_CLASS.items():
        if cls == trigger_class:
            forms.append(f"`when {kind}`" + (f" / `{leading[kind]}`" if kind in leading else ""))
    return ", ".join(forms)


def _num(x: float) -> str:
    return f"{x:g}"


def _value(p: Param, v) -> str:
    unit = PARAM_TYPES[p.type].unit
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(_num(float(i)) for i in v) + ")"
    if isinstance(v, str):
        return f'"{v}"' if p.type == "color" else v
    return f"{_num(v)} {unit}" if unit else _num(v)


def param_row(p: Param) -> str:
    """`| `by` | length, 0.05–5 m, **required** | how far the target is raised |`."""
    kind = PARAM_TYPES[p.type]
    bits = [kind.docs]
    if p.choices:
        bits[0] += ", one of " + " \\| ".join(f"`{c}`" for c in p.choices)
    if p.min is not None or p.max is not None:
        lo = _num(p.min) if p.min is not None else ""
        hi = _num(p.max) if p.max is not None else ""
        bits.append(f"{lo}–{hi}" + (f" {kind.unit}" if kind.unit else ""))
    if p.required:
        bits.append("**required**")
    elif p.default is not None:
        bits.append(f"default `{_value(p, p.default)}`")
    else:
        bits.append("optional")
    doc = " ".join(p.doc.split()).replace("|", "\\|")
    return f"  | `{p.name}` | {', '.join(bits)} | {doc} |"


def _categories(reg: Registry, op: OperatorSpec) -> str:
    by_category: dict[str, list[str]] = {}
    for trigger_class, cid in op.categories:
        by_category.setdefault(str(cid), []).append(trigger_forms(trigger_class))
    parts = []
    for cid, forms in by_category.items():
        c = reg.category(cid)
        parts.append(f"{', '.join(forms)} → **{c.name}** ({c.code}, `{cid}`)")
    return "; ".join(parts)


def _target(op: OperatorSpec) -> str:
    if op.operand in NO_TARGET:
        return NO_TARGET[op.operand]
    return ", ".join(REQUIRES[r].docs for r in op.requires) or "any object"


def _code(line: str) -> str:
    """A source line without its comment (a `#` inside a string is not one)."""
    out = ""
    for m in CODE.finditer(line):
        if m.start() != len(out):
            break  # a `#` outside a string: the comment starts here
        out += m.group(0)
    return " ".join(out.split())


def examples(roots: tuple[Path, ...] = (TASKS, ROOT / "taxonomy" / "examples")) -> dict[str, tuple[str, str]]:
    """operator -> (an `anomaly` line, the task file it is from): the shortest line among the
    single-anomaly tasks of the first root that has one (ties: the first file in path order)."""
    found: dict[str, tuple[int, str, str]] = {}
    for root in roots:
        here: dict[str, tuple[int, str, str]] = {}
        for path in sorted(root.rglob("*.wa")):
            lines = [_code(t) for t in path.read_text(encoding="utf-8").splitlines() if ANOMALY.match(t)]
            if len(lines) != 1:
                continue
            line = lines[0]
            if line.count("(") != line.count(")") or line.count("[") != line.count("]"):
                continue  # continues on the next line
            op = line.split()[1]
            rel = path.relative_to(ROOT).as_posix()
            if op not in found and (op not in here or len(line) < here[op][0]):
                here[op] = (len(line), line, rel)
        found.update(here)
    return {op: (line, rel) for op, (_, line, rel) in found.items()}


def _section(reg: Registry, op: OperatorSpec, example: tuple[str, str] | None) -> list[str]:
    out = [f"#### `{op.name}`", "", op.summary, ""]
    out.append(f"- **Category by trigger:** {_categories(reg, op)}")
    out.append(f"- **Operand:** {OPERANDS[op.operand]}")
    out.append(f"- **Target must be:** {_target(op)}")
    if op.params:
        out += ["- **Parameters:**", "", "  | param | type, range, default | meaning |", "  |---|---|---|"]
        out += [param_row(p) for p in op.params]
    else:
        out.append("- **Parameters:** none")
    out.append("")
    if op.notes:
        out += [op.notes, ""]
    if example is not None:
        line, rel = example
        out += ["```wa", line, "```", "", f"<sub>from `{rel}`</sub>", ""]
    elif op.example:
        out += ["```wa", op.example, "```", ""]
    return out


def render(reg: Registry | None = None, found: dict[str, tuple[str, str]] | None = None) -> str:
    """The generated block, markers included, grouped by the family of each operator's first
    category in the families' order, operators in the spec's order."""
    reg = reg or registry()
    found = examples() if found is None else found
    out = [BEGIN]
    for fam in reg.families:
        ops = [o for o in reg.operators if reg.category(o.categories[0][1]).family == fam.id]
        if not ops:
            continue
        out += [f"### {fam.name}", ""]
        for op in ops:
            out += _section(reg, op, found.get(op.name))
    while out[-1] == "":
        out.pop()
    out.append(END)
    return "\n".join(out)


def replace_block(text: str, block: str) -> str:
    a, b = text.index(BEGIN), text.index(END) + len(END)
    return text[:a] + block + text[b:]


def main(argv: list[str] | None = None) -> int:
    """Write the generated block into PATH (default docs/language.md) between its markers."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else DOC_PATH
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"wac: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 1
    if BEGIN not in text or END not in text:
        print(f"wac: {path} has no {BEGIN} … {END} block to fill", file=sys.stderr)
        return 1
    path.write_text(replace_block(text, render()), encoding="utf-8")
    print(f"wrote the operator reference into {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
