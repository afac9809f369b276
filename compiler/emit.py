"""Pass 8, emit: write bundles atomically, with a manifest, an index and a build cache.

A build writes into a temporary directory beside OUT and renames it into place only when
every task compiled, so a failed build leaves the previous OUT untouched; an incremental
commit is journaled and builds of one OUT take turns (`outdir.py`).  Unchanged
tasks (same sources, same wac) are copied from the previous build instead of recompiled.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path

import jsonschema

from wac import __version__
from wac.bundle import model as B
from wac.bundle import reader as R
from wac.compiler import outdir
from wac.compiler.lower import Lowered3, context_markdown
from wac.compiler.rubric import markdown as rubric_markdown
from wac.errors import UsageError

CACHE_FILE = ".wac-cache.json"


def canonical_json(data) -> bytes:
    """Bundle JSON: sorted keys, no insignificant whitespace, UTF-8, a final newline.

    Compact on purpose (the C encoder is several times faster than an indenting one);
    the Markdown files beside the JSON are the human-readable views.
    """
    return (json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode(
        "utf-8"
    )


def dump(model: B.Model) -> bytes:
    return canonical_json(model.model_dump(mode="json"))


@lru_cache(maxsize=1)
def _validators():
    """Validators for the parts of a task document: the task without its scene's objects,
    and one scene object; the same JSON Schema as `schemas/task.schema.json`, split so that
    objects shared by many tasks are validated once."""
    schema = B.CompiledTask.model_json_schema()
    cls = jsonschema.validators.validator_for(schema)
    defs = schema.pop("$defs")
    # the models are not recursive, so every $ref can be inlined: validation then follows no
    # references, which makes it several times faster
    return (
        cls(_inline(schema, defs)),
        cls(_inline(defs["SceneObject"], defs)),
        cls(_inline(defs["Material"], defs)),
    )


def _inline(node, defs):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**_inline(defs[ref.rsplit("/", 1)[1]], defs), **_inline(rest, defs)}
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


_VALID_PARTS: set[str] = set()  # content and shape hashes of validated parts
_VALUE_CONSTRAINTS = frozenset(
    {
        "enum",
        "const",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "not",
        "if",
    }
)


def _free(schema: dict) -> bool:
    """Whether a value's validity under `schema` depends on its JSON type only."""
    options = schema.get("anyOf", [schema])
    return all(
        isinstance(o, dict) and not (_VALUE_CONSTRAINTS & o.keys()) and "anyOf" not in o for o in options
    )


def _sub(schema: dict, kind: str) -> dict:
    """The branch of an `anyOf` that describes a value of JSON type `kind`."""
    for o in schema.get("anyOf", [schema]):
        if isinstance(o, dict) and o.get("type") == kind:
            return o
    return schema


def _shape(node, schema: dict):
    """A JSON value with every number and string its schema does not constrain replaced by its
    type: 20,000 crates at different places, with different ids, validate alike."""
    if isinstance(node, dict):
        sub = _sub(schema, "object")
        props = sub.get("properties", {})
        return {k: _shape(v, props.get(k, {"not": {}})) for k, v in node.items()}
    if isinstance(node, list):
        sub = _sub(schema, "array")
        prefix = sub.get("prefixItems")
        items = sub.get("items", {"not": {}})
        return [_shape(v, prefix[i] if prefix and i < len(prefix) else items) for i, v in enumerate(node)]
    if isinstance(node, bool) or node is None or not _free(schema):
        return node
    if isinstance(node, str):
        return "<str>"
    return "<int>" if isinstance(node, int) else "<float>"


def validate_task(task_json: dict, validated: dict[int, dict] | None = None) -> None:
    """Validate an emitted task document against the JSON Schema generated from the models.

    Scene objects and materials, shared by the many tasks of a scene, are validated once each:
    an object document `dump_object` made (the same instance in another task of its scene) by
    identity (`validated`: documents already validated, by id, kept alive so ids are not reused),
    a material table by content as a whole, others by content, then once per shape (`_shape`:
    alike but for values the schema does not constrain).
    """
    validated = {} if validated is None else validated
    whole, one_object, one_material = _validators()
    scene = task_json["scene"]
    rest = {**task_json, "scene": {**scene, "objects": [], "materials": {}}}
    _top_level().validate({k: None for k in rest})  # required and unknown keys
    for key, value in rest.items():  # each section of the task: most alike in the tasks of a scene
        _validate_part(_section(key), value)
    materials = scene["materials"]  # the same table in most tasks of a scene: one hash for all
    table = hashlib.sha256(b"materials:" + canonical_json(materials)).hexdigest()
    if table in _VALID_PARTS:
        materials = {}
    for validator, items in ((one_object, scene["objects"]), (one_material, materials.values())):
        for item in items:
            if validated.get(id(item)) is item:  # this very document was validated before
                continue
            _validate_part(validator, item)
            if validator is one_object:
                validated[id(item)] = item
    if materials:
        _VALID_PARTS.add(table)


