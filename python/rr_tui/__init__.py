"""rr-tui: record, replay, verify, tune and explore GPU kernel executions.

Installing this package puts the `rr-tui` command and the recorder library it loads into CUDA
programs (`librr_recorder.so`, next to it) on the PATH. The Python side is small:
`rr_tui.ray` runs a sweep on a Ray cluster, one engine per GPU (`python -m rr_tui.ray --help`).
"""

import os
import shutil
import sys
import sysconfig

__all__ = ["executable"]


def executable() -> str:
    """The rr-tui program to run: $RR_TUI when set, else the one this package installed (in the
    environment's scripts, or in bin/ beside the package with `pip install --target`), else the
    first on the PATH."""
    given = os.environ.get("RR_TUI")
    if given:
        return given
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # Installed into an environment's scripts, or beside the package (`pip install --target`).
    for installed in (os.path.join(sysconfig.get_path("scripts"), "rr-tui"), os.path.join(here, "bin", "rr-tui")):
        if os.path.isfile(installed) and os.access(installed, os.X_OK):
            return installed
    found = shutil.which("rr-tui")
    if found:
        return found
    sys.exit("rr-tui: the rr-tui program is not installed (pip install the rr-tui wheel, or set RR_TUI to it)")
