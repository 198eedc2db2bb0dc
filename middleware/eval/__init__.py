"""Evaluation: question sets (``datasets``, ``loaders``, ``items``), ``metrics``, the
resumable ``runner`` and its ``scoring``, and ``report``. The CLI is ``kgmw eval`` and
``kgmw report``."""
