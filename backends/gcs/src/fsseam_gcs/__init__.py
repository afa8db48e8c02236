"""fsseam-gcs: the Google Cloud Storage backend of fsseam.

Registered for ``gs://`` and ``gcs://`` in the ``fsseam.backends`` entry-point group, so
``fsseam.open_backend("gs://bucket/prefix", storage_options)`` (and ``Workspace``) find it.
The package is the object-store template's GCS client (``client.py``) and error mapper
(``errors.py``); ``backend.py`` puts them together.
"""

from .backend import RESUMABLE_THRESHOLD, GCSBackend

__all__ = ["RESUMABLE_THRESHOLD", "GCSBackend"]
