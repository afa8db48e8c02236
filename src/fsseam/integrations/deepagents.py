"""deepagents on fsseam: a ``BackendProtocol`` over any Workspace (memory, local, S3, GCS).

    from fsseam import Workspace
    from fsseam.integrations.deepagents import FsseamBackend, create_deep_agent

    backend = FsseamBackend(Workspace("s3://bucket/project"))
    agent = create_deep_agent(model=..., backend=backend, checkpointer=...)

One owner per thread: in a graph run the backend's owner is ``OWNER:THREAD_ID`` (a run
without a thread id has one of its own), and what the thread has read lives in its
LangGraph state (:mod:`fsseam.integrations.deepagents_state`), checkpointed with it:
``create_deep_agent`` here is deepagents' own with the backend's ``middleware`` added
(pass ``middleware=[backend.middleware]`` to deepagents' directly). Outside a graph the
backend is the one owner ``owner``. What a thread's ``read_file``, ``grep`` and own writes
have seen is what its ``write_file``, ``edit_file`` and ``delete`` may change; a stale or
unobserved change is refused by the storage's compare-and-swap and comes back as the tool
error deepagents shows the model, with fsseam's code and next step.

Semantics follow deepagents' protocol where fsseam has none of its own (listed in
``docs/integrations/deepagents.md``), and on a ``CompositeBackend`` route see ``route``.

Every call takes fsseam's one tool-run path (:mod:`fsseam.tools.base`): ``write_file``,
``edit_file`` and the delete of a file are fsseam's ``write``, ``edit`` and ``delete`` tools
in deepagents' words; the rest (see :mod:`fsseam.integrations._deepagents_ops`) are seam
calls through the same exception ladder and result builder. deepagents' middleware decides
which tools the model gets; on a read-only workspace its changes are refused (FS_READ_ONLY).
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

try:
    from deepagents.backends.protocol import (
        BackendProtocol,
        DeleteResult,
        EditResult,
        FileData,
        FileDownloadResponse,
        FileInfo,
        FileUploadResponse,
        GlobResult,
        GlobTruncationReason,
        GrepMatch,
        GrepResult,
        LsResult,
        ReadResult,
        WriteResult,
    )
    from deepagents.backends.utils import InvalidGlobPatternError, compile_grep_include_glob
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError(
        f"fsseam.integrations.deepagents needs deepagents: pip install 'fsseam[deepagents]' "
        f"(from a clone: pip install '.[deepagents]'): {e}"
    ) from e

try:  # deepagents' own table of media extensions (the newer form knows more video)
    from deepagents.backends.utils import _get_backend_read_file_type as _file_type
except ImportError:  # pragma: no cover - deepagents before its video reads
    from deepagents.backends.utils import _get_file_type as _file_type

from ..deadline import Deadline
from ..errors import ErrorCode, FsError
from ..messages import DEFAULT_VOCABULARY, Reason
from ..outcomes import ListEntry, ReadOutcome
from ..tools.base import Tool, ToolResult, attempt, failed, perform
from ..tools.file_tools import DeleteTool, EditTool, WriteTool
from ..workspace import Context, Workspace
from ._common import change_call, context_of
from ._deepagents_ops import (
    IncludeGlob,
    delete_directory,
    download,
    files_below,
    literal_grep,
    unterminated,
    upload,
)
from .deepagents_state import FsseamMiddleware, ThreadContexts, with_middleware

__all__ = [
    "DEEPAGENTS_VOCABULARY",
    "MAX_GLOB_MATCHES",
    "MAX_GREP_MATCHES",
    "MAX_MEDIA_BYTES",
    "FsseamBackend",
    "create_deep_agent",
]

DEEPAGENTS_VOCABULARY = {**DEFAULT_VOCABULARY, "modify": "edit_file", "add": "write_file"}
"""fsseam's error texts in the words of deepagents' tools (``edit`` is ``edit_file``)."""

MAX_GLOB_MATCHES = 10_000
"""A glob stops after this many files (``truncated``, reason ``budget``)."""
MAX_GREP_MATCHES = 10_000
"""A grep without ``max_count`` shows at most this many lines (``truncated``)."""

T = TypeVar("T")


# -- fsseam's outcomes as the fields of deepagents' results (ReadResult, FileInfo) -----------
MAX_MEDIA_BYTES = 20 * 1024 * 1024
"""The largest image, audio, video or document file ``read_file`` returns whole, as a
content block (the largest image the model providers accept inline); larger is
FS_TOO_LARGE."""

UPLOAD_ERRORS: dict[ErrorCode, Any] = {
    ErrorCode.FS_NOT_FOUND: "file_not_found",
    ErrorCode.FS_PERMISSION_DENIED: "permission_denied",
    ErrorCode.FS_READ_ONLY: "permission_denied",
    ErrorCode.FS_IS_DIRECTORY: "is_directory",
    ErrorCode.FS_OUTSIDE_ROOT: "invalid_path",
    ErrorCode.FS_INVALID_ARGUMENT: "invalid_path",
}
"""fsseam codes that are one of deepagents' ``FileOperationError`` literals."""


