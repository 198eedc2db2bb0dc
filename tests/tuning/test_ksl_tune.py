"""``kgmw ksl-tune`` end to end on a tiny random model: train, resume, load, choose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from middleware.cli import main
from middleware.config import Settings
from middleware.errors import BadRequest
from middleware.llm import user
from middleware.llm.factory import open_llm
from middleware.llm.transformers_backend import TransformersLLM
from middleware.testing.llms import LLMConformance
from middleware.tuning.examples import read_examples
from middleware.tuning.lora import CHECKPOINT, TuneConfig, tune

OPTIONS = ["James Cameron (directed by)", "1997 (release year)"]


def test_ksl_tune_trains_an_adapter_that_choose_loads(
    tiny_model: Path, train_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["ksl-tune", "--data", str(train_file), "--out", str(out), "--base", str(tiny_model)]
    assert main([*args, "--steps", "4", "--batch-size", "2", "--no-progress", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["steps"] == 4 and summary["examples"] == 4
    assert (out / "adapter" / "adapter_config.json").is_file()
    record = json.loads((out / "tune.json").read_text())
    assert len(record["losses"]) == 4 and record["config"]["rank"] == 16
    assert not (out / CHECKPOINT).exists()  # a finished run leaves no checkpoint
    tuned = TransformersLLM(base=tiny_model, adapter=out / "adapter")
    picked = tuned.choose([user("Question: who directed Titanic\nAt: Titanic")], OPTIONS)
    assert picked.option in OPTIONS and picked.completion.route == "scored"


def test_ksl_tune_resumes_from_its_last_checkpoint(
    tiny_model: Path, train_file: Path, tmp_path: Path
) -> None:
    examples = read_examples(train_file)
    config = TuneConfig(steps=4, batch_size=1, save_every=2, rank=4)

    def stop_at_three(step: int, loss: float) -> None:
        if step == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tune(examples, tmp_path, base=tiny_model, config=config, progress=stop_at_three)
    assert json.loads((tmp_path / CHECKPOINT / "state.json").read_text())["step"] == 2
    report = tune(examples, tmp_path, base=tiny_model, config=config)
    assert report.resumed_from == 2 and len(report.losses) == 4
    straight = tune(examples, tmp_path / "again", base=tiny_model, config=config)
    assert straight.losses == pytest.approx(report.losses, abs=1e-4)  # same steps, same data


def test_ksl_tune_refuses_another_runs_checkpoint(
    tiny_model: Path, train_file: Path, tmp_path: Path
) -> None:
    examples = read_examples(train_file)

    def stop(step: int, loss: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tune(
            examples,
            tmp_path,
            base=tiny_model,
            config=TuneConfig(steps=4, save_every=1, rank=4),
            progress=stop,
        )
    with pytest.raises(BadRequest, match="another run"):
        tune(examples, tmp_path, base=tiny_model, config=TuneConfig(steps=5, rank=4))


@pytest.mark.parametrize(
    ("content", "wanted"),
    [
        ("{}", "not a list"),
        ("[]", "no examples"),
        ('[{"instruction": "x", "input": "y"}]', "lacks text for output"),
        ("[1]", "not an object"),
        ("not json", "not JSON"),
    ],
)
def test_ksl_tune_refuses_data_not_in_the_export_format(
    tmp_path: Path, content: str, wanted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "train.json"
    data.write_text(content)
    with pytest.raises(BadRequest, match=wanted):
        read_examples(data)
    out = tmp_path / "run"
    assert main(["ksl-tune", "--data", str(data), "--out", str(out)]) != 0
    assert wanted in capsys.readouterr().err
    assert not out.exists()  # nothing written


def test_the_tuned_backend_is_chosen_by_settings(tiny_model: Path, tmp_path: Path) -> None:
    settings = Settings.load(
        config_path=False,
        env={},
        overrides={"llm": "transformers", "llm_model_path": str(tiny_model), "llm_cache": False},
    )
    llm = open_llm(settings)
    assert isinstance(llm, TransformersLLM) and llm.adapter is None
    with pytest.raises(Exception, match="no LoRA adapter"):
        open_llm(settings.replace(llm_adapter=str(tmp_path)))


class TestTunedTransformersConformance(LLMConformance):
    @pytest.fixture
    def llm(self, tiny_model: Path) -> TransformersLLM:
        return TransformersLLM(base=tiny_model)


@pytest.mark.parametrize("model_name", ["tiny_model", "tiny_gemma"])
def test_the_target_loss_is_the_models_own_loss_on_the_target(
    model_name: str, request: pytest.FixtureRequest
) -> None:
    """Logits are computed at the target's positions only; the loss and its gradient
    are those of the model's own loss with every prompt token masked out."""
    import torch

    from middleware.llm.torch_models import load_causal_lm
    from middleware.tuning.lora import target_loss

    model, tokenizer = load_causal_lm(request.getfixturevalue(model_name))
    ids = list(tokenizer("Question: who directed Titanic\nAt: Titanic\nChoice:")["input_ids"])
    answer = len(tokenizer(" James Cameron (directed by)", add_special_tokens=False)["input_ids"])
    ids += list(tokenizer(" James Cameron (directed by)", add_special_tokens=False)["input_ids"])
    tokens = torch.tensor([ids])
    labels = tokens.clone()
    labels[0, : len(ids) - answer] = -100
    expected = model(input_ids=tokens, labels=labels).loss
    expected.backward()
    want = [p.grad.clone() for p in model.parameters() if p.grad is not None]
    model.zero_grad()
    got = target_loss(model, tokens, answer)
    got.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert torch.allclose(got, expected, atol=1e-5)
    assert len(grads) == len(want)
    assert all(torch.allclose(g, w, atol=1e-5) for g, w in zip(grads, want, strict=True))
