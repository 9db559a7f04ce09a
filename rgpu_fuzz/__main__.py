"""`python -m rgpu_fuzz` is the `rgpu-fuzz` command."""

import sys

from rgpu_fuzz.cli import main

sys.exit(main())
