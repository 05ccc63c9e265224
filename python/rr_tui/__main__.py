"""`python -m rr_tui ARGS…` runs `rr-tui ARGS…` (the program this package installed)."""

import os
import sys

from . import executable

if __name__ == "__main__":
    exe = executable()
    os.execv(exe, [exe, *sys.argv[1:]])
