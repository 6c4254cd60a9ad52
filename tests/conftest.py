"""Suite-wide test settings (standard library + hypothesis only: isolated package envs load this too)."""

try:
    from hypothesis import settings
except ImportError:  # An environment without hypothesis still collects the plain tests.
    pass
else:
    # CI runs on 2 shared cores: a per-example time limit would make property tests flaky,
    # and speed is measured in benchmarks/, never asserted in tests.
    settings.register_profile("kd", deadline=None, print_blob=True)
    settings.load_profile("kd")

import os
import tempfile

# kd-train's persistent compilation cache (on by default) goes to a folder of this test session, not the
# user's cache folder: the suite's kd-train processes share what they compile, and leave nothing behind.
os.environ.setdefault("KD_COMPILATION_CACHE", tempfile.mkdtemp(prefix="kd_test_jax_cache_"))
