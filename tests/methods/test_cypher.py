"""The Cypher parser on the shapes LLMs write, broken ones included."""

from __future__ import annotations

import pytest

from middleware.methods.pseudograph.cypher import parse_cypher

# (name, Cypher, expected triples as text, expected skip reasons)
CASES: list[tuple[str, str, list[str], list[str]]] = [
    (
        "node properties",
        "CREATE (s:Lake {name: 'Lake Superior', area: 82000})",
        ["Lake Superior | area | 82000"],
        [],
    ),
    (
        "several nodes, one per line",
        "CREATE (a:Lake {name: 'Erie', area: 9600})\nCREATE (b:Lake {name: 'Huron', area: 23000})",
        ["Erie | area | 9600", "Huron | area | 23000"],
        [],
    ),
    (
        "relationship between defined variables",
        "CREATE (a:Person {name: 'Ann'})\nCREATE (b:City {name: 'Oslo'})\nCREATE (a)-[:LIVES_IN]->(b)",
        ["Ann | lives in | Oslo"],
        [],
    ),
    (
        "inline nodes in a relationship",
        'CREATE (andes:MountainRange {name: "Andes"})-[:COVERS]->(peru:Country {name: "Peru"})',
        ["Andes | covers | Peru"],
        [],
    ),
    (
        "variable reused in later statements",
        'CREATE (andes:Range {name: "Andes"})\nCREATE (andes)-[:COVERS]->(c:Country {name: "Chile"})\n'
        "CREATE (andes)-[:KNOWN_FOR]->(m:Concept {name: 'Climbing'})\nCREATE (x)-[:NEAR]->(m)",
        ["Andes | covers | Chile", "Andes | known for | Climbing", "x | near | Climbing"],
        [],
    ),
    (
        "chain with both directions",
        "CREATE (a {name: 'A'})-[:R]->(b {name: 'B'})<-[:S]-(c {name: 'C'})",
        ["A | r | B", "C | s | B"],
        [],
    ),
    (
        "left-pointing relationship",
        "CREATE (film {title: 'Heat'})<-[:DIRECTED]-(p {name: 'Michael Mann'})",
        ["Michael Mann | directed | Heat"],
        [],
    ),
    (
        "title as the name",
        "CREATE (f:Film {title: 'Titanic', year: 1997})",
        ["Titanic | year | 1997"],
        [],
    ),
    (
        "relationship properties become qualifiers",
        "CREATE (a {name: 'Yao Ming'})-[:PLAYED_FOR {from: 2002, to: 2011}]->(b {name: 'Houston Rockets'})",
        ["Yao Ming | played for (from: 2002, to: 2011) | Houston Rockets"],
        [],
    ),
    (
        "list property gives one triple per item",
        "CREATE (n:Band {name: 'Queen', members: ['Freddie Mercury', 'Brian May']})",
        ["Queen | members | Freddie Mercury", "Queen | members | Brian May"],
        [],
    ),
    (
        "numbers, floats and booleans",
        "CREATE (p:Planet {name: 'Mars', moons: 2, gravity: 3.72, habitable: false, radius: 3389.0})",
        [
            "Mars | moons | 2",
            "Mars | gravity | 3.72",
            "Mars | habitable | false",
            "Mars | radius | 3389",
        ],
        [],
    ),
    (
        "MERGE states facts too",
        "MERGE (c:Country {name: 'China', population: 1443497378})",
        ["China | population | 1443497378"],
        [],
    ),
    (
        "comments and prose around code",
        "<step 1> Knowledge planning: we need the director.\n```cypher\n// the film\n"
        "CREATE (t:Film {name: 'Titanic'}) // a ship film\nCREATE (t)-[:DIRECTED_BY]->(j:Person {name: 'James Cameron'})\n```\nThat is all.",
        ["Titanic | directed by | James Cameron"],
        [],
    ),
    (
        "statement spanning lines with commas",
        "CREATE (a:Person {name: 'Ann'}),\n       (b:Person {name: 'Bob'}),\n       (a)-[:KNOWS]->(b)",
        ["Ann | knows | Bob"],
        [],
    ),
    (
        "property map spanning lines",
        "CREATE (r:River {\n  name: 'Danube',\n  length: 2850\n})",
        ["Danube | length | 2850"],
        [],
    ),
    (
        "semicolons end statements",
        "CREATE (a {name: 'A', x: 1}); CREATE (b {name: 'B', y: 2});",
        ["A | x | 1", "B | y | 2"],
        [],
    ),
    (
        "camelCase and dashes in types read as words",
        "CREATE (a {name: 'Rome'})-[:capitalOf]->(b {name: 'Italy'})\nCREATE (a)-[:`twin-city`]->(c {name: 'Paris'})",
        ["Rome | capital of | Italy", "Rome | twin city | Paris"],
        [],
    ),
    (
        "untyped relationship",
        "CREATE (a {name: 'A'})-->(b {name: 'B'})",
        ["A | related to | B"],
        [],
    ),
    (
        "escaped quotes inside strings",
        'CREATE (b:Book {name: \'Gulliver\\\'s Travels\', author: "Jonathan \\"Jon\\" Swift"})',
        ['Gulliver\'s Travels | author | Jonathan "Jon" Swift'],
        [],
    ),
    (
        "a // inside a string is not a comment",
        "CREATE (s:Site {name: 'Example', url: 'https://example.org'})",
        ["Example | url | https://example.org"],
        [],
    ),
    (
        "function values keep their argument",
        "CREATE (p:Person {name: 'Ada', born: date('1815-12-10')})",
        ["Ada | born | 1815-12-10"],
        [],
    ),
    (
        "MATCH binds a variable that CREATE uses",
        "MATCH (a:Person {name: 'Ann'}) CREATE (a)-[:OWNS]->(c:Car {name: 'Volvo'})",
        ["Ann | owns | Volvo"],
        ["MATCH states no facts (its variables are kept)"],
    ),
    (
        "MATCH and RETURN only",
        "MATCH (p:Person)-[:LIVES_IN]->(c:City)\nWHERE c.name = 'Oslo'\nRETURN p.name",
        [],
        [
            "MATCH states no facts (its variables are kept)",
            "WHERE states no facts",
            "RETURN states no facts",
        ],
    ),
    (
        "SET is skipped",
        "CREATE (a {name: 'A'})\nSET a.size = 3",
        [],
        ["SET states no facts"],
    ),
    (
        "unbalanced brackets",
        "CREATE (a:Lake {name: 'Erie', area: 9600)\nCREATE (b:Lake {name: 'Huron', area: 23000})",
        ["Huron | area | 23000"],
        ["unbalanced brackets"],
    ),
    (
        "missing closing quote",
        "CREATE (a:Lake {name: 'Erie, area: 9600})\nCREATE (b:Lake {name: 'Huron', area: 23000})",
        ["Huron | area | 23000"],
        ["a string is missing its closing quote"],
    ),
    (
        "missing colon in a property map",
        "CREATE (a:Lake {name 'Erie'})",
        [],
        ["expected ':' but found \"'Erie'\""],
    ),
    (
        "node without name or variable in a relationship",
        "CREATE (:Thing)-[:R]->({size: 3})",
        [],
        ["a node has neither a name, a title nor a variable"],
    ),
    (
        "variable as a property value",
        "CREATE (a {name: 'A', friend: b})",
        [],
        ["'b' is not a value (variables cannot be properties)"],
    ),
    (
        "parameters have no value",
        "CREATE (a {name: $name})",
        [],
        ["parameter $name has no value here"],
    ),
    (
        "variable-length relationship",
        "CREATE (a {name: 'A'})-[:R*2]->(b {name: 'B'})",
        [],
        ["a variable-length relationship states no single fact"],
    ),
    (
        "relationship pointing both ways",
        "CREATE (a {name: 'A'})<-[:R]->(b {name: 'B'})",
        [],
        ["a relationship cannot point both ways"],
    ),
    (
        "statement that ends early",
        "CREATE (a {name: 'A'})-[:R]->",
        [],
        ["the statement ends early (expected '(')"],
    ),
    (
        "unexpected character",
        "CREATE (a {name: 'A'}) # note",
        [],
        ["unexpected character '#'"],
    ),
    (
        "lower-case keywords and block comments",
        "/* plan:\n the director */\ncreate (a {name: 'Heat'})-[:directed_by]->(b {name: 'Michael Mann'})",
        ["Heat | directed by | Michael Mann"],
        [],
    ),
    (
        "plain prose only",
        "I think the answer is Paris, because it is the capital of France.",
        [],
        [],
    ),
    (
        "null properties are left out",
        "CREATE (a {name: 'A', spouse: null, born: 1950})",
        ["A | born | 1950"],
        [],
    ),
    (
        "path variable before a pattern",
        "CREATE p = (a {name: 'A'})-[:R]->(b {name: 'B'})",
        ["A | r | B"],
        [],
    ),
]


