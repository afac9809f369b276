"""The mapping between wac's category ids and the reference's codes, families and ledger categories."""

from __future__ import annotations

import pytest

from wac.errors import UsageError
from wac.taxonomy import reference as R
from wac.taxonomy.docs import render_markdown
from wac.taxonomy.registry import registry

from .conftest import ROOT


def test_every_category_has_one_code_and_back():
    reg = registry()
    ids = [c.id.value for c in reg.categories]
    assert sorted(R.CODES) == sorted(ids) and len(set(R.CODES.values())) == len(ids) == 15
    for c in reg.categories:
        cid = c.id.value
        assert R.category(R.code(cid)) == cid and R.category(R.code(cid).lower()) == cid
        assert R.category(cid) == cid
        # the code's letter is the family's, in the paper's order
        assert R.family_id(R.family_name(c.family.value)) == c.family.value
        assert R.ledger_category(cid) in R.LEDGER_CATEGORIES
    fam_of_letter = {}
    for c in reg.categories:
        fam_of_letter.setdefault(R.code(c.id.value)[0], set()).add(c.family.value)
    assert all(len(f) == 1 for f in fam_of_letter.values()) and len(fam_of_letter) == 5


def test_unknown_names_are_clear_usage_errors():
    with pytest.raises(UsageError, match="no wac category"):
        R.category("S1")
    with pytest.raises(UsageError, match="reference code"):
        R.category("Z9")
    with pytest.raises(UsageError, match="unknown family"):
        R.family_id("physics")
    assert R.same_category("G3", "scale") and not R.same_category("G1", "scale")
    assert not R.same_category("nonsense", "scale") and not R.same_category(None, "scale")


def test_the_mapping_table_is_published_in_docs_taxonomy():
    doc = (ROOT / "docs" / "taxonomy.md").read_text(encoding="utf-8")
    assert doc.rstrip("\n") == render_markdown(registry())
    for cid, code in R.CODES.items():
        assert f"| `{cid}` | {code} |" in doc


pytest.importorskip("pybullet")


def test_read_example_accepts_the_reference_code(built, tmp_path):
    from wac.audit.mcp_server import load_examples
    from wac.audit.session import AuditSession, SessionOptions

    bundle = built / "city_02"
    options = SessionOptions(width=160, height=120)
    s = AuditSession(bundle, tmp_path / "ep", options, load_examples(built, options, "intersection"))
    try:
        by_code = s.call("read_example", {"code": "G2"})
        by_id = s.call("read_example", {"code": "intersection"})
        other = s.call("read_example", {"code": "G1"})
    finally:
        s.close()
    assert not by_code.error and by_code.text == by_id.text and by_code.images
    assert other.error and "only the example" in other.text
