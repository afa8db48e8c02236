"""What a store's tests give the shared suites: a rig over one fresh bucket."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..faults import FaultPlan

__all__ = [
    "FaultRig",
    "LostAnswerRig",
    "ReadFaultRig",
    "StoreRig",
    "WriteFaultRig",
    "url_of",
]


class StoreRig(Protocol):
    """One fresh bucket of a store, as the shared suites use it."""

    scheme: str
    """The URL scheme: ``s3``, ``gs``, ``az``."""
    bucket: str
    move_requests: list[str]
    """The HTTP methods a move of an observed object costs against this server (a store
    whose emulator ignores a copy's conditions reads and uploads instead of copying)."""

    def storage_options(self, **extra: Any) -> dict[str, Any]:
        """storage_options that reach the store through the counting point."""
        ...

    def take(self) -> list[str]:
        """The HTTP methods of the requests to this bucket since the last take."""
        ...

    def fill(self, objects: Mapping[str, bytes]) -> None:
        """Store ``objects`` (name in the bucket -> bytes) behind the backend's back; the
        requests this takes are not counted."""
        ...


def url_of(rig: StoreRig | FaultRig, prefix: str) -> str:
    """The workspace URL of ``prefix`` in the rig's bucket (its root when empty)."""
    return f"{rig.scheme}://{rig.bucket}/{prefix}" if prefix else f"{rig.scheme}://{rig.bucket}"


class FaultRig(Protocol):
    """One fresh bucket of a store whose requests pass a fault plan the tests can aim."""

    scheme: str
    bucket: str
    content_versions: bool
    """The store's versions are hashes of the bytes (ETags): a file restored to its bytes
    is at the version an agent observed. Otherwise (GCS generations) it must be read
    again."""

    def storage_options(self, **extra: Any) -> dict[str, Any]:
        """storage_options that reach the store through the fault plan."""
        ...

    def fill(self, objects: Mapping[str, bytes]) -> None:
        """Store ``objects`` (name in the bucket -> bytes) behind the backend's back."""
        ...

    def fail(self, name: str, op: str) -> None:
        """Every request of a change's ``op`` (``create``, ``update`` or ``delete``) of the
        object ``name`` (in the bucket) fails with a 500 until :meth:`clear`."""
        ...

    def clear(self) -> None:
        """No more faults."""
        ...

    def stored(self, prefix: str) -> dict[str, bytes]:
        """Every object under ``prefix/`` now (name below the prefix -> bytes), faults off."""
        ...


class ReadFaultRig(FaultRig, Protocol):
    """A :class:`FaultRig` that also aims faults at reads and counts requests per object."""

    read_attempts: int
    """GETs one read makes against a persistent 500 (the store library's retries)."""
    reset_read_attempts: tuple[int, int]
    """Bounds of the GETs against persistent connection resets (libraries may resend an
    idempotent GET once per try, depending on timing)."""

    def fail_reads(self, name: str, kind: str, times: int) -> None:
        """The next ``times`` GETs of ``name`` meet ``kind`` (``500``, ``reset``)."""
        ...

    def seen(self, name: str, method: str, *, forwarded: bool = False) -> int:
        """Requests of ``method`` to ``name`` since the last :meth:`clear` (``PUT``: every
        upload of it, whatever the store's upload method); ``forwarded``: only those that
        reached the store whole."""
        ...

    def state(self, name: str) -> tuple[bytes, str] | None:
        """(bytes, version value) of ``name`` now, faults off; None when it is missing."""
        ...


class WriteFaultRig(ReadFaultRig, Protocol):
    """A :class:`ReadFaultRig` that also aims faults at uploads."""

    write_attempts: int
    """Uploads one write makes against a persistent 5xx (the store library's retries)."""
    transient_faults: int
    """How many failed uploads the library's retries outlast in the transient test."""
    error_words: Mapping[str, str]
    """What the error says of each status (``{"500": "InternalError"}``)."""

    def fail_writes(self, name: str, kind: str, times: int) -> None:
        """The next ``times`` uploads of ``name`` meet ``kind`` (``500``, ``503``,
        ``reset``, ``lost``)."""
        ...


class LostAnswerRig(WriteFaultRig, Protocol):
    """A :class:`WriteFaultRig` that also aims faults at deletes and at the look that
    recovers a lost write, and shows its plan (the suite arms faults mid-call)."""

    plan: FaultPlan

    def fail_deletes(self, name: str, kind: str, times: int) -> None:
        """The next ``times`` DELETEs of ``name`` meet ``kind`` (``503``, ``lost``)."""
        ...

    def fail_looks(self, name: str, kind: str, times: int) -> None:
        """The next ``times`` reads of ``name``'s metadata (the look that tells whether a
        lost write landed: S3's HEAD; on GCS its metadata GET, which matches its media
        GETs too) meet ``kind``."""
        ...

    def looks_seen(self, name: str) -> int:
        """Reads of ``name``'s metadata since the last :meth:`clear`."""
        ...