def info(e: ListEntry) -> dict[str, Any]:
    """A ``FileInfo``: a directory's path ends in ``/``, a file's carries its size."""
    if e.type == "directory":
        return {"path": e.path.rstrip("/") + "/", "is_dir": True}
    out: dict[str, Any] = {"path": e.path, "is_dir": False}
    if e.size is not None:
        out["size"] = e.size
    return out


def read_result(out: ReadOutcome, unterminated: bool = False) -> dict[str, Any]:
    """A ``ReadResult``: the window as deepagents' middleware numbers it, raw lines, each
    ending in a newline but the file's last when it has none (``unterminated``), with where
    it starts, ends and how to go on."""
    if not out.lines:
        return {"file_data": {"content": "", "encoding": "utf-8"}}
    content = "".join(f"{line}\n" for line in out.lines)
    if unterminated:
        content = content[:-1]
    start = out.offset
    end = start + out.returned - 1
    more = out.total is None or end < out.total
    return {
        "file_data": {"content": content, "encoding": "utf-8"},
        "total_lines": out.total,
        "start_line": start,
        "end_line": end,
        "next_offset": end if more else None,
    }


def media_result(data: bytes) -> dict[str, Any]:
    """A ``ReadResult`` of a whole media file as deepagents' own backends return it:
    base64, which its middleware turns into an image (audio, video, file) content block."""
    encoded = base64.standard_b64encode(data).decode("ascii")
    return {"file_data": {"content": encoded, "encoding": "base64"}}


# -- a route of deepagents' CompositeBackend -----------------------------------------------
# The composite strips a route's prefix before it calls the route's backend
# (``/data/config.toml`` reaches fsseam as ``/config.toml``) and puts it back on the paths of
# results (a listing, a match, the path of a write), never in an error's text. An error that
# named the stripped path would send a model that follows its advice ("read it first") to the
# default backend's file of that name, so the backend puts the prefix back on every path an
# error names: its path, the paths among its details, and so every sentence nested in it.
# Details that hold paths: one path, or several joined by "; " (a change's files).
_ONE_PATH = frozenset(("source", "destination"))
_JOINED = frozenset(("files",))
_LISTED = frozenset(("rollback",))


class Route:
    """The prefix a composite strips (``/data/``), put back on the paths errors name."""

    def __init__(self, prefix: str) -> None:
        self.prefix = "/" + prefix.strip("/")

    def __repr__(self) -> str:
        return f"Route({self.prefix!r})"

    def path(self, shown: str) -> str:
        """``/config.toml`` as the model named it (``/data/config.toml``); the route's own
        root is the prefix itself."""
        if not shown.startswith("/") or self.prefix == "/":
            return shown
        return self.prefix if shown == "/" else self.prefix + shown

    def error(self, err: FsError) -> FsError:
        """``err`` with every path it names under the route."""
        new = copy.copy(err)  # FsError copies as the facts it carries
        if isinstance(err.path, str):
            new.path = self.path(err.path)
        new.details = {name: self._detail(name, value) for name, value in err.details.items()}
        return new

    def _detail(self, name: str, value: Any) -> Any:
        if name in _ONE_PATH and isinstance(value, str):
            return self.path(value)
        if name in _JOINED and isinstance(value, str):
            return "; ".join(self.path(p) for p in value.split("; "))
        if name in _LISTED and isinstance(value, (list, tuple)):
            return [self.path(p) if isinstance(p, str) else p for p in value]
        return value

