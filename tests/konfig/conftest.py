import os
import sys

# `fake_lib` is imported by name inside `konfig.imports()` blocks.
sys.path.insert(0, os.path.dirname(__file__))
