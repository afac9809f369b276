"""The statements of the language: which words each statement takes and of what type.

The grammar fixes only the shape of a statement (words and an optional block); this table
gives them meaning.  The AST pass (`elaborate`) reads statements against it, and the
language reference in docs/ is checked against it by a test.
"""

from __future__ import annotations

from dataclasses import dataclass

# First and last year of each era (the norms' table); anachronism checks compare these.
from wac.taxonomy.norms import ERA_YEARS  # noqa: F401

# Value types.  Units: length m|cm|mm (bare = m); angle deg|rad (required);
# duration s|ms (required); speed m/s; rate deg/s; mass kg|g (required).
LENGTH = "length"
ANGLE = "angle"
DURATION = "duration"
SPEED = "speed"
RATE = "rate"
MASS = "mass"
NUMBER = "number"
INT = "int"
FRACTION = "fraction"
STRING = "string"
COLOR = "color"
BOOL = "bool"
WORD = "word"  # a bare identifier (an era, a kind, …)
VEC2 = "vec2"  # (x, y) lengths
VEC3 = "vec3"  # (x, y, z) lengths
POS = "pos"  # (x, y) or (x, y, z) lengths
SCALE = "scale"  # a factor or (fx, fy, fz)
STRINGS = "strings"  # a string or a list of strings
WORDS = "words"  # a list of bare identifiers
POLYGON = "polygon"  # a list of (x, y)
OBJECT = "object"  # reference to an object id
OBJECTS = "objects"  # list of object ids
PART = "part"
MATERIAL = "material"
PREFAB = "prefab"
ENUM = "enum"


@dataclass(frozen=True, slots=True)
class Clause:
    """One `key value` clause of an object, part, light, … ."""

    key: str
    type: str
    doc: str
    choices: tuple[str, ...] = ()
    min: float | None = None
    max: float | None = None


def _c(key: str, type_: str, doc: str, choices: tuple[str, ...] = (), lo=None, hi=None) -> Clause:
    return Clause(key, type_, doc, choices, lo, hi)


SCENE_TYPES = ("indoor", "urban", "historical", "industrial", "natural")
ERAS = ("any", "prehistoric", "ancient", "medieval", "early_modern", "industrial", "modern")
INTERACTIONS = ("open", "toggle", "push", "pick_up")
SHAPES = ("box", "cylinder", "sphere", "capsule", "cone", "wedge", "mesh")

# Clauses shared by placed things (objects and parts).
PLACEMENT = (
    _c("at", POS, "position of the base centre: (x, y) on the ground or support, or (x, y, z)"),
    _c("yaw", ANGLE, "heading; 0 deg faces +x, positive turns counter-clockwise", lo=-360, hi=360),
    _c("pitch", ANGLE, "rotation about the object's y axis", lo=-360, hi=360),
    _c("roll", ANGLE, "rotation about the object's x axis", lo=-360, hi=360),
    _c("material", MATERIAL, "surface material (built-in or declared with `material`)"),
    _c("color", COLOR, 'colour: "#rrggbb" or a colour name; tints the material'),
    _c("solid", BOOL, "whether it blocks movement (default yes)"),
)
SHAPE_SIZE = (
    _c("size", VEC3, "box or wedge size (x, y, z)", lo=0.001, hi=1000),
    _c("radius", LENGTH, "radius of a cylinder, sphere, capsule or cone", lo=0.001, hi=500),
    _c("height", LENGTH, "height of a cylinder, capsule or cone", lo=0.001, hi=1000),
    _c("file", STRING, "mesh file (OBJ, STL, PLY, GLB) inside the project root"),
)

