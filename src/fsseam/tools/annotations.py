"""What a tool may do to the workspace, as MCP tool annotations describe it.

Kept apart from the schemas on purpose: the schemas are pinned byte for byte (a provider's
prompt cache keys on them), while annotations are hints a client uses to decide what to
show, confirm or serve (``fsseam mcp --read-only`` serves only read-only tools).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["ToolAnnotations"]


class ToolAnnotations(BaseModel):
    """The MCP hints of one tool (``readOnlyHint``, ``destructiveHint``, ...)."""

    model_config = ConfigDict(frozen=True)

    read_only: bool
    """Never modifies the workspace."""
    destructive: bool
    """May replace or remove content (as opposed to only adding)."""
    idempotent: bool
    """Calling it again with the same arguments has no further effect."""
    open_world: bool = False
    """Reaches beyond the workspace (no fsseam tool does)."""

    def mcp(self) -> dict[str, Any]:
        """The wire shape of MCP's ``ToolAnnotations``."""
        return {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }


READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True)
