"""A mounted store's errors and streams, in the workspace's paths.

A child backend names its own keys (``x.csv``); the model must hear the paths it uses
(``/data/x.csv``). These wrappers re-raise a child's FsError with its path (and any detail
naming a path) mapped from the child's keys to the workspace's.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ...errors import FsError
from ...paths import display
from ...versions import Version
from ..base import ReadStream

__all__ = ["Relocated", "RelocatedStream", "Remapped"]


class Remapped:
    """A child's error in the workspace's paths: the child named its own keys (``x.csv``),
    the model must hear the paths it uses (``/data/x.csv``)."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        # (inner, outer) key pairs, longest inner first so that "/a/b" is replaced before "/a".
        self.pairs = sorted(((i, o) for i, o in pairs if i != o), key=lambda p: -len(p[0]))

    def path(self, value: Any) -> Any:
        for inner, outer in self.pairs:
            if value == inner:
                return outer
            if value == display(inner):
                return display(outer)
        return value

    def text(self, message: str) -> str:
        for inner, outer in self.pairs:
            if not inner:
                continue  # "/" cannot be told apart from any other slash in a sentence
            shown = re.escape(display(inner))
            pattern = rf"(?<![\w/.\\-]){shown}(?![\w/\\-])(?!\.\w)"
            # A plain string would read backslashes in the path as escapes of the regex.
            message = re.sub(pattern, _literal(display(outer)), message)
        return message

    def error(self, err: FsError) -> FsError:
        if not self.pairs:
            return err
        new = copy.copy(err)  # FsError pickles (and copies) as the facts it carries
        new.path = self.path(err.path)
        new.details = {k: self.path(v) for k, v in err.details.items()}
        if err.literal is not None:  # a sentence not from the catalogue
            new.literal = self.text(err.literal)
        return new


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    return lambda _: text


class Relocated:
    """``with Relocated(pairs):`` re-raises a child's FsError in the workspace's paths."""

    def __init__(self, *pairs: tuple[str, str]) -> None:
        self.remap = Remapped(pairs)

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, FsError):
            mapped = self.remap.error(exc)
            if mapped is not exc:
                raise mapped from exc


class RelocatedStream:
    """A child's stream whose later errors (a replaced object, a cut connection) name the
    workspace's path."""

    def __init__(self, inner: ReadStream, errors: Relocated) -> None:
        self._inner = inner
        self._errors = errors
        self.size = inner.size

    @property
    def version(self) -> Version | None:
        return self._inner.version

    def chunks(self) -> Iterator[bytes]:
        with self._errors:
            yield from self._inner.chunks()

    def close(self) -> None:
        self._inner.close()
