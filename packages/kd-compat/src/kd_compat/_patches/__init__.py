"""Every compatibility patch kd_compat knows, in the order `apply()` installs them.

To add one, write a module here following `etils_jax_prng.py` (an opt-in one: `prng_key_wrappers.py`)
and list its patch below; the README's "Adding a patch" section has the checklist.
"""

from .._patch import Patch
from .etils_jax_prng import EtilsJaxPrng
from .prng_key_wrappers import PrngKeyWrappers

PATCHES: tuple[Patch, ...] = (EtilsJaxPrng(), PrngKeyWrappers())
