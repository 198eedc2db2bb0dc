"""Settings of caller SPARQL: the /sparql proxy's limits and allowlist, and the query
executors that run caller queries on local stores (for every way in: /sparql,
`kgmw query`, kg_sparql, MCP sparql)."""

from __future__ import annotations

from dataclasses import dataclass

from middleware.config.fields import setting


@dataclass(frozen=True)
class SparqlSettings:
    """What a caller's query may be and do, and where it runs."""

    sparql_max_rows: int = setting(
        10_000,
        "Most rows or triples the /sparql proxy returns; longer results are cut and marked.",
        minimum=1,
    )
    sparql_max_result_mb: int = setting(
        32,
        "Largest caller query result in MB, however few its rows (one row may hold a long "
        "string): past it the query is refused (413), so no result fills the service's "
        "memory while a slow client reads it.",
        minimum=1,
        maximum=4096,
    )
    sparql_service_allowlist: str | None = setting(
        None,
        "Comma-separated endpoint URLs a caller's query (/sparql, `kgmw query`, kg_sparql, "
        "MCP sparql) may call with SERVICE; unset refuses every SERVICE clause. On a local "
        "store the executors can connect only to these hosts and ports (http: these paths).",
    )
    sparql_endpoint_functions: str = setting(
        "http://www.w3.org/2001/XMLSchema#",
        "Comma-separated IRI prefixes of the extension functions a caller's query may call "
        "on a remote endpoint source; any other IRI before '(' is refused, since engines "
        "have functions that fetch from the network (Virtuoso's bif:http_get). The default "
        "allows the XSD casts only; local stores run any function, without network.",
    )
    sparql_max_query_chars: int = setting(
        100_000, "Longest caller SPARQL query, in characters (413 past it).", minimum=10
    )
    sparql_max_depth: int = setting(
        64,
        "Deepest nesting of brackets in a caller's query ({ ( [): deep nesting crashes "
        "query engines.",
        minimum=2,
        maximum=1000,
    )
    sparql_max_terms: int = setting(
        1_000,
        "Most operators, separators and pattern keywords (UNION, OPTIONAL, ...) in a "
        "caller's query.",
        minimum=10,
        maximum=100_000,
    )
    sparql_executors: int = setting(
        2,
        "Executor processes that run caller SPARQL on a local store (on disk or in memory), "
        "one query at a time each, without network access: a crash, runaway memory or "
        "timeout ends only its executor. 0 refuses caller SPARQL on local stores.",
        minimum=0,
        maximum=64,
    )
    sparql_executor_memory: int = setting(
        1536,
        "Address space of one query executor in MB (an idle one holds about 650 MB of "
        "it, most of it reserved, not resident); a query that needs more gets a 400.",
        minimum=512,
    )
    sparql_executors_memory_total: int = setting(
        1024,
        "Resident memory of all query executors of a source together, in MB: past it the query "
        "using most is stopped (400). 0: no shared cap.",
        minimum=0,
    )
    sparql_penalty: float = setting(
        60.0,
        "Seconds a caller (API key, else address) gets 429 on /sparql after one of its "
        "queries had to be stopped (timeout, memory, crash); a query stopped for the "
        "service's own capacity does not count. An address is also refused at the "
        "connection (server_refuse_at_connection).",
        minimum=0.0,
    )
    sparql_base_iri: str | None = setting(
        None,
        "Base IRI for relative IRIs in /sparql queries (a BASE in the query wins); unset: "
        "the /sparql URL the request came to.",
    )
