"""`pytest --doctest-modules packages/ktyping/src/ktyping` (hatch's test script) imports every module of ktyping.

    pytest -q --doctest-modules packages/ktyping/src/ktyping

`ktyping.typeguard_checkers` is Kauldron's typeguard integration and needs typeguard, which ktyping does not
depend on: without typeguard installed it is left out of the collection instead of failing it.
"""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("typeguard") else ["src/ktyping/typeguard_checkers.py"]
