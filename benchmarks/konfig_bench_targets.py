"""Targets built by benchmarks/konfig_bench.py: small classes with explicit signatures."""

from __future__ import annotations


class Dense:
    __slots__ = ("activation", "dropout", "features", "use_bias")

    def __init__(self, features: int, activation: str = "relu", dropout: float = 0.0, use_bias: bool = True):
        self.features = features
        self.activation = activation
        self.dropout = dropout
        self.use_bias = use_bias


class LayerNorm:
    __slots__ = ("eps",)

    def __init__(self, eps: float = 1e-6):
        self.eps = eps


class Block:
    __slots__ = ("layers", "name", "norm")

    def __init__(self, layers, norm, name: str = ""):
        self.layers = layers
        self.norm = norm
        self.name = name


class Model:
    __slots__ = ("blocks", "head")

    def __init__(self, blocks, head):
        self.blocks = blocks
        self.head = head


class Schedule:
    __slots__ = ("decay_steps", "init_value")

    def __init__(self, init_value: float, decay_steps: int):
        self.init_value = init_value
        self.decay_steps = decay_steps


class Adam:
    __slots__ = ("b1", "learning_rate")

    def __init__(self, learning_rate, b1: float = 0.9):
        self.learning_rate = learning_rate
        self.b1 = b1
