"""kd: the training stack. `kd.konfig`, `kd.kontext`, `kd.ktyping` re-export the light packages.

    from kd import konfig
    with konfig.imports():
        import optax
"""

import kd_compat as _kd_compat
import konfig as konfig
import kontext as kontext
import ktyping as ktyping

# Before any of kd touches etils: fixes known etils/JAX breakage where installed versions need it.
_kd_compat.apply()

from kd import train as train  # noqa: E402  (after apply(), on purpose)

__version__ = "0.1.0"

__all__ = ["konfig", "kontext", "ktyping", "train"]
