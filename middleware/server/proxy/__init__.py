"""The read-only SPARQL proxy: ``/sparql`` by the Protocol, its fast path for plain
GETs, and answers written by the query executor straight onto the connection."""
