import os
import sys

# `train_fixtures` is imported by name, also inside `konfig.imports()` blocks (a config names it by qualname).
sys.path.insert(0, os.path.dirname(__file__))
