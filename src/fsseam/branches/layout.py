"""Where branches live: a reserved folder of the workspace, in the store itself.

::

    .fsseam-branches/
      refs/NAME.json             the branch: its head (a manifest id); moved only by the
                                 store's own compare-and-swap (IfMatch on the ref)
      manifests/ID.json          immutable: every path the branch changed (its blob, or a
                                 deletion, and the main version it was based on), its parent
                                 manifest, who made it and when; ID is the sha256 of the text
      blobs/AB/SHA256            content-addressed bytes, written create-only
      journals/NAME.json         a merge under way: what it publishes, written before the
                                 first file, removed after the last

No server and no database: every object is written create-only or moved by one
conditional write, so two processes (or machines) on one branch never lose a change, and a
reader sees one head or the next, never half of one.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..backends.base import Backend, Blob
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
from ..messages import Clause, Part, Reason
from ..versions import CreateOnly, IfMatch, Version

__all__ = [
    "MARKER",
    "PREFIX",
    "BranchFile",
    "BranchStore",
    "Journal",
    "JournalStep",
    "Manifest",
    "Ref",
    "blob_version",
    "check_name",
    "holds_markers",
]

PREFIX = ".fsseam-branches"
"""The reserved folder, relative to the workspace root (hidden from and refused to every
tool)."""

BLOB_KIND = "sha256"
_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$")
M = TypeVar("M", bound=BaseModel)
_MANIFESTS_KEPT = 256
"""Manifests are immutable: this many stay in memory, by id."""


def check_name(name: object) -> str:
    """``name`` if it names a branch; FS_INVALID_ARGUMENT otherwise."""
    if not isinstance(name, str) or not _NAME.match(name) or name == "main":
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.branch_name_invalid,
                      details={"name": str(name)})
    return name


MARKER = b"<<<<<<< main"
"""The line a rebase's conflict starts with (git's marker, main's side first)."""


def holds_markers(data: bytes) -> bool:
    """Whether ``data`` has a line that starts a rebase's conflict."""
    return data.startswith(MARKER) or b"\n" + MARKER in data


def blob_version(sha: str) -> Version:
    """The version a branch gives the bytes it keeps: their sha256 (as local disk does)."""
    return Version(kind=BLOB_KIND, value=sha)


class BranchFile(BaseModel):
    """One path the branch changed."""

    model_config = ConfigDict(frozen=True)
    blob: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    """The sha256 of its bytes on the branch; None: deleted on the branch."""
    size: int | None = None
    base: Version | None = None
    """The main version the change was based on; None: the file was absent on main."""
    base_blob: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    """The sha256 of the base's bytes, kept as a blob for a three-way merge."""
    owner: str | None = None
    """The owner whose change made this state."""
    source: str | None = None
    """The key it was copied from (a move is a copy and a deletion of the source)."""
    markers: bool = False
    """It holds the conflict markers a rebase wrote, and no change since took them out:
    a merge refuses it until an agent (or a person) resolves them on the branch."""

    @property
    def version(self) -> Version | None:
        return None if self.blob is None else blob_version(self.blob)


class Manifest(BaseModel):
    """One head of a branch: every path it changed, and the head before it."""

    model_config = ConfigDict(frozen=True)
    format: Literal[1] = 1
    branch: str
    parent: str | None = None
    files: dict[str, BranchFile] = Field(default_factory=dict)
    owner: str | None = None
    time: float = 0.0
    operation: str = ""
    """What made this head: ``create``, ``write``, ``delete``, ``copy``, ``merge``,
    ``rewind``."""
    path: str | None = None
    """The key the operation changed (None for a whole-branch operation)."""

    def text(self) -> bytes:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True,
                          separators=(",", ":")).encode()

    @property
    def ident(self) -> str:
        return hashlib.sha256(self.text()).hexdigest()


class Ref(BaseModel):
    """The branch: its head, moved by the store's compare-and-swap."""

    format: Literal[1] = 1
    name: str
    head: str
    created: float
    created_by: str | None = None


