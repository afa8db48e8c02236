"""The tree under a local root, reached by descriptors that never follow a link.

Every operation walks from the root to the parent directory one component at a time with
``O_NOFOLLOW`` directory descriptors and acts relative to them, so a directory swapped for
a symlink after the seam checked the path cannot lead a read or a write outside the root.
Only regular files are opened, and never in a way that can block: a FIFO or a device is
refused from its ``lstat``, before any ``open``.

Here too are the rules every operation applies to the entry it meets: the kinds refused
(a link met after ``resolve``, a directory, a FIFO, a device) and the errors that say so.

The walks: ``runs`` (and ``dirents`` over it) give each file's directory entry, for a
listing or a search; ``names`` gives only the names, for a glob, taking each entry's kind
from the listing (no ``lstat``) and leaving out the directories its caller prunes.
"""

from __future__ import annotations

import bisect
import errno
import os
import stat as stat_mod
from collections.abc import Callable, Collection, Iterator
from typing import Protocol, runtime_checkable

from ...errors import ErrorCode, FsError
from ...messages import Part, Reason
from ...oserrors import map_os_error
from ...paths import MAX_PATH_DEPTH, display
from ..base import Entry

__all__ = [
    "READ_FLAGS", "RUN_NAMES", "KeepDir", "Listed", "Pruning", "Tree", "check_kind",
    "kept_changing", "outside_root", "read_plain", "sorted_dirents",
]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
"""How a regular file is opened: never through a link, and never waiting on a FIFO."""


def kept_changing(key: str, doing: str) -> FsError:
    return FsError(
        ErrorCode.FS_BACKEND, path=display(key),
        reason=Reason.kept_changing, details={"doing": doing}
    )


def outside_root(key: str) -> FsError:
    return FsError(ErrorCode.FS_OUTSIDE_ROOT, path=display(key), reason=Reason.path_symlink_escapes)


_KINDS = {
    stat_mod.S_IFIFO: Part("_fifo"),
    stat_mod.S_IFCHR: Part("_char_device"),
    stat_mod.S_IFBLK: Part("_block_device"),
    stat_mod.S_IFSOCK: Part("_socket"),
}


def _special(key: str, mode: int) -> FsError:
    kind = _KINDS.get(stat_mod.S_IFMT(mode), Part("_special"))
    return FsError(
        ErrorCode.FS_UNSUPPORTED, path=display(key), reason=Reason.special_file,
        details={"kind": kind},
    )


def check_kind(key: str, st: os.stat_result) -> None:
    """Refuse a symlink (only a swap after ``resolve`` can put one here), a directory, and
    anything that is not a regular file."""
    mode = st.st_mode
    if stat_mod.S_ISREG(mode):
        return
    if stat_mod.S_ISLNK(mode):
        raise outside_root(key)
    if stat_mod.S_ISDIR(mode):
        raise map_os_error(IsADirectoryError(key), key, "use")
    raise _special(key, mode)


@runtime_checkable
class Pruning(Protocol):
    """What a walk tells a search's ignore rules, and asks them (``fsseam.ignores``): a
    search's ``accept`` that is one sees each directory's names before any of its entries
    (and may read its files while the walk holds it open), and the walk leaves out the
    directories it prunes: neither listed nor entered."""

    def listed(self, key: str, names: Collection[str],
               read: Callable[[str, int], bytes | None]) -> None: ...

    def prunes(self, key: str) -> bool: ...


