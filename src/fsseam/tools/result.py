"""What a tool call returns: structured facts beside the text the model sees."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import ErrorCode
from .display import result_markdown

__all__ = ["ToolError", "ToolResult"]


class ToolError(BaseModel):
    model_config = ConfigDict(frozen=True)
    code: ErrorCode
    message: str


class ToolResult(BaseModel):
    """``text`` is exactly what the model sees; ``value`` the structured outcome."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    tool: str
    ok: bool
    text: str
    value: Any = None
    error: ToolError | None = None

    def __str__(self) -> str:
        # print(res) shows what the model sees, not the pydantic fields (repr() has those).
        return self.text

    def _repr_markdown_(self) -> str:
        error = None if self.error is None else (self.error.code, self.error.message)
        return result_markdown(self.tool, self.text, self.value, error)
