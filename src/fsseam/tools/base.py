"""What a tool is: a name, a description, an argument model, run and render."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from pydantic import BaseModel

from ..seam import Seam
from .annotations import ToolAnnotations
from .schema import parameters_schema

__all__ = ["Tool"]


class Tool(ABC):
    name: ClassVar[str]
    description: str
    args_model: ClassVar[type[BaseModel]]
    annotations: ClassVar[ToolAnnotations] = ToolAnnotations(
        read_only=False, destructive=True, idempotent=False
    )
    """What the tool may do; the default assumes the worst (it modifies and destroys)."""

    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as model APIs accept it."""
        return parameters_schema(self.args_model)

    def prepare(self, args: dict[str, Any]) -> dict[str, Any]:
        """Adjust raw arguments before validation (default: none)."""
        return args

    def validate(self, args: dict[str, Any]) -> Any:
        return self.args_model.model_validate(self.prepare(args))

    @abstractmethod
    def run(self, fs: Seam, args: Any) -> BaseModel:
        """Do the work; return the outcome or raise FsError."""

    @abstractmethod
    def render(self, outcome: Any) -> str:
        """The model text of an outcome (pure)."""
