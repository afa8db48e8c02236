"""Pydantic AI's own workspace (``pydantic_ai.workspaces``) on any fsseam store.

    from pydantic_ai import Agent
    from fsseam.integrations.pydantic_ai_workspace import FsseamWorkspace

    agent = Agent(model, capabilities=[FsseamWorkspace(Workspace("s3://b/p"))])

Every tool or hook that uses ``ctx.workspace`` (file tools written against Pydantic AI's
workspace API, capabilities that read instructions from it) then works on the store, with
fsseam's guard: :class:`FsseamWorkspaceBackend` implements ``WorkspaceBackend`` and
``SupportsFilesystem`` over one fsseam context (one observation owner):

- ``read_bytes`` is a read: the owner has observed that version;
- ``write_bytes`` of an existing file is a compare-and-swap against the version the owner
  observed (read through this backend); a file it never read, or one changed since, is
  refused (:class:`FsseamWorkspaceError`, ``FS_NOT_OBSERVED`` / ``FS_STALE``, with fsseam's
  text) and left unchanged; a new file is created only if still absent;
- ``remove`` deletes a file at the version observed, a directory's files all or nothing;
- ``stat``, ``list_dir``, ``exists`` observe nothing (they show no content);
- ``make_dir``: fsseam stores hold files (an object store keeps no empty directory), so a
  directory made is kept by this backend (and the capability's) until a file lands in it;
- no commands: ``Workspace.run`` says the workspace does not run them (nothing here can run
  a shell next to an object store).

Call ids: under the :class:`FsseamWorkspace` capability each change a tool makes through
``ctx.workspace`` runs as the model's call (``ToolCallPart.tool_call_id``; a tool making
several changes: ``ID``, ``ID#2``, ...), so a durable run replaying the call changes
nothing twice (:mod:`fsseam.calling`). A backend used without the capability has no id.

Path-level failures are the builtin errors the protocol names (``FileNotFoundError``,
``IsADirectoryError``, ``NotADirectoryError``, ``FileExistsError``, ``PermissionError``,
``ValueError`` for a path outside the workspace); each carries fsseam's text.
"""

from __future__ import annotations

import errno
import posixpath
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..messages import Reason

try:
    import anyio.to_thread
    from pydantic_ai import RunContext, ToolDefinition
    from pydantic_ai.capabilities import (
        AbstractCapability,
        ValidatedToolArgs,
        WrapToolExecuteHandler,
    )
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.workspaces import (
        FileEntry,
        ReadOnlyWorkspace,
        WorkspaceBackend,
        WorkspaceError,
        WorkspaceReadOnlyError,
        WorkspaceRef,
    )
    from pydantic_ai.workspaces import (
        Workspace as AgentWorkspace,
    )
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError(
        f"fsseam.integrations.pydantic_ai_workspace needs pydantic-ai-slim 2.68 or later: "
        f"pip install 'fsseam[pydantic-ai]': {e}"
    ) from e

from ..changes import Delete
from ..errors import ErrorCode, FsError
from ..tools.render import render_error
from ..workspace import Context, Workspace
from ._common import change_call, context_of, framework_call

__all__ = ["PROVIDER", "FsseamWorkspace", "FsseamWorkspaceBackend", "FsseamWorkspaceError"]

PROVIDER = "fsseam"
"""The provider of a fsseam workspace's ``WorkspaceRef`` (its id: the Workspace's URL)."""

T = TypeVar("T")


class FsseamWorkspaceError(WorkspaceError):
    """A refusal of fsseam's (a stale or unread file, a file too large, a storage failure):
    ``code`` and fsseam's text, ``Error [CODE]: ...`` with the next step."""

    def __init__(self, error: FsError) -> None:
        super().__init__(render_error(error.code, error.message))
        self.code = error.code


_BUILTIN: dict[ErrorCode, Callable[[str], Exception]] = {
    ErrorCode.FS_NOT_FOUND: lambda t: FileNotFoundError(errno.ENOENT, t),
    ErrorCode.FS_IS_DIRECTORY: lambda t: IsADirectoryError(errno.EISDIR, t),
    ErrorCode.FS_ALREADY_EXISTS: lambda t: FileExistsError(errno.EEXIST, t),
    ErrorCode.FS_PERMISSION_DENIED: lambda t: PermissionError(errno.EACCES, t),
    ErrorCode.FS_READ_ONLY: WorkspaceReadOnlyError,
    ErrorCode.FS_OUTSIDE_ROOT: ValueError,
    ErrorCode.FS_INVALID_ARGUMENT: ValueError,
}


