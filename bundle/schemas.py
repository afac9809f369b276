"""JSON Schemas of the bundle files, generated from the pydantic models into `schemas/`."""

from __future__ import annotations

import json
from pathlib import Path

from wac.bundle import model as B

SCHEMAS = {
    "task.schema.json": B.CompiledTask,
    "context.schema.json": B.AgentContext,
    "rubric.schema.json": B.Rubric,
    "selfcheck.schema.json": B.SelfCheckPlan,
    "manifest.schema.json": B.Manifest,
}


def render(model) -> str:
    return json.dumps(model.model_json_schema(), indent=2, sort_keys=True) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for name, model in SCHEMAS.items():
        p = directory / name
        p.write_text(render(model), encoding="utf-8")
        out.append(p)
    return out
