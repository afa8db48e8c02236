"""What the integrations share: the context an integration object stands for. How a call
runs and what the model reads of it is the tool layer's one path
(:mod:`fsseam.tools.base`), the same for every surface.

Imports no framework.
"""

from __future__ import annotations

from typing import Any

from ..workspace import Context, Workspace

__all__ = ["context_of"]


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
