"""The operator's pages: short function views, one module per page.

Reads go through ``scheduler_core.reads.selectors``, ``dashboard.api.selectors`` (who sees what) and
``selectors.py`` here (batched per-page figures); writes only through
``scheduler_core.services.operator``, the functions the API and the admin call too.
"""
