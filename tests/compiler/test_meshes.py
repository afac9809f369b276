"""Mesh assets: loaded with trimesh from inside the project root, copied into the bundle by hash."""

from __future__ import annotations

import hashlib
import json
import os

import trimesh

from wac.compiler.pipeline import compile_project


def _write_mesh(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    trimesh.creation.box(extents=(0.6, 0.4, 1.2)).export(path)


def test_mesh_object_is_bundled_by_content_hash(project, tmp_path):
    _write_mesh(project.root / "assets" / "statue.obj")
    project(
        "statue.wa",
        """
    task floating_statue on yard {
        statue_1: mesh at (5, 5) file "../assets/statue.obj" material stone { name "statue" }
        anomaly float statue_1 by 0.5 m
    }
    """,
    )
    out = tmp_path / "out"
    result = compile_project([project.root / "tasks"], project.root, out=out)
    assert result.ok, [d.render() for d in result.diagnostics]
    task = json.loads((out / "floating_statue" / "task.json").read_text())
    (asset,) = task["assets"]
    data = (project.root / "assets" / "statue.obj").read_bytes()
    assert asset["id"] == hashlib.sha256(data).hexdigest()
    assert (out / "floating_statue" / asset["file"]).read_bytes() == data
    statue = next(o for o in task["scene"]["objects"] if o["id"] == "statue_1")
    assert statue["parts"][0]["mesh"] == asset["id"]
    assert [round(v, 3) for v in statue["parts"][0]["size"]] == [0.6, 0.4, 1.2]
    assert round(statue["aabb_max"][2], 3) == 1.2  # placed by the base of its bounds


def test_mesh_paths_cannot_leave_the_project(project, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    _write_mesh(outside / "secret.obj")
    os.symlink(outside / "secret.obj", project.root / "link.obj")
    project(
        "bad.wa",
        """
    task t on yard {
        a: mesh at (5, 5) file "../../"""
        + outside.name
        + """/secret.obj"
        b: mesh at (5, -5) file "../link.obj"
        anomaly float crate_2 by 0.4 m
    }
    """,
    )
    result = compile_project([project.root / "tasks"], project.root)
    text = "\n".join(d.message for d in result.diagnostics)
    assert text.count("is outside the project root") == 2


def test_unreadable_mesh_is_a_clear_error(project):
    (project.root / "assets").mkdir()
    (project.root / "assets" / "broken.stl").write_bytes(b"solid nothing\nendsolid\n")
    project(
        "bad.wa",
        """
    task t on yard {
        a: mesh at (5, 5) file "../assets/broken.stl"
        anomaly float crate_2 by 0.4 m
    }
    """,
    )
    result = compile_project([project.root / "tasks"], project.root)
    assert any(d.code in ("E402", "E403") for d in result.diagnostics), [
        d.render() for d in result.diagnostics
    ]
