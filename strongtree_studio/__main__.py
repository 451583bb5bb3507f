"""``python -m strongtree_studio [streamlit run options]``: start the dashboard (:mod:`strongtree_studio.launch`)."""

import sys

from strongtree_studio.launch import main

if __name__ == "__main__":
    sys.exit(main())
