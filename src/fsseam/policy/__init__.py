"""Plugins that decide preconditions: the observation policy."""

from .observation import Ledger, ObservationPolicy

__all__ = ["Ledger", "ObservationPolicy"]
