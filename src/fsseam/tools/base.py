"""What a tool is: a name, a description, an argument model, run and render.

A tool is typed by its arguments and its outcome (``Tool[ReadArgs, ReadOutcome]``). It talks
only to ``ctx.fs`` (the seam), never to a backend. Its text comes from pure renderers chosen
by the outcome's type (:func:`fsseam.tools.render.render`), and its error texts from the
message catalogue in the tool's own *vocabulary* (the names of its arguments).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar, cast

from pydantic import BaseModel

from ..errors import FsError
from ..messages import DEFAULT_VOCABULARY, Vocabulary
from ..seam import Seam
from .annotations import ToolAnnotations
from .render import render
from .schema import drop_nulls, parameters_schema, strict_schema

__all__ = ["ArgsT", "OutcomeT", "Tool"]

ArgsT = TypeVar("ArgsT", bound=BaseModel)
OutcomeT = TypeVar("OutcomeT", bound=BaseModel)


class Tool(ABC, Generic[ArgsT, OutcomeT]):
    name: ClassVar[str]
    description: str
    args_model: ClassVar[type[BaseModel]]
    vocabulary: ClassVar[Vocabulary] = DEFAULT_VOCABULARY
    """How this tool's error texts name its arguments (see :mod:`fsseam.messages`)."""
    annotations: ClassVar[ToolAnnotations] = ToolAnnotations(
        read_only=False, destructive=True, idempotent=False
    )
    """What the tool may do; the default assumes the worst (it modifies and destroys)."""

    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as model APIs accept it."""
        return parameters_schema(self.args_model)

    def strict_parameters(self) -> dict[str, Any]:
        """The schema in the form OpenAI's strict mode takes (every property required,
        optional ones nullable): see :func:`fsseam.tools.schema.strict_schema`."""
        return cast(dict[str, Any], strict_schema(self.parameters()))

    def prepare(self, args: dict[str, Any]) -> dict[str, Any]:
        """Adjust raw arguments before validation (default: none)."""
        return args

    def validate(self, args: Mapping[str, Any]) -> ArgsT:
        # A null optional argument means "not given" (strict schemas make models send every
        # argument, null for those they leave out), so the default applies.
        given = drop_nulls(self.args_model, dict(args))
        return cast(ArgsT, self.args_model.model_validate(self.prepare(given)))

    @abstractmethod
    def run(self, fs: Seam, args: ArgsT) -> OutcomeT:
        """Do the work; return the outcome or raise FsError."""

    def render(self, outcome: OutcomeT) -> str:
        """The model text of an outcome (pure); by default chosen by the outcome's type."""
        return render(outcome)

    def render_error(self, err: FsError) -> str:
        """The message of an error, in this tool's words."""
        return err.render(self.vocabulary)
