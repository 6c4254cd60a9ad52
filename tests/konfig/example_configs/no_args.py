"""A config module without `ConfigArgs`."""

import konfig


def get_config() -> konfig.ConfigDict:
    return konfig.ConfigDict({"lr": 0.1, "layers": [1, 2, 3], "pair": (1, 2)})
