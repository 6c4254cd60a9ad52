"""kd.train: the Trainer (model + data + optimizer + losses wired by kontext keys)."""

__all__: list[str] = []
