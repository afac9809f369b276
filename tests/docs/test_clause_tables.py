"""docs/language.md's clause tables are generated from compiler/schema.py
(`python -m wac.compiler.clause_tables`): a clause added to the schema shows in the reference."""

from __future__ import annotations

from wac.compiler import clause_tables


def test_every_clause_table_is_generated_and_current() -> None:
    text = clause_tables.LANGUAGE_MD.read_text(encoding="utf-8")
    names = [m[2] for m in clause_tables.MARK.finditer(text)]
    assert "room" in names and "object" in names
    unknown = sorted(set(names) - set(clause_tables.tables()))
    assert not unknown, f"GEN:NAME_clauses marks that name no clause list: {unknown}"
    assert clause_tables.render(text) == text, "run `python -m wac.compiler.clause_tables`"
