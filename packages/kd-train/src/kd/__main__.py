"""`python -m kd`: the `kd-train` command (train, inspect, eval, plot, diff)."""

import sys

from kd.cli import main

if __name__ == "__main__":
    sys.exit(main())
