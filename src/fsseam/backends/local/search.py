"""The reads of a search: thousands of small files, each read whole, without its version.

``read_many_unhashed`` reads the files it is given, one descriptor per directory;
``read_tree_unhashed`` walks and reads in one pass. Both leave the hashing to the caller,
which hashes only the files it shows.
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod
from collections.abc import Callable, Iterable, Iterator

from ...errors import ErrorCode, FsError
from ...messages import Reason
from ...oserrors import map_os_error
from ...paths import display
from ..base import Entry
from .tree import (
    READ_FLAGS,
    Pruning,
    Tree,
    check_kind,
    kept_changing,
    outside_root,
    read_plain,
    sorted_dirents,
)
from .writes import TEMP_MARK, is_temp_name

# Bound once: the test of nearly every file a search reads.
_S_ISREG = stat_mod.S_ISREG

__all__ = [
    "read_in", "read_many_unhashed", "read_one", "read_span_unhashed", "read_tree_unhashed",
]


def read_many_unhashed(
    tree: Tree, entries: Iterable[Entry]
) -> Iterator[tuple[Entry, bytes | FsError]]:
    """``read_many`` without the versions: each file's bytes, read whole and unchanged
    while read, whose version is their ``digest_version``. A search that shows few of
    the files it reads hashes only those (sha256 and its Version cost more than the
    read of a small file)."""
    dir_key: str | None = None
    dfd = -1
    try:
        for entry in entries:
            parent, _, name = entry.key.rpartition("/")
            if parent != dir_key:
                if dfd >= 0:
                    os.close(dfd)
                    dfd = -1
                dir_key = parent
                try:
                    dfd = tree.open_dir(parent, "read")
                except FsError as err:
                    dir_key = None
                    yield entry, err
                    continue
            try:
                yield entry, read_in(dfd, entry.key, name)[0]
            except FsError as err:
                yield entry, err
    finally:
        if dfd >= 0:
            os.close(dfd)


def read_in(
    dfd: int, key: str, name: str, regular: bool = False, max_bytes: int = -1,
    wanted: Callable[[bytes], bool] | None = None,
) -> tuple[bytes, bool]:
    """``read`` of a file whose directory is already open (``dfd``), without its
    version; the lean path of a search, which reads thousands of small files: no stat
    cache (a file read once is hashed anyway), one read when the size holds.

    ``regular``: the caller's directory entry has just said this is a regular file, so
    no ``lstat`` is taken before the open (a file swapped since is met by the open's
    O_NOFOLLOW | O_NONBLOCK and the ``fstat`` after it, as after an ``lstat``). A file
    over ``max_bytes`` (when not -1) is not read: FS_TOO_LARGE.

    ``wanted``: whether these bytes matter to the caller, asked while the file is still
    open; only then is it checked not to have changed while read (and read again if
    it did). Returns the bytes and that answer (True without ``wanted``)."""
    for _ in range(5):
        try:
            # S_ISREG inline: the call to check_kind costs more than the test, and
            # nearly every file of a search is regular.
            if not regular:
                pre = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                if not _S_ISREG(pre.st_mode):
                    check_kind(key, pre)
            try:
                fd = os.open(name, READ_FLAGS, dir_fd=dfd)
            except OSError as e:
                if e.errno == errno.ELOOP:
                    raise outside_root(key) from e
                raise
            try:
                st = os.fstat(fd)
                if not _S_ISREG(st.st_mode):
                    check_kind(key, st)
                if st.st_size > max_bytes >= 0:
                    raise FsError(ErrorCode.FS_TOO_LARGE, path=display(key),
                                  reason=Reason.edit_too_large,
                                  details={"size": st.st_size, "cap": max_bytes})
                data = os.read(fd, st.st_size + 1)
                if len(data) > st.st_size:  # it grew: read to the end
                    parts = [data]
                    while parts[-1]:
                        parts.append(os.read(fd, 1 << 16))
                    data = b"".join(parts)
                keep = wanted is None or wanted(data)
                # The descriptor's file (dev, ino) cannot change: its times and size
                # say whether it was written while read.
                after = os.fstat(fd) if keep else st
                same = (after.st_ctime_ns == st.st_ctime_ns
                        and after.st_mtime_ns == st.st_mtime_ns
                        and after.st_size == st.st_size)
            finally:
                os.close(fd)
        except OSError as e:
            raise map_os_error(e, key, "read") from e
        if same:
            return data, keep
    raise kept_changing(key, "read")


def read_tree_unhashed(
    tree: Tree, key: str, accept: Callable[[str], bool], max_bytes: int,
    wanted: Callable[[bytes], bool] | None = None,
) -> Iterator[tuple[str, bytes | FsError, bool]]:
    """The walk and ``read_many_unhashed`` of its files in one pass, for a search: the
    key and bytes (or the FsError) of each file below ``key`` that ``accept`` takes, in
    the walk's order, and whether ``wanted`` took those bytes; symlinks are left out,
    as a search leaves them, and so are the temp files of writes. Each file is opened
    in the directory the walk holds open, and a directory entry that says "regular
    file" stands for the ``lstat`` that ``walk`` and ``read`` would each take. A file
    over ``max_bytes`` is not read (FS_TOO_LARGE).

    Only the bytes ``wanted`` takes (all, without it) are checked not to have changed
    while read: a search needs that of the files it may show, whose version it
    records, and a file that a writer changes during the search may be searched before
    or after the change either way. Of the five system calls a small file costs here,
    that check is one, as each ``lstat`` saved would be.

    One thread: reader threads were measured and lost (see docs/decisions.md, "Local
    search"): each of the four system calls of a small file hands the GIL over twice. A
    large tree is shared out between processes instead, by parts (``parts.py``).

    An ``accept`` that is also a :class:`~.tree.Pruning` (a search's ignore rules) is told
    each directory's names, and the directories it prunes are not walked."""
    hooks = accept if isinstance(accept, Pruning) else None
    for fd, run in tree.runs(key, hooks):
        for child, d in run:
            name = d.name
            if TEMP_MARK in name and is_temp_name(name):
                continue  # a write's temp file: no file of the workspace
            try:
                regular = d.is_file(follow_symlinks=False)
                if not regular and d.is_symlink():
                    continue
            except OSError:
                regular = False  # the lstat in read_in says what became of it
            if accept(child):
                yield read_one(fd, child, name, regular, max_bytes, wanted)


def read_span_unhashed(
    tree: Tree, key: str, first: str, last: str, accept: Callable[[str], bool],
    max_bytes: int, wanted: Callable[[bytes], bool] | None = None,
) -> Iterator[tuple[str, bytes | FsError, bool]]:
    """``read_tree_unhashed`` of the files directly in the directory ``key`` whose names
    lie from ``first`` to ``last`` in the walk's order (its subdirectories left out). A
    directory gone or replaced since has none of them."""
    try:
        fd = tree.open_dir(key, "walk")
    except FsError:
        return
    try:
        try:
            found = sorted_dirents(fd, key)
        except FsError:
            return
        for child, d, is_dir in found:
            name = d.name
            if name < first or is_dir:
                continue
            if name > last:
                break
            if TEMP_MARK in name and is_temp_name(name):
                continue
            try:
                regular = d.is_file(follow_symlinks=False)
                if not regular and d.is_symlink():
                    continue
            except OSError:
                regular = False
            if accept(child):
                yield read_one(fd, child, name, regular, max_bytes, wanted)
    finally:
        os.close(fd)


def read_one(dfd: int, child: str, name: str, regular: bool, max_bytes: int,
             wanted: Callable[[bytes], bool] | None) -> tuple[str, bytes | FsError, bool]:
    """One file of a search, by name in its open directory: its key, bytes (or FsError)
    and whether ``wanted`` took them."""
    if regular:
        got = read_plain(dfd, name, max_bytes, wanted)
        if got is not None:
            return child, got[0], got[1]
    try:
        data, keep = read_in(dfd, child, name, regular, max_bytes, wanted)
    except FsError as err:
        return child, err, False
    return child, data, keep
