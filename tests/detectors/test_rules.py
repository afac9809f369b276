"""The detectors' rules on small built worlds: each case is a scene an author plausibly writes, and
what `wac lint` must say of it (nothing, for the valid arrangements a naive rule would reject)."""

from __future__ import annotations

import textwrap

import pytest

from wac.compiler.lint import lint_paths

HEAD = """
scene s {
    description "A test room."
    type indoor
    era modern
    ground floorboards size (30, 30)
    bounds from (-9, -9) to (9, 9)
    start at (0, -8) yaw 90 deg
"""

CASES = {
    # valid arrangements: nothing to find
    "chair pushed in at a desk against a wall": (
        """
        wall_1: wall at (3, 0) length 6 m
        desk_1: table at (2.55, 0) length 0.6 m width 1.4 m
        chair_1: chair at (1.9, 0)
        """,
        None,
    ),
    "cafe chairs backing onto the next table": (
        """
        table_1: table at (0, 0) length 0.8 m width 0.8 m
        chair_1: chair at (-0.75, 0)
        table_2: table at (-2.2, 0) length 0.8 m width 0.8 m
        chair_2: chair at (-1.45, 0) yaw 180 deg
        """,
        None,
    ),
    "bookshelves against two walls of a corner": (
        """
        room_1: room from (-4, -4) to (4, 4) height 2.6 m material plaster
        shelf_1: bookshelf at (3.75, 1) yaw 180 deg
        shelf_2: bookshelf at (1, 3.75) yaw -90 deg
        """,
        None,
    ),
    "a lintel over a door between two wall segments": (
        """
        room_1: room from (-4, -4) to (4, 4) height 2.6 m material plaster {
            door s at 4 m
        }
        """,
        None,
    ),
    "two chairs facing each other across a table": (
        """
        table_1: table at (0, 0)
        chair_1: chair at (-0.85, 0)
        chair_2: chair at (0.85, 0) yaw 180 deg
        """,
        None,
    ),
    "a crate on a table that overhangs it": (
        """
        table_1: table at (0, 0) length 0.6 m width 0.6 m
        crate_1: crate on table_1
        """,
        None,
    ),
    # defects
    "a box held only by its edge sunk into its neighbour": (
        """
        crate_1: crate at (0, 0, 0.9)
        crate_2: crate at (0.58, 0, 0.9)
        table_1: table at (0, 3)
        """,
        "floats",
    ),
    "a wall segment hovering between two walls": (
        """
        wall_1: wall at (0, 0) yaw 90 deg length 2 m
        wall_2: wall at (2, 0, 0.4) yaw 90 deg length 2 m
        wall_3: wall at (4, 0) yaw 90 deg length 2 m
        """,
        "floats 0.40 m",
    ),
    "a chair with its back to the table it stands at": (
        """
        table_1: table at (0, 0)
        chair_1: chair at (-0.85, 0) yaw 180 deg
        """,
        "turns its back on `table_1`",
    ),
    "one of a pair of chairs turned away": (
        """
        chair_1: chair at (-1, 0) yaw 90 deg
        chair_2: chair at (1, 0) yaw -90 deg
        """,
        "is turned 180 deg from how its twin",
    ),
    "an object attached to a wall it does not touch": (
        """
        wall_1: wall at (3, 0) length 6 m
        picture_1: box size (0.03, 1, 0.7) at (2.5, 0, 1.4) material painted_wood attached_to wall_1 { name "picture" }
        """,
        "is attached to `wall_1` but hangs",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule(name, tmp_path):
    body, words = CASES[name]
    (tmp_path / "s.wa").write_text(HEAD + textwrap.indent(textwrap.dedent(body).strip(), "    ") + "\n}\n")
    result = lint_paths([tmp_path / "s.wa"], tmp_path)
    assert not result.diagnostics, [d.render() for d in result.diagnostics]
    said = [f.evidence for f in result.anomalies]
    if words is None:
        assert not said, said
    else:
        assert any(words in s for s in said), said