def _validate_part(validator, item) -> None:
    """Validate `item` unless an equal one, or one alike but for values its schema does not
    constrain (`_shape`), was validated before."""
    exact = hashlib.sha256(canonical_json(item)).hexdigest()
    if exact in _VALID_PARTS:
        return
    key = hashlib.sha256(canonical_json(_shape(item, validator.schema))).hexdigest()
    if key not in _VALID_PARTS:
        validator.validate(item)
        _VALID_PARTS.add(key)
    _VALID_PARTS.add(exact)


@lru_cache(maxsize=1)
def _top_level():
    """The task document's own keys (required, none unknown), its sections' content aside."""
    whole = _validators()[0]
    schema = {**whole.schema, "properties": {k: {} for k in whole.schema["properties"]}}
    return type(whole)(schema)


@cache
def _section(key: str):
    """A validator for one top-level section of the task document."""
    whole = _validators()[0]
    return type(whole)(whole.schema["properties"][key])


def dump_object(o: B.SceneObject, docs: dict[int, tuple[B.SceneObject, dict]]) -> dict:
    """The JSON document of a scene object, made once per instance (`docs`, by id; the instance is
    kept alive so its id is not reused): the tasks of a scene share most of their frozen objects,
    and serialising them was a third of a build."""
    hit = docs.get(id(o))
    if hit is not None and hit[0] is o:
        return hit[1]
    doc = o.model_dump(mode="json", exclude_defaults=True)
    docs[id(o)] = (o, doc)
    return doc


# every package whose code the compiler's passes run (the detectors judge the clean and perturbed
# worlds; `wac` itself for its errors), checked against the import graph by tests/test_layers.py
DIGESTED = ("wac", "wac.grammar", "wac.compiler", "wac.bundle", "wac.taxonomy", "wac.detectors")


@lru_cache(maxsize=1)
def compiler_digest() -> str:
    """Hash of wac's own code and data: a new compiler invalidates the build cache."""
    h = hashlib.sha256(__version__.encode())
    hash_packages(h, DIGESTED)
    return h.hexdigest()


def hash_packages(h, packages, suffixes=(".py", ".lark", ".yaml", ".wa")) -> None:
    """Feed `h` the files of `packages` (their code and data) with their paths in the package."""
    for pkg in packages:
        root = resources.files(pkg)
        for entry in sorted(_walk(root, suffixes), key=lambda e: str(e)):
            h.update(str(entry).split(pkg.split(".")[-1], 1)[-1].encode())
            h.update(entry.read_bytes())


def _walk(root, suffixes):
    for entry in root.iterdir():
        if entry.is_dir():
            if entry.name != "__pycache__":
                yield from _walk(entry, suffixes)
        elif entry.name.endswith(suffixes):
            yield entry


SELFCHECK_SCRIPT = '''#!/usr/bin/env python3
"""Self-check of task `{task_id}`: runs its plan in the clean and perturbed worlds.

Run `python selfcheck.py` (with wac installed); `wac selfcheck BUILD_DIR` checks many at once.
"""

import sys
from pathlib import Path

from wac.validation.selfcheck import main

sys.exit(main([str(Path(__file__).resolve().parent)]))
'''


def bundle_files(out: Lowered3, memo: dict | None = None) -> dict[str, bytes]:
    """The files of a bundle.  `memo` (the build's `Loader.memo`) keeps object documents made and
    validated across the tasks of a build, and goes with it."""
    memo = {} if memo is None else memo
    # fields at their default are left out (the models restore them on load): a third of the
    # size, and every consumer reads task.json through the models or the JSON Schema's defaults
    task_json = {
        "schema_version": out.task.schema_version,
        **out.task.model_dump(mode="json", exclude_defaults=True, exclude={"scene": {"objects"}}),
    }
    docs = memo.setdefault("object_docs", {})
    task_json["scene"]["objects"] = [dump_object(o, docs) for o in out.task.scene.objects]
    validate_task(task_json, memo.setdefault("validated_docs", {}))  # an independent check
    files = {
        R.TASK: _task_bytes(task_json, memo.setdefault("objects_json", {})),
        R.CONTEXT: dump(out.context),
        R.CONTEXT_MD: context_markdown(out.context).encode("utf-8"),
        R.RUBRIC: dump(out.rubric),
        R.RUBRIC_MD: rubric_markdown(out.rubric).encode("utf-8"),
        R.PLAN: dump(out.plan),
        R.SCRIPT: SELFCHECK_SCRIPT.format(task_id=out.task.id).encode("utf-8"),
    }
    for asset, path in out.assets:
        files[asset.file] = Path(path).read_bytes()
    digests = {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())}
    version = hashlib.sha256(canonical_json(digests)).hexdigest()[:16]
    manifest = B.Manifest(task_id=out.task.id, version_id=version, wac_version=__version__, files=digests)
    files[R.MANIFEST] = dump(manifest)
    return files