def _exception(error: FsError) -> Exception:
    """What Pydantic AI's workspace contract raises for ``error``: a refusal of a call id
    given to another call is fsseam's own (the contract's ValueError means a bad path)."""
    make = _BUILTIN.get(error.code)
    if make is None or error.reason == Reason.call_id_reused:
        return FsseamWorkspaceError(error)
    return make(render_error(error.code, error.message))


class FsseamWorkspaceBackend:
    """``WorkspaceBackend`` + ``SupportsFilesystem`` on one fsseam context (see the
    module). ``source``: a Workspace (a context of ``owner`` is made on it), a Context or
    a URL (with ``storage_options``). The working directory is ``/``, the workspace's
    root."""

    def __init__(self, source: Workspace | Context | str, *, owner: str = "agent",
                 storage_options: dict[str, Any] | None = None,
                 directories: set[str] | None = None) -> None:
        self.context: Context = context_of(source, owner, storage_options)
        # Directories made and still without a file: the store cannot hold them.
        self._dirs: set[str] = set() if directories is None else directories
        # Directories removed that the store still shows empty (local disk keeps them).
        self._gone: set[str] = set()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (f"FsseamWorkspaceBackend({self.context.workspace.url!r}, "
                f"owner={self.context.owner!r})")

    @property
    def ref(self) -> WorkspaceRef:
        return WorkspaceRef(provider=PROVIDER, id=self.context.workspace.url)

    async def working_dir(self) -> str:
        return "/"

    async def _run(self, call: Callable[[], T]) -> T:
        def guarded() -> T:
            try:
                return call()
            except FsError as e:
                raise _exception(e) from None

        return await anyio.to_thread.run_sync(guarded)

    # -- SupportsFilesystem -------------------------------------------------------------
    async def read_bytes(self, path: str) -> bytes:
        def read() -> bytes:
            self._not_a_directory(path)
            return self.context.fs.read_bytes(path)[0]

        return await self._run(read)

    async def write_bytes(self, path: str, data: bytes) -> None:
        def write() -> None:
            self._not_a_directory(path)
            parent = posixpath.dirname(_norm(path))
            if self._kind(parent) == "file":
                raise NotADirectoryError(errno.ENOTDIR, parent)
            # The digest names the file, not the bytes: a replay of a tool that builds them
            # from what it read reads the call's own change and builds others.
            with change_call("write", {"path": _norm(path)}):
                self.context.fs.write_bytes(path, bytes(data))
            self._landed(path)

        await self._run(write)

    async def stat(self, path: str) -> FileEntry:
        def stat() -> FileEntry:
            shown = _norm(path)
            kind = self._kind(shown)
            if kind is None:
                raise FileNotFoundError(errno.ENOENT, shown)
            size = None if kind == "directory" else self.context.fs.stat(shown).size
            return FileEntry(name=posixpath.basename(shown), path=shown,
                             is_dir=kind == "directory", size=size)

        return await self._run(stat)

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return await self._run(lambda: self._list(_norm(path)))

    async def make_dir(self, path: str) -> None:
        def make() -> None:
            shown = _norm(path)
            kind = self._kind(shown)
            if kind == "file":
                raise FileExistsError(errno.EEXIST, shown)
            for above in _ancestors(shown):
                if self._kind(above) == "file":
                    raise NotADirectoryError(errno.ENOTDIR, above)
            if kind is None:
                self.context.fs.key(shown)  # a path outside the workspace is refused here
                with self._lock:
                    self._dirs.add(shown)

        await self._run(make)

    async def remove(self, path: str) -> None:
        await self._run(lambda: self._remove(_norm(path)))

    async def exists(self, path: str) -> bool:
        return await self._run(lambda: self._kind(_norm(path)) is not None)

    # -- the work, in a worker thread ----------------------------------------------------
    def _kind(self, shown: str) -> str | None:
        """``file``, ``directory`` (in the store, or made here) or None (nothing there)."""
        with self._lock:
            if any(d == shown or d.startswith(shown.rstrip("/") + "/") for d in self._dirs):
                return "directory"
            if any(_within(shown, g) for g in self._gone):
                return None
        try:
            return self.context.fs.stat(shown).type
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return None
            raise

    def _not_a_directory(self, path: str) -> None:
        if self._kind(_norm(path)) == "directory":
            raise IsADirectoryError(errno.EISDIR, _norm(path))

    def _landed(self, path: str) -> None:
        """A file is in the store: the directories above it exist there now."""
        shown = _norm(path)
        with self._lock:
            self._dirs -= {d for d in self._dirs if shown.startswith(d.rstrip("/") + "/")}
            self._gone -= {g for g in self._gone if _within(shown, g)}

    def _list(self, shown: str) -> list[FileEntry]:
        kind = self._kind(shown)
        if kind is None:
            raise FileNotFoundError(errno.ENOENT, shown)
        if kind == "file":
            raise NotADirectoryError(errno.ENOTDIR, shown)
        entries: dict[str, FileEntry] = {}
        with self._lock:
            made = sorted(self._dirs)
        try:
            listed = self.context.fs.list(shown, include_ignored=True).entries
        except FsError as e:
            if e.code is not ErrorCode.FS_NOT_FOUND:
                raise
            listed = []  # a directory made here, with nothing in the store yet
        with self._lock:
            gone = set(self._gone)
        for entry in listed:
            if any(_within(entry.path, g) for g in gone):
                continue
            entries[entry.path] = FileEntry(
                name=posixpath.basename(entry.path), path=entry.path,
                is_dir=entry.type == "directory", size=entry.size)
        for d in made:
            child = _child_of(shown, d)
            if child is not None and child not in entries:
                entries[child] = FileEntry(name=posixpath.basename(child), path=child,
                                           is_dir=True, size=None)
        return [entries[p] for p in sorted(entries)]

    def _in_store(self, shown: str) -> bool:
        try:
            return self.context.fs.stat(shown).type == "directory"
        except FsError:
            return False

    def _remove(self, shown: str) -> None:
        if shown == "/":
            # The working directory (the root) is the whole workspace: never removed.
            raise ValueError(FsError(ErrorCode.FS_IS_DIRECTORY, path="/",
                                     reason=Reason.root_is_directory).message)
        kind = self._kind(shown)
        if kind is None:
            raise FileNotFoundError(errno.ENOENT, shown)
        if kind == "file":
            with change_call("delete", {"path": shown}):
                self.context.fs.delete(shown)
        elif self._in_store(shown):
            files = [e.path for e in self.context.fs.walk(shown) if e.type != "directory"]
            if files:
                # All or nothing: each file at the version this owner observed.
                with change_call("delete", {"path": shown}):
                    self.context.fs.change([Delete(p) for p in files])
        parent = posixpath.dirname(shown)
        with self._lock:
            self._dirs -= {d for d in self._dirs if _within(d, shown)}
            if kind == "directory":
                self._gone.add(shown)
            if parent != "/":
                # The parent stays a directory, as on a disk, though the store may drop it.
                self._dirs.add(parent)


