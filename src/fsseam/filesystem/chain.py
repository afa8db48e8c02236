"""The ``fsseam`` protocol: a guarded filesystem over any fsspec URL, chained as fsspec
chains its wrappers (``simplecache::``)::

    pandas.read_csv("fsseam::memory://proj/data.csv",
                    storage_options={"fsseam": {"owner": "me"}})
    fsspec.open("fsseam::s3://bucket/x.csv", fsseam={"owner": "me"}, s3={...})

fsspec hands this class the inner layer as ``target_protocol``, ``target_options`` and
``fo`` (the inner path). The workspace is the inner URL's first name (the bucket, the
container, a memory store's top directory) unless ``root=`` names another; the inner
options become its ``storage_options``. Workspaces are kept per URL and options (and
observation store), so every file of one notebook shares one, as fsspec shares
filesystem instances.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from fsspec.implementations.chained import ChainedFileSystem
from fsspec.utils import tokenize

from ..errors import ErrorCode, FsError
from ..messages import Reason
from ..workspace import Workspace
from .guarded import GuardedFileSystem

__all__ = ["FsseamFileSystem", "workspace_for"]

_KEEP = 32
_workspaces: OrderedDict[str, Workspace] = OrderedDict()
_lock = threading.Lock()
_LOCAL = frozenset({"file", "local"})


class FsseamFileSystem(GuardedFileSystem, ChainedFileSystem):  # type: ignore[misc]
    """The guarded filesystem fsspec opens for ``fsseam::<url>`` (or
    ``fsspec.filesystem("fsseam", target_protocol=..., owner=...)``).

    Options (``storage_options={"fsseam": {...}}``): ``owner`` (required: whose reads
    guard the writes), ``root`` (the workspace root, a path or URL of the inner storage;
    default: the inner path's first name), ``observations`` (where observations live, as
    ``Workspace(observations=)`` takes it; default: the workspace's in-process store),
    ``read_only``, ``branch`` (work on that branch of the workspace, made from main's
    current files when absent: every change lands only on it).
    """

    protocol = "fsseam"

    def __init__(self, *args: Any, target_protocol: str | None = None,
                 target_options: dict[str, Any] | None = None, fo: str | None = None,
                 owner: str | None = None, root: str | None = None,
                 observations: Any = None, read_only: bool = False,
                 branch: str | None = None, context: Any = None, prefix: str = "",
                 **storage_options: Any) -> None:
        super().__init__(*args, context=context, prefix=prefix, branch=branch,
                         **storage_options)
        if context is not None:
            return
        if not owner:
            raise ValueError(str(FsError(ErrorCode.FS_INVALID_ARGUMENT,
                                         reason=Reason.filesystem_owner_missing)))
        top = _root(root, fo)
        if not target_protocol or top is None:
            raise ValueError(str(FsError(ErrorCode.FS_INVALID_ARGUMENT,
                                         reason=Reason.filesystem_target_missing)))
        ws = workspace_for(target_protocol, top, dict(target_options or {}), observations,
                           read_only, branch)
        self._bind(ws.context(owner), top)


def _root(root: str | None, fo: str | None) -> str | None:
    """The workspace root as a path of the inner storage, without slashes at its ends."""
    if root:
        below = root.split("://", 1)[1] if "://" in root else root
        return below.strip("/") or None
    if fo:
        below = fo.split("://", 1)[1] if "://" in fo else fo
        first = below.strip("/").split("/", 1)[0]
        return first or None
    return None


def workspace_for(protocol: str, root: str, storage_options: dict[str, Any],
                  observations: Any = None, read_only: bool = False,
                  branch: str | None = None) -> Workspace:
    """The workspace over ``protocol`` at ``root`` (on ``branch``, if named), made once
    per URL and options."""
    url = "/" + root if protocol in _LOCAL else f"{protocol}://{root}"
    key = tokenize(url, storage_options, observations, read_only, branch)
    with _lock:
        ws = _workspaces.get(key)
        if ws is not None:
            _workspaces.move_to_end(key)
            return ws
    made = Workspace(url, storage_options or None, read_only=read_only,
                     observations=observations, branch=branch)
    with _lock:
        ws = _workspaces.setdefault(key, made)
        _workspaces.move_to_end(key)
        while len(_workspaces) > _KEEP:
            _workspaces.popitem(last=False)
    return ws