_OBJECTS = "\0wac:objects\0"  # stands in for the object list while the rest is serialised
_OBJECTS_JSON = canonical_json(_OBJECTS)[:-1]  # the stand-in as JSON, without the final newline


def _task_bytes(task_json: dict, serialised: dict[tuple[int, ...], str]) -> bytes:
    """`canonical_json(task_json)`, with its object list serialised once per build: the tasks of a
    scene share the documents (`dump_object`), and the list was a third of a build's JSON work.
    `serialised` is keyed by the documents' ids (they stay alive in the build's memo)."""
    objects = task_json["scene"]["objects"]
    key = tuple(map(id, objects))
    text = serialised.get(key)
    if text is None:
        text = serialised[key] = json.dumps(
            objects, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
    rest = canonical_json({**task_json, "scene": {**task_json["scene"], "objects": _OBJECTS}})
    if rest.count(_OBJECTS_JSON) != 1:  # (a string of the task's that spells the stand-in: no shortcut)
        return canonical_json(task_json)
    return rest.replace(_OBJECTS_JSON, text.encode("utf-8"))


def write_bundle(directory: Path, files: dict[str, bytes]) -> None:
    for rel, data in sorted(files.items()):
        p = directory / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        if rel.endswith(".py"):
            p.chmod(0o755)


def index_entry(out: Lowered3, version_id: str) -> dict:
    a = out.task.anomalies[0]
    return {
        "id": out.task.id,
        "source": out.task.source,
        "scene": out.task.scene.name,
        "scene_type": out.task.scene.scene_type.value,
        "environment": env.name if (env := out.task.scene.environment) else None,
        "category": a.category,
        "family": a.family,
        "operator": a.operator,
        "anomalies": len(out.task.anomalies),
        "example": out.task.meta.example,
        "difficulty": out.task.meta.difficulty,
        "version_id": version_id,
    }


class Output:
    """A build in progress, staged in a temporary directory beside OUT.

    Nothing in OUT changes until `commit`.  A fresh OUT is the staging directory renamed
    into place; an existing build is updated bundle by bundle (each bundle directory is
    swapped in with a rename, stale ones are removed), so an incremental build touches
    only what changed.  `abort` (or any exception) leaves OUT exactly as it was.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / R.INDEX).is_file())):
            raise UsageError(f"{out} exists and is not a wac build directory; refusing to replace it")
        self.incremental = out.is_dir() and (out / R.INDEX).is_file()
        self.tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
        if self.tmp.exists():
            shutil.rmtree(self.tmp)
        self.tmp.mkdir(parents=True)
        self.written: list[str] = []
        self.kept: list[str] = []

    def add(self, task_id: str, files: dict[str, bytes]) -> None:
        write_bundle(self.tmp / task_id, files)
        self.written.append(task_id)

    def staged(self, task_id: str) -> None:
        """A bundle a build worker wrote into `tmp` itself (`pipeline._compile_chunk`)."""
        self.written.append(task_id)

    def reuse(self, task_id: str) -> None:
        if self.incremental:
            self.kept.append(task_id)
        else:
            shutil.copytree(self.out / task_id, self.tmp / task_id, copy_function=_link_or_copy)

    def commit(self, index: list[dict], cache: dict) -> None:
        (self.tmp / R.INDEX).write_bytes(canonical_json({"wac_version": __version__, "tasks": index}))
        (self.tmp / CACHE_FILE).write_bytes(canonical_json(cache))
        if not self.incremental:
            if self.out.exists():
                os.rmdir(self.out)  # empty, checked in __init__
            os.replace(self.tmp, self.out)
            return
        trash = self.out.parent / f".{self.out.name}.old-{os.getpid()}"
        current = {e["id"] for e in index}
        removed = [  # tasks that no longer exist
            entry.name
            for entry in sorted(self.out.iterdir())
            if entry.is_dir() and entry.name not in current and (entry / R.MANIFEST).is_file()
        ]
        # journaled: a build killed from here on is rolled forward by the next one (outdir.py)
        outdir.write_journal(self.out, self.tmp, trash, self.written, removed)
        outdir.roll_forward(self.out, self.tmp, trash, self.written, removed, pause=True)

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def read_cache(out: Path) -> dict:
    try:
        data = json.loads((out / CACHE_FILE).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) and data.get("compiler") == compiler_digest() else {}
    except (OSError, ValueError):
        return {}


def _link_or_copy(src: str, dst: str) -> None:
    """Reused bundle files are hard links where the file system allows (bundles are never edited in place)."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
