"""The sentences fsseam-s3 adds to the message catalogue (:mod:`fsseam.messages`).

Everything an S3 error shares with other stores is the object-store template's (its faults
and their sentences); these are the few only S3 has. Imported by the modules that raise them.
"""

from __future__ import annotations

from fsseam import messages

messages.add(
    {
        "s3_part_size": "multipart_part_size must be at least {min} bytes (S3's minimum).",
        "s3_moto_bridge": (
            "moto's in-process mock_aws could not answer an s3fs request ({error}); use a moto "
            "server instead: the fsseam_s3_bucket pytest fixture (see 'Testing your agent' in "
            "the fsseam docs) or fsseam_s3.testing.moto_server()."
        ),
    }
)
