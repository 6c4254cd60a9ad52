"""kd: the training stack. `kd.konfig`, `kd.kontext`, `kd.ktyping` re-export the light packages.

    from kd import konfig
    with konfig.imports():
        import optax
"""

import konfig as konfig
import ktyping as ktyping
import kontext as kontext

from kd import train as train

__version__ = "0.1.0"

__all__ = ["konfig", "kontext", "ktyping", "train"]
