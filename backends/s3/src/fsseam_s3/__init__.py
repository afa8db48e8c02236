"""fsseam backend for S3 and S3-compatible storage (MinIO, moto, R2...).

Versions are ETags; writes are conditional PutObject requests decided by S3 itself.
Registered for ``s3://`` and ``s3a://`` in the ``fsseam.backends`` entry-point group.
"""

from ._errors import map_s3_error
from ._stream import S3ReadStream
from .backend import S3Backend

__all__ = ["S3Backend", "S3ReadStream", "map_s3_error"]
