"""What the integrations share: the context an integration object stands for, and the
framework's id of the tool call running where a backend is handed none. How a call
runs and what the model reads of it is the tool layer's one path
(:mod:`fsseam.tools.base`), the same for every surface.

Imports no framework.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ..calling import scope
from ..observations.calls import digest_of
from ..workspace import Context, Workspace

__all__ = ["FrameworkCall", "change_call", "context_of", "framework_call"]


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


class FrameworkCall:
    """The framework's id of the tool call running (deepagents' ``tool_call_id``, Pydantic
    AI's ``RunContext.tool_call_id``) where fsseam's file layer is reached through a
    backend the framework hands no id: each change the call makes runs under it. A call
    that makes several changes (a tool function writing two files) gives the first the id
    itself and the next ``ID#2``, ``ID#3``...: each change has an id of its own, and a
    replay of the call, making the same changes in the same order, meets the same ids."""

    def __init__(self, call_id: str) -> None:
        self.call_id = call_id
        self._count = 0
        self._lock = threading.Lock()

    def next_id(self) -> str:
        with self._lock:
            self._count += 1
            n = self._count
        return self.call_id if n == 1 else f"{self.call_id}#{n}"


_FRAMEWORK_CALL: ContextVar[FrameworkCall | None] = ContextVar("fsseam_framework_call",
                                                               default=None)


@contextmanager
def framework_call(call_id: str | None) -> Iterator[None]:
    """Run the body as the framework's tool call ``call_id`` (None: no id; an inner call,
    such as a sub-agent's tool call inside a ``task`` call, is its own)."""
    token = _FRAMEWORK_CALL.set(FrameworkCall(call_id) if call_id else None)
    try:
        yield
    finally:
        _FRAMEWORK_CALL.reset(token)


@contextmanager
def change_call(tool: str, args: Mapping[str, Any] | None = None) -> Iterator[None]:
    """One change made by a backend's method ``tool``: under the next id of the framework's
    call running (:func:`framework_call`), or under none outside one. ``args``: the
    arguments that name the change (the model's, or the file's path where the bytes are
    made of what the tool read before: a replay reads the call's own change and makes
    others): the same id over other arguments is refused as a reused id. None: not
    checked."""
    running = _FRAMEWORK_CALL.get()
    call_id = None if running is None else running.next_id()
    digest = "" if call_id is None or args is None else digest_of(tool, dict(args))
    with scope(call_id, tool, digest):
        yield

