"""kd_compat: version-gated, reversible fixes for third-party breakage, in one place.

    import kd_compat
    kd_compat.apply()                            # kd does this when it is imported
    print(kd_compat.status()["etils_jax_prng"])  # needed? applied? why?
    kd_compat.enable("prng_key_wrappers")        # opt-in: jax.random and flax take kd.random.PRNGKey
    kd_compat.disable("prng_key_wrappers")       # ... until disabled
    kd_compat.undo()                             # put the originals back (tests)

No other kd package patches a third-party library; see README.md for how to add a patch.
Importing this module imports neither JAX nor etils.
"""

from ._api import apply as apply
from ._api import disable as disable
from ._api import enable as enable
from ._api import status as status
from ._api import undo as undo
from ._patch import PatchSkippedWarning as PatchSkippedWarning
from ._patch import PatchStatus as PatchStatus

__version__ = "0.1.0"

__all__ = ["PatchSkippedWarning", "PatchStatus", "apply", "disable", "enable", "status", "undo"]
