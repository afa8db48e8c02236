"""End-to-end tool conformance: the agent tools behave the same on every backend."""

from __future__ import annotations

from .changes import ChangeToolsConformance
from .files import FileToolsConformance
from .finding import FindingToolsConformance

__all__ = ["ToolsConformance"]


class ToolsConformance(FileToolsConformance, FindingToolsConformance, ChangeToolsConformance):
    """Mixin: subclass with a ``workspace`` fixture (a Workspace over an empty root)."""