def read_plain(dfd: int, name: str, limit: int, wanted: Callable[[bytes], bool] | None
                ) -> tuple[bytes, bool] | None:
    """A regular file ``name`` of the open directory ``dfd`` of at most ``limit`` bytes,
    read at once and unchanged while read, and whether ``wanted`` (None: every file) took
    it; None for anything else (another kind, larger, an error, a change while read). A
    search's common case (``search.read_in`` redoes the rest and says what it is), and a
    directory's ignore files."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dfd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        data = os.read(fd, st.st_size + 1)
        if len(data) != st.st_size:
            return None
        keep = wanted is None or wanted(data)
        if keep:
            after = os.fstat(fd)
            if (after.st_ctime_ns != st.st_ctime_ns or after.st_mtime_ns != st.st_mtime_ns
                    or after.st_size != st.st_size):
                return None
        return data, keep
    except OSError:
        return None
    finally:
        os.close(fd)


def _content(got: tuple[bytes, bool] | None) -> bytes | None:
    return None if got is None else got[0]


def _listed(fd: int, key: str, hooks: Pruning | None
            ) -> Iterator[tuple[str, os.DirEntry[str], bool]]:
    """``sorted_dirents``, its names first told to ``hooks``."""
    found = sorted_dirents(fd, key)
    if hooks is None:
        return found
    entries = list(found)
    hooks.listed(key, [d.name for _, d, _ in entries],
                 lambda name, limit: _content(read_plain(fd, name, limit, None)))
    return iter(entries)


def _is_dir(d: os.DirEntry[str]) -> bool:
    """A directory, not through a link (from the entry's type; an entry removed meanwhile
    is not one)."""
    try:
        return d.is_dir(follow_symlinks=False)
    except OSError:
        return False


class Tree:
    """The root directory and the walks, opens and listings below it."""

    def __init__(self, root: str, given: str) -> None:
        self.root = root
        self._root_slash = root.rstrip(os.sep) + os.sep
        self._given = given
        self._root_id: tuple[int, int] | bool | None = False
        """The root directory as first resolved below (its real path, resolved once):
        while the root path still reaches it, the real path of a key with no link below
        the root is the key. False: not looked up yet (a tree made to read a part of a
        search never resolves, and costs no stat); None: it could not be."""

    @property
    def given(self) -> str:
        """The root as the workspace named it (before its links were resolved)."""
        return self._given

    # -- paths -------------------------------------------------------------
    def path(self, key: str) -> str:
        # Keys are canonical and relative: joining is concatenation.
        return f"{self._root_slash}{key}" if key else self.root

    @staticmethod
    def _below(path: str, base: str) -> str | None:
        """``path`` relative to ``base`` when it is ``base`` or below it."""
        if path == base:
            return ""
        prefix = base if base.endswith(os.sep) else base + os.sep
        return path[len(prefix) :] if path.startswith(prefix) else None

    def native_key(self, path: str) -> str | None:
        """The part below the root of a real absolute path under it (None otherwise), so a
        model may use the paths it sees elsewhere on this machine."""
        for base in (self.root, self._given):
            below = self._below(path, base)
            if below is not None:
                return below
        return None

    def realpath(self, key: str, strict: bool = False) -> str:
        # realpath lstat()s, then readlink()s: a link replaced in between makes it raise
        # (EINVAL, ENOENT). Another try sees the new state.
        for attempt in range(20):
            try:
                return os.path.realpath(self.path(key), strict=strict)
            except OSError as e:
                if strict or attempt == 19:
                    raise map_os_error(e, key, "resolve") from e
        raise AssertionError("unreachable")  # pragma: no cover

    def resolve(self, key: str) -> str:
        if self._plain(key):
            return key
        below = self._below(self.realpath(key), self.root)
        if below is None:
            raise outside_root(key)
        return below

    def _plain(self, key: str) -> bool:
        """Whether ``realpath`` would give the key's own path: the root path still leads to
        the root directory and no entry below it on the key's way is a link. One ``lstat``
        per component below the root (``realpath`` takes one per component of the whole
        path, in Python). Anything else (a link, a root moved, an error it cannot rule out)
        is False: ``realpath`` decides, as before."""
        if self._root_id is False:
            try:
                st = os.stat(self.root)
                self._root_id = (st.st_dev, st.st_ino)
            except OSError:
                self._root_id = None
        if self._root_id is None:
            return False
        try:
            st = os.lstat(self.root)
            if (st.st_dev, st.st_ino) != self._root_id:
                return False
            if not key:
                return True
            parts = key.split("/")
            path = self._root_slash + parts[0]
            for i in range(len(parts)):
                if i:
                    path = f"{path}/{parts[i]}"
                if stat_mod.S_ISLNK(os.lstat(path).st_mode):
                    return False
        except (FileNotFoundError, NotADirectoryError):
            # realpath (not strict) joins a missing entry and the names after it as they
            # are: nothing after it can be a link either.
            return True
        except OSError:
            return False
        return True

    def link_target(self, key: str) -> str | None:
        """The canonical key a symlink at ``key`` points to, if that exists inside the root."""
        try:
            real = self.realpath(key, strict=True)
        except FsError:
            return None  # dangling, a loop, or gone meanwhile
        return self._below(real, self.root)

    # -- descriptor walk ---------------------------------------------------
    def parent(
        self, key: str, action: str, created: list[tuple[int, str]] | None = None
    ) -> tuple[int, str]:
        """An O_NOFOLLOW descriptor of the parent directory of ``key``, and the last name.

        With ``created`` (a list), missing directories are made on the way and recorded as
        (descriptor of their parent, name), so a failed write can remove them again. A
        symlink met on the way (the key is canonical, so one can only appear by a swap after
        ``resolve``) is FS_OUTSIDE_ROOT. The caller closes the descriptor.
        """
        parts = key.split("/") if key else []
        try:
            fd = os.open(self.root, _DIR_FLAGS)
        except OSError as e:
            raise map_os_error(e, key, action) from e
        try:
            try:
                for i, part in enumerate(parts[:-1]):
                    while True:
                        try:
                            nfd = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
                            break
                        except FileNotFoundError:
                            if created is None:
                                raise
                            try:
                                os.mkdir(part, 0o777, dir_fd=fd)
                            except FileExistsError:
                                continue
                            created.append((os.dup(fd), part))
                        except (NotADirectoryError, OSError) as e:
                            if e.errno not in (errno.ENOTDIR, errno.ELOOP):
                                raise
                            st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                            if stat_mod.S_ISLNK(st.st_mode):
                                raise outside_root("/".join(parts[: i + 1])) from e
                            # The OS's own words: map_os_error turns it into the catalogue's
                            # parent_is_file / missing_below_file, which never show them.
                            raise NotADirectoryError(
                                errno.ENOTDIR, os.strerror(errno.ENOTDIR)) from e
                    os.close(fd)
                    fd = nfd
            except OSError as e:
                raise map_os_error(e, key, action) from e
        except BaseException:
            os.close(fd)
            raise
        return fd, parts[-1] if parts else ""

    # -- opening -----------------------------------------------------------
    def open_file(self, key: str, action: str = "read") -> tuple[int, os.stat_result]:
        """A read-only descriptor of the regular file ``key`` and its stat.

        The kind is checked from ``lstat`` before opening, and the open itself cannot block
        (O_NONBLOCK), so a FIFO or a device is never waited on.
        """
        if not key:
            raise map_os_error(IsADirectoryError(key), key, action)
        dfd, name = self.parent(key, action)
        try:
            pre = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            check_kind(key, pre)
            try:
                fd = os.open(name, READ_FLAGS, dir_fd=dfd)
            except OSError as e:
                if e.errno == errno.ELOOP:
                    raise outside_root(key) from e
                raise
        except OSError as e:
            raise map_os_error(e, key, action) from e
        finally:
            os.close(dfd)
        try:
            try:
                st = os.fstat(fd)
                check_kind(key, st)  # swapped between the lstat and the open
            except OSError as e:
                raise map_os_error(e, key, action) from e
        except BaseException:
            os.close(fd)
            raise
        return fd, st

    def open_dir(self, key: str, action: str) -> int:
        """An O_NOFOLLOW descriptor of the directory ``key`` (the caller closes it)."""
        dfd, name = self.parent(key, action)
        try:
            if not name:
                return os.dup(dfd)
            try:
                return os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dfd)
            except OSError as e:
                if e.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                if stat_mod.S_ISLNK(st.st_mode):
                    raise outside_root(key) from e
                raise FsError(
                    ErrorCode.FS_INVALID_ARGUMENT, path=display(key),
                    reason=Reason.not_directory
                ) from e
        except OSError as e:
            raise map_os_error(e, key, action) from e
        finally:
            os.close(dfd)

    def entry(self, child: str, d: os.DirEntry[str]) -> Entry:
        """The directory entry ``d`` of the key ``child``, links reported as links (never
        followed)."""
        try:
            if d.is_symlink():
                return Entry(key=child, name=d.name, kind="symlink",
                             target=self.link_target(child))
            if d.is_dir(follow_symlinks=False):
                return Entry(key=child, name=d.name, kind="directory")
            st = d.stat(follow_symlinks=False)
            size = st.st_size if stat_mod.S_ISREG(st.st_mode) else None
        except OSError:
            size = None  # removed while listed
        return Entry(key=child, name=d.name, kind="file", size=size)

    def list_lazy(self, key: str) -> Iterator[Entry]:
        """The children of ``key`` in the directory's own order, one entry per
        ``readdir`` result as it comes (the directory stays open until the last)."""
        fd = self.open_dir(key, "list")
        try:
            with os.scandir(fd) as it:
                for d in it:
                    yield self.entry(f"{key}/{d.name}" if key else d.name, d)
        except OSError as e:
            raise map_os_error(e, key, "list") from e
        finally:
            os.close(fd)

    def dirents(self, key: str) -> Iterator[tuple[int, str, os.DirEntry[str]]]:
        """The walk's order and rules, as directory entries: each entry that is not a
        directory, with its key and a descriptor of its directory (open while the entry
        is yielded)."""
        for fd, run in self.runs(key):
            for child, d in run:
                yield fd, child, d

    def names(self, key: str, keep_dir: KeepDir | None = None, listed: Listed | None = None,
              hide: Callable[[str], bool] | None = None) -> Iterator[tuple[str, list[str]]]:
        """The files below the directory ``key`` in ascending key order, by name only: the
        walk of ``dirents`` (links left out, never followed; no directory deeper than
        paths may go, none that cannot be opened) without a stat or an entry per file,
        as runs: a directory's key and the names of up to :data:`RUN_NAMES` of its files
        that follow each other in that order. ``keep_dir`` is asked about each
        subdirectory before it is listed (False: neither listed nor walked); ``listed``
        is told each directory's child names right after it is listed, before any of its
        files is yielded (the top one's too); ``hide`` leaves out the hidden files it
        names (a write's temp files)."""
        top = self.open_dir(key, "walk")
        try:
            files, dirs = _listing(top, key, hide, listed)
        except BaseException:
            os.close(top)
            raise
        flags = _DIR_FLAGS | os.O_NOFOLLOW
        # Each open directory: its descriptor, key, files, the subdirectories not yet
        # entered, and where its files not yet yielded start.
        stack: list[tuple[int, str, list[str], Iterator[str], int]] = [
            (top, key, files, iter(dirs), 0)]
        try:
            while stack:
                fd, here, files, subdirs, at = stack[-1]
                for sub in subdirs:
                    # The files sorting before "sub/" come before everything below it.
                    end = bisect.bisect_left(files, sub, at)
                    yield from _runs(here, files, at, end)
                    at = end
                    child = f"{here}/{sub[:-1]}" if here else sub[:-1]
                    if child.count("/") + 1 >= MAX_PATH_DEPTH:
                        continue
                    if keep_dir is not None and not keep_dir(child):
                        continue
                    try:
                        sfd = os.open(sub[:-1], flags, dir_fd=fd)
                    except OSError:
                        continue
                    try:
                        got = _listing(sfd, child, hide, listed)
                    except FsError:
                        os.close(sfd)
                        continue
                    stack[-1] = (fd, here, files, subdirs, at)
                    stack.append((sfd, child, got[0], iter(got[1]), 0))
                    break  # into it; this directory's files resume after it
                else:
                    yield from _runs(here, files, at, len(files))
                    os.close(fd)
                    stack.pop()
        finally:
            for fd, *_ in stack:
                os.close(fd)

    def runs(self, key: str, hooks: Pruning | None = None
             ) -> Iterator[tuple[int, list[tuple[str, os.DirEntry[str]]]]]:
        """The walk of ``dirents`` a run at a time: the consecutive entries of one directory
        that are not directories (the keys between two of its subdirectories), with a
        descriptor of it, open while the run is yielded. ``hooks``: a search's ignore
        rules (see :class:`Pruning`)."""
        # A generator: the top directory is opened at the first next(), so a walk that is
        # never iterated holds no descriptor.
        top = self.open_dir(key, "walk")
        try:
            first = _listed(top, key, hooks)
        except BaseException:
            os.close(top)
            raise
        stack: list[tuple[int, Iterator[tuple[str, os.DirEntry[str], bool]]]] = [(top, first)]
        try:
            while stack:
                fd, it = stack[-1]
                run: list[tuple[str, os.DirEntry[str]]] = []
                for child, d, is_dir in it:
                    if not is_dir:
                        run.append((child, d))
                        continue
                    if child.count("/") + 1 >= MAX_PATH_DEPTH:
                        continue
                    if hooks is not None and hooks.prunes(child):
                        continue
                    try:
                        sub = os.open(d.name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
                    except OSError:
                        continue
                    try:
                        children = _listed(sub, child, hooks)
                    except FsError:
                        os.close(sub)
                        continue
                    if run:
                        yield fd, run
                    stack.append((sub, children))
                    break  # into it; this directory's iterator resumes after it
                else:
                    if run:
                        yield fd, run
                    os.close(fd)
                    stack.pop()
        finally:
            for fd, _ in stack:
                os.close(fd)


KeepDir = Callable[[str], bool]
"""Whether a name walk lists the directory of this key (False: it is left out whole)."""
Listed = Callable[[str, list[str]], None]
"""Told a directory's key and its child names as soon as the name walk has listed it."""


RUN_NAMES = 1000
"""The most names of one run of a name walk: whoever takes the runs checks its clock
between two of them."""


def _runs(key: str, files: list[str], start: int, end: int
          ) -> Iterator[tuple[str, list[str]]]:
    if start == 0 and end == len(files) <= RUN_NAMES:
        if files:
            yield key, files
        return
    for i in range(start, end, RUN_NAMES):
        yield key, files[i:min(i + RUN_NAMES, end)]


def _listing(fd: int, key: str, hide: Callable[[str], bool] | None,
             listed: Listed | None) -> tuple[list[str], list[str]]:
    """The names of the open directory ``fd`` (whose key is ``key``) that a name walk
    takes, sorted: its files (those ``hide`` hides left out: it is asked about hidden
    names only, as a write's temp files are), and its directories as name + "/" (as a
    directory sorts among keys); links left out. ``listed`` is told every child name
    first (links too), sorted by name."""
    files: list[str] = []
    dirs: list[str] = []
    links: list[str] = []
    try:
        with os.scandir(fd) as it:
            for d in it:
                name = d.name
                # The entry's type from the listing (d_type): no lstat, unless the file
                # system does not say (then the DirEntry takes one).
                try:
                    if d.is_file(follow_symlinks=False):
                        pass
                    elif d.is_dir(follow_symlinks=False):
                        dirs.append(name + "/")
                        continue
                    elif d.is_symlink():
                        links.append(name)
                        continue
                except OSError:
                    pass  # removed meanwhile: a file, as the entry walk takes it
                if hide is None or name[0] != "." or not hide(name):
                    files.append(name)
    except OSError as e:
        raise map_os_error(e, key, "walk") from e
    files.sort()
    dirs.sort()
    if listed is not None:
        listed(key, sorted(files + [d[:-1] for d in dirs] + links))
    return files, dirs


def sorted_dirents(fd: int, prefix: str) -> Iterator[tuple[str, os.DirEntry[str], bool]]:
    """The entries of the open directory ``fd`` (whose key is ``prefix``) in the walk's
    order: each one's key, the entry, and whether it is a directory."""
    try:
        with os.scandir(fd) as it:
            found = [(f"{prefix}/{d.name}" if prefix else d.name, d, _is_dir(d)) for d in it]
    except OSError as e:
        raise map_os_error(e, prefix, "walk") from e
    # Keys sort as strings: everything below "a" starts with "a/", which sorts after
    # "a.txt" and "a-b" but before "a0"; so a directory sorts as name + "/".
    found.sort(key=lambda f: f[0] + "/" if f[2] else f[0])
    return iter(found)
