"""wac's 15 category ids and the reference implementation's category codes, both ways.

WorldAuditBench names a task's type with a subcategory code (`G1` … `S3`, the task table's
`subcategory` column), its family with a paper family name (the `category` column, e.g.
"Static physics"), and a flagged bug with one of six coarse ledger categories (`geometry`,
`collision`, `visual`, `state`, `semantic`, `other`).  The codes follow the paper's order
within each family; `V4` (material) was added last.  `S1` labels one reference task outside
the paper's 15 categories and has no wac counterpart.
"""

from __future__ import annotations

from types import MappingProxyType

from wac.errors import UsageError

# wac category id -> reference subcategory code
CODES = MappingProxyType(
    {
        "missing_support": "G1",
        "intersection": "G2",
        "scale": "G3",
        "missing_collision": "C1",
        "unexpected_collision": "C2",
        "abnormal_trajectory": "C3",
        "visibility": "V1",
        "view_dependent": "V2",
        "shadow_lighting": "V3",
        "material": "V4",
        "existence": "T1",
        "static_attribute": "T2",
        "operational_state": "T3",
        "improper_configuration": "S2",
        "historical": "S3",
    }
)
CATEGORIES = MappingProxyType({code: cid for cid, code in CODES.items()})
UNMAPPED_CODES = MappingProxyType({"S1": "used by one reference task; not among the paper's 15 categories"})

# wac family id -> the reference's paper family name (the task table's `category` column)
FAMILY_NAMES = MappingProxyType(
    {
        "static_physics": "Static physics",
        "interactive_physics": "Interactive physics",
        "spatial_consistency": "Spatial consistency",
        "temporal_consistency": "Temporal consistency",
        "semantic_consistency": "Semantic consistency",
    }
)
FAMILIES = MappingProxyType({name: fid for fid, name in FAMILY_NAMES.items()})

# the reference's coarse bug-ledger categories, by code letter, and the wac families they cover
LEDGER = MappingProxyType({"G": "geometry", "C": "collision", "V": "visual", "T": "state", "S": "semantic"})
LEDGER_CATEGORIES = ("geometry", "collision", "visual", "state", "semantic", "other")


def code(category_id: str) -> str:
    """The reference code of a wac category id (`missing_support` -> `G1`)."""
    try:
        return CODES[category_id]
    except KeyError:
        raise UsageError(f"unknown wac category {category_id!r}") from None


def category(name: str) -> str:
    """A wac category id from a wac id or a reference code (case-insensitive: `g1`, `G1`)."""
    if name in CODES:
        return name
    key = name.strip().upper()
    if key in CATEGORIES:
        return CATEGORIES[key]
    if key in UNMAPPED_CODES:
        raise UsageError(f"reference code {key} has no wac category ({UNMAPPED_CODES[key]})")
    raise UsageError(
        f"unknown category {name!r}: use a wac id ({', '.join(CODES)}) or a reference code "
        f"({', '.join(CATEGORIES)})"
    )


def same_category(name: str | None, category_id: str | None) -> bool:
    """Whether `name` (a wac id or a reference code) names the wac category `category_id`."""
    try:
        return bool(name) and category(name) == category_id
    except UsageError:
        return False


def family_name(family_id: str) -> str:
    """The reference's paper family name of a wac family id."""
    return FAMILY_NAMES[family_id]


def family_id(name: str) -> str:
    """A wac family id from the reference's paper family name (case-insensitive) or a wac id."""
    if name in FAMILY_NAMES:
        return name
    for ref, fid in FAMILIES.items():
        if ref.casefold() == name.strip().casefold():
            return fid
    raise UsageError(f"unknown family {name!r}: use one of {', '.join(FAMILIES)}")


def ledger_category(category_id: str) -> str:
    """The reference's coarse bug-ledger category for a wac category (`scale` -> `geometry`)."""
    return LEDGER[code(category_id)[0]]


def markdown_section(reg) -> list[str]:
    """The mapping table of docs/taxonomy.md (generated, like the rest of that file)."""
    out = [
        "## Mapping to the reference's codes",
        "",
        "The reference implementation (WorldAuditBench) names a task's type with a subcategory code "
        "(its task table's `subcategory` column), the family with a paper family name (the `category` "
        "column) and a flagged bug with a coarse ledger category. `wac export hf` writes these columns, "
        "`wac import hf` reads them back, and `read_example` accepts a code as well as a wac id.",
        "",
        "| wac id | Reference code | Paper family (`category`) | Ledger category |",
        "|---|---|---|---|",
    ]
    for c in reg.categories:
        cid = c.id.value
        out.append(f"| `{cid}` | {code(cid)} | {family_name(c.family.value)} | `{ledger_category(cid)}` |")
    out.append("")
    for k, why in UNMAPPED_CODES.items():
        out.append(f"The reference code {k} has no wac counterpart: {why}.")
    out.append("")
    return out
