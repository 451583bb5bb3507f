"""StrongTree Studio: ``streamlit run app.py`` from this folder.

The dashboard lives in the package :mod:`strongtree_studio` (its pages in
``strongtree_studio/screens/``); this file only starts it.  Solve workers
(multiprocessing's spawn start method) import this file as ``__mp_main__``:
the guard keeps them from running the app.
"""

if __name__ == "__main__":
    from strongtree_studio.page.router import main

    main()
