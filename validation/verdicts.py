"""Self-check verdicts kept beside the bundles they judge, so an unchanged bundle is not checked again.

A verdict is a function of the bundle's bytes, of the code and libraries that check it, and of the
options (`--out`: where its evidence frames go).  `Verdicts` keeps one file per build directory,
`BUILD/.wac-selfcheck.json`, mapping each bundle to the digests its verdict was reached with.  A kept
verdict is reused only after it is verified: the bundle's files hash to the recorded digest (read
again, not taken from its manifest), the checker digest is this installation's, and with `--out`
every evidence file it names is still there.  Verdicts of a check that could not run (an internal
error, an unreadable bundle) are never kept.  `wac selfcheck --force` checks everything again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from wac.compiler.emit import hash_packages

from .bundlecheck import SelfCheckResult
from .readings import Reading

CACHE_FILE = ".wac-selfcheck.json"
FORMAT = 1
SAVE_EVERY_S = 20.0
# what a self-check runs on besides wac's code: a new version may change a frame or a physics step
_LIBRARIES = ("numpy", "scipy", "pybullet", "vtk", "pyvista", "trimesh", "python-fcl", "shapely", "pillow")
# wac's packages whose code or data a self-check may run (all but the review app)
_CHECKER = (
    "wac",
    "wac.grammar",
    "wac.compiler",
    "wac.bundle",
    "wac.detectors",
    "wac.taxonomy",
    "wac.runtime",
    "wac.validation",
    "wac.audit",
)


@lru_cache(maxsize=1)
def checker_digest() -> str:
    """Hash of the self-check's inputs other than the bundle: wac's code and data, Python and the
    versions of the libraries that simulate and render."""
    import wac

    h = hashlib.sha256(f"{FORMAT} {sys.version} {wac.__version__}".encode())
    for lib in _LIBRARIES:
        try:
            h.update(f"{lib}={metadata.version(lib)};".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{lib}=-;".encode())
    hash_packages(h, _CHECKER, (".py", ".lark", ".yaml", ".wa", ".obj", ".json"))
    return h.hexdigest()


def bundle_digest(bundle: Path) -> str:
    """Hash of every file of a bundle, by relative path and bytes."""
    h = hashlib.sha256()
    for p in sorted(q for q in bundle.rglob("*") if q.is_file()):
        h.update(p.relative_to(bundle).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


class Verdicts:
    """The kept verdicts of the build directories holding some bundles."""

    def __init__(self, out: str | None = None, force: bool = False) -> None:
        self.out = str(Path(out).resolve()) if out else None
        self.force = force
        self._files: dict[Path, dict] = {}  # build directory -> its entries, by bundle name
        self._dirty: set[Path] = set()
        self._digests: dict[Path, str] = {}
        self._saved = time.monotonic()
        self._unwritable: set[Path] = set()

    def _entries(self, directory: Path) -> dict:
        if directory not in self._files:
            try:
                data = json.loads((directory / CACHE_FILE).read_text(encoding="utf-8"))
                ok = isinstance(data, dict) and data.get("format") == FORMAT
                self._files[directory] = dict(data["bundles"]) if ok else {}
            except (OSError, ValueError, KeyError, TypeError):
                self._files[directory] = {}
        return self._files[directory]

    def _digest(self, bundle: Path) -> str:
        if bundle not in self._digests:
            self._digests[bundle] = bundle_digest(bundle)
        return self._digests[bundle]

    def lookup(self, bundle: Path) -> SelfCheckResult | None:
        """The kept verdict on `bundle`, if it is verified to still hold; else None."""
        if self.force:
            return None
        bundle = bundle.resolve()
        entry = self._entries(bundle.parent).get(bundle.name)
        if not isinstance(entry, dict) or entry.get("checker") != checker_digest():
            return None
        if entry.get("out") != self.out or entry.get("bundle") != self._digest(bundle):
            return None
        try:
            result = _result(entry["result"], bundle)
        except (KeyError, TypeError, ValueError):
            return None
        if self.out:
            evidence = Path(self.out) / bundle.name
            if not all((evidence / f).is_file() for f in (*result.frames, "evidence.json")):
                return None
        return result

    def record(self, bundle: Path, result: SelfCheckResult) -> None:
        """Keep `result` for `bundle` (not when the check could not run); written out at least every
        `SAVE_EVERY_S` seconds, so an interrupted run keeps what it finished."""
        if result.error is not None or result.reused:
            return
        bundle = bundle.resolve()
        d = result.as_dict()
        d.pop("passed", None)
        d.pop("bundle", None)
        d.pop("reused", None)
        self._entries(bundle.parent)[bundle.name] = {
            "bundle": self._digest(bundle),
            "checker": checker_digest(),
            "out": self.out,
            "result": d,
        }
        self._dirty.add(bundle.parent)
        if time.monotonic() - self._saved >= SAVE_EVERY_S:
            self.save()

    def save(self) -> list[str]:
        """Write the changed verdict files (atomically, merged with what another run wrote since);
        returns the directories that could not be written (read-only builds are checked, not kept)."""
        for directory in sorted(self._dirty - self._unwritable):
            mine = self._files[directory]
            path = directory / CACHE_FILE
            try:
                current = json.loads(path.read_text(encoding="utf-8"))
                theirs = current["bundles"] if current.get("format") == FORMAT else {}
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                theirs = {}
            names = {p.name for p in directory.iterdir() if p.is_dir()}
            merged = {k: v for k, v in {**theirs, **mine}.items() if k in names}  # gone bundles dropped
            part = directory / f"{CACHE_FILE}.{os.getpid()}.part"
            try:
                part.write_text(
                    json.dumps({"format": FORMAT, "bundles": merged}, sort_keys=True), encoding="utf-8"
                )
                os.replace(part, path)
            except OSError:
                part.unlink(missing_ok=True)
                self._unwritable.add(directory)
        self._dirty.clear()
        self._saved = time.monotonic()
        return sorted(map(str, self._unwritable))


def _result(d: dict, bundle: Path) -> SelfCheckResult:
    fields = dict(d)
    for side in ("perturbed", "clean"):
        fields[side] = Reading(**fields[side]) if fields.get(side) else None
    for name in ("reasons", "notes", "frames"):
        fields[name] = tuple(fields.get(name, ()))
    return SelfCheckResult(**fields, bundle=str(bundle), reused=True)