OBJECT_CLAUSES = (
    PLACEMENT
    + SHAPE_SIZE
    + (
        _c("on", OBJECT, "rests on top of this object; the compiler computes the height"),
        _c(
            "attached_to",
            OBJECT,
            "fixed to this object (a picture on a wall, a sign on a post): it must touch it, and may sit up "
            "to 5 cm into it",
        ),
        _c("scale", SCALE, "uniform factor or (fx, fy, fz)", lo=0.01, hi=100),
        _c("name", STRING, "human name used in rubrics and reports (default: the prefab's)"),
        _c("synonyms", STRINGS, "other names a report may use"),
        _c("kind", WORD, "semantic kind: furniture, container, vegetation, …"),
        _c("era", WORD, "era the object belongs to", choices=ERAS),
        _c("tags", WORDS, "free semantic tags"),
        _c("mass", MASS, "makes the object dynamic (it can be pushed, tipped, rolled)", lo=0.001, hi=100000),
        _c("interact", ENUM, "what the agent can do to it", choices=INTERACTIONS),
        _c("lit", BOOL, "for objects with a light: whether it is on"),
        _c("open", BOOL, "for doors: whether it starts open"),
        _c("open_time", DURATION, "for doors: how long opening or closing takes", lo=0.05, hi=30),
        _c("liquid", BOOL, "water or a pit: the agent sinks into it instead of walking on it"),
        _c("depth", LENGTH, "for liquids: how deep the agent sinks", lo=0.05, hi=5),
        _c(
            "walkable",
            BOOL,
            "the agent walks on its top: it steps up edges of at most 0.25 m and climbs slopes of at most 35 deg",
        ),
        _c(
            "cutaway",
            BOOL,
            "a ceiling or roof: overview shots leave it out to show what is under it (the agent sees it)",
        ),
    )
)

PART_CLAUSES = (
    PLACEMENT
    + SHAPE_SIZE
    + (
        _c("hinge", VEC2, "the part swings about a vertical axis through this point when opened"),
        _c("swing", ANGLE, "how far a hinged part swings (default 90 deg)", lo=-180, hi=180),
        _c(
            "emits",
            NUMBER,
            "the part is a light source of this intensity while the object is lit",
            lo=0,
            hi=100,
        ),
        _c("light_range", LENGTH, "reach of the part's light", lo=0.1, hi=200),
        _c("light_color", COLOR, "colour of the part's light"),
        _c("spin", RATE, "the part turns continuously at this rate", lo=-7200, hi=7200),
        _c("spin_axis", ENUM, "axis of the spin, in the part's frame", choices=("x", "y", "z")),
    )
)

LIGHT_CLAUSES = (
    _c("at", VEC3, "position (x, y, z)"),
    _c("color", COLOR, "light colour"),
    _c("intensity", NUMBER, "brightness (1 = a street lamp)", lo=0, hi=100),
    _c("range", LENGTH, "reach", lo=0.1, hi=500),
    _c("on", BOOL, "whether it is on"),
)

MATERIAL_CLAUSES = (
    _c("color", COLOR, "base colour"),
    _c("roughness", FRACTION, "0 = mirror, 1 = matte", lo=0, hi=1),
    _c("metallic", FRACTION, "0 = dielectric, 1 = metal", lo=0, hi=1),
    _c("opacity", FRACTION, "1 = opaque", lo=0, hi=1),
    _c(
        "texture",
        ENUM,
        "procedural pattern",
        choices=("none", "grain", "brick", "tiles", "checker", "noise", "stripes"),
    ),
    _c("category", WORD, "what kind of material it is (wood, metal, glass, …)"),
)

SUN_CLAUSES = (
    _c("azimuth", ANGLE, "direction the sunlight comes from, measured like yaw", lo=-360, hi=360),
    _c("elevation", ANGLE, "height of the sun above the horizon", lo=1, hi=90),
    _c("intensity", NUMBER, "brightness", lo=0, hi=10),
    _c("color", COLOR, "sunlight colour"),
)

DAY_NIGHT_CLAUSES = (
    _c("period", DURATION, "length of a full day", lo=1, hi=86400),
    _c("transition", ENUM, "how light changes", choices=("gradual", "abrupt")),
    _c("phase", FRACTION, "time of day at the start (0.25 = noon, 0.75 = midnight)", lo=0, hi=1),
)

GROUND_CLAUSES = (
    _c("size", VEC2, "extent (x, y) of the ground", lo=1, hi=10000),
    _c(
        "terrain",
        ENUM,
        "`flat` (default) or a seeded `heightfield` of hills",
        choices=("flat", "heightfield"),
    ),
    _c("seed", INT, "the heightfield's seed (default 1)", lo=0, hi=2**31 - 1),
    _c("amplitude", LENGTH, "the heightfield's heights run from -amplitude to +amplitude", lo=0.01, hi=5),
    _c("scale", LENGTH, "the size of its largest hills (default 10 m)", lo=1, hi=1000),
)

