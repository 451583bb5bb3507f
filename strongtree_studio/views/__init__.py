"""Views and figures as data (HTML, DOT, plotly), each ``<subject>_view.py``, and their helpers:
markup (the one escaping path), the plain-language definitions, the status words, the ticks and
the download bytes.  Plain Python: nothing here imports Streamlit."""
