"""Profile key same_as: read, checked, and mapped both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.errors import ConfigError
from middleware.kg.profiles import load_profile
from tests.conftest import DATA


def test_cross_profile_same_as_is_read_with_prefixes() -> None:
    rule = load_profile(str(DATA / "cross" / "wikidata-half.yaml")).same_as
    assert rule is not None
    assert rule.property.value == "http://www.wikidata.org/prop/direct/P646"
    assert rule.to_iri("/m/03_gd") == "http://rdf.freebase.com/ns/m.03_gd"
    assert rule.to_value("http://rdf.freebase.com/ns/m.03_gd") == "/m/03_gd"
    assert rule.to_value("http://www.wikidata.org/entity/Q1") is None
    assert load_profile("freebase").same_as is None


@pytest.mark.parametrize(
    ("same_as", "message"),
    [
        ("{property: 'http://x/p', value: '/m/{id}'}", "same_as needs property, value and iri"),
        ("{property: 'http://x/p', value: '/m/', iri: 'http://y/{id}'}", "one {id} placeholder"),
        ("{property: 'not an iri', value: '{id}', iri: 'http://y/{id}'}", "is not an IRI"),
        ("[1, 2]", "same_as needs property, value and iri"),
    ],
)
def test_cross_profile_same_as_errors_name_the_key(
    tmp_path: Path, same_as: str, message: str
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(f"name: p\nsame_as: {same_as}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=message.replace("{", r"\{").replace("}", r"\}")):
        load_profile(str(path))
