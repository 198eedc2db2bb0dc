"""Build the bundled sample graph: a connected slice of the MetaQA (WikiMovies) KB.

Every triple of the chosen movies is kept. Movies are chosen around the people who
link them (directors, writers, actors with many films), starting from a few
well-known seed films, so shared people give real 2- and 3-hop paths.

    python scripts/build_sample.py ../shared/datasets/metaqa/kb.txt \
        middleware/data/metaqa-sample.txt.gz --movies 4000
"""

from __future__ import annotations

import argparse
import gzip
import random
from collections import Counter, defaultdict
from pathlib import Path

PEOPLE_RELATIONS = {"directed_by", "written_by", "starred_actors"}
SEEDS = [
    "Titanic",
    "Avatar",
    "The Terminator",
    "Aliens",
    "True Lies",
    "The Departed",
    "Inception",
    "Catch Me If You Can",
    "The Aviator",
    "Revolutionary Road",
    "Forrest Gump",
    "Cast Away",
    "Saving Private Ryan",
    "Jurassic Park",
    "The Godfather",
    "Pulp Fiction",
    "Heavenly Creatures",
    "The Lord of the Rings: The Fellowship of the Ring",
]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kb", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--movies", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    rows = [line.rstrip("\n").split("|") for line in args.kb.open(encoding="utf-8") if line.strip()]
    by_movie: dict[str, list[list[str]]] = defaultdict(list)
    people_of: dict[str, set[str]] = defaultdict(set)
    movies_of: dict[str, set[str]] = defaultdict(set)
    for s, r, o in rows:
        by_movie[s].append([s, r, o])
        if r in PEOPLE_RELATIONS:
            people_of[s].add(o)
            movies_of[o].add(s)

    rng = random.Random(args.seed)
    chosen: list[str] = [m for m in SEEDS if m in by_movie]
    chosen_set = set(chosen)
    frontier = Counter(p for m in chosen for p in people_of[m])
    while len(chosen) < args.movies and frontier:
        # the person shared by most chosen films brings in their other films
        person, _ = max(frontier.items(), key=lambda kv: (kv[1] * len(movies_of[kv[0]]), kv[0]))
        del frontier[person]
        films = sorted(movies_of[person] - chosen_set)
        rng.shuffle(films)
        for film in films[:12]:
            if len(chosen) >= args.movies:
                break
            chosen.append(film)
            chosen_set.add(film)
            for other in people_of[film]:
                frontier[other] += 1

    kept = [row for m in sorted(chosen_set) for row in by_movie[m]]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(args.out, "wb", mtime=0) as raw:
        raw.write("".join("|".join(row) + "\n" for row in kept).encode("utf-8"))
    entities = {x for row in kept for x in (row[0], row[2])}
    print(f"{len(chosen_set)} movies, {len(kept)} triples, {len(entities)} entities -> {args.out}")


if __name__ == "__main__":
    main()
