"""The service over the sample graph with a scripted LLM, for load benchmarks.

    python serve_scripted.py --port 8123 [--workers 2]

One worker runs Werkzeug's threaded server; more run gunicorn (gthread, 4 threads each),
as `kgmw serve` does. The scripted LLM answers RoK's four calls instantly, so the
figures measure the service, the graph work and the JSON, not a model.
"""

from __future__ import annotations

import argparse
from typing import Any

from flask import Flask

from middleware.config import Settings
from middleware.kg.sample import sample_store
from middleware.llm.scripted import ScriptedLLM
from middleware.server import create_app


def build_app() -> Flask:
    llm = ScriptedLLM(
        [
            ("Key entities:$", "Titanic; Kate Winslet; James Cameron"),
            ("Useful facts:$", "1"),
            ("Answer:$", "James Cameron"),
        ],
        default="Titanic was directed by James Cameron.",
    )
    settings = Settings.load(config_path=None, overrides={"progress": False, "llm_cache": False})
    return create_app(settings, llm=llm, graphs={"sample": sample_store()})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if args.workers == 1:
        from werkzeug.serving import WSGIRequestHandler, run_simple

        WSGIRequestHandler.log_request = lambda *a, **k: None  # type: ignore[method-assign]
        run_simple("127.0.0.1", args.port, build_app(), threaded=True)
        return
    from gunicorn.app.base import BaseApplication

    class Service(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            for key, value in {
                "bind": f"127.0.0.1:{args.port}",
                "workers": args.workers,
                "worker_class": "gthread",
                "threads": 4,
                "backlog": 256,
            }.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            return build_app()

    Service().run()


if __name__ == "__main__":
    main()
