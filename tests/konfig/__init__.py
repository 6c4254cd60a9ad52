"""Tests of konfig (`tests.konfig`): one module per private module of `packages/konfig`."""
