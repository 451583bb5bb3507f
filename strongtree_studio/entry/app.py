"""The script ``strongtree app`` gives ``streamlit run`` (see :mod:`strongtree_studio.launch`).

It sits alone in its folder because Streamlit puts the main script's folder first on
``sys.path``: beside the package's modules, those would shadow any module of the same
name.  Solve workers (spawn) import it as ``__mp_main__``: the guard keeps them from
running the app.
"""

if __name__ == "__main__":
    from strongtree_studio.page.router import main

    main()
