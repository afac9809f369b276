"""Object norms: what a normal object of each kind is like, the data the world-alone detectors rest on.

`norms.yaml` beside this module holds one entry per standard prefab (and per project prefab the
shipped scenes define), plus fallbacks per `kind` tag.  Each entry says, for real objects of that
kind, what an auditor would expect without ever seeing a clean twin: its natural size and how much
instances vary, when it came into use and until when, whether it has an up side and how far it may
lean, whether it stands, hangs or is fixed to a wall, what surfaces it is used on, which side must
stay clear for it to serve, whether it blocks a person, whether it may overlap what is around it,
whether it gives light, its plausible materials and loose mass.  Every entry names its source or
measurement (`source:`); `tests/taxonomy/test_norms.py` holds the table to the standard library.

Lookup (`Norms.for_object`): the object's prefab when its human name is one of the prefab's, else
a norm whose `names` hold its name or the name's head noun (a `box` named "crate" is a crate), else
its `kind`, else `DEFAULT`, which makes no claim a detector could act on.  No name belongs to two
entries (the loader refuses it), so the lookup never depends on the order of the file.  An object's own `era` clause is never read here: a bin is
as modern as bins are, whatever the source says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from functools import lru_cache

from wac.errors import TaxonomyError
from wac.taxonomy.registry import _load_yaml

Range = tuple[float, float]
MOUNTS = ("stands", "hangs", "wall", "lies", "floats", "any")  # floats: hovers by nature (a fish, a bird)
SURFACES = ("ground", "furniture", "any")
FRONTS = ("+x", "-x", "+y", "-y")
# The material categories of compiler/stdlib/materials.wa (this layer cannot read the compiler's
# stdlib; tests/taxonomy/test_norms.py holds the two lists equal).
MATERIAL_CATEGORIES = (
    "wood", "metal", "stone", "glass", "fabric", "plastic", "ceramic",
    "paper", "ground", "liquid", "vegetation", "rubber", "leather", "wax",
)  # fmt: skip
NOW = 2100  # "still in use"
# First and last year of each era a scene (or a prefab) may declare (CE; negative: BCE): what an
# object's years of use are compared with.  The language's `era` choices are these keys and "any".
ERA_YEARS = {
    "prehistoric": (-100000, -3000),
    "ancient": (-3000, 500),
    "medieval": (500, 1500),
    "early_modern": (1500, 1800),
    "industrial": (1800, 1945),
    "modern": (1945, NOW),
}


@dataclass(frozen=True, slots=True)
class Norm:
    """What normal is for one kind of object (see the module docstring); sizes in metres of the
    object as a whole: `height_m` its vertical extent standing upright, `long_m` and `short_m` the
    longer and shorter of its horizontal extents."""

    key: str
    names: tuple[str, ...] = ()
    height_m: Range = (0.0, 1e9)
    long_m: Range = (0.0, 1e9)
    short_m: Range = (0.0, 1e9)
    fixed_proportions: bool = False  # real instances keep their proportions (a chair, a barrel)
    introduced: int | None = None  # year it came into use as drawn; None: since prehistory
    in_use_until: int | None = None  # last year in common use; None: still in use
    upright: bool = False  # has a natural up side
    lean_deg: float = 180.0  # lean from upright that ordinary use and wear explain
    mount: str = "any"  # stands on a surface | hangs from above | fixed to a wall | lies | floats | any
    rests_on: tuple[str, ...] = ("any",)  # the surfaces it is used on
    front: str | None = None  # object-frame side that must stay clear for it to serve
    front_clearance_m: float = 0.0
    blocks: bool | None = None  # a person cannot walk through it (None: no claim)
    soft: bool = False  # may overlap what is around it (foliage, cloth, water)
    emits_light: bool = False  # a light source (when lit)
    materials: tuple[str, ...] = ()  # plausible material categories (empty: no claim)
    mass_kg: Range = (0.0, 1e9)  # when loose
    source: str = ""

    @property
    def claims(self) -> bool:
        """Whether the entry says anything (DEFAULT does not)."""
        return self.key != DEFAULT.key


DEFAULT = Norm("default")
_FIELDS = {f.name for f in fields(Norm)}


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _range(key: str, name: str, value) -> Range:
    if not (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(_number(v) and v >= 0 for v in value)
        and value[0] <= value[1]
    ):
        raise TaxonomyError(
            f"norms.yaml: `{key}.{name}` must be [low, high] with 0 <= low <= high, got {value!r}"
        )
    return float(value[0]), float(value[1])


def _words(key: str, name: str, value) -> tuple[str, ...]:
    # a bare string would otherwise become a tuple of its letters
    if not (isinstance(value, list) and all(isinstance(w, str) and w.strip() for w in value)):
        raise TaxonomyError(f"norms.yaml: `{key}.{name}` must be a list of words, got {value!r}")
    return tuple(value)


# field -> (accepted types, what to write): the scalar fields a typo could make the wrong type
_SCALARS = {
    "fixed_proportions": (bool, "true or false"),
    "upright": (bool, "true or false"),
    "soft": (bool, "true or false"),
    "emits_light": (bool, "true or false"),
    "blocks": (bool | None, "true, false or null"),
    "introduced": (int | None, "a year (negative: BCE) or null"),
    "in_use_until": (int | None, "a year (negative: BCE) or null"),
    "lean_deg": (int | float, "degrees, 0-180"),
    "front_clearance_m": (int | float, "metres, 0 or more"),
    "mount": (str, f"one of {MOUNTS}"),
    "front": (str | None, f"one of {FRONTS} or null"),
    "source": (str, "a source or measurement"),
}
_BOOLS = {name for name, (types, _) in _SCALARS.items() if types in (bool, bool | None)}


def _norm(key: str, spec: dict, base: Norm | None = None) -> Norm:
    unknown = set(spec) - _FIELDS
    if unknown:
        raise TaxonomyError(f"norms.yaml: `{key}` has unknown field(s) {sorted(unknown)}")
    values = {} if base is None else {f: getattr(base, f) for f in _FIELDS}
    values["key"] = key
    for name, value in spec.items():
        if name in ("height_m", "long_m", "short_m", "mass_kg"):
            value = _range(key, name, value)
        elif name in ("names", "rests_on", "materials"):
            value = _words(key, name, value)
        elif name in _SCALARS:
            types, what = _SCALARS[name]
            # bool is an int to Python: `introduced: true` is a typo, not the year 1
            if not isinstance(value, types) or (isinstance(value, bool) and name not in _BOOLS):
                raise TaxonomyError(f"norms.yaml: `{key}.{name}` must be {what}, got {value!r}")
        values[name] = value
    return _checked(key, Norm(**values))


def _checked(key: str, norm: Norm) -> Norm:
    """`norm` if its fields agree with each other and with the vocabularies above."""
    if norm.mount not in MOUNTS:
        raise TaxonomyError(f"norms.yaml: `{key}.mount` is {norm.mount!r}; one of {MOUNTS}")
    if not set(norm.rests_on) <= set(SURFACES):
        raise TaxonomyError(f"norms.yaml: `{key}.rests_on` must be among {SURFACES}")
    if norm.front not in (None, *FRONTS):
        raise TaxonomyError(f"norms.yaml: `{key}.front` is {norm.front!r}; one of {FRONTS}")
    if not norm.source.strip():
        raise TaxonomyError(f"norms.yaml: `{key}` names no source")
    if not 0 <= norm.lean_deg <= 180:
        raise TaxonomyError(f"norms.yaml: `{key}.lean_deg` is {norm.lean_deg}; 0-180 deg")
    if norm.front_clearance_m < 0 or (norm.front_clearance_m > 0 and norm.front is None):
        raise TaxonomyError(f"norms.yaml: `{key}.front_clearance_m` needs a `front` and must be 0 or more")
    bad = sorted(set(norm.materials) - set(MATERIAL_CATEGORIES))
    if bad:
        raise TaxonomyError(
            f"norms.yaml: `{key}.materials` names unknown categories {bad}; one of {MATERIAL_CATEGORIES}"
        )
    years = (norm.introduced, norm.in_use_until)
    if None not in years and years[0] > years[1]:
        raise TaxonomyError(f"norms.yaml: `{key}` is in use until {years[1]}, before {years[0]}")
    return norm


@dataclass(frozen=True)
class Norms:
    prefabs: dict[str, Norm]
    kinds: dict[str, Norm]
    by_name: dict[str, Norm]

    def for_object(self, prefab: str | None, name: str, kind: str) -> Norm:
        """The norm of an object built from `prefab`, called `name`, tagged `kind`: its prefab's
        when the name is one of the prefab's (a bookshelf called "scroll shelf" is a bookshelf, not
        the steel `shelf` unit the word alone names), else what its name says it is (a `box` named
        "crate"; a prefab reused for another thing, a bowl made from the basket prefab, is not held
        to baskets), else its kind's."""
        words = " ".join(re.findall(r"[a-z]+", name.lower()))
        if prefab and prefab in self.prefabs:
            n = self.prefabs[prefab]
            own = {head_noun(x) for x in (n.key.replace("_", " "), *n.names)} | {n.key}
            if not words or head_noun(name) in own or words == prefab.replace("_", " "):
                return n
        for word in (words, head_noun(name)):
            if word in self.by_name:
                return self.by_name[word]
        return self.kinds.get(kind, DEFAULT)


