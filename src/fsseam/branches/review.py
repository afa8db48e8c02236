"""What a branch changed, against main as it is now: the review a person approves, and
the report of a merge. Both are read by a person (a notebook, a terminal, the CLI), never
by the model.

:func:`survey` reads, for each path a branch changed, main's current file, and tells the
three states a merge weighs: the base the change rested on, main now, the branch.
:class:`BranchDiff` is what ``ws.diff(name)`` answers: each file's unified diff, main's
version, whether main changed it since, and a ``token`` naming exactly what was reviewed
(the branch head and main's versions of those files), which ``merge(expect=token)``
checks.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Iterable
from typing import Literal

from merge3 import Merge3
from pydantic import BaseModel, ConfigDict, Field

from ..backends.base import Backend, Blob
from ..diff import unified_diff
from ..errors import ErrorCode, FsError
from ..paths import display
from ..versions import Entry, Version
from .layout import BranchFile, BranchStore, Manifest

__all__ = [
    "BranchDiff",
    "FileChange",
    "FileState",
    "MergeConflict",
    "MergeConflictKind",
    "MergeOutcome",
    "RebaseOutcome",
    "is_text",
    "review",
    "survey",
    "three_way",
    "token_of",
    "with_markers",
]

MergeConflictKind = Literal["both_changed", "deleted_on_main", "deleted_on_branch", "both_added",
                       "base_lost", "changed_meanwhile", "unresolved"]
ChangeKind = Literal["added", "changed", "deleted", "moved"]


class FileState:
    """One path a branch changed: its entry, main's file now, and the bytes of each side
    (read when first asked)."""

    def __init__(self, key: str, entry: BranchFile, main: Blob | None,
                 store: BranchStore, inner: Backend) -> None:
        self.key = key
        self.entry = entry
        self.main = main
        self._store = store
        self._inner = inner

    @property
    def main_version(self) -> Version | None:
        return None if self.main is None else self.main.version

    @property
    def main_unchanged(self) -> bool:
        """Main is still where the change rested (by version, or by the base's bytes
        where main names versions otherwise)."""
        base = self.entry.base
        if base is None or self.main is None:
            return base is None and self.main is None
        if self.main.version == base:
            return True
        return (self.entry.base_blob is not None
                and hashlib.sha256(self.main.data).hexdigest() == self.entry.base_blob)

    @property
    def on_main_already(self) -> bool:
        """Main already holds exactly the branch's state of this path."""
        if self.entry.blob is None:
            return self.main is None
        return (self.main is not None
                and hashlib.sha256(self.main.data).hexdigest() == self.entry.blob)

    @property
    def merges(self) -> bool:
        """Whether a merge writes this file (main unchanged since, already there, or the
        two changes combine three ways) rather than refusing it as a conflict."""
        if self.entry.markers:
            return False  # a rebase's conflict markers, not resolved yet
        if self.main_unchanged or self.on_main_already:
            return True
        if self.entry.blob is None or self.main is None or self.entry.base is None:
            return False
        base = self.base_bytes()
        return base is not None and three_way(base, self.main.data,
                                              self.branch_bytes() or b"") is not None

    def branch_bytes(self) -> bytes | None:
        return None if self.entry.blob is None else self._store.blob(self.entry.blob)

    def base_bytes(self) -> bytes | None:
        """The bytes the change rested on (``b""`` for a file absent on main); None when
        they are kept nowhere (main moved on, and its store keeps no older versions)."""
        base = self.entry.base
        if base is None:
            return b""
        if self.entry.base_blob is not None:
            return self._store.blob(self.entry.base_blob)
        if self.main is not None and self.main.version == base:
            return self.main.data
        try:
            return self._inner.read_version(self.key, base).data
        except FsError as e:
            if e.code in (ErrorCode.FS_UNSUPPORTED, ErrorCode.FS_NOT_FOUND):
                return None
            raise


def three_way(base: bytes, main: bytes, branch: bytes) -> bytes | None:
    """The two changes of ``base`` combined, or None when they overlap (or a side is not
    text)."""
    if not is_text(base, main, branch):
        return None
    m = Merge3(base.splitlines(True), main.splitlines(True), branch.splitlines(True))
    out: list[bytes] = []
    for region in m.merge_regions():
        kind = region[0]
        if kind == "unchanged":
            out += m.base[region[1]:region[2]]
        elif kind in ("a", "same"):
            out += m.a[region[1]:region[2]]
        elif kind == "b":
            out += m.b[region[1]:region[2]]
        else:
            return None
    return b"".join(out)


def is_text(*sides: bytes) -> bool:
    for data in sides:
        if b"\0" in data:
            return False
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
    return True