_BUDGET: Final = "budget"
"""deepagents' truncation reason for a glob that stopped at its cap."""

class _Write(WriteTool):
    vocabulary = DEEPAGENTS_VOCABULARY


class _Edit(EditTool):
    vocabulary = DEEPAGENTS_VOCABULARY


class _Delete(DeleteTool):
    vocabulary = DEEPAGENTS_VOCABULARY


_WRITE, _EDIT, _DELETE = _Write(), _Edit(), _Delete()
"""fsseam's tools behind ``write_file``, ``edit_file`` and a file's ``delete``."""


def _refused(error: FsError, action: str) -> ToolResult:
    """A refusal of one of the protocol's own operations, in deepagents' words."""
    return failed(action, error, error.render(DEEPAGENTS_VOCABULARY))


def _listed(error: FsError, action: str, token: str = "") -> str:
    """An error of ls, read, glob or grep, which deepagents shows as ``Error: TEXT``."""
    said = _refused(error, action).error
    assert said is not None
    return f"[{said.code.value}] {token}{said.message}"


class FsseamBackend(BackendProtocol):
    """deepagents' file backend on a fsseam Workspace; one observation owner per thread.

    ``source``: a ``Workspace`` (the backend makes a context of ``owner`` on it), a
    ``Context`` (used as it is: share one with fsseam's own tools), or a URL (with
    ``storage_options``). Every method returns deepagents' result types and never raises
    for a model mistake or a storage conflict.

    ``route``: the prefix of the ``CompositeBackend`` route the backend serves (``/data/``),
    which the composite strips from the paths it hands over: every path an error names
    carries it again (``/data/config.toml``). fsseam's ``create_deep_agent`` sets it from
    the composite's routes; give it with deepagents' own ``create_deep_agent``.
    """

    def __init__(
        self,
        source: Workspace | Context | str,
        *,
        owner: str = "deepagents",
        storage_options: dict[str, Any] | None = None,
        route: str | None = None,
    ) -> None:
        self.route: Route | None = Route(route) if route else None
        self.threads = ThreadContexts(context_of(source, owner, storage_options))
        self.middleware = FsseamMiddleware(self.threads)
        """What keeps this backend's observations in each thread's LangGraph state: pass
        it to ``create_deep_agent(..., middleware=[backend.middleware])``."""

    @property
    def context(self) -> Context:
        """The context of the call in progress: the thread's owner in a graph run, else the
        backend's own."""
        return self.threads.current

    @property
    def owner(self) -> str:
        """The backend's owner name (in a thread, the prefix of the thread's owner)."""
        return self.threads.prefix

    @property
    def workspace(self) -> Workspace:
        return self.threads.base.workspace

    def __repr__(self) -> str:
        route = "" if self.route is None else f", route={self.route.prefix + '/'!r}"
        return f"FsseamBackend({self.workspace.url!r}, owner={self.owner!r}{route})"

    # -- helpers ---------------------------------------------------------------------------
    def _try(self, call: Callable[[], T], path: str, action: str) -> T | FsError:
        out = attempt(call, action=action, path=path, vocabulary=DEEPAGENTS_VOCABULARY)
        return self._routed(out) if isinstance(out, FsError) else out

    def _routed(self, error: FsError) -> FsError:
        """``error`` naming the paths the model used (under a composite's route)."""
        return error if self.route is None else self.route.error(error)

    def _tool(self, tool: Tool[Any, Any], path: str, **args: Any) -> ToolResult:
        """A call of one of fsseam's tools with deepagents' typed arguments (checked by
        deepagents already, so taken as they are)."""
        fs = self.context.fs

        def run() -> Any:
            try:
                return tool.run(fs, tool.args_model.model_construct(**args))
            except FsError as e:
                raise self._routed(e) from None

        return perform(tool, run, path)

    # -- listing and reading ---------------------------------------------------------------
    def ls(self, path: str) -> LsResult:
        # deepagents' ls lists every entry (its grep, ripgrep, is the one that honours
        # the ignore files, and so does fsseam's grep here).
        out = self._try(lambda: self.context.fs.list(path, depth=1, include_ignored=True),
                        path, "list")
        if isinstance(out, FsError):
            # deepagents' delete tool reads this token to tell a file from a directory.
            token = ("not_a_directory: " if out.code is ErrorCode.FS_INVALID_ARGUMENT
                     and self._kind(path) == "file" else "")
            return LsResult(error=_listed(out, "list", token))
        return LsResult(entries=[cast(FileInfo, info(e)) for e in out.entries])

    def _kind(self, path: str) -> str | None:
        st = self._try(lambda: self.context.fs.stat(path), path, "stat")
        return None if isinstance(st, FsError) else st.type

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        kind = _file_type(file_path)
        if kind != "text":
            # An image goes inline to the model: the workspace's image cap, as fsseam's
            # read tool has it; other media up to MAX_MEDIA_BYTES.
            cap = min(self.context.fs.limits.max_image_bytes, MAX_MEDIA_BYTES) \
                if kind == "image" else MAX_MEDIA_BYTES
            data = self._try(lambda: download(self.context, file_path, cap),
                             file_path, "read")
            if isinstance(data, FsError):
                return ReadResult(error=_listed(data, "read"))
            return ReadResult(**media_result(data))
        start, count = max(int(offset), 0), max(int(limit), 0)
        if count == 0:
            return ReadResult(file_data=FileData(content="", encoding="utf-8"),
                              no_lines_requested=True)
        out = self._try(lambda: self.context.fs.read(file_path, start + 1, count), file_path,
                        "read")
        if isinstance(out, FsError):
            if out.reason == Reason.offset_past_end:
                out = FsError(out.code, path=out.path, reason=Reason.deepagents_offset_past_end,
                              details={"start": start, "total": out.details.get("total")})
            return ReadResult(error=_listed(out, "read"))
        return ReadResult(**read_result(out, unterminated(self.context, out)))

    # -- writing ---------------------------------------------------------------------------
    def write(self, file_path: str, content: str) -> WriteResult:
        args = {"file_path": file_path, "content": content}
        with change_call(_WRITE.name, args):
            done = self._tool(_WRITE, file_path, **args)
        return WriteResult(path=done.value.path) if done.ok else WriteResult(error=done.text)

    def edit(
        self,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> EditResult:
        args = {"file_path": file_path, "old_string": old_string, "new_string": new_string,
                "replace_all": replace_all}
        with change_call(_EDIT.name, args):
            done = self._tool(_EDIT, file_path, **args)
        if not done.ok:
            return EditResult(error=done.text)
        return EditResult(path=done.value.path, occurrences=done.value.replacements)

    def delete(self, file_path: str) -> DeleteResult:
        # One id for the call, whether it deletes the file or the files of a directory.
        with change_call(_DELETE.name, {"file_path": file_path}):
            return self._delete(file_path)

    def _delete(self, file_path: str) -> DeleteResult:
        done = self._tool(_DELETE, file_path, file_path=file_path)
        if done.ok:
            return DeleteResult(path=done.value.path)
        assert done.error is not None
        if done.error.code in (ErrorCode.FS_IS_DIRECTORY, ErrorCode.FS_NOT_OBSERVED):
            # A directory cannot be observed, and a path that is not there was never seen:
            # one stat tells which, only on this failure path.
            st = self._try(lambda: self.context.fs.stat(file_path), file_path, "stat")
            if isinstance(st, FsError):
                if st.code is ErrorCode.FS_NOT_FOUND:
                    return DeleteResult(error=_refused(st, "stat").text)
            elif st.type == "directory":
                return self._delete_directory(file_path)
        return DeleteResult(error=done.text)

    def _delete_directory(self, path: str) -> DeleteResult:
        """Every file below ``path`` as one change, all or nothing, each at its observed
        version; then the directories left empty (see ``delete_directory``)."""
        shown = self._try(lambda: delete_directory(self.context, path), path, "delete")
        if isinstance(shown, FsError):
            return DeleteResult(error=_refused(shown, "delete").text)
        return DeleteResult(path=shown)

    # -- finding ---------------------------------------------------------------------------
    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        try:
            matcher = compile_grep_include_glob(pattern)
        except InvalidGlobPatternError as e:
            return GlobResult(error=str(e))
        base = path or "/"
        walked = self._try(lambda: files_below(self.context, base), base, "glob")
        if isinstance(walked, FsError):
            if walked.code is ErrorCode.FS_NOT_FOUND:
                return GlobResult(matches=[])
            return GlobResult(error=_listed(walked, "glob"))
        root, entries = walked
        # The walk is lazy and the call has the finders' time budget: a huge tree gives
        # what was found so far, marked truncated, never a hang or a list of every file.
        deadline = Deadline(self.context.fs.limits.finder_seconds)
        matches: list[FileInfo] = []
        try:
            for entry in entries:
                if deadline.passed():
                    return GlobResult(matches=matches, truncated=True, truncation_reason=_BUDGET)
                relative = (entry.path[len(root):].lstrip("/") if entry.path != root
                            else entry.path.rsplit("/", 1)[-1])
                if not matcher(relative):
                    continue
                if len(matches) >= MAX_GLOB_MATCHES:
                    return GlobResult(matches=matches, truncated=True, truncation_reason=_BUDGET)
                matches.append(cast(FileInfo, info(entry)))
        except FsError as e:
            # The walk failed after its first page: what was found stands, incomplete.
            why: GlobTruncationReason = "transport" if e.code is ErrorCode.FS_BACKEND else (
                "unreadable")
            return GlobResult(matches=matches, truncated=True, truncation_reason=why)
        return GlobResult(matches=matches)

    def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
    ) -> GrepResult:
        if pattern == "":
            empty = FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.deepagents_grep_empty)
            return GrepResult(error=_listed(empty, "grep"))
        files: IncludeGlob | None = None
        if glob:
            try:
                files = IncludeGlob(glob, compile_grep_include_glob(glob))
            except InvalidGlobPatternError as e:
                return GrepResult(error=str(e))
        base = path or "/"
        limit = MAX_GREP_MATCHES if max_count is None else max(1, min(max_count,
                                                                      MAX_GREP_MATCHES))
        out = self._try(lambda: literal_grep(self.context, pattern, base, files, limit), base,
                        "grep")
        if isinstance(out, FsError):
            if out.code is ErrorCode.FS_NOT_FOUND:
                return GrepResult(matches=[])
            return GrepResult(error=_listed(out, "grep"))
        matches: list[GrepMatch] = [
            GrepMatch(path=f.path, line=h.first + i, text=line)
            for f in out.files
            for h in f.hunks
            for i, line in enumerate(h.lines)
            if h.first + i in h.matches
        ]
        return GrepResult(matches=matches, truncated=out.truncated or out.partial)

    # -- the application's files -----------------------------------------------------------
    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        """Each file is its owner's guarded write (docs/integrations/deepagents.md)."""
        return [self._upload(path, data) for path, data in files]

    def _upload(self, path: str, data: bytes) -> FileUploadResponse:
        with change_call("write"):
            out = self._try(lambda: upload(self.context, path, data), path, "write")
        if isinstance(out, FsError):
            return FileUploadResponse(path=path, error=_operation_error(out, "write"))
        return FileUploadResponse(path=path)

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        return [self._download(path) for path in paths]

    def _download(self, path: str) -> FileDownloadResponse:
        out = self._try(lambda: download(self.context, path), path, "read")
        if isinstance(out, FsError):
            return FileDownloadResponse(path=path, error=_operation_error(out, "read"))
        return FileDownloadResponse(path=path, content=out)


def create_deep_agent(*args: Any, **kwargs: Any) -> Any:
    """deepagents' ``create_deep_agent``, with the middleware that keeps each fsseam
    backend's observations in the thread's state (``backend`` itself or routes of a
    ``CompositeBackend``) added to ``middleware``, and each route's backend told its
    prefix (:func:`adopt_routes`)."""
    from deepagents import create_deep_agent as create

    adopt_routes(kwargs.get("backend"))
    kwargs["middleware"] = with_middleware(kwargs.get("backend"), kwargs.get("middleware", ()))
    return create(*args, **kwargs)


def _operation_error(error: FsError, action: str) -> Any:
    """deepagents' ``FileOperationError`` literal for a code that is one, else fsseam's
    text."""
    return UPLOAD_ERRORS.get(error.code) or _refused(error, action).text


def adopt_routes(backend: Any) -> None:
    """Tell each fsseam backend on a route of a ``CompositeBackend`` its prefix (unless it
    was given one), so that its errors name the paths the model uses."""
    for prefix, part in (getattr(backend, "routes", None) or {}).items():
        if isinstance(part, FsseamBackend) and part.route is None:
            part.route = Route(prefix)
