"""Backend keys and the object names they stand for under ``bucket/prefix``."""

from __future__ import annotations

from dataclasses import dataclass

from ...paths import to_key
from . import messages

__all__ = ["KeySpace", "normalize", "parents"]


def normalize(key: str) -> str:
    """``a//b/./c/`` -> ``a/b/c``; a key escaping the root is FS_OUTSIDE_ROOT."""
    return to_key(key) if key.strip() else ""


def parents(key: str) -> list[str]:
    """The directories above ``key`` and below the root: ``a/b/c`` -> ``["a", "a/b"]``."""
    parts = key.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


@dataclass(frozen=True)
class KeySpace:
    """One bucket and a prefix in it: the workspace root."""

    bucket: str
    prefix: str = ""

    @classmethod
    def parse(cls, root: str, scheme: str) -> KeySpace:
        """``bucket`` or ``bucket/some/prefix`` (slashes around it ignored)."""
        bucket, _, prefix = root.strip("/").partition("/")
        if not bucket:
            raise messages.no_bucket(scheme)
        return cls(bucket, normalize(prefix))

    @property
    def root(self) -> str:
        return f"{self.bucket}/{self.prefix}" if self.prefix else self.bucket

    def name(self, key: str) -> str:
        """The object name of a normalized key."""
        if not key:
            return self.prefix
        return f"{self.prefix}/{key}" if self.prefix else key

    def dir_prefix(self, key: str) -> str:
        """The name prefix of everything inside the directory ``key``."""
        name = self.name(key)
        return f"{name}/" if name else ""
