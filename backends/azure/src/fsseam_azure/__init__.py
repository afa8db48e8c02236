"""fsseam-azure: the Azure Blob Storage backend of fsseam.

Registered for ``az://``, ``abfs://`` and ``abfss://`` in the ``fsseam.backends``
entry-point group, so ``fsseam.open_backend("az://container/prefix", storage_options)`` (and
``Workspace``) find it. The package is the object-store template's Azure client
(``client.py``) and error mapper (``errors.py``); ``backend.py`` puts them together.
"""

from .backend import AzureBackend
from .client import DEFAULT_BLOCK_SIZE, DEFAULT_BLOCK_THRESHOLD, WRITE_ID_KEY

__all__ = ["DEFAULT_BLOCK_SIZE", "DEFAULT_BLOCK_THRESHOLD", "WRITE_ID_KEY", "AzureBackend"]
