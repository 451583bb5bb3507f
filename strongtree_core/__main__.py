import sys

from strongtree_core.cli import main

sys.exit(main())
