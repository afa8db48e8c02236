"""Credentials a store refuses and permissions it lacks: errors that say what to do next,
and that retrying never helps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from ...errors import ErrorCode, FsError
from ...versions import CreateOnly

__all__ = ["CredentialsSuite", "Refusal"]


@dataclass
class Refusal:
    """A store set up to refuse (what a store's fixture gives the suite)."""

    says: str
    """The store's own word for the refusal, which the error quotes (empty when its
    answer carries none worth checking)."""
    hints: tuple[str, ...]
    """What the error must name: what to configure, or what to grant."""
    workspace: Any = None
    """For refused credentials: a workspace whose tools are refused."""
    backend: Any = None
    """For a missing permission: a backend whose calls are refused."""
    ops: tuple[str, ...] = ("read", "write")
    """The backend calls that are refused (a store may refuse writes only)."""
    check: Callable[[], None] = field(default=lambda: None)
    """Asserts, after the calls, what reached the store (a refusal is never retried)."""


def denied(res: Any) -> str:
    """The text of a tool result refused for permission, which never says to retry."""
    assert not res.ok
    assert res.error is not None and res.error.code is ErrorCode.FS_PERMISSION_DENIED, res.text
    assert "Retry later" not in res.text  # retrying never helps
    text: str = res.text
    return text


class CredentialsSuite:
    """Mixin: subclass with a ``refused_credentials`` fixture (a :class:`Refusal` with a
    workspace whose credentials the store refuses) and a ``missing_permission`` fixture (a
    :class:`Refusal` with a backend whose credentials lack the permission). Credentials
    that fail before any request differ per store and stay in the store's tests."""

    def test_refused_credentials_are_permission_denied_saying_what_to_configure(
        self, refused_credentials: Refusal
    ) -> None:
        ctx = refused_credentials.workspace.context("a")
        for tool, args in [
            ("read", {"file_path": "/a.txt"}),
            ("write", {"file_path": "/a.txt", "content": "x"}),
        ]:
            text = denied(ctx.tools.execute(tool, args))
            assert refused_credentials.says in text
            assert all(hint in text for hint in refused_credentials.hints), text
        refused_credentials.check()

    def test_missing_permission_is_permission_denied_saying_what_to_grant(
        self, missing_permission: Refusal
    ) -> None:
        backend = missing_permission.backend
        calls = {"read": lambda: backend.read("a.txt"),
                 "write": lambda: backend.write("a.txt", b"x", CreateOnly())}
        for op in missing_permission.ops:
            with pytest.raises(FsError) as info:
                calls[op]()
            assert info.value.code is ErrorCode.FS_PERMISSION_DENIED
            assert missing_permission.says in info.value.message
            assert all(hint in info.value.message for hint in missing_permission.hints)
        missing_permission.check()
