import os
import sys

# Helpers shared by the integration tests (`run_logs`) are imported by name.
sys.path.insert(0, os.path.dirname(__file__))