def with_markers(base: bytes, main: bytes, branch: bytes, name: str) -> tuple[bytes, bool]:
    """The two changes of ``base`` combined, with git's conflict markers where they
    overlap; and whether they did."""
    m = Merge3(base.splitlines(True), main.splitlines(True), branch.splitlines(True))
    clean = all(region[0] != "conflict" for region in m.merge_regions())
    lines = m.merge_lines(name_a=b"main", name_b=f"branch {name}".encode())
    return b"".join(lines), clean


def survey(store: BranchStore, inner: Backend, manifest: Manifest,
           keys: Iterable[str] | None = None) -> list[FileState]:
    """Each path ``manifest`` changed (those of ``keys``), with main's file now, in key
    order. Main's files are read together (``read_many``)."""
    wanted = sorted(manifest.files if keys is None else keys)
    entries = [Entry(key=k, name=k.rpartition("/")[2], kind="file") for k in wanted]
    states = []
    for entry, got in inner.read_many(entries):
        if isinstance(got, FsError):
            if got.code is not ErrorCode.FS_NOT_FOUND:
                raise got
            main = None
        else:
            main = got
        states.append(FileState(entry.key, manifest.files[entry.key], main, store, inner))
    return states


def token_of(head: str, states: Iterable[FileState]) -> str:
    """What a review saw: the branch head and main's version of every file it changed."""
    seen = {s.key: None if s.main_version is None else str(s.main_version) for s in states}
    text = json.dumps({"head": head, "main": seen}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class FileChange(BaseModel):
    """One file of a review."""

    model_config = ConfigDict(frozen=True)
    path: str
    change: ChangeKind
    moved_from: str | None = None
    diff: str = ""
    """The unified diff from the version the change rested on to the branch's bytes
    (empty for binary files and for a move with no edit)."""
    binary: bool = False
    base: Version | None = None
    """The main version the change rested on (None: absent on main then)."""
    main: Version | None = None
    """Main's version now (None: absent on main now)."""
    main_changed: bool = False
    """Main changed the file since the branch's change rested on it: the merge weighs
    the two changes three ways."""
    conflict: bool = False
    """The merge would refuse this file: main's change and the branch's overlap (or one
    deleted what the other changed). ``ws.rebase`` puts both in, with conflict markers."""
    markers: bool = False
    """It holds the conflict markers a rebase wrote, not resolved yet (a conflict too)."""
    owner: str | None = None


class BranchDiff(BaseModel):
    """Every file a branch added, changed, deleted or moved (``ws.diff(name)``)."""

    model_config = ConfigDict(frozen=True)
    branch: str
    head: str
    token: str
    """Names exactly what was reviewed: pass it to ``ws.merge(name, expect=token)``."""
    files: list[FileChange] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The review as text (a terminal, a log)."""
        lines = [f"branch {self.branch} at {self.head[:12]}: {len(self.files)} file(s) "
                 f"changed; review token {self.token}"]
        for f in self.files:
            what = f"{f.change} {f.path}" + (f" (from {f.moved_from})" if f.moved_from else "")
            if f.markers:
                what += "  [holds the rebase's conflict markers: resolve them on the branch]"
            elif f.conflict:
                what += "  [main changed it too: a conflict; ws.rebase puts both changes in]"
            elif f.main_changed:
                what += "  [main changed it since: the merge combines both changes]"
            lines.append(what)
            if f.binary:
                lines.append("  (binary file)")
            elif f.diff:
                lines.append(f.diff.rstrip("\n"))
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.text

    def _repr_markdown_(self) -> str:
        return f"```diff\n{self.text}```"

    def _repr_html_(self) -> str:
        colors = {"+": "#e6ffec", "-": "#ffebe9", "@": "#ddf4ff"}
        parts = [f"<div><b>branch {html.escape(self.branch)}</b> at "
                 f"<code>{self.head[:12]}</code>: {len(self.files)} file(s); token "
                 f"<code>{self.token}</code>"]
        for f in self.files:
            title = f"{f.change} {html.escape(f.path)}"
            if f.moved_from:
                title += f" (from {html.escape(f.moved_from)})"
            if f.markers:
                title += " <b>holds the rebase's conflict markers</b>"
            elif f.conflict:
                title += " <b>conflict: main changed it too</b>"
            elif f.main_changed:
                title += " <i>main changed it since: merged three ways</i>"
            rows = []
            for line in f.diff.splitlines():
                bg = colors.get(line[:1], "") if not line.startswith(("+++", "---")) else ""
                style = f' style="background:{bg}"' if bg else ""
                rows.append(f"<div{style}>{html.escape(line) or '&nbsp;'}</div>")
            body = "".join(rows) or ("<i>binary file</i>" if f.binary else "")
            parts.append(f"<details open><summary>{title}</summary><pre style="
                         f'"margin:0">{body}</pre></details>')
        return "".join(parts) + "</div>"


class MergeConflict(BaseModel):
    """A file main changed too, in a way the merge cannot combine."""

    model_config = ConfigDict(frozen=True)
    path: str
    kind: MergeConflictKind
    branch_diff: str = ""
    """The branch's change: base -> branch."""
    main_diff: str = ""
    """Main's change: base -> main now."""


class MergeOutcome(BaseModel):
    """What ``ws.merge`` did. ``ok`` is False when it refused (``code`` says why; nothing
    was written), when main changed files while it published them (FS_STALE: ``published``
    landed, the ``conflicts`` stay on the branch), or when the store failed midway
    (FS_BACKEND: ``unknown`` names the files whose state is not known; ``merge`` again
    finishes)."""

    model_config = ConfigDict(frozen=True)
    branch: str
    ok: bool
    code: ErrorCode | None = None
    message: str = ""
    published: list[str] = Field(default_factory=list)
    """Paths written (or deleted) on main by this merge, including those finished from a
    merge that was killed earlier (also in ``resumed``)."""
    merged: list[str] = Field(default_factory=list)
    """Those of ``published`` combined three ways with a change main made."""
    already: list[str] = Field(default_factory=list)
    """Paths main already held in the branch's state: nothing written."""
    conflicts: list[MergeConflict] = Field(default_factory=list)
    unknown: list[str] = Field(default_factory=list)
    resumed: list[str] = Field(default_factory=list)
    head: str | None = None
    """The branch's head after the merge."""

    @property
    def text(self) -> str:
        if not self.ok:
            done = "refused" if not self.published else "not finished"
            lines = [f"merge of {self.branch} {done} ({self.code}): {self.message}"]
        else:
            lines = [f"merged {self.branch}: {len(self.published)} file(s) published"
                     + (f", {len(self.merged)} three ways" if self.merged else "")
                     + (f", {len(self.already)} already on main" if self.already else "")]
        lines += [f"  published {p}" for p in self.published]
        for c in self.conflicts:
            lines.append(f"  conflict {c.path} ({c.kind})")
            for label, diff in (("branch", c.branch_diff), ("main", c.main_diff)):
                if diff:
                    lines.append(f"    {label}'s change:")
                    lines += [f"    {line}" for line in diff.rstrip("\n").splitlines()]
        lines += [f"  unknown {p}" for p in self.unknown]
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.text

    def _repr_markdown_(self) -> str:
        return f"```\n{self.text}```"


class RebaseOutcome(BaseModel):
    """What ``ws.rebase`` did: each file main changed since the branch's change now rests
    on main's current version, with main's change in it."""

    model_config = ConfigDict(frozen=True)
    branch: str
    rebased: list[str] = Field(default_factory=list)
    """Combined cleanly: the branch's change over main's (a merge now writes it as is)."""
    conflicted: list[str] = Field(default_factory=list)
    """Both changed the same lines: the branch's file now holds conflict markers
    (``<<<<<<< main`` ... ``>>>>>>> branch NAME``) for an agent or a person to resolve;
    or one side deleted it (the branch keeps its own state, now over main's)."""
    head: str

    @property
    def text(self) -> str:
        lines = [f"rebased {self.branch} onto main: {len(self.rebased)} file(s) combined, "
                 f"{len(self.conflicted)} with conflicts to resolve on the branch"]
        lines += [f"  rebased {p}" for p in self.rebased]
        lines += [f"  conflict {p}" for p in self.conflicted]
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.text

    def _repr_markdown_(self) -> str:
        return f"```\n{self.text}```"


def _text(data: bytes | None) -> str | None:
    if data is None or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def review(name: str, head: str, states: list[FileState]) -> BranchDiff:
    """The review of ``states`` (every path the branch changed)."""
    by_key = {s.key: s for s in states}
    moved_away = {s.entry.source for s in states
                  if s.entry.blob is not None and s.entry.base is None and s.entry.source
                  and s.entry.source in by_key and by_key[s.entry.source].entry.blob is None
                  and by_key[s.entry.source].entry.base is not None}
    files = []
    for s in states:
        if s.key in moved_away:
            continue
        kind: ChangeKind
        source = None
        base_state = s
        if s.entry.blob is None:
            kind = "deleted"
        elif s.entry.base is not None:
            kind = "changed"
        elif s.entry.source in moved_away:
            kind, source = "moved", s.entry.source
            base_state = by_key[s.entry.source]
        else:
            kind = "added"
        old = base_state.base_bytes() if kind != "added" else b""
        new = s.branch_bytes() or b""
        old_text, new_text = _text(old), _text(new)
        binary = old_text is None or new_text is None
        diff = "" if binary else unified_diff(display(s.key), old_text or "", new_text or "")
        files.append(FileChange(
            path=display(s.key), change=kind, moved_from=display(source) if source else None,
            diff=diff, binary=binary and old is not None, base=s.entry.base,
            main=s.main_version, owner=s.entry.owner,
            main_changed=not s.main_unchanged or not base_state.main_unchanged,
            conflict=not s.merges or not base_state.merges, markers=s.entry.markers,
        ))
    return BranchDiff(branch=name, head=head, token=token_of(head, states), files=files)