@pytest.mark.parametrize(("name", "cypher", "triples", "skipped"), CASES, ids=[c[0] for c in CASES])
def test_cypher_snippets(name: str, cypher: str, triples: list[str], skipped: list[str]) -> None:
    graph = parse_cypher(cypher)
    assert [t.text() for t in graph.triples] == triples
    assert [s.reason for s in graph.skipped] == skipped


def test_there_are_at_least_thirty_snippets() -> None:
    assert len(CASES) >= 30


def test_subjects_names_and_kinds() -> None:
    graph = parse_cypher(
        "CREATE (t:Film {title: 'Titanic', year: 1997})-[:DIRECTED_BY]->(j {name: 'James Cameron'})"
    )
    assert graph.subjects == ["Titanic"]
    assert graph.names == ["Titanic", "James Cameron"]
    assert [t.kind for t in graph.triples] == ["property", "relation"]
    assert graph.nodes == {"t": "Titanic", "j": "James Cameron"}


def test_skips_say_where_they_were() -> None:
    graph = parse_cypher("// plan\n\nCREATE (a {name: 'x'})\nCREATE (b {name: 'y' )\n")
    assert [(s.line, s.text) for s in graph.skipped] == [(4, "CREATE (b {name: 'y' )")]


def test_huge_input_is_cut_not_crashed() -> None:
    graph = parse_cypher("CREATE (a {name: 'A', n: 1})\n" * 3000)
    assert graph.triples and graph.skipped[0].reason.startswith("longer than")
