"""kd.contrib.evals: Kauldron's contributed evals (`kauldron.contrib.evals`).

    kd.contrib.evals.<name>(...)
"""

__all__: list[str] = []
