"""kd.contrib.nn: Kauldron's contributed nn (`kauldron.contrib.modules`).

    kd.contrib.nn.<name>(...)
"""

__all__: list[str] = []
