"""The records of calls with an id: what a call is about to change, kept create-only in the
store itself, and the answer it gave, kept with the owner's observations.

:class:`CallRecords` is the store side (``.fsseam-calls/`` at the workspace root, a folder
no tool can reach): one :class:`CallRecord` per owner and call id, written before the call's
first change and never rewritten, removed when the store refused the call or when it
expires. :func:`encode_answer` and :func:`decode_answer` turn an answer (a pydantic outcome)
into the JSON kept under :func:`answer_key` among the owner's observations, and back. How a
call uses them to run once is :mod:`fsseam.seam.calls`.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import importlib
import json
import time
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..backends.base import Backend
from ..errors import ErrorCode, FsError
from ..versions import CreateOnly, IfMatch, Version

__all__ = [
    "CALLS_FOLDER",
    "CALL_TTL",
    "CallRecord",
    "CallRecords",
    "CallStep",
    "answer_key",
    "decode_answer",
    "digest_of",
    "encode_answer",
    "expired",
]

CALLS_FOLDER = ".fsseam-calls"
CALL_TTL = 7 * 24 * 3600.0
"""Seconds a call's records are kept: a replay later than this runs as a new call (an
engine's recovery comes within minutes or hours; :meth:`CallRecords.expire` removes older
records)."""


class CallStep(BaseModel):
    """One file a call changes: the version it rests on (None: absent), its bytes then
    (base64, when the call read them), and the sha256 of what the call leaves (None: the
    file deleted)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    key: str
    action: str
    before: Version | None = None
    before_data: str | None = None
    after: str | None = None


class CallRecord(BaseModel):
    """What a call with an id is about to change, written before its first change."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    format: int = 1
    owner: str
    call_id: str
    tool: str
    digest: str
    """Of the call's tool and arguments: an id reused for another call is refused."""
    at: float
    steps: builtins.list[CallStep]


def digest_of(tool: str, args: object) -> str:
    """The digest of a call's tool and arguments (their JSON; anything else by repr)."""
    text = json.dumps([tool, args], sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def expired(at: float) -> bool:
    """Whether a record or an answer made at ``at`` is past :data:`CALL_TTL`."""
    return time.time() - at > CALL_TTL


def _name(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def answer_key(call_id: str) -> str:
    """Where a call's answer is kept among the owner's observations (a key of the reserved
    folder: never a file)."""
    return f"{CALLS_FOLDER}/{_name(call_id)}"


class CallRecords:
    """The call records of one store (``backend``: the workspace's, at its root)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    @staticmethod
    def key(owner: str, call_id: str) -> str:
        both = owner + "\0" + call_id
        return f"{CALLS_FOLDER}/{_name(both)}.json"

    def write(self, record: CallRecord) -> Version:
        """Write ``record`` create-only: raises Conflict when the call's record is there."""
        return self.backend.put_plain(self.key(record.owner, record.call_id),
                                      record.model_dump_json().encode(), CreateOnly())

    def load(self, owner: str, call_id: str) -> CallRecord | None:
        """The record of ``owner``'s call ``call_id``; None when there is none (or it
        expired, or is not one)."""
        blob = self.backend.get_plain(self.key(owner, call_id))
        if blob is None:
            return None
        try:
            record = CallRecord.model_validate_json(blob.data)
        except ValueError:
            return None
        if record.owner != owner or record.call_id != call_id or expired(record.at):
            return None
        return record

    def remove(self, owner: str, call_id: str, version: Version) -> None:
        """Remove the record at ``version`` (the one this run wrote); left to expire when
        that fails."""
        with contextlib.suppress(FsError):
            self.backend.delete(self.key(owner, call_id), IfMatch(version))

    def expire(self, older_than: float = CALL_TTL) -> int:
        """Remove the records older than ``older_than`` seconds; how many went."""
        cut = time.time() - older_than
        try:
            entries = self.backend.list(CALLS_FOLDER)
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return 0
            raise
        gone = 0
        for entry in entries:
            blob = self.backend.get_plain(entry.key)
            if blob is None:
                continue
            try:
                at = CallRecord.model_validate_json(blob.data).at
            except ValueError:
                at = 0.0
            if at < cut:
                try:
                    self.backend.delete(entry.key, IfMatch(blob.version))
                    gone += 1
                except FsError:
                    pass  # rewritten or removed meanwhile: left to the next collect
        return gone


def encode_answer(digest: str, result: object) -> str:
    """The JSON kept for a call's answer: its digest and the outcome (its model's name,
    fields and diff)."""
    if isinstance(result, BaseModel):
        cls = type(result)
        body = result.model_dump(mode="json")
        diff = body.pop("diff", None)
        kept: dict[str, Any] = {"model": f"{cls.__module__}:{cls.__qualname__}",
                                "value": body, "diff": diff}
    else:
        kept = {"value": result}
    return json.dumps({"digest": digest, "answer": kept})


def decode_answer(text: str) -> tuple[str, object] | None:
    """(digest, answer) from :func:`encode_answer`'s JSON; None when it is not one (only
    fsseam's own models are rebuilt)."""
    try:
        kept = json.loads(text)
        return str(kept["digest"]), _decode(kept["answer"])
    except (ValueError, KeyError, TypeError, ImportError, AttributeError):
        return None


def _decode(kept: dict[str, Any]) -> object:
    name = kept.get("model")
    if name is None:
        return kept["value"]
    module, _, qualname = str(name).partition(":")
    if module != "fsseam" and not module.startswith("fsseam."):
        raise ImportError(module)
    cls: Any = importlib.import_module(module)
    for part in qualname.split("."):
        cls = getattr(cls, part)
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
        raise TypeError(name)
    value = cls.model_validate(kept["value"])
    if kept.get("diff") is not None and "diff" in type(value).model_computed_fields:
        # The kept diff, as the first answer's: both texts are gone, its lines are not.
        value.__dict__["diff"] = kept["diff"]
    return value