START_CLAUSES = (
    _c("at", VEC2, "start position (x, y)"),
    _c("yaw", ANGLE, "start heading", lo=-360, hi=360),
    _c("pitch", ANGLE, "start pitch; positive looks down", lo=-90, hi=90),
)

BOUNDS_CLAUSES = (
    _c("from", VEC2, "one corner of a rectangle"),
    _c("to", VEC2, "the opposite corner"),
    _c("polygon", POLYGON, "a polygon [(x, y), …] instead of a rectangle"),
)

# The triggers (`when KIND …`, `on_KIND`) are units of their own: wac.compiler.triggers.


@dataclass(frozen=True, slots=True)
class Statement:
    """A statement keyword in some context: its positional arguments and its clauses."""

    keyword: str
    doc: str
    positional: tuple[tuple[str, str], ...] = ()  # (name, type)
    clauses: tuple[Clause, ...] = ()
    block: str | None = None  # context of the block's statements, if it takes one
    repeatable: bool = False
    example: str = ""


FILE_STATEMENTS = (
    Statement(
        "import",
        "read another file of the project (path relative to this file)",
        (("path", STRING),),
        example='import "../scenes/market.wa"',
        repeatable=True,
    ),
    Statement(
        "scene",
        "declare a clean scene",
        (("name", WORD),),
        block="scene",
        repeatable=True,
        example="scene market { … }",
    ),
    Statement(
        "task",
        "declare a task on a scene: `task NAME on SCENE { … }`",
        (("name", WORD),),
        (_c("on", WORD, "the scene the task uses"),),
        block="task",
        repeatable=True,
        example="task floating_sacks on market { … }",
    ),
    Statement(
        "prefab",
        "declare a prefab: a reusable object built from parts",
        (("name", WORD),),
        block="prefab",
        repeatable=True,
        example="prefab stool { … }",
    ),
    Statement(
        "material",
        "declare a material",
        (("name", WORD),),
        MATERIAL_CLAUSES,
        repeatable=True,
        example='material oak color "#8a5a2b" roughness 0.8 category wood',
    ),
)

SCENE_STATEMENTS = (
    Statement(
        "description",
        "what the auditor is told about the scene",
        (("text", STRING),),
        example='description "A medieval village market with stalls and grain sacks."',
    ),
    Statement("type", "scene type", (("type", ENUM),), example="type historical"),
    Statement(
        "language",
        "the language of the description and the object names (ISO 639-1; default `en`)",
        (("code", WORD),),
        example="language de",
    ),
    Statement("era", "historical era of the scene", (("era", WORD),), example="era medieval"),
    Statement(
        "environment",
        "the environment (a benchmark's world) this scene is one region of",
        (("name", WORD),),
        (
            _c(
                "coverage",
                LENGTH,
                "geometric-coverage distance limit for this environment (App. E)",
                lo=1,
                hi=200,
            ),
        ),
        example="environment residential_house coverage 8 m",
    ),
    Statement(
        "ground",
        "ground material and size",
        (("material", MATERIAL),),
        GROUND_CLAUSES,
        example="ground grass size (40, 40)",
    ),
    Statement("sky", "sky colour", (("color", COLOR),), example='sky "#9ec3e6"'),
    Statement("ambient", "ambient light level", (("level", FRACTION),), example="ambient 0.35"),
    Statement(
        "fog",
        "distance fog: far things fade into the fog colour (underwater, haze, night mist)",
        (),
        (
            _c("color", COLOR, "colour things fade into (default: the sky colour)"),
            _c("density", NUMBER, "exponential fog: fraction lost per metre", lo=0.0001, hi=5),
            _c("start", LENGTH, "linear fog: where it begins", lo=0, hi=10000),
            _c("end", LENGTH, "linear fog: where everything is fog colour", lo=0.1, hi=10000),
        ),
        example='fog color "#1d4e6b" start 4 m end 30 m',
    ),
    Statement(
        "tint",
        "a colour laid over every frame (underwater blue, night blue, sepia haze)",
        (("color", COLOR),),
        (_c("strength", FRACTION, "how much of the tint colour is mixed in (default 0.3)", lo=0, hi=1),),
        example='tint "#2a6f8f" strength 0.35',
    ),
    Statement("sun", "the sun", (), SUN_CLAUSES, example="sun azimuth 135 deg elevation 50 deg"),
    Statement("no_sun", "an indoor scene without sunlight", (), example="no_sun"),
    Statement("day_night", "a day-night cycle", (), DAY_NIGHT_CLAUSES, example="day_night period 60 s"),
    Statement(
        "light",
        "a point light",
        (("id", WORD),),
        LIGHT_CLAUSES,
        repeatable=True,
        example="light lantern_glow at (2, 3, 2.5) intensity 0.8 range 6 m",
    ),
    Statement(
        "bounds",
        "where the agent may go (default for the scene's tasks)",
        (),
        BOUNDS_CLAUSES,
        example="bounds from (-10, -10) to (10, 10)",
    ),
    Statement(
        "start",
        "where the agent starts (default for the scene's tasks)",
        (),
        START_CLAUSES,
        example="start at (0, -8) yaw 90 deg",
    ),
    Statement(
        "benign",
        "a deliberate oddity that is not a defect",
        (("object", OBJECT),),
        (_c("reason", STRING, "why it is normal"),),
        repeatable=True,
        example='benign sign_3 reason "the sign leans on purpose"',
    ),
    Statement(
        "interact",
        "let the agent interact with an object",
        (("object", OBJECT), ("action", ENUM)),
        repeatable=True,
        example="interact door_1 open",
    ),
)

