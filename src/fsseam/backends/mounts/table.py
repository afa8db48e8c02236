"""A mount table -> a :class:`~.router.MountBackend`: mount points checked, stores opened."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...errors import ErrorCode, FsError
from ...paths import display, to_key
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
            ErrorCode.FS_INVALID_ARGUMENT, reason="mount_path_invalid", details={"mount": path}
        )
    return to_key(path) if path.strip("/") else ""


def build_mounts(
    table: Mapping[str, Any],
    storage_options: Mapping[str, dict[str, Any]] | None = None,
    read_only: Iterable[str] = (),
    backends: Mapping[str, str] | None = None,
) -> MountBackend:
    """A :class:`MountBackend` from ``{"/path": URL or Backend}``, per-mount storage options
    and adapter names, and the mount points to mount read-only (all keyed by mount path).
    The table is checked whole before any store is opened."""
    from ..registry import open_backend

    keys = [mount_path(p) for p in table]
    for i, k in enumerate(keys):
        if k in keys[:i]:  # "/data" and "/data/" are one mount point
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                reason="mount_duplicate",
                details={"mount": display(k)},
            )
    options = _by_mount(storage_options or {}, keys, "storage_options")
    names = _by_mount(backends or {}, keys, "backend")
    frozen = set(_by_mount(dict.fromkeys(read_only, True), keys, "read_only"))
    targets = dict(zip(keys, table.values(), strict=True))
    for k, target in targets.items():
        if not isinstance(target, str) and (k in options or k in names):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                reason="mount_options_for_backend",
                details={"mount": display(k)},
            )
    mounts = []
    for k, target in targets.items():
        if isinstance(target, str):
            backend = open_backend(target, options.get(k), backend=names.get(k))
            mounts.append(Mount(k, backend, read_only=k in frozen, url=target))
        else:
            mounts.append(Mount(k, target, read_only=k in frozen))
    return MountBackend(mounts)


def _by_mount(values: Mapping[str, Any], keys: list[str], what: str) -> dict[str, Any]:
    """``values`` keyed by mount point key; a path that is not mounted is a mistake."""
    out: dict[str, Any] = {}
    for p, v in values.items():
        k = mount_path(p)
        if k not in keys:
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                reason="mount_unknown",
                details={"mount": display(k), "what": what,
                         "mounts": ", ".join(display(m) for m in sorted(keys))},
            )
        out[k] = v
    return out
