"""Mounts: several stores under one root, as one backend.

    ws = Workspace.mount({"/": "memory://scratch", "/data": "s3://bucket/prefix",
                          "/repo": "/abs/dir"}, read_only={"/repo"})

``router.py`` is the backend (routing, listings, walks, copies between stores, read-only
mounts, capabilities, what the table offers beyond the contract); ``mount.py`` is one
mount and the guarantees a table shares; ``runs.py`` routes batched reads (and a search's
unhashed reads) to the mounts holding the keys; ``relocate.py`` puts a child's errors in
the workspace's paths; ``table.py`` checks a mount table and opens its stores.
"""

from .router import Mount, MountBackend
from .table import build_mounts, mount_path

__all__ = ["Mount", "MountBackend", "build_mounts", "mount_path"]
