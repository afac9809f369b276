"""taxonomy/norms.yaml held to the prefabs it describes.

Every standard prefab and every prefab the shipped sources define is built with its default
parameters through the compiler's own passes (resolve, assemble: no clean-world checks, which read
these very norms) and measured: its default instance must lie inside its natural size range, its
parts' material categories among the plausible ones, its light, up side, era and names must agree
with what the prefab declares.  Every kind tag in use has a fallback, and the loader refuses data a
detector would misread.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wac.compiler import syntax as S
from wac.compiler.assemble import build_world
from wac.compiler.diagnostics import Collector
from wac.compiler.layout import Layout, Materials
from wac.compiler.resolve import Loader, load_stdlib
from wac.errors import TaxonomyError
from wac.taxonomy.norms import DEFAULT, ERA_YEARS, MATERIAL_CATEGORIES, load_norms, norms

ROOT = Path(__file__).resolve().parents[2]
PROJECT = (ROOT / "tasks_src", ROOT / "taxonomy" / "examples")  # the shipped sources
SPACING_M = 30.0  # the largest prefab (a pagoda's eaves, a windmill's sails) fits in a cell
# kinds the compiler gives objects itself: room walls, and `liquid yes` objects without a kind
COMPILER_KINDS = {"structure", "liquid"}

# Synonyms a prefab declares that name more than the prefab, so its entry does not list them
# (the detectors would hold every such object to this prefab's norm): a word for many objects...
GENERIC = {
    "seat", "lamp", "post", "fan", "sign", "stand", "booth", "box", "bag", "drum", "tank",
    "water", "plant", "shelves", "hay", "planter", "flowers", "pot", "jar", "urn", "basin",
    "fire", "frame", "instrument", "rotor", "vehicle", "animal", "tube", "weed", "canes",
    "statue", "sculpture", "tower", "tripod", "arch", "archway", "gate", "grave", "hull",
    "cone", "pylon", "buffer", "bumper", "poster", "mill", "timber", "lion", "fountain",
    # ...or a different object than the one drawn (a billboard is 3 x 6 m; a hedge is a row of
    # shrubs; a kiosk is a shop; a stupa is a dome)
    "billboard", "hedge", "kiosk", "stupa",
}  # fmt: skip
# Synonyms that belong to a sibling entry: synonym -> the entry that lists it.
SHARED = {
    "bench": "bench",
    "barrel": "barrel",
    "bollard": "bollard",
    "street light": "street_lamp",
    "lamp post": "lamp_post",
    "lantern": "lantern",
    "rock": "rock",
    "stone": "rock",
    "tree": "tree",
    "column": "column",
    "pillar": "column",
    "coral": "brain_coral",
    "windmill": "windmill",
    "wind pump": "wind_pump",
    "bridge": "bridge",
    "banner": "banner",
    "stove": "stove",
    "stone lion": "stone_lion",
    "lion statue": "stone_lion",
    "guardian lion": "stone_lion",
    "trash can": "dustbin",  # any household or litter bin, not only a wheelie bin (1970s)
    "garbage bin": "dustbin",
    "rubbish bin": "dustbin",
    "dustbin": "dustbin",
}


def _setting(decl, keyword: str):
    for s in decl.body.settings:
        if s.keyword == keyword:
            return s.args
    return None


def _word(decl, keyword: str) -> str | None:
    args = _setting(decl, keyword)
    if not args:
        return None
    a = args[0]
    return a.value if isinstance(a, S.Str) else a.text


def _synonyms(decl) -> list[str]:
    args = _setting(decl, "synonyms")
    return [x.value for x in args[0].items] if args else []


@pytest.fixture(scope="module")
def sources() -> tuple[Loader, dict[str, tuple[object, Path | None]], list]:
    """The prefab declarations by name (with the file a project one comes from) and every module."""
    loader = Loader(ROOT)
    decls: dict[str, tuple[object, Path | None]] = {}
    modules = list(load_stdlib())
    for mod in modules:
        for p in mod.prefabs:
            decls[p.name] = (p, None)
    for folder in PROJECT:
        for path in sorted(folder.rglob("*.wa")):
            mod = loader.load(path)
            assert mod is not None, f"{path} does not parse: {loader.failed.get(path.resolve())}"
            modules.append(mod)
            for p in mod.prefabs:
                decls.setdefault(p.name, (p, path.resolve()))
    return loader, decls, modules


@pytest.fixture(scope="module")
def placed(sources, tmp_path_factory):
    """Each prefab's default instance (facing +x), as the compiler places it, and the materials."""
    loader, decls, _ = sources
    names = sorted(decls)
    per_row = 12
    half = SPACING_M * (per_row + 1) / 2
    files = sorted({str(f) for _, f in decls.values() if f is not None})
    lines = [f'import "{f}"' for f in files]
    lines += [
        "scene norms_measure {",
        '    description "Every prefab, far apart, to measure it."',
        "    type urban",
        f"    ground grass size ({2 * half + SPACING_M:g}, {2 * half + SPACING_M:g})",
        f"    bounds from ({-half:g}, {-half:g}) to ({half:g}, {half:g})",
        f"    start at ({-half + 1:g}, {-half + 1:g}) yaw 0 deg",
    ]
    for i, n in enumerate(names):
        x, y = (i % per_row) * SPACING_M - half + SPACING_M, (i // per_row) * SPACING_M - half + SPACING_M
        lines.append(f"    p_{i}: {n} at ({x:g}, {y:g})")
    lines += ["}", "task norms_measure_task on norms_measure {", "    anomaly float p_0 by 0.5 m", "}"]
    path = tmp_path_factory.mktemp("norms") / "measure.wa"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # the scratch file imports the shipped ones: the root is a folder holding both
    loader = Loader(Path(os.path.commonpath([ROOT, path])))
    module = loader.load(path)
    assert module is not None, loader.failed
    diag = Collector()
    vis = loader.visible(path.resolve(), diag)
    layout = Layout(loader, vis, diag, Materials(vis.materials, diag))
    built = build_world(module.tasks[0], vis.scenes["norms_measure"][0], layout, diag)
    assert built is not None and not diag, "\n".join(d.render() for d in diag.items)
    objects = {n: built.objects[f"p_{i}"] for i, n in enumerate(names)}
    return objects, built.scene.materials


def test_every_prefab_and_kind_has_a_norm(sources):
    _, decls, modules = sources
    n = norms()
    missing = sorted(set(decls) - set(n.prefabs))
    assert not missing, f"prefabs without an entry in taxonomy/norms.yaml: {missing}"
    kinds = set(COMPILER_KINDS)
    for mod in modules:
        kinds |= {k for p in mod.prefabs if (k := _word(p, "kind"))}
        for scene in mod.scenes:
            kinds |= {c.value.text for t in scene.body.things for c in t.clauses if c.key == "kind"}
    assert not sorted(kinds - set(n.kinds)), f"kind tags without a fallback: {sorted(kinds - set(n.kinds))}"


def test_entries_that_are_no_prefab_can_be_found_by_name(sources):
    """An entry for objects built from primitives ("shipping container") is reached only by name."""
    _, decls, _ = sources
    nameless = [k for k, v in norms().prefabs.items() if k not in decls and not v.names]
    assert not nameless, f"entries no prefab and no name leads to: {nameless}"


def test_default_instances_lie_in_their_natural_size_range(placed):
    objects, _ = placed
    bad = []
    for name, o in objects.items():
        ext = [o.aabb_max[k] - o.aabb_min[k] for k in range(3)]
        n = norms().prefabs[name]
        for what, v, (lo, hi) in (
            ("height", ext[2], n.height_m),
            ("long side", max(ext[:2]), n.long_m),
            ("short side", min(ext[:2]), n.short_m),
        ):
            if not lo <= round(v, 3) <= hi:
                bad.append(f"{name}: {what} {v:.2f} m outside [{lo:g}, {hi:g}]")
    assert not bad, "\n".join(bad)


def test_default_parts_are_of_plausible_materials(placed):
    objects, materials = placed
    bad = []
    for name, o in objects.items():
        n = norms().prefabs[name]
        if not n.materials:
            bad.append(f"{name}: names no plausible materials")
            continue
        for p in o.parts:
            cat = materials[p.material].category
            if cat not in n.materials:
                bad.append(f"{name}.{p.id} is {cat}, not among {n.materials}")
    assert not bad, "\n".join(bad)


def test_light_sources_are_exactly_the_prefabs_with_an_emitter(placed):
    objects, _ = placed
    wrong = {
        name: any(p.emitter for p in o.parts)
        for name, o in objects.items()
        if any(p.emitter for p in o.parts) != norms().prefabs[name].emits_light
    }
    assert not wrong, f"emits_light disagrees with the prefab's emitter parts (prefab emits?): {wrong}"


def test_up_side_and_era_agree_with_the_prefab(sources):
    _, decls, _ = sources
    bad = []
    for name, (decl, _) in decls.items():
        n = norms().prefabs[name]
        up = _word(decl, "upright")
        if up is not None and (up == "yes") != n.upright:
            bad.append(f"{name}: prefab says `upright {up}`, the norm upright={n.upright}")
        era = _word(decl, "era") or "any"
        if era in ERA_YEARS and n.introduced is not None and n.introduced > ERA_YEARS[era][1]:
            bad.append(f"{name}: prefab of the {era} era, but introduced {n.introduced}")
    assert not bad, "\n".join(bad)


def test_names_hold_what_the_prefab_is_called(sources):
    _, decls, _ = sources
    n = norms()
    bad = []
    for name, (decl, _) in decls.items():
        own = n.prefabs[name].names
        for word in (_word(decl, "name"), *_synonyms(decl)):
            if word in own or word in GENERIC:
                continue
            owner = SHARED.get(word)
            if owner is None or word not in n.prefabs[owner].names:
                bad.append(f"{name}: {word!r} is in none of its names (nor GENERIC, nor SHARED)")
    assert not bad, "\n".join(bad)


def test_declared_masses_are_plausible(placed):
    objects, _ = placed
    bad = []
    for name, o in objects.items():
        lo, hi = norms().prefabs[name].mass_kg
        if o.dynamic and not lo <= o.mass_kg <= hi:
            bad.append(f"{name}: {o.mass_kg:g} kg outside [{lo:g}, {hi:g}]")
    assert not bad, "\n".join(bad)


def test_material_categories_are_the_stdlib_ones(sources):
    _, _, modules = sources
    std = {
        c.value.text for mod in load_stdlib() for m in mod.materials for c in m.clauses if c.key == "category"
    }
    assert std == set(MATERIAL_CATEGORIES)
    used = {c.value.text for mod in modules for m in mod.materials for c in m.clauses if c.key == "category"}
    assert used <= set(MATERIAL_CATEGORIES), sorted(used - set(MATERIAL_CATEGORIES))


def test_lookup_prefers_the_prefab_the_name_names():
    n = norms()
    assert n.for_object("box", "shipping container", "object").key == "shipping_container"
    assert n.for_object("box", "old fruit crate", "object").key == "crate"  # its head noun
    assert n.for_object("bookshelf", "scroll shelf", "furniture").key == "bookshelf"
    assert n.for_object("box", "scroll shelf", "object").key == "shelf"
    assert n.for_object("cabinet", "kitchen counter", "furniture").key == "counter"
    assert n.for_object("basket", "fruit bowl", "container") is n.kinds["container"]
    assert n.for_object("box", "thing", "nonexistent_kind") is DEFAULT


GOOD = {"source": "measured"}


@pytest.mark.parametrize(
    "data, message",
    [
        ({"prefabs": {"x": {**GOOD, "colour": "red"}}}, "unknown field"),
        ({"prefabs": {"x": {**GOOD, "height_m": [2, 1]}}}, "low <= high"),
        ({"prefabs": {"x": {**GOOD, "height_m": [-1, 1]}}}, "low <= high"),
        ({"prefabs": {"x": {**GOOD, "height_m": 1.5}}}, "[low, high]"),
        ({"prefabs": {"x": {"height_m": [1, 2]}}}, "names no source"),
        ({"prefabs": {"x": {**GOOD, "kind": "furnture"}}}, "has no entry under `kinds:`"),
        ({"prefabs": {"x": {**GOOD, "materials": ["wood", "cheese"]}}}, "unknown categories"),
        ({"prefabs": {"x": {**GOOD, "materials": "wood"}}}, "list of words"),
        ({"prefabs": {"x": {**GOOD, "introduced": True}}}, "a year"),
        ({"prefabs": {"x": {**GOOD, "upright": "yes"}}}, "true or false"),
        ({"prefabs": {"x": {**GOOD, "mount": "floating"}}}, "mount"),
        ({"prefabs": {"x": {**GOOD, "lean_deg": 200}}}, "0-180"),
        ({"prefabs": {"x": {**GOOD, "front_clearance_m": 0.5}}}, "needs a `front`"),
        ({"prefabs": {"x": {**GOOD, "introduced": 1900, "in_use_until": 1800}}}, "before 1900"),
        ({"prefabs": {"a": {**GOOD, "names": ["tub"]}, "b": {**GOOD, "names": ["Tub"]}}}, "both"),
        ({"kinds": {"k": {**GOOD, "names": ["k"]}}}, "found by its tag"),
        ({"prefab": {}}, "unknown section"),
    ],
)
def test_the_loader_refuses_data_a_detector_would_misread(data, message):
    with pytest.raises(TaxonomyError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_norms(data)


def test_the_loader_accepts_an_entry_started_from_its_kind():
    n = load_norms({"kinds": {"k": {**GOOD, "upright": True}}, "prefabs": {"x": {**GOOD, "kind": "k"}}})
    assert n.prefabs["x"].upright and n.by_name["x"] is n.prefabs["x"]
