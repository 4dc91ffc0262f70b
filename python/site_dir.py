"""Prints the first folder of this Python's sys.path under the prefix
given that holds packages (dist-packages or site-packages), or nothing:
where `meson install` puts the Python package (python/meson.build)."""

import os
import sys

prefix = os.path.abspath(sys.argv[1])
print(next((p for p in sys.path if p.startswith(prefix + os.sep) and
            os.path.basename(p) in ("dist-packages", "site-packages")), ""))
