"""Bundle integrity: a bundle is what `wac build` wrote, or it is not loaded.

`verify_bundle(dir)` checks the bundle's `manifest.json` (every listed file present, inside the
bundle, with its SHA-256) and the task's assets (`assets[].file` a relative path inside the
bundle and listed, with its hash, in the manifest).  A damaged, hand-edited or hostile
bundle is a `BundleError` naming the file and telling how to repair it (rebuild), never a
traceback and never a read outside the bundle.  Verified bundles are remembered per process by
the manifest's (size, mtime) so the hashing is done once per bundle.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path, PurePosixPath

from wac.errors import BundleError

MANIFEST = "manifest.json"
_verified: dict[Path, tuple] = {}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def inside(bundle: Path, rel: str) -> Path:
    """`bundle/rel` when `rel` is a plain relative path that stays inside the bundle."""
    p = PurePosixPath(str(rel))
    if not str(rel) or p.is_absolute() or "\\" in str(rel) or any(part in ("..", "") for part in p.parts):
        raise BundleError(f"{bundle}: {rel!r} is not a path inside the bundle; rebuild it with `wac build`")
    full = (bundle / p).resolve()
    root = bundle.resolve()
    if full != root and root not in full.parents:
        raise BundleError(f"{bundle}: {rel!r} leads outside the bundle; rebuild it with `wac build`")
    return full


def _stamp(path: Path) -> tuple:
    st = path.stat()
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def verify_bundle(bundle: str | Path) -> dict[str, str]:
    """Check a bundle directory against its manifest; returns the manifest's file digests."""
    bundle = Path(bundle)
    mf = bundle / MANIFEST
    if not mf.is_file():
        raise BundleError(
            f"{bundle}: no {MANIFEST}; this is not a complete bundle (rebuild it with `wac build`)"
        )
    try:
        manifest = json.loads(mf.read_text(encoding="utf-8"))
        files = manifest["files"]
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            raise TypeError
    except (OSError, UnicodeError, ValueError, KeyError, TypeError):
        raise BundleError(
            f"{mf}: not a readable bundle manifest; rebuild the bundle with `wac build`"
        ) from None
    key = bundle.resolve()
    stamps = (
        _stamp(mf),
        *(_stamp(inside(bundle, r)) if inside(bundle, r).is_file() else None for r in files),
    )
    if _verified.get(key) == stamps:
        return files
    for rel, digest in files.items():
        path = inside(bundle, rel)
        if not path.is_file():
            raise BundleError(f"{bundle}: {rel} is missing; rebuild the bundle with `wac build`")
        if _sha256(path) != digest:
            raise BundleError(
                f"{bundle}: {rel} does not match the bundle's manifest (edited or damaged); "
                f"rebuild the bundle with `wac build`"
            )
    _check_assets(bundle, files)
    _verified[key] = stamps
    return files


def _check_assets(bundle: Path, files: dict[str, str]) -> None:
    task = bundle / "task.json"
    if "task.json" not in files:
        raise BundleError(
            f"{bundle}: the manifest does not list task.json; rebuild the bundle with `wac build`"
        )
    try:
        assets = json.loads(task.read_text(encoding="utf-8")).get("assets") or []
    except (OSError, UnicodeError, ValueError, AttributeError):
        return  # the task's own validation reports it
    for a in assets:
        rel = str((a or {}).get("file", "")) if isinstance(a, dict) else ""
        inside(bundle, rel)
        if rel not in files:
            raise BundleError(f"{bundle}: asset {rel!r} is not listed in the manifest; rebuild the bundle")


def write_manifest(bundle: str | Path, task_id: str = "hand-made") -> None:
    """Write a manifest for a bundle assembled by hand (tests, tools): every file, with its hash.
    `wac build` writes real manifests; this is for directories it did not make."""
    bundle = Path(bundle)
    files = {
        p.relative_to(bundle).as_posix(): _sha256(p)
        for p in sorted(bundle.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }
    version = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16]
    data = {"task_id": task_id, "version_id": version, "wac_version": "hand-made", "files": files}
    (bundle / MANIFEST).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