def head_noun(name: str) -> str:
    """The noun a name is about: "grain sack" -> "sack", "bag of grain" -> "bag"."""
    ws = [w for w in re.findall(r"[a-z]+", name.lower())]
    if not ws:
        return ""
    if "of" in ws[1:]:
        return ws[ws.index("of") - 1]
    return ws[-1]


@lru_cache(maxsize=1)
def norms() -> Norms:
    """The norms of `norms.yaml` beside this module (read once per process)."""
    return load_norms(_load_yaml("norms.yaml") or {})  # the registry's reader: libyaml's loader


def load_norms(data: dict) -> Norms:
    """Norms from the parsed YAML (`kinds:` and `prefabs:`), refusing what a detector would misread:
    an unknown section, field, kind or material category, a wrong type, a range with low > high, a
    missing source, and a name two entries claim (the lookup would depend on their order)."""
    unknown = set(data) - {"kinds", "prefabs"}
    if unknown:
        raise TaxonomyError(f"norms.yaml: unknown section(s) {sorted(unknown)}; kinds, prefabs")
    kinds: dict[str, Norm] = {}
    for key, spec in (data.get("kinds") or {}).items():
        if "names" in (spec or {}) or "kind" in (spec or {}):
            raise TaxonomyError(f"norms.yaml: kind `{key}` is found by its tag: no `names`/`kind`")
        kinds[key] = _norm(key, spec or {})
    prefabs: dict[str, Norm] = {}
    for key, spec in (data.get("prefabs") or {}).items():
        spec = dict(spec or {})
        kind = spec.pop("kind", None)
        if kind is not None and kind not in kinds:
            raise TaxonomyError(f"norms.yaml: `{key}.kind` is {kind!r}, which has no entry under `kinds:`")
        prefabs[key] = _norm(key, spec, kinds.get(kind) if kind else None)
    by_name: dict[str, Norm] = {}
    for n in prefabs.values():
        for word in (n.key.replace("_", " "), *n.names):
            name = " ".join(re.findall(r"[a-z]+", word.lower()))
            if not name:
                raise TaxonomyError(f"norms.yaml: `{n.key}` lists the name {word!r}: no letters")
            if by_name.setdefault(name, n) is not n:
                raise TaxonomyError(
                    f"norms.yaml: the name {word!r} belongs to both `{by_name[name].key}` and "
                    f"`{n.key}`; keep it in the entry it fits"
                )
    return Norms(prefabs, kinds, by_name)
