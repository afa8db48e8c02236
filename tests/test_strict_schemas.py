"""Strict schemas: the form OpenAI's strict mode takes, and calls made in that form."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agents.strict_schema import ensure_strict_json_schema
from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer

from fsseam import Workspace
from fsseam.tools.schema import strict_schema

NAMES = Workspace("memory://strict-names").context().tools.names()


def _walk(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [d for n in node for d in _walk(n)]
    if not isinstance(node, dict):
        return []
    return [node, *(d for v in node.values() for d in _walk(v))]


@pytest.mark.parametrize("name", NAMES)
def test_every_tool_has_a_strict_schema_both_sdks_accept(name: str) -> None:
    tool = Workspace("memory://strict").context().tools.get(name)
    strict = tool.strict_parameters()
    assert ensure_strict_json_schema(json.loads(json.dumps(strict))) == strict
    transformer = OpenAIJsonSchemaTransformer(json.loads(json.dumps(strict)), strict=True)
    transformer.walk()
    assert transformer.is_strict_compatible, name
    for node in _walk(strict):
        assert not {"minLength", "maxLength", "default", "prefixItems"} & set(node)
        if "properties" in node:
            assert node["required"] == list(node["properties"])
            assert node["additionalProperties"] is False
    # Whatever was optional accepts null; what was required does not.
    loose = tool.parameters()
    for prop, schema in strict["properties"].items():
        accepts_null = "null" in json.dumps(schema.get("type", "")) or None in schema.get(
            "enum", [])
        assert accepts_null == (prop not in loose["required"]), (name, prop)


def test_a_tuple_becomes_an_array_of_fixed_length() -> None:
    node = {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "integer"}],
            "minItems": 2, "maxItems": 2}
    assert strict_schema(node) == {"items": {"type": "integer"}, "type": "array",
                                   "minItems": 2, "maxItems": 2}


def test_null_arguments_mean_not_given(tmp_path: Path) -> None:
    ctx = Workspace(str(tmp_path)).context()
    assert ctx.tools.execute("write", {"file_path": "/a.txt", "content": "one\ntwo\n"}).ok
    read = ctx.tools.execute("read", {"file_path": "/a.txt", "offset": None, "limit": None})
    assert read.ok and read.value.returned == 2
    edit = ctx.tools.execute("multi_edit", {"file_path": "/a.txt", "edits": [
        {"old_string": "one", "new_string": "1", "replace_all": None}]})
    assert edit.ok, edit.text
    grep = ctx.tools.execute("grep", {"pattern": "two", "path": None, "glob": None,
                                      "output_mode": None})
    assert grep.ok and "/a.txt" in grep.text
    assert (tmp_path / "a.txt").read_bytes() == b"1\ntwo\n"


def test_null_for_a_required_argument_is_still_refused(tmp_path: Path) -> None:
    ctx = Workspace(str(tmp_path)).context()
    res = ctx.tools.execute("write", {"file_path": "/a.txt", "content": None})
    assert not res.ok and res.error is not None
    assert res.error.code == "FS_INVALID_ARGUMENT"
    assert list(tmp_path.iterdir()) == []
