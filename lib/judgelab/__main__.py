"""`python -m judgelab` runs the command line."""

import sys

from judgelab.cli.main import main

sys.exit(main())
