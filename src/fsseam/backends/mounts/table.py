"""A mount table -> a :class:`~.router.MountBackend`: mount points checked, stores opened."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ...errors import ErrorCode, FsError
from ...messages import Reason
from ...paths import display, to_key
from ..history import History, keep_history, local_root
from .router import Mount, MountBackend

__all__ = ["build_mounts", "mount_path"]


def mount_path(path: str) -> str:
    """The key of a mount point: ``/`` -> ``""``, ``/data/`` -> ``data``. Mount points are
    absolute paths without ``.`` or ``..`` parts (FS_INVALID_ARGUMENT otherwise)."""
    parts = path.split("/") if isinstance(path, str) else []
    if (
        not isinstance(path, str)
        or not path.startswith("/")
        or any(p in (".", "..") for p in parts)
        or "\x00" in path
    ):
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.mount_path_invalid, details={"mount": path}
        )
    return to_key(path) if path.strip("/") else ""


def build_mounts(
    table: Mapping[str, Any],
    storage_options: Mapping[str, dict[str, Any]] | None = None,
    read_only: Iterable[str] = (),
    backends: Mapping[str, str] | None = None,
    history: History | Mapping[str, History] | None = None,
) -> MountBackend:
    """A :class:`MountBackend` from ``{"/path": URL or Backend}``, per-mount storage options
    and adapter names, and the mount points to mount read-only (all keyed by mount path).
    ``history``: fsseam's own history for mounts whose store keeps no versions (see
    :func:`_with_history`). The table is checked whole before any store is opened."""
    from ..registry import open_backend

    keys = [mount_path(p) for p in table]
    for i, k in enumerate(keys):
        if k in keys[:i]:  # "/data" and "/data/" are one mount point
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                reason=Reason.mount_duplicate,
                details={"mount": display(k)},
            )
    options = _by_mount(storage_options or {}, keys, "storage_options")
    names = _by_mount(backends or {}, keys, "backend")
    frozen = set(_by_mount(dict.fromkeys(read_only, True), keys, "read_only"))
    kept = None if history is None or isinstance(history, History) else (
        _by_mount(history, keys, "history"))
    targets = dict(zip(keys, table.values(), strict=True))
    for k, target in targets.items():
        if not isinstance(target, str) and (k in options or k in names):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                reason=Reason.mount_options_for_backend,
                details={"mount": display(k)},
            )
    mounts = []
    for k, target in targets.items():
        if isinstance(target, str):
            backend = open_backend(target, options.get(k), backend=names.get(k))
            mounts.append(Mount(k, backend, read_only=k in frozen, url=target))
        else:
            mounts.append(Mount(k, target, read_only=k in frozen))
    if history is not None:
        mounts = _with_history(mounts, history if kept is None else kept)
    return MountBackend(mounts)


def _with_history(mounts: list[Mount], history: History | Mapping[str, History]
                  ) -> list[Mount]:
    """Each mount with fsseam's own history where it is asked for: one History applies to
    every mount whose store keeps no versions itself (S3 and GCS mounts keep theirs), a
    table of them to the mount points it names. One ``History(path=...)`` shared by several
    mounts keeps each mount's copies in a directory of its own below that path (two stores
    can hold the same file name). A history directory inside any local mount's tree is
    refused, as it is inside a local workspace's root."""
    per_mount = not isinstance(history, History)
    chosen: dict[str, History] = {}
    for m in mounts:
        h = history.get(m.path) if not isinstance(history, History) else history
        if h is not None and (per_mount or not m.backend.capabilities.history):
            chosen[m.path] = h
    shared = not per_mount and len(chosen) > 1
    roots = [r for r in (local_root(m.backend) for m in mounts) if r is not None]
    out = []
    for m in mounts:
        h = chosen.get(m.path)
        if h is None:
            out.append(m)
            continue
        if h.path is not None:
            if shared:
                h = h.model_copy(update={"path": os.path.join(h.path, _subdirectory(m.path))})
            _outside_trees(str(h.path), roots)
        out.append(Mount(m.path, keep_history(m.backend, h), read_only=m.read_only,
                         url=m.url))
    return out


def _subdirectory(mount: str) -> str:
    """A directory name for a mount point's copies: readable, and one per mount point."""
    readable = mount.replace("/", "_") or "root"
    return f"{readable}-{hashlib.sha256(mount.encode()).hexdigest()[:8]}"


def _outside_trees(path: str, roots: list[str]) -> None:
    real = os.path.realpath(path)
    for root in roots:
        if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.history_inside_root,
                          details={"where": path})


def _by_mount(values: Mapping[str, Any], keys: list[str], what: str) -> dict[str, Any]:
    """``values`` keyed by mount point key; a path that is not mounted is a mistake."""
    out: dict[str, Any] = {}
    for p, v in values.items():
        k = mount_path(p)
        if k not in keys:
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                reason=Reason.mount_unknown,
                details={"mount": display(k), "what": what,
                         "mounts": ", ".join(display(m) for m in sorted(keys))},
            )
        out[k] = v
    return out