TASK_STATEMENTS = (
    Statement("description", "overrides the scene's description for this task", (("text", STRING),)),
    Statement(
        "hint",
        "anomaly-type hint shown to the auditor (default: the category's name)",
        (("text", STRING),),
        example='hint "Missing support / floating"',
    ),
    Statement(
        "language",
        "the language of what the auditor reads: description, hint (ISO 639-1; default: the scene's)",
        (("code", WORD),),
        example="language fr",
    ),
    Statement("difficulty", "expected difficulty", (("level", ENUM),), example="difficulty medium"),
    Statement("tags", "free tags", (("tags", WORDS),), example="tags [demo, market]"),
    Statement(
        "example",
        "an in-context demonstration task, excluded from evaluation",
        (("flag", BOOL),),
        example="example yes",
    ),
    Statement("budget", "action budget", (("actions", INT),), example="budget 40"),
    Statement(
        "multi_anomaly",
        "allow several anomaly statements (the paper's §6.2 study)",
        (("flag", BOOL),),
        example="multi_anomaly yes",
    ),
    Statement(
        "bounds", "where the agent may go", (), BOUNDS_CLAUSES, example="bounds from (-6, -6) to (6, 6)"
    ),
    Statement("start", "where the agent starts", (), START_CLAUSES, example="start at (0, -5) yaw 90 deg"),
    Statement(
        "interact",
        "let the agent interact with an object",
        (("object", OBJECT), ("action", ENUM)),
        repeatable=True,
        example="interact basket_1 pick_up",
    ),
    Statement(
        "anomaly",
        "the implanted anomaly (see the operator table)",
        (),
        repeatable=True,
        example="anomaly float sack_2 by 0.4 m",
    ),
)

# clauses every anomaly statement takes, beside its operator's parameters and its `when` trigger
ANOMALY_CLAUSES = (
    _c(
        "affects",
        OBJECTS,
        "other objects the anomaly changes as a consequence (a barrel that drops into an added hole): "
        "the self-check's one-change rule lets them differ, and they are part of the anomaly",
    ),
)

PREFAB_STATEMENTS = (
    Statement("description", "what the prefab is", (("text", STRING),)),
    Statement(
        "name", "default human name of its instances", (("text", STRING),), example='name "wooden chair"'
    ),
    Statement("synonyms", "default synonyms", (("names", STRINGS),), example='synonyms ["seat"]'),
    Statement("kind", "semantic kind", (("kind", WORD),), example="kind furniture"),
    Statement("era", "era it belongs to", (("era", WORD),), example="era modern"),
    Statement(
        "scene_types", "scene types it suits", (("types", WORDS),), example="scene_types [indoor, urban]"
    ),
    Statement("tags", "semantic tags", (("tags", WORDS),)),
    Statement(
        "param",
        "a parameter with its default; parts may use it in expressions",
        (("name", WORD), ("default", "any")),
        repeatable=True,
        example="param seat_height 0.45 m",
    ),
    Statement(
        "material", "default material of its parts", (("material", MATERIAL),), example="material wood"
    ),
    Statement("color", "default colour of its parts", (("color", COLOR),)),
    Statement("solid", "whether instances block movement", (("flag", BOOL),)),
    Statement("mass", "default mass (instances are dynamic)", (("mass", MASS),), example="mass 12 kg"),
    Statement("interact", "default interaction", (("action", ENUM),), example="interact open"),
    Statement("lit", "default lit state for prefabs with emitting parts", (("flag", BOOL),)),
    Statement("open_time", "for doors: default opening time", (("time", DURATION),)),
    Statement("upright", "whether it has a natural up side (invert/tilt make sense)", (("flag", BOOL),)),
    Statement("liquid", "instances are liquids or pits the agent sinks into", (("flag", BOOL),)),
)

