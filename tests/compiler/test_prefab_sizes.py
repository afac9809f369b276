"""docs/prefabs.md's generated size table: every standard prefab, measured through the compiler."""

from __future__ import annotations

from wac.compiler import prefab_sizes as P


def test_prefab_size_table_is_current():
    text = P.DOC.read_text(encoding="utf-8")
    a, b = text.index(P.BEGIN), text.index(P.END) + len(P.END)
    assert text[a:b] == P.sizes_table(), (
        "docs/prefabs.md sizes are stale; run `python -m wac.compiler.prefab_sizes`"
    )


def test_every_prefab_has_a_plausible_size():
    sizes = P.prefab_sizes()
    assert set(sizes) == set(P.prefab_names())
    assert all(0.0 < v < 30.0 for size in sizes.values() for v in size)
    assert (
        sizes["door"][2] > 2.0 and sizes["chair"][2] < 1.2
    )  # a door is taller than a person, a chair is not
