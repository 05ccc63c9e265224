"""`python -m rr_tui.ray`: see `rr_tui.ray`."""

import sys

from . import main

sys.exit(main())
