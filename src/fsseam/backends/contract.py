"""The optional half of the backend contract, looked up once per backend.

A backend must do what ``Backend`` names; beyond that it may offer a few faster or richer
operations. The seam asks for them once, through :func:`extras_of`, and calls what the
answer holds (``None`` = not offered: use the plain contract).

TEMPORARY STUB (refactor in progress): the lookup below still probes by name. It is
replaced by small typed protocols, with wrappers (mounts, kept history) forwarding by
contract. The ``Extras`` field names and signatures are the fixed interface.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ..errors import FsError
from ..versions import Capabilities
from .base import Backend, Blob, Entry


@dataclass(frozen=True)
class Extras:
    """What a backend offers beyond the required contract (each ``None`` when not)."""

    native_key: Callable[[str], str | None] | None = None
    check_writable: Callable[[str], None] | None = None
    list_lazy: Callable[[str], Iterable[Entry]] | None = None
    read_tree_unhashed: Callable[..., Iterator[tuple[str, bytes | FsError, bool]]] | None = None
    read_many_unhashed: (
        Callable[[Iterable[Entry]], Iterator[tuple[Entry, bytes | FsError]]] | None
    ) = None
    capabilities_for: Callable[[str], Capabilities] | None = None
    read_version_id: Callable[[str, str], Blob] | None = None


def extras_of(backend: Backend) -> Extras:
    """What ``backend`` offers beyond the required contract."""
    names = Extras.__dataclass_fields__
    return Extras(**{n: getattr(backend, n, None) for n in names})
