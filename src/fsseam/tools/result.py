"""What a tool call returns: structured facts beside the text the model sees."""

from __future__ import annotations

import base64
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import ErrorCode
from .display import result_markdown

__all__ = ["ImageContent", "ToolError", "ToolResult"]


class ImageContent(BaseModel):
    """An image a tool result carries beside its text (a read of a PNG, JPEG, GIF or WebP
    file): surfaces that carry images hand it to the model in their own shape."""

    model_config = ConfigDict(frozen=True)
    media_type: str
    """``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp``."""
    data: bytes

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64()}"


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
    images: tuple[ImageContent, ...] = ()
    """Images the model sees after ``text`` (empty for every tool but an image read)."""

    def __str__(self) -> str:
        # print(res) shows what the model sees, not the pydantic fields (repr() has those).
        return self.text

    def _repr_markdown_(self) -> str:
        error = None if self.error is None else (self.error.code, self.error.message)
        # A notebook renders an image given as a data URL in markdown: a read of a PNG
        # shows the picture under its line, as the model sees it.
        shown = "".join(f"\n\n![{self.tool}]({image.data_url()})" for image in self.images)
        return result_markdown(self.tool, self.text, self.value, error) + shown
