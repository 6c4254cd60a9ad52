"""XManager's `xm` names that a Kauldron config uses, so it ports by swapping its import lines.

    with konfig.imports():
        from kd import kxm          # was: from kauldron import kxm
        from kd.xm import xm        # was: from xmanager import xm
    cfg.xm_job = kxm.Job(platform="jf=2x2", requirements=xm.JobRequirements(ram=384 * GiB))

Only `JobRequirements` (as a plain dataclass of keywords: cpu, ram, tmp_ram_fs, replicas).
"""

from ._job import JobRequirements as JobRequirements

__all__ = ["JobRequirements"]
