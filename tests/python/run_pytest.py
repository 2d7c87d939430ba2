"""ctest's entry to the Python tests: pytest on this directory, or skipped (exit 77)
saying what to install when pytest or numpy is missing."""

import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"skipped: {e.name} is missing for {sys.executable} "
          "(scripts/bootstrap.sh installs python3-pytest and python3-numpy)")
    sys.exit(77)

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.dirname(os.path.abspath(__file__))]))
