"""From what a Workspace is given (``observations=``) to an observation store."""

from __future__ import annotations

from typing import Any

from .store import ObservationStore

__all__ = ["open_observations"]


def open_observations(
    spec: str | ObservationStore,
    *,
    workspace_url: str,
    storage_options: dict[str, Any] | None = None,
) -> ObservationStore:
    """The store ``spec`` names: a store object as it is; a URL string (a file path or any
    fsspec URL) opens a store there, with the workspace's ``storage_options`` when the
    protocol is the workspace's."""
    if not isinstance(spec, str):
        return spec
    raise NotImplementedError("observation stores at a URL")  # the URL stores come next