def _norm(path: str) -> str:
    return posixpath.normpath("/" + path.lstrip("/")) if path else "/"


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _ancestors(shown: str) -> list[str]:
    parts = shown.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _child_of(directory: str, made: str) -> str | None:
    """The entry of ``directory`` that leads to the directory ``made``, or None."""
    prefix = directory.rstrip("/") + "/"
    if not made.startswith(prefix):
        return None
    return prefix + made[len(prefix):].split("/")[0]


class FsseamWorkspace(AbstractCapability[Any]):
    """A capability that gives every run a :class:`FsseamWorkspaceBackend` on ``source``
    (a Workspace or URL; ``storage_options`` for a URL). ``owner``: None (default) makes
    each conversation its own owner (``conversation/ID``, Pydantic AI's conversation id),
    its observations in the Workspace's store; a name is one fixed owner. On a read-only
    Workspace it is a ``ReadOnlyWorkspace``. A run given another workspace's ref gets
    none from it."""

    def __init__(self, source: Workspace | str, *, owner: str | None = None,
                 storage_options: dict[str, Any] | None = None,
                 id: str | None = "fsseam_workspace") -> None:
        if isinstance(source, Context):
            raise TypeError("FsseamWorkspace makes a context per owner: pass the Workspace")
        self.workspace = (source if isinstance(source, Workspace)
                          else Workspace(source, storage_options=storage_options))
        self.owner = owner
        self.id = id
        self._dirs: dict[str, set[str]] = {}

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None
                      ) -> WorkspaceBackend | None:
        if ref is not None and ref != WorkspaceRef(provider=PROVIDER, id=self.workspace.url):
            return None
        conversation = getattr(ctx, "conversation_id", None) or ctx.run_id or "run"
        owner = self.owner or f"conversation/{conversation}"
        backend = FsseamWorkspaceBackend(self.workspace.context(owner),
                                         directories=self._dirs.setdefault(owner, set()))
        if self.workspace.read_only:
            return ReadOnlyWorkspace(AgentWorkspace(backend))
        return backend

    async def wrap_tool_execute(self, ctx: RunContext[Any], *, call: ToolCallPart,
                                tool_def: ToolDefinition, args: ValidatedToolArgs,
                                handler: WrapToolExecuteHandler) -> Any:
        # The backend is handed no call: each change a tool makes through ctx.workspace
        # runs under the model's id of the call (a durable run replays it with that id).
        with framework_call(call.tool_call_id or None):
            return await handler(args)
