"""``kgmw llm`` and ``kgmw doctor`` with the embedded model and encoder."""

from __future__ import annotations

import json

import pytest

from tests.cli_helpers import run


def test_llm_prints_reply_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "llm", "Q: What is the capital of France?\nA:", "--max-tokens", "8", "--stop", "\n"
    )
    assert code == 0
    assert "usage: 1 LLM call · " in out and "prompt +" in out
    assert "model: embedded gemma-3-270m-q4_k_m.gguf (route: completions)" in out


def test_llm_json_and_cache_hit(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["llm", "Titanic was directed by", "--max-tokens", "6", "--json"]
    code, out, _ = run(capsys, *args)
    first = json.loads(out)
    assert code == 0 and first["usage"]["llm_calls"] == 1
    code, out, _ = run(capsys, *args)
    second = json.loads(out)
    assert second["completion"]["cached"] and second["usage"]["cache_hits"] == 1
    assert second["text"] == first["text"]
    code, out, _ = run(capsys, *args, "--no-cache")
    assert not json.loads(out)["completion"]["cached"]


def test_llm_choose_with_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "llm", "Which is a city?", "--option", "Paris", "--option", "blue", "--json"
    )
    data = json.loads(out)
    assert code == 0 and data["text"] in {"Paris", "blue"}
    assert data["completion"]["route"] == "grammar"


def test_llm_unreachable_server_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGMW_BACKOFF", "0.01")  # the retries still run, without 3.5 s of waits
    code, _, err = run(
        capsys,
        "llm",
        "hi",
        "--llm",
        "openai",
        "--llm-base-url",
        "http://127.0.0.1:9/v1",
        "--no-cache",
    )
    assert code == 1
    assert err.startswith("kgmw: error: LLM server http://127.0.0.1:9/v1 failed")
    assert len(err.strip().splitlines()) == 1


def test_doctor_reports_every_part(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "doctor", "--json")
    report = json.loads(out)
    assert code == 0, out
    parts = {c["part"]: c for c in report["checks"]}
    assert set(parts) == {"source", "llm", "encoder"}
    assert all(c["ok"] for c in parts.values())
    assert "384 dimensions" in parts["encoder"]["message"]
    assert report["versions"]["llama-cpp-python"] != "not installed"
    assert report["caches"]["llm_replies"].endswith("llm-replies.sqlite")


def test_doctor_fails_when_a_part_does_not_answer(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGMW_BACKOFF", "0.01")  # the retries still run, without 3.5 s of waits
    code, out, err = run(capsys, "doctor", "--no-llm", "--endpoint", "http://127.0.0.1:9/sparql")
    assert code == 1
    assert "FAIL" in out and "doctor: source did not answer" in err
    assert "…" not in out  # the failure is printed whole, hint and all
    assert "connection refused" in out and "endpoint is running" in out
