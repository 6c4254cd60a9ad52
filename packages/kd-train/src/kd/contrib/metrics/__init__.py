"""kd.contrib.metrics: Kauldron's contributed metrics (`kauldron.contrib.metrics`).

    kd.contrib.metrics.<name>(...)
"""

__all__: list[str] = []