class JournalStep(BaseModel):
    """One file a merge publishes: write ``blob`` (or delete) while main is at
    ``expected`` (None: while the file is absent)."""

    key: str
    action: Literal["write", "delete"]
    expected: Version | None = None
    blob: str | None = None


class Journal(BaseModel):
    """A merge under way, written create-only before its first file."""

    format: Literal[1] = 1
    branch: str
    head: str
    """The branch head the merge publishes from."""
    owner: str
    started: float
    steps: list[JournalStep]


class BranchStore:
    """The reserved folder's objects over the workspace's own backend (``inner``)."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self._manifests: OrderedDict[str, Manifest] = OrderedDict()
        self._lock = threading.Lock()

    # -- keys ------------------------------------------------------------------------------
    @staticmethod
    def ref_key(name: str) -> str:
        return f"{PREFIX}/refs/{name}.json"

    @staticmethod
    def manifest_key(ident: str) -> str:
        return f"{PREFIX}/manifests/{ident}.json"

    @staticmethod
    def blob_key(sha: str) -> str:
        return f"{PREFIX}/blobs/{sha[:2]}/{sha}"

    @staticmethod
    def journal_key(name: str) -> str:
        return f"{PREFIX}/journals/{name}.json"

    # -- refs ------------------------------------------------------------------------------
    def ref(self, name: str) -> tuple[Ref, Version] | None:
        got = self.inner.get_plain(self.ref_key(name))
        if got is None:
            return None
        return self._parse(Ref, got.data, self.ref_key(name)), got.version

    def put_ref(self, ref: Ref, expected: Version | None) -> Version:
        """Move (or make, ``expected=None``) the ref; Conflict when it moved meanwhile."""
        data = json.dumps(ref.model_dump(mode="json"), sort_keys=True).encode()
        pre = CreateOnly() if expected is None else IfMatch(expected)
        return self.inner.put_plain(self.ref_key(ref.name), data, pre)

    def delete_ref(self, name: str, expected: Version) -> None:
        self.inner.delete(self.ref_key(name), IfMatch(expected))

    def names(self) -> list[str]:
        try:
            entries = self.inner.list(f"{PREFIX}/refs")
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return []
            raise
        return sorted(e.name.removesuffix(".json") for e in entries
                      if e.kind == "file" and e.name.endswith(".json"))

    # -- manifests -------------------------------------------------------------------------
    def manifest(self, ident: str) -> Manifest:
        with self._lock:
            found = self._manifests.get(ident)
            if found is not None:
                self._manifests.move_to_end(ident)
                return found
        got = self.inner.get_plain(self.manifest_key(ident))
        if got is None:
            raise self._damaged(self.manifest_key(ident), Part(Clause.branch_missing_object))
        manifest = self._parse(Manifest, got.data, self.manifest_key(ident))
        if hashlib.sha256(manifest.text()).hexdigest() != ident:
            raise self._damaged(self.manifest_key(ident), Part(Clause.branch_text_mismatch))
        self._remember(ident, manifest)
        return manifest

    def put_manifest(self, manifest: Manifest) -> str:
        ident = manifest.ident
        self._put_once(self.manifest_key(ident), manifest.text())
        self._remember(ident, manifest)
        return ident

    def log(self, head: str) -> Iterator[tuple[str, Manifest]]:
        """The head and each parent before it, newest first."""
        ident: str | None = head
        while ident is not None:
            manifest = self.manifest(ident)
            yield ident, manifest
            ident = manifest.parent

    def _remember(self, ident: str, manifest: Manifest) -> None:
        with self._lock:
            self._manifests[ident] = manifest
            while len(self._manifests) > _MANIFESTS_KEPT:
                self._manifests.popitem(last=False)

    # -- blobs -----------------------------------------------------------------------------
    def blob(self, sha: str) -> bytes:
        got = self.inner.get_plain(self.blob_key(sha))
        if got is None:
            got = self._restore(sha)
        if got is None:
            raise self._damaged(self.blob_key(sha), Part(Clause.branch_missing_object))
        if hashlib.sha256(got.data).hexdigest() != sha:
            raise self._damaged(self.blob_key(sha), Part(Clause.branch_bytes_mismatch))
        return got.data

    # -- set aside by collect, restored when needed after all -------------------------------
    @staticmethod
    def trash_key(sha: str, when: int) -> str:
        return f"{PREFIX}/trash/{sha[:2]}/{sha}/{when}"

    def set_aside(self, sha: str, when: int) -> None:
        """Move an unreached blob to the trash (``collect``): a writer that reused it in the
        moment collect looked finds it there."""
        try:
            self.inner.copy(self.blob_key(sha), self.trash_key(sha, when))
        except Conflict as e:
            if e.reason != ConflictKind.exists:
                raise
        self.remove(self.blob_key(sha))

    def trashed(self) -> list[tuple[str, int, str]]:
        """Each blob in the trash: its digest, when it was set aside, its key."""
        found = []
        for key in self.keys("trash"):
            folder, _, when = key.rpartition("/")
            sha = folder.rpartition("/")[2]
            if when.isdigit():
                found.append((sha, int(when), key))
        return found

    def _restore(self, sha: str) -> Blob | None:
        """A blob collect set aside, put back (a change that reused it named it after all)."""
        folder = f"{PREFIX}/trash/{sha[:2]}/{sha}"
        try:
            kept = [e.key for e in self.inner.list(folder) if e.kind == "file"]
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return None
            raise
        for key in kept:
            got = self.inner.get_plain(key)
            if got is not None and hashlib.sha256(got.data).hexdigest() == sha:
                self._put_once(self.blob_key(sha), got.data)
                return got
        return None

    def restore(self, sha: str) -> None:
        self._restore(sha)

    def put_blob(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        self._put_once(self.blob_key(sha), data)
        return sha

    # -- journals --------------------------------------------------------------------------
    def journal(self, name: str) -> tuple[Journal, Version] | None:
        got = self.inner.get_plain(self.journal_key(name))
        if got is None:
            return None
        return self._parse(Journal, got.data, self.journal_key(name)), got.version

    def put_journal(self, journal: Journal) -> Version:
        """Create-only: Conflict ``exists`` when another merge of the branch is under way."""
        data = json.dumps(journal.model_dump(mode="json"), sort_keys=True).encode()
        return self.inner.put_plain(self.journal_key(journal.branch), data, CreateOnly())

    def delete_journal(self, name: str, version: Version) -> None:
        try:
            self.inner.delete(self.journal_key(name), IfMatch(version))
        except Conflict as e:
            if e.reason != ConflictKind.missing:
                raise
        except FsError as e:
            if e.code is not ErrorCode.FS_NOT_FOUND:
                raise

    # -- the whole folder, for collect -----------------------------------------------------
    def keys(self, folder: str) -> list[str]:
        try:
            return [e.key for e in self.inner.walk(f"{PREFIX}/{folder}") if e.kind == "file"]
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return []
            raise

    def remove(self, key: str) -> None:
        try:
            self.inner.delete(key)
        except FsError as e:
            if e.code is not ErrorCode.FS_NOT_FOUND:
                raise

    # -- helpers ---------------------------------------------------------------------------
    def _put_once(self, key: str, data: bytes) -> None:
        """Write an immutable object; one already there holds the same bytes (its name is
        their digest)."""
        try:
            self.inner.put_plain(key, data, CreateOnly())
        except Conflict as e:
            if e.reason != ConflictKind.exists:
                raise

    @staticmethod
    def _damaged(key: str, detail: str) -> FsError:
        return FsError(ErrorCode.FS_BACKEND, reason=Reason.branch_damaged,
                       details={"object": key, "detail": detail})

    def _parse(self, model: type[M], data: bytes, key: str) -> M:
        try:
            return model.model_validate_json(data)
        except ValidationError as e:
            raise self._damaged(key, e.errors()[0]["msg"]) from None

