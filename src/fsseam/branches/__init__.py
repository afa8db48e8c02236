"""Branches of a workspace, kept on the store itself (docs/branches.md)."""

from __future__ import annotations

from .backend import BranchBackend, open_branch
from .layout import PREFIX

__all__ = ["PREFIX", "BranchBackend", "open_branch"]
