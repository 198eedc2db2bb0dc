"""The error for an integration imported without its extra installed.

>>> str(missing_extra("langchain", ModuleNotFoundError(name="langchain_core.tools")))
"this integration needs langchain_core, which is not installed: pip install 'kg-middleware[langchain]'"
"""

from __future__ import annotations


def missing_extra(extra: str, err: ModuleNotFoundError) -> ModuleNotFoundError:
    """What to raise when ``err`` says a module of the ``extra`` extra is missing."""
    name = (err.name or extra).split(".")[0]
    return ModuleNotFoundError(
        f"this integration needs {name}, which is not installed: "
        f"pip install 'kg-middleware[{extra}]'",
        name=name,
    )
