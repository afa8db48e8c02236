"""Entries kept in state the client holds, bound to where they were recorded.

A framework's state (a Pydantic AI message history, an Agents SDK run context or
``RunState`` string, a LangGraph checkpoint) travels through the application and its
storage, so an observation found there is only a claim. Each entry written there carries a
seal over what it says and where it was recorded: the owner (or the name the integration
gives the conversation's scope), the workspace URL, the thread or conversation, and the
file's key. An entry whose seal does not match where it is read (written by hand, copied
from another conversation or thread, its version or changes altered) is not an observation:
it is ignored, so the edit it would have let through needs a read.

Without a key the seal is a plain SHA-256 digest: it stops entries that were copied or
edited by mistake, not someone who means to forge one (the digest is public). With the
workspace's ``observation_key`` it is an HMAC-SHA256 under that key: only whoever holds the
key can make an entry the workspace accepts, and an unsigned entry (no seal, or only the
digest) is refused. docs/observations.md, "Trust", says who can authorize a write.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .store import ObservationEntry

__all__ = ["SEAL_FIELD", "Binding", "check_key", "fingerprint", "opened", "sealed"]

SEAL_FIELD = "seal"
"""The field of an entry's JSON in client-held state that carries its seal."""
_DIGEST = "sha256:"
_SIGNED = "hmac-sha256:"
_CONTEXT = "fsseam-observation/1"
"""Names what is sealed, so a seal made for anything else never matches one of these."""

_log = logging.getLogger("fsseam.observations")


def check_key(key: object) -> bytes | None:
    """``observation_key`` as given to a workspace: bytes (not empty) or None."""
    if key is None:
        return None
    if not isinstance(key, bytes) or not key:
        raise TypeError("observation_key must be non-empty bytes (a secret of the "
                        "application's, such as os.urandom(32) kept in its settings)")
    return key


def fingerprint(key: bytes) -> str:
    """How a key is named in logs and errors, without revealing it."""
    return hashlib.sha256(b"fsseam-observation-key\0" + key).hexdigest()[:16]


@dataclass(frozen=True)
class Binding:
    """Where entries were recorded: ``owner`` (the owner, or the stable name of the
    integration's scope), ``workspace`` (its URL) and ``thread`` (the thread or
    conversation; empty when the framework names none), with the workspace's ``key``."""

    owner: str
    workspace: str
    thread: str
    key: bytes | None = None

    def __repr__(self) -> str:  # never the key itself
        signed = f", key={fingerprint(self.key)}" if self.key is not None else ""
        return (f"Binding(owner={self.owner!r}, workspace={self.workspace!r}, "
                f"thread={self.thread!r}{signed})")

    def _message(self, file: str, entry: ObservationEntry) -> bytes:
        said = [_CONTEXT, self.owner, self.workspace, self.thread, file,
                entry.model_dump(mode="json")]
        return json.dumps(said, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=True).encode()

    def seal(self, file: str, entry: ObservationEntry) -> str:
        """The seal of ``entry`` for the key ``file``, recorded here."""
        message = self._message(file, entry)
        if self.key is None:
            return _DIGEST + hashlib.sha256(message).hexdigest()
        return _SIGNED + hmac.new(self.key, message, hashlib.sha256).hexdigest()

    def why_not(self, file: str, entry: ObservationEntry, seal: object) -> str | None:
        """Why ``seal`` does not vouch for ``entry`` here, or None when it does:
        ``unsealed`` (none: written by hand, or by an fsseam that sealed none),
        ``foreign_seal`` (not one fsseam writes), ``unsigned`` (only the public digest, and
        this workspace has a key), ``signed_without_key_here`` (this workspace has no key
        to check it), ``mismatch`` (recorded for another owner, workspace or thread, under
        another key, or altered since)."""
        if not isinstance(seal, str):
            return "unsealed" if seal is None else "foreign_seal"
        if self.key is not None and not seal.startswith(_SIGNED):
            return "unsigned"
        if self.key is None and seal.startswith(_SIGNED):
            return "signed_without_key_here"
        if not hmac.compare_digest(seal, self.seal(file, entry)):
            return "mismatch"
        return None


def sealed(binding: Binding, file: str, entry: ObservationEntry) -> dict[str, Any]:
    """``entry``'s JSON with its seal, for client-held state."""
    return {**entry.model_dump(mode="json"), SEAL_FIELD: binding.seal(file, entry)}


def opened(binding: Binding, file: str, raw: Mapping[str, Any], *, where: str = ""
           ) -> ObservationEntry | None:
    """The entry ``raw`` (its JSON with the seal) when its seal vouches for it here, else
    None (logged, naming why: it reads as not observed). A value that is no entry at all
    raises pydantic's ``ValidationError`` (the caller says whose state is damaged)."""
    body = {k: v for k, v in raw.items() if k != SEAL_FIELD}
    entry = ObservationEntry.model_validate(body)
    why = binding.why_not(file, entry, raw.get(SEAL_FIELD))
    if why is None:
        return entry
    _log.warning("fsseam ignored the observation of %r kept in %s (%s, for %r); the file "
                 "must be read again before it is changed", file, where or "client state",
                 why, binding)
    return None
