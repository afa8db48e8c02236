"""Named tool sets: which tools a surface offers, the same names on every surface.

Five tools edit a file in overlapping ways (edit, str_replace_editor, multi_edit,
apply_patch, memory); a model offered all of them chooses worse and pays for every schema
in its prompt. A set gives it one way to edit, in the shape it was trained on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

__all__ = ["TOOL_SETS", "expand_tool_names"]

_FINDERS = ("ls", "glob", "grep")

TOOL_SETS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "files": ("read", "write", "edit", *_FINDERS, "delete", "move", "history", "restore"),
    "anthropic": ("str_replace_editor", "memory", *_FINDERS),
    "openai": ("apply_patch", "read", *_FINDERS),
    "all": (
        "read", "write", "edit", "str_replace_editor", *_FINDERS, "delete", "move",
        "multi_edit", "apply_patch", "memory", "history", "restore",
    ),
})
"""Set name -> its tools, in the order a surface lists them. ``files``: fsseam's own file
tools (one editor: ``edit``; ``write`` for whole files); ``anthropic``: the shapes Claude is
trained on; ``openai``: the shape OpenAI's models are trained on (``apply_patch`` adds,
deletes, moves and edits); ``all``: every tool."""


def expand_tool_names(names: str | Iterable[str]) -> tuple[str, ...]:
    """Tool names from set names and tool names, mixed (a string is split at commas:
    ``"files,multi_edit"``), each once, in order. Names that are neither stay, for the
    registry to refuse with the list of tools."""
    items = names.split(",") if isinstance(names, str) else list(names)
    out: dict[str, None] = {}
    for item in (n.strip() for n in items):
        if not item:
            continue
        for name in TOOL_SETS.get(item, (item,)):
            out[name] = None
    return tuple(out)
