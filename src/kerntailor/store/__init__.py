"""Stage: store. One SQLite file with every candidate, build, verdict, timing and winner, keyed by problem
(hash, dtype policy, input shapes, target) and toolchain (torch, Triton, CUDA/ROCm, driver, kerntailor).

    from kerntailor.store import ProblemKey, Store, toolchain_fingerprint
    hit = Store().lookup_winner(ProblemKey.of(spec, target), toolchain_fingerprint())
"""

from kerntailor.store.codec import decode, encode
from kerntailor.store.connect import StoreError, default_store_path
from kerntailor.store.db import Store
from kerntailor.store.keys import ProblemKey, Toolchain, toolchain_fingerprint
from kerntailor.store.records import (
    REGRESSION_THRESHOLD,
    Candidate,
    Recheck,
    Run,
    StoredBuild,
    StoredTiming,
    StoredVerdict,
    TrainingRow,
    Winner,
)
from kerntailor.store.schema import SCHEMA_VERSION

__all__ = ["REGRESSION_THRESHOLD", "SCHEMA_VERSION", "Candidate", "ProblemKey", "Recheck", "Run", "Store",
           "StoreError", "StoredBuild", "StoredTiming", "StoredVerdict", "Toolchain", "TrainingRow", "Winner",
           "decode", "default_store_path", "encode", "toolchain_fingerprint"]
