"""Small self-made figurative meshes for demonstrations and tasks (a sitting lion, a standing
statue, a vase), built procedurally from trimesh primitives so that they need no licence and can be
rebuilt byte for byte.  They are shipped as OBJ files in taxonomy/assets/; use one with
`lion_1: mesh at (x, y) file "../assets/lion.obj" size (…) material stone` from taxonomy/examples.

`python -m wac.taxonomy.meshes` rewrites the files; a test checks they match this module."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import trimesh

ASSETS = Path(__file__).resolve().parent / "assets"


def _at(mesh: trimesh.Trimesh, x: float = 0.0, y: float = 0.0, z: float = 0.0) -> trimesh.Trimesh:
    mesh.apply_translation((x, y, z))
    return mesh


def _box(sx, sy, sz, x=0.0, y=0.0, z=0.0) -> trimesh.Trimesh:
    """A box whose base centre is at (x, y, z)."""
    return _at(trimesh.creation.box(extents=(sx, sy, sz)), x, y, z + sz / 2)


def _ball(r, x, y, z, subdiv=2) -> trimesh.Trimesh:
    return _at(trimesh.creation.icosphere(subdivisions=subdiv, radius=r), x, y, z)


def _rod(r, a, b, sections=12) -> trimesh.Trimesh:
    """A cylinder from point a to point b."""
    return trimesh.creation.cylinder(radius=r, segment=np.array([a, b], dtype=float), sections=sections)


def lion() -> trimesh.Trimesh:
    """A guardian lion sitting on its haunches on a low plinth, facing +x (about 1.0 x 0.6 x 1.3)."""
    parts = [
        _box(1.0, 0.6, 0.25),  # plinth
        _ball(0.26, -0.22, 0.0, 0.5),  # haunches
        _rod(0.2, (-0.15, 0.0, 0.45), (0.12, 0.0, 0.85)),  # body, leaning up to the chest
        _ball(0.24, 0.15, 0.0, 0.95, 3),  # mane
        _ball(0.16, 0.3, 0.0, 1.05, 3),  # head
        _box(0.1, 0.12, 0.08, 0.44, 0.0, 0.98),  # muzzle
        _rod(0.05, (0.28, 0.12, 0.25), (0.2, 0.12, 0.8)),  # forelegs
        _rod(0.05, (0.28, -0.12, 0.25), (0.2, -0.12, 0.8)),
        _ball(0.07, 0.32, 0.12, 0.28),  # paws
        _ball(0.07, 0.32, -0.12, 0.28),
        _rod(0.03, (-0.45, 0.0, 0.3), (-0.42, 0.15, 0.7)),  # tail
    ]
    return trimesh.util.concatenate(parts)


def statue() -> trimesh.Trimesh:
    """A standing figure on a plinth, arms at its sides, facing +x (about 0.7 x 0.7 x 2.4)."""
    parts = [
        _box(0.7, 0.7, 0.5),  # plinth
        _rod(0.07, (0.0, 0.1, 0.5), (0.0, 0.1, 1.3)),  # legs
        _rod(0.07, (0.0, -0.1, 0.5), (0.0, -0.1, 1.3)),
        _rod(0.17, (0.0, 0.0, 1.25), (0.0, 0.0, 1.95), 16),  # torso
        _rod(0.05, (0.0, 0.24, 1.9), (0.02, 0.27, 1.35)),  # arms
        _rod(0.05, (0.0, -0.24, 1.9), (0.02, -0.27, 1.35)),
        _rod(0.05, (0.0, 0.0, 1.95), (0.0, 0.0, 2.07)),  # neck
        _ball(0.13, 0.0, 0.0, 2.2, 3),  # head
    ]
    return trimesh.util.concatenate(parts)


def vase() -> trimesh.Trimesh:
    """A turned vase: narrow foot, round belly, neck and flared lip (about 0.4 x 0.4 x 0.6)."""
    profile = np.array(
        [
            (0.0, 0.0),
            (0.09, 0.0),
            (0.1, 0.03),
            (0.17, 0.18),
            (0.2, 0.3),
            (0.16, 0.42),
            (0.08, 0.5),
            (0.07, 0.55),
            (0.11, 0.6),
            (0.0, 0.6),
        ]
    )
    return trimesh.creation.revolve(profile, sections=32)


MESHES: dict[str, Callable[[], trimesh.Trimesh]] = {"lion": lion, "statue": statue, "vase": vase}


def obj_text(name: str) -> str:
    """The OBJ file of one mesh (deterministic: the same text on every run)."""
    mesh = MESHES[name]()
    return mesh.export(file_type="obj", digits=5)


def write(folder: Path = ASSETS) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name in MESHES:
        path = folder / f"{name}.obj"
        path.write_text(obj_text(name), encoding="utf-8")
        out.append(path)
    return out


if __name__ == "__main__":  # pragma: no cover
    for p in write(Path(sys.argv[1]) if len(sys.argv) > 1 else ASSETS):
        print(p)
