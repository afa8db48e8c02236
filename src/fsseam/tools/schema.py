"""JSON schemas of tool arguments, in the shapes model APIs accept.

pydantic's schema is cleaned to what OpenAI and Anthropic take: optional fields are the
plain type (not ``anyOf [T, null]``), no titles, no ``default: null``. The output is a plain
dict built in a fixed order, so it is byte-for-byte stable across calls and processes (a
provider's prompt cache keys on it).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

__all__ = [
    "Dialect",
    "clean_schema",
    "inline_refs",
    "parameters_schema",
    "strict_schema",
    "tool_schema",
]

Dialect = Literal["openai", "anthropic", "json"]


def clean_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [clean_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    any_of = node.get("anyOf")
    if isinstance(any_of, list):
        non_null = [s for s in any_of if s != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(any_of):
            merged = {k: v for k, v in node.items() if k != "anyOf"}
            merged = {**non_null[0], **merged}
            node = merged
    out: dict[str, Any] = {}
    for k, v in node.items():
        if k == "title":
            continue
        if k == "default" and v is None:
            continue
        if k == "properties" and isinstance(v, dict):
            out[k] = {name: clean_schema(p) for name, p in v.items()}
            continue
        out[k] = clean_schema(v)
    return out


def inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with every ``{"$ref": "#/$defs/X"}`` replaced by ``X`` itself: not every
    model API resolves references in a tool's schema."""
    if isinstance(node, list):
        return [inline_refs(n, defs) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = dict(defs[ref.removeprefix("#/$defs/")])
        target.update({k: v for k, v in node.items() if k != "$ref"})
        return inline_refs(target, defs)
    return {k: inline_refs(v, defs) for k, v in node.items() if k != "$defs"}


def parameters_schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema()
    schema = clean_schema(inline_refs(raw, raw.get("$defs", {})))
    result: dict[str, Any] = {
        "type": "object",
        "properties": schema.get("properties", {}),
        "required": schema.get("required", []),
        "additionalProperties": False,
    }
    return result


# Keywords OpenAI's strict mode (structured outputs) refuses; the argument models still
# enforce them when a call is validated, so dropping them from the schema loses no check.
_NOT_STRICT = frozenset({"minLength", "maxLength", "default", "prefixItems"})


def strict_schema(node: Any) -> Any:
    """``node`` in the form OpenAI's strict mode takes: every object lists all of its
    properties as required, those that were optional accept ``null`` instead (a null
    argument means "not given": :meth:`fsseam.tools.base.Tool.validate` drops it), and no
    keyword strict mode refuses. A tuple (``prefixItems``) becomes an array of its one item
    type with its length fixed by ``minItems``/``maxItems``."""
    if isinstance(node, list):
        return [strict_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    prefix = node.get("prefixItems")
    if isinstance(prefix, list) and prefix and "items" not in node:
        out["items"] = strict_schema(prefix[0])
    for k, v in node.items():
        if k in _NOT_STRICT:
            continue
        if k == "properties" and isinstance(v, dict):
            required = set(node.get("required", []))
            out[k] = {
                name: strict_schema(p) if name in required else _nullable(strict_schema(p))
                for name, p in v.items()
            }
            out["required"] = list(v)
            out["additionalProperties"] = False
            continue
        if k in ("required", "additionalProperties") and "properties" in node:
            continue
        out[k] = strict_schema(v)
    return out


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    kind = node.get("type")
    if isinstance(kind, str):
        node = {**node, "type": [kind, "null"]}
    elif isinstance(kind, list) and "null" not in kind:
        node = {**node, "type": [*kind, "null"]}
    elif "anyOf" in node:
        node = {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
    if "enum" in node and None not in node["enum"]:
        node = {**node, "enum": [*node["enum"], None]}
    return node


def tool_schema(
    name: str, description: str, parameters: dict[str, Any], dialect: Dialect
) -> dict[str, Any]:
    if dialect == "openai":
        return {
            "type": "function",
            "function": {"name": name, "description": description, "parameters": parameters},
        }
    if dialect == "anthropic":
        return {"name": name, "description": description, "input_schema": parameters}
    if dialect == "json":
        return {"name": name, "description": description, "parameters": parameters}
    raise ValueError(f"unknown schema dialect {dialect!r}: use 'openai', 'anthropic' or 'json'")
