"""Calibrated confidence: the basis of an answer, fitted models, and their use."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from middleware.eval.calibrate import fit, read_examples, skipped
from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.calibration import (
    Basis,
    Calibration,
    Model,
    expected_calibration_error,
    fit_model,
    risk_coverage,
    rule_confidence,
)
from middleware.methods.rok import RoK
from middleware.methods.run import AnswerPolicy
from tests.cli_helpers import run

KB = "Heat|directed_by|Michael Mann\nHeat|starred_actors|Al Pacino\n"


@pytest.fixture(scope="module")
def kg() -> LocalStore:
    store = LocalStore(profile="metaqa", name="films")
    store.load_text(KB, name="kb.txt")
    return store


def rok_llm(answer: str) -> ScriptedLLM:
    return ScriptedLLM(
        [
            ("Reasoning:$", "Heat was directed by Michael Mann."),
            ("Key entities:$", "Heat; Michael Mann"),
            ("Useful facts:$", "1, 2"),
            ("Answer:$", answer),
        ]
    )


def draws(n: int, seed: int = 3) -> tuple[list[Basis], list[bool]]:
    """Answers whose chance of being right is their share, supported or not."""
    rng = random.Random(seed)
    bases, labels = [], []
    for _ in range(n):
        supported = rng.random() < 0.7
        share = rng.random()
        bases.append(Basis(evidence=True, supported=supported, share=share, rank=1, hops=1))
        labels.append(supported and rng.random() < share)
    return bases, labels


def test_a_fitted_model_is_calibrated_where_the_rule_is_not() -> None:
    bases, labels = draws(2000)
    model = fit_model(bases[:1000], labels[:1000])
    fitted = [model.probability(b) for b in bases[1000:]]
    rule = [rule_confidence(b) for b in bases[1000:]]
    assert expected_calibration_error(fitted, labels[1000:]) < 0.05
    assert expected_calibration_error(rule, labels[1000:]) > 0.15
    unsupported = model.probability(Basis(evidence=True))
    assert unsupported < 0.05 < model.probability(bases[0]) or not bases[0].supported


def test_risk_falls_as_the_threshold_rises() -> None:
    bases, labels = draws(1000)
    model = fit_model(bases, labels)
    rows = risk_coverage([model.probability(b) for b in bases], labels, points=[0.0, 0.5, 0.8])
    coverages = [c for _, c, _ in rows]
    risks = [r for _, _, r in rows]
    assert coverages == sorted(coverages, reverse=True) and coverages[0] == 1.0
    assert risks[0] > risks[1] > risks[2]


def test_a_model_per_planner_mode_comes_before_the_method_s_own() -> None:
    calibration = Calibration(
        {
            "plan": Model(("bias",), (0.0,)),
            "plan:learned": Model(("bias",), (3.0,)),
        }
    )
    assert calibration.confidence("plan", Basis(mode="learned")) == pytest.approx(0.9526)
    assert calibration.confidence("plan", Basis()) == 0.5  # no plan made: the method's own
    assert calibration.confidence("plan", Basis(mode="zero-shot")) == 0.1  # the rule
    assert calibration.confidence("rok", Basis(evidence=True)) == 0.2  # the rule
    assert Calibration.from_json(calibration.to_json()).models == calibration.models
    assert not calibration.uses("plan", "gap")


def test_finish_takes_its_confidence_from_the_given_calibration(
    kg: LocalStore, tmp_path: Path
) -> None:
    answer = RoK(rok_llm("Michael Mann"), kg).run("Who directed Heat?")
    assert answer.found and answer.basis is not None and answer.basis.supported
    doubtful = tmp_path / "calibration.json"
    doubtful.write_text(Calibration({"rok": Model(("bias",), (-2.0,))}).to_json())
    policy = AnswerPolicy(calibration=str(doubtful))
    withheld = RoK(rok_llm("Michael Mann"), kg, policy=policy).run("Who directed Heat?")
    assert not withheld.found and withheld.guess is not None
    assert withheld.guess.confidence == pytest.approx(0.1192)
    assert "below 0.3" in withheld.guess.why


def test_a_calibration_file_that_cannot_be_read_is_a_clear_error(tmp_path: Path) -> None:
    from middleware.errors import ConfigError
    from middleware.methods.calibration import load_calibration

    with pytest.raises(ConfigError, match=r"cannot read the calibration .*nowhere\.json"):
        load_calibration(str(tmp_path / "nowhere.json"))
    bad = tmp_path / "bad.json"
    for text, why in [
        ('{"rok": {"weights": [1]}}', "needs lists"),
        ("[1, 2]", "expected an object"),
        ('{"rok": {"features": ["bias", "supported"], "weights": [1.0]}}', "one number"),
        ('{"rok": {"features": ["bias"], "weights": ["x"]}}', "one number"),
        ('{"rok": {"features": ["supprted"], "weights": [1.0]}}', "unknown features"),
    ]:
        bad.write_text(text)
        with pytest.raises(ConfigError, match=r"bad\.json is not a calibration file") as caught:
            load_calibration(str(bad))
        assert why in str(caught.value)
        bad.unlink()  # a new file: read again


def results_file(
    path: Path,
    n: int,
    *,
    bases: Sequence[Basis] | None = None,
    labels: Sequence[bool] | None = None,
) -> Path:
    if bases is None or labels is None:
        bases, labels = draws(n)
    lines = [
        json.dumps(
            {
                "key": f"d/dev/rok/{i}",
                "dataset": "d",
                "method": "rok",
                "answerable": True,
                "basis": b.to_dict(),
                "answer_hit": y,
            }
        )
        for i, (b, y) in enumerate(zip(bases, labels, strict=True))
    ]
    path.mkdir()
    (path / "results.jsonl").write_text("\n".join(lines) + "\n")
    return path


def test_calibrate_fits_from_eval_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = results_file(tmp_path / "run", 400)
    calibration, reports = fit(read_examples([folder]))
    assert set(calibration.models) == {"rok"} and reports[0].ece < reports[0].ece_before
    out = tmp_path / "calibration.json"
    code, text, err = run(capsys, "calibrate", str(folder), "--out", str(out))
    assert code == 0, err
    assert "rok" in text and "ECE" in text
    assert "rok" in Calibration.from_json(out.read_text()).models
    code, _, err = run(capsys, "calibrate", str(tmp_path / "missing"))
    assert code != 0 and "no results at" in err
    code, _, err = run(capsys, "calibrate", str(folder), "--out", str(tmp_path / "no" / "x.json"))
    assert code != 0 and "cannot write" in err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "results.jsonl").write_text("[1, 2]\n")
    code, _, err = run(capsys, "calibrate", str(broken))
    assert code != 0 and "results.jsonl:1: not a results record" in err


def test_a_method_always_wrong_gets_no_model(tmp_path: Path) -> None:
    folder = tmp_path / "wrong"
    folder.mkdir()
    rows = [
        {"key": f"d/dev/x/{i}", "dataset": "d", "method": "x", "basis": Basis().to_dict(),
         "answer_hit": False}
        for i in range(40)
    ]  # fmt: skip
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    examples = read_examples([folder])
    calibration, reports = fit(examples)
    assert not calibration.models and skipped(examples, reports) == ["x: 40 answers, all wrong"]


def test_a_source_profile_with_enough_answers_gets_a_model_of_its_own(tmp_path: Path) -> None:
    bases, labels = draws(260)
    # 200 answers over one source profile, 60 over another
    profiled = [
        Basis(**{**b.to_dict(), "profile": "films" if i < 200 else "places"})
        for i, b in enumerate(bases)
    ]
    folder = results_file(tmp_path / "run", 260, bases=profiled, labels=labels)
    examples = read_examples([folder])
    assert len(examples["rok"]) == 260 and len(examples["rok@films"]) == 200
    calibration, reports = fit(examples)
    assert set(calibration.models) == {"rok", "rok@films"}
    assert skipped(examples, reports) == ["rok@places: 60 answers, fewer than 100"]
    films, places = Basis(supported=True, share=0.5, profile="films"), Basis(profile="places")
    assert calibration.model("rok", profile="films") is calibration.models["rok@films"]
    assert calibration.model("rok", profile="places") is calibration.models["rok"]
    assert calibration.confidence("rok", films) == calibration.models["rok@films"].probability(
        films
    )
    assert calibration.confidence("rok", places) == calibration.models["rok"].probability(places)
    assert calibration.uses("rok", "supported") and not calibration.uses("ro", "supported")


def test_an_answer_records_the_profile_it_was_asked_over(kg: LocalStore) -> None:
    answer = RoK(rok_llm("Michael Mann"), kg).run("Who directed Heat?")
    assert answer.basis is not None and answer.basis.profile == "metaqa"


def test_a_method_fitted_again_drops_the_profile_models_of_its_old_fit(tmp_path: Path) -> None:
    """`kgmw calibrate --base` with answers over one profile fits no profile model (the
    method's own is the same); the base's profile model, fitted on the old answers,
    must not outlive it, or sources of that profile keep the old confidence."""
    from middleware.eval.calibrate import merged

    old = Model(("bias",), (0.0,), {"answers": 1})
    base = Calibration({"rok": old, "rok@films": old, "pg": old, "pg@films": old})
    fitted, _ = fit(read_examples([results_file(tmp_path / "run", 200)]))
    assert set(fitted.models) == {"rok"}
    both = merged(base, fitted)
    assert set(both.models) == {"rok", "pg", "pg@films"}
    assert both.model("rok", profile="films") is fitted.models["rok"]


def test_calibrate_says_which_models_of_its_base_it_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = Model(("bias",), (0.0,), {"answers": 1})
    base = tmp_path / "base.json"
    base.write_text(Calibration({"rok": old, "rok@films": old, "pg": old}).to_json())
    folder = results_file(tmp_path / "run", 200)
    out = tmp_path / "calibration.json"
    code, text, err = run(capsys, "calibrate", str(folder), "--base", str(base), "--out", str(out))
    assert code == 0, err
    assert "dropped rok@films" in text
    code, text, err = run(capsys, "calibrate", str(folder), "--base", str(base), "--json")
    assert code == 0, err
    assert json.loads(text)["dropped"] == ["rok@films"]


def test_a_method_put_in_alone_keeps_no_stale_profile_model(tmp_path: Path) -> None:
    """With ``methods`` naming the method only, its profile model fitted now is not put
    in, so the base's, fitted on the old answers, must go rather than stay."""
    from middleware.eval.calibrate import merged

    old = Model(("bias",), (0.0,), {"answers": 1})
    new = Model(("bias",), (1.0,), {"answers": 2})
    base = Calibration({"rok": old, "rok@films": old, "rok@places": old})
    fitted = Calibration({"rok": new, "rok@films": new})
    assert set(merged(base, fitted, ["rok"]).models) == {"rok"}
    assert merged(base, fitted, ["rok", "rok@films"]).models == {"rok": new, "rok@films": new}


@pytest.mark.shipped_calibration
def test_every_graph_method_is_calibrated_in_its_default_mode() -> None:
    """With default settings (no path memory) ``plan`` and every ``+plan`` variant plan
    zero-shot: the shipped calibration has a model for that mode, so none of them falls
    back to the fixed rule (which gives a supported answer at least 0.5, whatever it
    rests on). ``reach`` is a multiple-choice baseline; io, cot and sc use no graph."""
    from middleware.methods.calibration import load_calibration
    from middleware.methods.registry import SPECS

    shipped = load_calibration(None)
    graph_methods = [s.name for s in SPECS if s.collects_evidence and s.name != "reach"]
    assert {"plan", "rok", "ksl", "ksl+plan", "rok+plan", "qsm+plan", "pg+plan"} <= set(
        graph_methods
    )
    missing = [
        name
        for name in graph_methods
        if shipped.model(name, "zero-shot" if name == "plan" or name.endswith("+plan") else "")
        is None
    ]
    assert missing == []
