"""The base of every bundle model: frozen, and unknown fields are refused."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def require_kind(schema: dict) -> None:
    """JSON Schema of a tagged model whose `kind` is always written (task.json leaves out defaults,
    never the tag): `kind` is required and has no default."""
    schema["required"] = ["kind", *schema.get("required", [])]
    schema["properties"]["kind"].pop("default", None)
