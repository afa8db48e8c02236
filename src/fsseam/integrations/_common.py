"""What the integrations share: the context an integration object stands for, and one way
of turning a failed seam call into the code and text a framework shows the model.

Imports no framework.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import ErrorCode, FsError
from ..messages import Vocabulary
from ..oserrors import map_os_error
from ..tools.render import render_error
from ..workspace import Context, Workspace

__all__ = ["Failure", "attempt", "context_of"]

T = TypeVar("T")


def context_of(
    source: Workspace | Context | str,
    owner: str,
    storage_options: dict[str, Any] | None = None,
) -> Context:
    """The context an integration object works in: ``source`` itself when it is one, else
    a new context of ``owner`` on the workspace (a URL makes the workspace first)."""
    if isinstance(source, Context):
        if storage_options is not None:
            raise TypeError("storage_options belong to the Workspace; a Context has one already")
        return source
    if isinstance(source, str):
        source = Workspace(source, storage_options=storage_options)
    elif storage_options is not None:
        raise TypeError("storage_options belong to the Workspace; pass them when you make it")
    if not isinstance(source, Workspace):
        raise TypeError(
            f"expected a fsseam Workspace, Context or URL, not {type(source).__name__}"
        )
    return source.context(owner)


class Failure:
    """A refused call: its code, its message (in a tool's words) and the model's text
    (``Error [CODE]: message``, as fsseam's own tools put it)."""

    __slots__ = ("code", "error", "message")

    def __init__(self, error: FsError, vocabulary: Vocabulary | None = None) -> None:
        self.error = error
        self.code: ErrorCode = error.code
        self.message = error.render(vocabulary)

    @property
    def text(self) -> str:
        return render_error(self.code, self.message)

    def __repr__(self) -> str:
        return f"Failure({self.code.value}, {self.message!r})"


def attempt(call: Callable[[], T], path: str, action: str,
            vocabulary: Vocabulary | None = None) -> T | Failure:
    """``call()``, or the Failure it ended in. Seam calls raise FsError for everything a
    model or a store can get wrong; a stray OSError is mapped as fsseam's tool registry
    maps it (the last resort), and a path holding bytes that are not UTF-8 is
    FS_INVALID_ARGUMENT."""
    try:
        return call()
    except FsError as e:
        return Failure(e, vocabulary)
    except UnicodeError:
        return Failure(FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="path_not_utf8",
                               details={"tool": action}), vocabulary)
    except OSError as e:
        return Failure(map_os_error(e, path.strip("/"), action), vocabulary)
