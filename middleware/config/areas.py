"""The settings that are not a method's own, one table per area.

Each area is a frozen dataclass of :func:`~middleware.config.fields.setting` fields;
``Settings`` inherits them all, so ``settings.timeout`` is typed. Method tables are in
``config/methods.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from middleware.config.chat import ChatSettings
from middleware.config.fields import setting
from middleware.config.service import ServerSettings
from middleware.config.sparql import SparqlSettings
from middleware.config.tuning import TuneSettings
from middleware.support.version import default_user_agent


@dataclass(frozen=True)
class SourceSettings:
    """Where the graph is and how it is queried."""

    store: str | None = setting(
        None, "Directory of a persistent local store; unset means the bundled sample graph."
    )
    endpoint: str | None = setting(
        None, "URL of a SPARQL 1.1 endpoint to use instead of a local store."
    )
    profile: str | None = setting(
        None,
        "Source profile name (mappings/NAME.yaml) or path; default 'generic', 'metaqa' for the sample graph.",
    )
    store_lock_wait: float = setting(
        60.0,
        "Seconds a load waits for another process writing the same local store "
        "(`kgmw load`) before it gives up.",
        minimum=0.0,
    )
    load_max_ratio: int = setting(
        200,
        "Most times a .gz input may expand over its compressed bytes read so far, once "
        "past 16 MiB (real RDF compresses 5-30 times; a bomb 1,000 times).",
        minimum=2,
    )
    load_max_line_mib: int = setting(
        16,
        "Longest line, in MiB, of a line-based input (N-Triples, N-Quads, Turtle, TriG, "
        "delimited): a parser holds a whole line or statement.",
        minimum=1,
    )
    load_max_whole_mib: int = setting(
        256,
        "Largest input, in MiB, of a format its parser reads whole (TriX, HexTuples).",
        minimum=1,
    )
    load_max_xml_depth: int = setting(
        256,
        "Deepest nesting of XML elements in an RDF/XML or TriX input (real files need a "
        "few levels; the RDF/XML parser slows down with the square of the depth).",
        minimum=4,
        maximum=100_000,
    )
    timeout: float = setting(
        30.0,
        "Seconds one SPARQL query may take before it fails with EndpointTimeout.",
        minimum=0.001,
        maximum=86_400,
    )
    retries: int = setting(
        3,
        "Retries of an endpoint query after 429, 5xx or a dropped connection.",
        minimum=0,
        maximum=20,
    )
    backoff: float = setting(
        0.5,
        "First retry delay in seconds; doubles each retry unless Retry-After says otherwise.",
        minimum=0,
    )
    max_retry_wait: float = setting(
        30.0,
        "Longest wait in seconds a Retry-After header may ask for; longer asks fail at once.",
        minimum=0,
    )
    endpoint_user: str | None = setting(
        None,
        "User name for HTTP Basic authentication to the endpoint (with endpoint_password); "
        "'env:NAME' reads it from environment variable NAME.",
    )
    endpoint_password: str | None = setting(
        None,
        "Password for HTTP Basic authentication; 'env:NAME' reads it from environment "
        "variable NAME when the source opens. Never shown or logged.",
        secret=True,
    )
    endpoint_token: str | None = setting(
        None,
        "Token sent as `Authorization: Bearer TOKEN`; 'env:NAME' reads it from environment "
        "variable NAME. Never shown or logged.",
        secret=True,
    )
    endpoint_headers: str | None = setting(
        None,
        "Extra HTTP headers for the endpoint, one `Name: value` per line; a value "
        "'env:NAME' is read from environment variable NAME. Never shown or logged.",
        secret=True,
    )
    user_agent: str = setting(
        default_user_agent(),
        "User-Agent sent with every endpoint request. Public endpoints ask for a tool name, "
        "its version and a contact (Wikidata's query service refuses generic agents with "
        "403): keep the tool and version, and put your URL or e-mail in the parentheses.",
    )
    neighbors_limit: int = setting(
        100, "Most triples neighbors() returns.", minimum=1, maximum=10_000
    )
    paths_limit: int = setting(100, "Most paths paths() returns.", minimum=1, maximum=10_000)
    max_hops: int = setting(2, "Default hop count for paths() (1 to 3).", minimum=1, maximum=3)
    cache_dir: str | None = setting(
        None, "Where the sample store and caches live; default the user cache directory."
    )
    progress: bool = setting(True, "Show progress bars on long work (loading, encoding).")


@dataclass(frozen=True)
class TextSettings:
    """Linking mentions to entities, writing triples as text, embedding text."""

    link_limit: int = setting(
        5, "Most candidate entities linking returns for a mention.", minimum=1, maximum=100
    )
    fuzzy_cutoff: float = setting(
        85.0,
        "Lowest fuzzy-match score (0-100) for a typo-tolerant link.",
        minimum=0,
        maximum=100,
    )
    link_max_queries: int = setting(
        8,
        "Most SPARQL queries linking the spans of one question may send to an endpoint "
        "(label lookups, search calls and one degree query); local stores use an index.",
        minimum=2,
        maximum=200,
    )
    literal_max_chars: int = setting(
        80, "Longest literal shown by verbalization before it is cut.", minimum=8
    )
    encoder: str = setting(
        "all-MiniLM-L6-v2",
        "Sentence encoder: the bundled 'all-MiniLM-L6-v2', a sentence-transformers model "
        "folder, or 'hash' (deterministic, no model; for tests).",
    )
    encoder_batch_size: int = setting(64, "Texts per batch when encoding.", minimum=1)
    encoder_cache: bool = setting(True, "Keep vectors on disk so no text is encoded twice.")
    faiss_threshold: int = setting(
        50_000,
        "Vector collections at least this large are searched with faiss instead of NumPy.",
        minimum=1,
    )


@dataclass(frozen=True)
class LLMSettings:
    """Which language model answers, and how it is called."""

    llm: str = setting(
        "auto",
        "LLM backend: 'embedded' (llama.cpp in-process), 'openai' (any OpenAI-compatible "
        "server), 'transformers' (PyTorch in-process, with llm_adapter: a model tuned by "
        "`kgmw ksl-tune`) or 'auto' (openai when llm_base_url is set, else embedded).",
        choices=("auto", "embedded", "openai", "transformers"),
    )
    llm_base_url: str | None = setting(
        None,
        "Base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1 or "
        "http://localhost:8000/v1 (vLLM, Ollama, llama.cpp server).",
    )
    llm_model: str | None = setting(None, "Model name sent to an OpenAI-compatible server.")
    llm_api_key_env: str = setting(
        "OPENAI_API_KEY",
        "Name of the environment variable that holds the API key (the key itself is never "
        "a setting and never logged).",
    )
    llm_api: str = setting(
        "auto",
        "Which API to use: 'chat', 'completions', or 'auto' (OpenAI server: chat, switching "
        "to completions if chat replies are empty; embedded: completion-style text).",
        choices=("auto", "chat", "completions"),
    )
    llm_timeout: float = setting(120.0, "Seconds one LLM request may take.", minimum=0.001)
    llm_retries: int = setting(
        3, "Retries of an LLM request after 429, 5xx or a timeout.", minimum=0, maximum=20
    )
    llm_max_tokens: int = setting(256, "Default most tokens one LLM reply may have.", minimum=1)
    llm_model_path: str | None = setting(
        None,
        "GGUF file for the embedded backend (the transformers backend also takes a "
        "Hugging Face model folder); default the bundled Gemma 3 270M (Q4_K_M).",
    )
    llm_context: int = setting(8192, "Context window (tokens) of the embedded model.", minimum=512)
    llm_threads: int = setting(
        0, "CPU threads for the embedded model; 0 lets llama.cpp pick.", minimum=0
    )
    llm_cache: bool = setting(
        True, "Cache temperature-0 LLM replies on disk, so an identical call is answered once."
    )


@dataclass(frozen=True)
class AnswerSettings:
    """What every method shares: which one runs, its budget, and the final-answer policy."""

    method: str = setting(
        "rok", "Method `kgmw ask` and the service use (`kgmw ask --help` lists them)."
    )
    max_calls: int = setting(
        12, "Most LLM calls one request may make (BudgetExceeded past it).", minimum=1
    )
    max_tokens: int = setting(
        200_000, "Most LLM tokens (prompt plus completion) one request may spend.", minimum=1
    )
    answer_graph_only: bool = setting(
        True,
        "Answer only from the graph: when no evidence joins an entity the question names "
        "to the answer, say the graph does not hold the answer (the withheld answer is "
        "kept as the guess). false: give it anyway, marked not grounded.",
    )
    answer_min_confidence: float = setting(
        0.3,
        "Under answer_graph_only, answers whose confidence is below this are withheld as "
        "'not in the graph' (kept as the guess). Confidence is the calibrated probability "
        "that the answer is right (docs/methods.md); 0.3 balances answers kept against "
        "unanswerable questions withheld on the dev sets (docs/benchmarks.md).",
        minimum=0.0,
        maximum=1.0,
    )
    answer_calibration: str | None = setting(
        None,
        "A calibration file from `kgmw calibrate` (one fitted model per method) that turns "
        "what an answer rests on into its confidence; empty: the one shipped with the "
        "package.",
    )
    answer_relation_gap: bool = setting(
        False,
        "Measure, for each supported answer, how far the relation the question asks about "
        "is from the relations its support holds (one encoder call per answer; recorded "
        "in confidence_basis for `kgmw calibrate`). On by itself when the calibration "
        "uses it.",
    )
    answer_foreign_margin: float = setting(
        0.15,
        "Under answer_graph_only, withhold an answer as 'not in the graph' when the "
        "question reads closer, by at least this much, to a relation the source does not "
        "hold (one the shipped ontologies or planning/world_relations.py name: spouse, "
        "capital, budget, ...) that the question names than to every relation it knows "
        "(its profile's, the answer's evidence); docs/methods.md. 0: no such check.",
        minimum=0.0,
        maximum=1.0,
    )
    answer_support_hops: int = setting(
        2,
        "Longest chain of evidence facts (RoK, QSM, PG) that may join a question entity "
        "to the answer and so support it.",
        minimum=1,
        maximum=6,
    )
    allow_ungrounded: bool = setting(
        False,
        "When every source of a request fails, answer without evidence (flagged) instead "
        "of failing with the source's error.",
    )


@dataclass(frozen=True)
class EvalSettings:
    """The evaluation harness."""

    eval_data_dir: str | None = setting(
        None,
        "Folder holding the benchmark datasets (metaqa/, webquestions/, ...) for `kgmw eval` and `kgmw load --recipe`.",
    )
    datasets_base_url: str | None = setting(
        None,
        "Mirror `kgmw datasets fetch` downloads from instead of each file's official URL: "
        "a file is at BASE/ plus the mirror path `kgmw datasets --json` lists.",
    )
    eval_concurrency: int = setting(
        1,
        "Questions `kgmw eval` answers at once (helps with remote LLMs; the embedded one is serial).",
        minimum=1,
        maximum=64,
    )


AREAS: tuple[tuple[str, type], ...] = (
    ("Sources", SourceSettings),
    ("Linking, text and embeddings", TextSettings),
    ("LLM", LLMSettings),
    ("Answers", AnswerSettings),
    ("Evaluation", EvalSettings),
    ("Service", ServerSettings),
    ("Caller SPARQL", SparqlSettings),
    ("Chat and kept answers", ChatSettings),
    ("Tuning", TuneSettings),
)
