"""What the parts of the template (listing, history, copy) need of the backend they serve:
its client, its keys, its settings and its error helpers. A protocol, so that the parts do
not import the backend that imports them."""

from __future__ import annotations

from typing import Protocol

from ...errors import FsError
from ...versions import Precondition, Version
from .client import ObjectClient, ObjectHead, VersionsById
from .errors import Action, Fault, ObjectErrorMapper, Op
from .keys import KeySpace

__all__ = ["StoreView"]


class StoreView(Protocol):
    _client: ObjectClient
    _by_id: VersionsById | None
    _keys: KeySpace
    _mapper: ObjectErrorMapper
    _keeps_versions: bool | None
    bucket: str
    list_page_size: int | None
    max_versions_listed: int
    history_owners: bool
    server_side_copy: bool

    def _error(
        self,
        exc: BaseException,
        op: Op,
        key: str,
        action: Action,
        precondition: Precondition | None = None,
        exists: bool | None = None,
    ) -> FsError: ...

    def _fault(self, exc: BaseException, op: Op) -> Fault | None: ...

    def _missing_or_directory(
        self, exc: BaseException, op: Op, key: str, action: Action
    ) -> FsError: ...

    def _has_children(self, key: str, action: Action) -> bool: ...

    def _head(self, key: str, action: Action) -> ObjectHead | None: ...

    def _look(self, key: str) -> tuple[bool | None, ObjectHead | None]: ...

    def _check_free(self, key: str, action: Action) -> None: ...

    def _file_key(self, key: str, action: Action) -> str: ...

    def _expected(self, key: str, precondition: Precondition) -> Version | None: ...

    def _put(
        self,
        key: str,
        data: bytes,
        precondition: Precondition,
        expected: Version | None,
        action: Action,
        owner: str | None = None,
    ) -> Version: ...
