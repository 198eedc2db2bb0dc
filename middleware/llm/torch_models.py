"""Loading a causal language model and its tokenizer with PyTorch (transformers).

The base is a Hugging Face model folder, or a GGUF file that transformers de-quantizes
(the bundled Gemma 3 270M by default: about 45 s and 1.1 GB of float32 here).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

from middleware.errors import ConfigError

EXTRA_HINT = "pip install 'kg-middleware[tune]' (peft and gguf)"


def require(module: str) -> Any:
    """Import an optional dependency of the ``tune`` extra, or say how to get it."""
    try:
        return __import__(module)
    except ImportError as err:
        raise ConfigError(f"{module} is not installed", hint=EXTRA_HINT) from err


def load_causal_lm(base: Path) -> tuple[Any, Any]:
    """``(model, tokenizer)`` from a model folder or a ``.gguf`` file, in float32, eval mode."""
    torch = require("torch")
    transformers = require("transformers")
    if not base.exists():
        raise ConfigError(f"no model at {base}", hint="set llm_model_path (or --base)")
    kwargs: dict[str, Any] = {}
    folder = base
    if base.is_file():
        if base.suffix != ".gguf":
            raise ConfigError(f"{base} is neither a model folder nor a .gguf file")
        require("gguf")
        folder, kwargs = base.parent, {"gguf_file": base.name}
    chatter = io.StringIO()  # transformers' progress bars while it de-quantizes
    try:
        with contextlib.redirect_stderr(chatter):
            tokenizer = transformers.AutoTokenizer.from_pretrained(folder, **kwargs)
            model = transformers.AutoModelForCausalLM.from_pretrained(
                folder, dtype=torch.float32, **kwargs
            )
    except (OSError, ValueError, KeyError) as err:
        raise ConfigError(f"transformers cannot load {base}: {err}") from err
    model.eval()
    return model, tokenizer
