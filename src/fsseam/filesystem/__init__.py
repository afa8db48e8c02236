"""fsseam as an fsspec filesystem: one owner's context, guarded as the tools are.

``ctx.filesystem()`` gives :class:`GuardedFileSystem` over a context; the protocol
``fsseam`` (``fsseam::memory://proj/data.csv``) opens one over any fsspec URL
(:mod:`fsseam.filesystem.chain`, found by fsspec through its entry point). Refusals raise
:class:`GuardRefused`. See docs/filesystem.md.
"""

from __future__ import annotations

from .guarded import GuardedFileSystem, GuardExists, GuardRefused

__all__ = ["GuardExists", "GuardRefused", "GuardedFileSystem"]
