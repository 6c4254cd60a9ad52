"""kd.contrib.summaries: Kauldron's contributed summaries (`kauldron.contrib.summaries`).

    kd.contrib.summaries.<name>(...)
"""

__all__: list[str] = []
