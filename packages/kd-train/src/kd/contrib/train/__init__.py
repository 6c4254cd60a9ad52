"""kd.contrib.train: Kauldron's contributed train (`kauldron.contrib.train`).

    kd.contrib.train.<name>(...)
"""

__all__: list[str] = []
