"""A tiny MetaQA folder (kb.txt, 1- and 2-hop dev questions with their types) for the
tests of generated question sets; the real files are 100 MB."""

from __future__ import annotations

from pathlib import Path

KB = """\
Heat|directed_by|Michael Mann
Heat|written_by|Michael Mann
Heat|starred_actors|Al Pacino
Heat|starred_actors|Robert De Niro
Heat|release_year|1995
Heat|in_language|English
Heat|has_genre|Crime
Heat|has_tags|heist
Nine|directed_by|Rob Marshall
Nine|starred_actors|Daniel Day-Lewis
Nine|release_year|2009
Ronin|directed_by|John Frankenheimer
Ronin|starred_actors|Robert De Niro
Ronin|release_year|1998
Collateral|directed_by|Michael Mann
Collateral|starred_actors|Tom Cruise
The Insider|written_by|Eric Roth
The Insider|starred_actors|Al Pacino
Thief|written_by|Michael Mann
Thief|has_genre|Crime
Manhunter|written_by|Thomas Harris
Manhunter|release_year|1986
Ali|directed_by|Michael Mann
Ali|starred_actors|Will Smith
"""
ONE_HOP = [
    ("who directed [Heat]\tMichael Mann", "movie_to_director"),
    ("what language is [Heat] in\tEnglish", "movie_to_language"),
    ("what movies did [Al Pacino] act in\tHeat|The Insider", "actor_to_movie"),
    ("what films did [Michael Mann] direct\tHeat|Collateral|Ali", "director_to_movie"),
    ("when was [Ronin] released\t1998", "movie_to_year"),
    ("what words describe [Heat]\theist", "movie_to_tags"),
    ("what movies are about [heist]\tHeat", "tag_to_movie"),
    ("who wrote [Thief]\tMichael Mann", "movie_to_writer"),
    ("a line without a tab", "movie_to_writer"),
]
TWO_HOP = [
    ("who directed the movies [Al Pacino] acted in\tMichael Mann", "actor_to_movie_to_director"),
    ("when were the films written by [Eric Roth] released\t1999", "writer_to_movie_to_year"),
]


def write_metaqa(root: Path) -> Path:
    """``root/metaqa/`` with kb.txt and dev questions; returns ``root``."""
    folder = root / "metaqa"
    for hops, rows in ((1, ONE_HOP), (2, TWO_HOP)):
        questions = folder / f"{hops}-hop"
        questions.mkdir(parents=True, exist_ok=True)
        (questions / "qa_dev.txt").write_text("".join(f"{q}\n" for q, _ in rows))
        (questions / "qa_dev_qtype.txt").write_text("".join(f"{t}\n" for _, t in rows))
    (folder / "kb.txt").write_text(KB)
    return root


def triples() -> list[tuple[str, str, str]]:
    return [(s, r, o) for s, r, o in (line.split("|") for line in KB.splitlines())]
