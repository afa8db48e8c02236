"""A route of deepagents' ``CompositeBackend``: every message names the path the model used.

The composite strips a route's prefix before it calls the route's backend
(``/data/config.toml`` reaches fsseam as ``/config.toml``) and puts it back on the paths of
results (a listing, a match, the path of a write), never in an error's text. An error that
named the stripped path would send a model that follows its advice ("read it first") to the
default backend's file of that name, so the backend puts the prefix back on every path an
error names: its path, the paths among its details, and so every sentence nested in it.
"""

from __future__ import annotations

import copy
from typing import Any

from ..errors import FsError

__all__ = ["Route"]

# Details that hold paths: one path, or several joined by "; " (a change's files).
_ONE_PATH = frozenset(("source", "destination"))
_JOINED = frozenset(("files",))
_LISTED = frozenset(("rollback",))


class Route:
    """The prefix a composite strips (``/data/``), put back on the paths errors name."""

    def __init__(self, prefix: str) -> None:
        self.prefix = "/" + prefix.strip("/")

    def __repr__(self) -> str:
        return f"Route({self.prefix!r})"

    def path(self, shown: str) -> str:
        """``/config.toml`` as the model named it (``/data/config.toml``); the route's own
        root is the prefix itself."""
        if not shown.startswith("/") or self.prefix == "/":
            return shown
        return self.prefix if shown == "/" else self.prefix + shown

    def error(self, err: FsError) -> FsError:
        """``err`` with every path it names under the route."""
        new = copy.copy(err)  # FsError copies as the facts it carries
        if isinstance(err.path, str):
            new.path = self.path(err.path)
        new.details = {name: self._detail(name, value) for name, value in err.details.items()}
        return new

    def _detail(self, name: str, value: Any) -> Any:
        if name in _ONE_PATH and isinstance(value, str):
            return self.path(value)
        if name in _JOINED and isinstance(value, str):
            return "; ".join(self.path(p) for p in value.split("; "))
        if name in _LISTED and isinstance(value, (list, tuple)):
            return [self.path(p) if isinstance(p, str) else p for p in value]
        return value
