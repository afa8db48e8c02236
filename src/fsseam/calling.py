"""Which call of which tool is running: the call id a surface hands in (an engine's step
id, MCP's request id, a framework's tool-call id) and the tool's name, for every layer
below that needs them (the record that makes a replayed call exactly-once, the audit
trail's entry) without passing them through every signature.

A value of the basics layer: no I/O. :func:`scope` sets it for the duration of one call;
:func:`current` reads it (None outside a call).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["CallScope", "current", "scope"]


@dataclass
class CallScope:
    """One running call: ``call_id`` (None: the surface gave none) and ``tool``, the name
    of the tool or ``ctx.fs`` operation (``write``, ``edit``, ``merge``, ...)."""

    call_id: str | None
    tool: str
    digest: str = ""
    """Of the tool and its arguments: the same id over other arguments is another call."""
    record: object | None = None
    """The seam's state of this call while it runs once (``fsseam.seam.calls``)."""
    unaudited: list[str] = field(default_factory=list)
    """Changes of this call that landed but whose audit entry could not be written (the
    shown path of each, and why): the call's answer says so, never silently unaudited."""


_CURRENT: ContextVar[CallScope | None] = ContextVar("fsseam_call", default=None)


def current() -> CallScope | None:
    """The call running in this thread or task, or None."""
    return _CURRENT.get()


@contextmanager
def scope(call_id: str | None, tool: str, digest: str = "") -> Iterator[CallScope]:
    """Run the body as the call ``call_id`` of ``tool``. An inner scope (a tool calling an
    operation of ``ctx.fs``) keeps the outer call's id and tool: the call is the tool's."""
    outer = _CURRENT.get()
    here = outer if outer is not None else CallScope(call_id, tool, digest)
    token = _CURRENT.set(here)
    try:
        yield here
    finally:
        _CURRENT.reset(token)