CONTEXTS = {
    "file": {s.keyword: s for s in FILE_STATEMENTS},
    "scene": {s.keyword: s for s in SCENE_STATEMENTS},
    "task": {s.keyword: s for s in TASK_STATEMENTS},
    "prefab": {s.keyword: s for s in PREFAB_STATEMENTS},
}
ENUMS = {
    ("scene", "type"): SCENE_TYPES,
    ("task", "difficulty"): ("easy", "medium", "hard"),
    ("scene", "interact"): INTERACTIONS,
    ("task", "interact"): INTERACTIONS,
    ("prefab", "interact"): INTERACTIONS,
}
OBJECT_CLAUSE_MAP = {c.key: c for c in OBJECT_CLAUSES}
PART_CLAUSE_MAP = {c.key: c for c in PART_CLAUSES}


# --- generators: statements that expand into many objects (compiler/placement.py, rooms.py) ----
# `LABEL: row|grid|ring|scatter|room …` in a scene or task; every generated object's id derives
# from LABEL (docs/language.md §6a).  Other object clauses (material, color, scale, name, …) are
# passed on to every generated object.
FACING = "facing"  # a word (along, across, in, out, random) or a point (x, y) to face

_FACE_DOC = "which way each object faces: a point (x, y) to face"
GENERATOR_STATEMENTS = (
    Statement(
        "row",
        "objects evenly spaced on a line: ids LABEL_1 … LABEL_N from `from` to `to`",
        (("prefab", PREFAB),),
        (
            _c("from", VEC2, "the first object's position"),
            _c("to", VEC2, "the end of the line"),
            _c("every", LENGTH, "spacing along the line (the last object may stop short of `to`)", lo=0.05),
            _c(
                "count", INT, "or: this many objects, the first at `from` and the last at `to`", lo=1, hi=1000
            ),
            _c("face", FACING, _FACE_DOC + ", `along` the line or `across` it"),
        ),
        example="lamps: row lamp_post from (-12, 3) to (12, 3) every 8 m face across",
    ),
    Statement(
        "grid",
        "a rectangular array: ids LABEL_1 … LABEL_N, x varying fastest",
        (("prefab", PREFAB),),
        (
            _c("at", VEC2, "the first object's position (the grid grows towards +x and +y)"),
            _c("count", VEC2, "objects along x and along y: `(nx, ny)`"),
            _c("spacing", VEC2, "distance between neighbours along x and y: `(dx, dy)`"),
            _c("face", FACING, _FACE_DOC),
        ),
        example="crates: grid crate at (2, 2) count (3, 2) spacing (1 m, 1 m)",
    ),
    Statement(
        "ring",
        "objects evenly spaced on a circle: ids LABEL_1 … LABEL_N counter-clockwise from `start`",
        (("prefab", PREFAB),),
        (
            _c("around", VEC2, "centre of the circle"),
            _c("radius", LENGTH, "radius of the circle", lo=0.05, hi=5000),
            _c("count", INT, "how many objects", lo=1, hi=1000),
            _c("start", ANGLE, "angle of the first object, measured like yaw (default 0 deg)"),
            _c("face", FACING, _FACE_DOC + ", `in` (to the centre), `out` or `along` the circle"),
        ),
        example="stones: ring standing_stone around (0, 0) radius 6 m count 12 face in",
    ),
    Statement(
        "scatter",
        "N objects at seeded random places inside a region, apart from each other and from what is there",
        (("count", INT), ("prefab", PREFAB)),
        (
            _c("from", VEC2, "one corner of a rectangular region"),
            _c("to", VEC2, "the opposite corner"),
            _c("in", POLYGON, "or: a polygon region [(x, y), …]"),
            _c("seed", INT, "the scatter's own random seed (default 1)", lo=0, hi=2**31 - 1),
            _c("min_gap", LENGTH, "free space kept between objects and to other objects", lo=0, hi=100),
            _c("avoid", OBJECTS, "also keep `min_gap` from these (non-solid) objects: paths, rugs, water"),
            _c("face", FACING, _FACE_DOC + " or `random` (seeded)"),
        ),
        example="trees: scatter 40 tree from (-30, -30) to (30, 30) seed 3 min_gap 2 m",
    ),
    Statement(
        "room",
        "walls around a floor plan, with doors, windows and openings in a `{ … }` block",
        (),
        (
            _c("from", VEC2, "one corner of a rectangular floor plan"),
            _c("to", VEC2, "the opposite corner"),
            _c("polygon", POLYGON, "or: a floor plan whose sides run along x or y"),
            _c("height", LENGTH, "wall height (default 2.6 m)", lo=0.5, hi=50),
            _c("thickness", LENGTH, "wall thickness (default 0.15 m)", lo=0.02, hi=2),
            _c("ceiling", BOOL, "a ceiling on the walls' tops (default: yes in a scene of type `indoor`)"),
            _c("ceiling_material", MATERIAL, "the ceiling's material (default: the walls'); gives a ceiling"),
            _c("ceiling_color", COLOR, "the ceiling's colour (default: the walls'); gives a ceiling"),
        ),
        block="room",
        repeatable=True,
        example="kitchen: room from (0, 0) to (5, 4) material plaster { door s at 1.5 m }",
    ),
    Statement(
        "stairs",
        "a walkable flight of steps: ids LABEL_1 … LABEL_N from the bottom, climbing towards `yaw`",
        (),
        (
            _c("at", VEC2, "the middle of the bottom step's front edge"),
            _c("steps", INT, "how many steps", lo=1, hi=200),
            _c("rise", LENGTH, "height of each step (default 0.17 m; at most 0.25 m)", lo=0.01, hi=5),
            _c("run", LENGTH, "depth of each step (default 0.3 m)", lo=0.25, hi=10),
            _c("width", LENGTH, "width of the flight (default 1.2 m)", lo=0.3, hi=100),
        ),
        example="up: stairs at (2, 0) yaw 90 deg steps 6 rise 0.17 m run 0.3 m width 1.2 m",
    ),
    Statement(
        "ramp",
        "a walkable slope: one wedge, id LABEL, rising from `at` towards `yaw`",
        (),
        (
            _c("at", VEC2, "the middle of the ramp's low edge"),
            _c("length", LENGTH, "its length over the ground", lo=0.1, hi=1000),
            _c(
                "rise",
                LENGTH,
                "height of its high end (at most 35 deg: rise ≤ 0.7 × length)",
                lo=0.01,
                hi=100,
            ),
            _c("width", LENGTH, "its width (default 1.2 m)", lo=0.3, hi=100),
        ),
        example="slope: ramp at (0, 4) yaw 0 deg length 4 m rise 1 m width 1.5 m",
    ),
)
GENERATORS = {s.keyword: s for s in GENERATOR_STATEMENTS}
# The statements of a room's block: `door SIDE …`, `window SIDE …`, `opening SIDE …`.
OPENING_CLAUSES = {
    "door": (
        _c("at", LENGTH, "centre of the opening from the side's west or south end (default: the middle)"),
        _c("prefab", PREFAB, "the door prefab (default `door`; its width sets the opening's)"),
        _c("open", BOOL, "whether the door starts open"),
    ),
    "window": (
        _c("at", LENGTH, "centre of the opening from the side's west or south end (default: the middle)"),
        _c("width", LENGTH, "window width (default 1.2 m)", lo=0.2, hi=20),
        _c(
            "prefab",
            PREFAB,
            "the window prefab (default `window`; takes `width`, `wall_height`, `thickness`)",
        ),
    ),
    "opening": (
        _c("at", LENGTH, "centre of the opening from the side's west or south end (default: the middle)"),
        _c("width", LENGTH, "width of the gap", lo=0.2, hi=50),
        _c("height", LENGTH, "height of the gap (default: the whole wall; else a lintel above)", lo=0.5),
    ),
}
