"""Listings of an object store: the children of a directory, and every file below one.

Directories exist only as prefixes (and ``dir/`` markers): a key with nothing under it is
missing unless an object has that name, and listing that object is refused.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Literal

from ...versions import Version
from ..base import Entry
from . import messages as msg
from . import ranges
from .client import ListedObject, ListsAfter
from .keys import normalize
from .view import StoreView

__all__ = ["children", "walk", "walk_versioned"]


def children(b: StoreView, key: str) -> Iterator[Entry]:
    """The children of ``key``, page by page as the store returns them."""
    key = normalize(key)
    prefix = b._keys.dir_prefix(key)
    # Some stores repeat a prefix on every page whose objects fall under it
    # (fake-gcs-server): a directory is still given once. Object names are unique.
    dirs: set[str] = set()
    found = marker = False
    token: str | None = None
    while True:
        try:
            page = b._client.list_objects(
                prefix, delimiter="/", token=token, limit=b.list_page_size
            )
        except Exception as e:
            raise b._error(e, "list", key, "list") from e
        for obj in page.objects:
            name = obj.name[len(prefix) :]
            if not name:
                marker = True  # "dir/" itself: a directory marker some tools create
                continue
            found = True
            yield _entry(key, name, "file", obj.size)
        for sub in page.prefixes:
            name = sub[len(prefix) :].rstrip("/")
            if name and name not in dirs:  # "d//x" makes an empty-named prefix
                dirs.add(name)
                found = True
                yield _entry(key, name, "directory", None)
        token = page.next_token
        if not token:
            break
    if key and not found and not marker:
        if b._head(key, "list") is not None:
            raise msg.not_a_directory(key)
        raise msg.not_found(key)

def walk(b: StoreView, key: str) -> Iterator[Entry]:
    """Every file under ``key``, by flat listings (one per page, never one per directory),
    the pages one after the other: a request per 1,000 names."""
    return (e for e, _ in walk_versioned(b, key, split=False))


def walk_versioned(b: StoreView, key: str, *, split: bool = True
                   ) -> Iterator[tuple[Entry, Version | None]]:
    """:func:`walk` with the version the listing gives each file (None where the store's
    listing does not say it). With ``split`` and a client that lists from a place in the
    name order, a walk longer than a page lists the rest as several ranges at once
    (:mod:`.ranges`): the same names in the same order, a few more requests."""
    key = normalize(key)
    prefix = b._keys.dir_prefix(key)
    found = False
    token: str | None = None
    while True:
        try:
            page = b._client.list_objects(
                prefix, delimiter=None, token=token, limit=b.list_page_size
            )
        except Exception as e:
            raise b._error(e, "list", key, "walk") from e
        for obj in page.objects:
            found = True
            yield from _listed(key, prefix, obj)
        token = page.next_token
        if token and page.objects and split and isinstance(b._client, ListsAfter):
            yield from _split(b, key, prefix, page.objects[-1].name)
            return
        if not token:
            break
    if key and not found:
        if b._head(key, "walk") is not None:
            raise msg.not_a_directory(key)
        raise msg.not_found(key)


def _split(b: StoreView, key: str, prefix: str, after: str
           ) -> Iterator[tuple[Entry, Version | None]]:
    client = b._client
    assert isinstance(client, ListsAfter)
    try:
        cuts = ranges.boundaries(client, prefix, after)
        for obj in ranges.listed_after(client, prefix, after, cuts, b.list_page_size):
            yield from _listed(key, prefix, obj)
    except Exception as e:
        raise b._error(e, "list", key, "walk") from e


def _listed(key: str, prefix: str, obj: ListedObject
            ) -> Iterator[tuple[Entry, Version | None]]:
    rel = obj.name[len(prefix) :]
    if _addressable(rel):  # not a "dir/" marker, not "a//b"
        yield _entry(key, rel, "file", obj.size), obj.version


def _entry(
    parent: str, name: str, kind: Literal["file", "directory"], size: int | None
) -> Entry:
    key = posixpath.join(parent, name) if parent else name
    return Entry(key=key, name=name.rsplit("/", 1)[-1], kind=kind, size=size)


def _addressable(rel: str) -> bool:
    """A name a key can reach: no empty, ``.`` or ``..`` segment (so no ``dir/`` marker)."""
    return bool(rel) and all(part not in ("", ".", "..") for part in rel.split("/"))

