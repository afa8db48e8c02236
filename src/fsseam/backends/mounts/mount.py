"""One mounted store, and what a table of them guarantees together."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...paths import display
from ...versions import Capabilities
from ..base import Backend

__all__ = ["Mount", "weakest"]


@dataclass(frozen=True)
class Mount:
    """One store mounted at ``path`` (a key: ``""`` for ``/``, ``data`` for ``/data``)."""

    path: str
    backend: Backend
    read_only: bool = False
    url: str = ""
    """What was mounted (for messages and ``repr``): a URL, or the backend's root."""

    @property
    def point(self) -> str:
        """The mount point as the model sees it: ``/``, ``/data``."""
        return display(self.path)

    def outer(self, inner: str) -> str:
        """The workspace key of the store's key ``inner``."""
        if not self.path:
            return inner
        return f"{self.path}/{inner}" if inner else self.path


def weakest(mounts: Iterable[Mount]) -> Capabilities:
    """Each yes/no guarantee holds for the table only where it holds on every mount. Every
    boolean field of :class:`Capabilities` is and-ed, found from the model itself, so a flag
    added later cannot be forgotten here; the two other fields say what the mounts share:
    ``version_kind`` their common kind (or ``"mixed"``), ``note`` how to ask per path."""
    caps = [m.backend.capabilities for m in mounts]
    kinds = {c.version_kind for c in caps}
    flags = [name for name, field in Capabilities.model_fields.items()
             if field.annotation is bool]
    return Capabilities(
        **{f: all(getattr(c, f) for c in caps) for f in flags},
        version_kind=kinds.pop() if len(kinds) == 1 else "mixed",
        note=(
            "mounts: each flag holds on every mount (capabilities_for(path) says what the "
            "mount holding a path does); a copy between mounts reads the source and writes "
            "the target create-only"
        ),
    )
