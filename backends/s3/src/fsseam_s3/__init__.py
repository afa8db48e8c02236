"""fsseam backend for S3 and S3-compatible storage (MinIO, moto, R2...).

Versions are ETags; writes, deletes and copies are conditional requests decided by S3
itself. Registered for ``s3://`` and ``s3a://`` in the ``fsseam.backends`` entry-point
group. The package is the object-store template's S3 client (``client.py``) and error
mapper (``errors.py``); ``backend.py`` puts them together.
"""

from fsseam.backends.objectstore import PinnedRangeStream as S3ReadStream

from .backend import S3Backend
from .errors import map_s3_error

__all__ = ["S3Backend", "S3ReadStream", "map_s3_error"]
