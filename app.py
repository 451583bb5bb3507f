"""StrongTree Studio: ``streamlit run app.py`` from this folder.

The router over the page scripts in ``pages/`` beside it; the dashboard's code is the
package :mod:`strongtree_studio` (each page's screen in ``strongtree_studio/page/screens/``).  Solve workers
(multiprocessing's spawn start method) import this file as ``__mp_main__``:
the guard keeps them from running the app.
"""

if __name__ == "__main__":
    from strongtree_studio.page.router import main

    main()
