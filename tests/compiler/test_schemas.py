"""The JSON Schemas in schemas/ are generated from the bundle models and must stay current."""

from __future__ import annotations

from pathlib import Path

import pytest

from wac.bundle.schemas import SCHEMAS, render

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_file_is_current(name):
    assert (REPO / "schemas" / name).read_text() == render(SCHEMAS[name]), "run `wac schema -o schemas`"


def test_taxonomy_command_lists_every_category(capsys):
    from wac.cli import main

    assert main(["taxonomy"]) == 0
    out = capsys.readouterr().out
    from wac.taxonomy.registry import registry

    for c in registry().categories:
        assert c.name in out
