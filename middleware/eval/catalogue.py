"""The benchmark datasets' published files: where each is downloaded from, its SHA-256
when it can be known, and where its content goes under the data folder (the layout
``kgmw eval`` and ``kgmw load --recipe`` read).

A checksum is recorded only where it is known: from the publisher, or the bytes of a
file pinned at a git commit. ``None`` means none is known; ``origin`` says why.

>>> CATALOGUE["commonsenseqa"].downloads[0].targets
('commonsenseqa/dev_rand_split.jsonl',)
>>> used_by(CATALOGUE["fb15k-237"])
['kgmw load --recipe fb15k-237']
"""

from __future__ import annotations

from dataclasses import dataclass

from middleware.errors import BadRequest
from middleware.eval.datasets import DATASETS
from middleware.kg.recipes import RECIPES


@dataclass(frozen=True)
class Download:
    """One published file, and where its content goes under the data folder: the file
    itself (``put_at``) or, for a zip archive, some of its members (``members``)."""

    mirror_path: str  # its path under a mirror (``--base-url``)
    url: str | None  # None: no direct link (MetaQA's Google Drive folder)
    sha256: str | None  # None: no checksum is known; ``origin`` says why
    origin: str  # where the URL and the checksum come from
    put_at: str | None = None
    members: tuple[tuple[str, str], ...] = ()  # (member of the zip, path under the data folder)

    @property
    def targets(self) -> tuple[str, ...]:
        """The paths it lays out under the data folder."""
        return (self.put_at,) if self.put_at else tuple(path for _, path in self.members)


@dataclass(frozen=True)
class Official:
    """The publisher's own file, where the downloads are not it."""

    url: str
    sha256: str | None  # None: none published
    note: str


@dataclass(frozen=True)
class DatasetSource:
    """A dataset's home, its licence and the downloads that lay it out; ``official``
    where those downloads are not the publisher's own file."""

    name: str
    title: str
    homepage: str
    licence: str
    downloads: tuple[Download, ...]
    official: Official | None = None
    note: str = ""  # how to get it by hand, where it cannot be fetched

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(path for download in self.downloads for path in download.targets)


def _raw(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


_METAQA_DRIVE = (
    "https://drive.google.com/drive/folders/0B-36Uca2AvwhTWVFSUZqRXVtbUE"
    "?resourcekey=0-kdv6ho5KcpEXdI2aUdLn_g&usp=sharing"
)
_METAQA_ORIGIN = "MetaQA's Google Drive folder: no direct link, no published checksum"


def _metaqa() -> DatasetSource:
    files = [("kb.txt", "metaqa/kb.txt")]
    for hops in (1, 2, 3):
        for split in ("dev", "test"):
            files.append(
                (f"{hops}-hop/vanilla/qa_{split}.txt", f"metaqa/{hops}-hop/qa_{split}.txt")
            )
            qtype = f"{hops}-hop/qa_{split}_qtype.txt"
            files.append((qtype, f"metaqa/{qtype}"))
    return DatasetSource(
        "metaqa",
        "MetaQA: the WikiMovies graph and vanilla 1-, 2- and 3-hop questions",
        "https://github.com/yuyuz/MetaQA",
        "CC BY 3.0",
        tuple(
            Download(f"metaqa/{drive}", None, None, _METAQA_ORIGIN, put_at=path)
            for drive, path in files
        ),
        official=Official(_METAQA_DRIVE, None, "a shared folder of files, not one download"),
        note=f"Download the folder from {_METAQA_DRIVE} (linked from the homepage) and "
        "put kb.txt at DIR/metaqa/kb.txt, N-hop/vanilla/qa_{dev,test}.txt at "
        "DIR/metaqa/N-hop/qa_{dev,test}.txt and N-hop/qa_{dev,test}_qtype.txt at "
        "DIR/metaqa/N-hop/; or serve the folder as BASE/metaqa/ and fetch with "
        "--base-url BASE --unverified.",
    )


# (repository, commit, folder) of the pinned copies
_VILLMOW = (
    "villmow/datasets_knowledge_embedding",
    "9e392453d6804d1f51c13e5650ae58ed48b638d5",
    "FB15k-237",
)
_KG_BERT = ("yao8839836/kg-bert", "62b76ed5652bf3da5a355cbe9c1109f58290756f", "data/FB15k-237")
_FB15K_237 = {  # file: SHA-256 of its bytes at the pinned commit
    "train.txt": "61099230e4439f90885ca9767739e31e8e32f54736fa1c35952b27997bc7c08a",
    "valid.txt": "749cbe9d923bac7b9354da5614ecfed2e0220256d442c3e04a6b303db1f273d9",
    "test.txt": "e2e35e8e6113de220140b6f44dc71a5207b0fc6872d575e874aefe13259b655b",
    "entity2text.txt": "16beedcfad3d32696e8b0b98cfa0f5eeb144f5142225f227a64fd9ce37447da5",
    "relation2text.txt": "4bf7cb6ea0ac09b17ad210889f723be5e079669f6ae5d507787e1320bbaa0f72",
}


def _fb15k_237_file(name: str) -> Download:
    texts = name.endswith("2text.txt")
    repo, commit, folder = _KG_BERT if texts else _VILLMOW
    origin = (
        "KG-BERT's names and relation texts"
        if texts
        else "the split as PyTorch Geometric downloads it (the official zip's Release/*.txt)"
    )
    return Download(
        f"fb15k-237/{name}",
        _raw(repo, commit, f"{folder}/{name}"),
        _FB15K_237[name],
        f"{origin}, pinned at a commit; SHA-256 of the file at that commit",
        put_at=f"fb15k-237/{name}",
    )


CATALOGUE: dict[str, DatasetSource] = {
    source.name: source
    for source in (
        _metaqa(),
        DatasetSource(
            "fb15k-237",
            "FB15k-237 (Toutanova and Chen 2015) with KG-BERT's entity names and relation texts",
            "https://www.microsoft.com/en-us/download/details.aspx?id=52312",
            "Microsoft's release terms (see the homepage); KG-BERT's texts: Apache-2.0",
            tuple(_fb15k_237_file(name) for name in _FB15K_237),
            official=Official(
                "https://download.microsoft.com/download/8/7/0/"
                "8700516A-AB3D-4850-B4BB-805C515AECE1/FB15K-237.2.zip",
                None,
                "the split is fetched from a pinned copy instead; the names and relation "
                "texts are not in this archive",
            ),
        ),
        DatasetSource(
            "webquestions",
            "WebQuestions test (Berant et al. 2013) with Freebase and Wikidata topic entities",
            "https://github.com/IDEA-FinAI/ToG",
            "CC BY 4.0 (WebQuestions)",
            (
                Download(
                    "webquestions/WebQuestions.json",
                    _raw(
                        "IDEA-FinAI/ToG",
                        "8e40d5d967e4d74bf891e968e5b78763ba35205b",
                        "data/WebQuestions.json",
                    ),
                    "129c8b0e8a8fe09944fcf84f4623d89d5ebdcf7e3b0db562258e126a3bc2b495",
                    "Think-on-Graph's copy (topic entities added), pinned at a commit; "
                    "SHA-256 of the file at that commit",
                    put_at="webquestions/WebQuestions.json",
                ),
            ),
            official=Official(
                "https://worksheets.codalab.org/rest/bundles/"
                "0xe7bac352fce7448c9ef238fb0a297ec2/contents/blob/",
                "e3d4550e90660aaabe18458ba34b59f2624857273f375af7353273ce8b84ce6e",
                "the original test questions (SHA-256 as Hugging Face datasets records it, "
                "web_questions); without topic entities, so not the file the loader reads",
            ),
        ),
        DatasetSource(
            "qald-10",
            "QALD-10: multilingual questions over Wikidata",
            "https://github.com/KGQA/QALD-10",
            "MIT",
            (
                Download(
                    "qald-10/qald_10.json",
                    _raw(
                        "KGQA/QALD-10",
                        "b1f7abb610cc91b10716ab8a6175f4c85d5b4dd9",
                        "data/qald_10/qald_10.json",
                    ),
                    "55720cbc9effb250f4b814a9c27ce5f5d61d863d5943bc8aa93773f6f761c6cc",
                    "the official repository, pinned at a commit; SHA-256 of the file there",
                    put_at="qald-10/qald_10.json",
                ),
            ),
        ),
        DatasetSource(
            "commonsenseqa",
            "CommonsenseQA dev (random split), five choices",
            "https://www.tau-nlp.org/commonsenseqa",
            "not stated here: see the homepage",
            (
                Download(
                    "commonsenseqa/dev_rand_split.jsonl",
                    "https://s3.amazonaws.com/commensenseqa/dev_rand_split.jsonl",
                    "3210497fdaae614ac085d9eb873dd7f4d49b6f965a93adadc803e1229fd8a02a",
                    "the official file; SHA-256 as Hugging Face datasets records it "
                    "(commonsense_qa, dataset_infos.json)",
                    put_at="commonsenseqa/dev_rand_split.jsonl",
                ),
            ),
        ),
        DatasetSource(
            "openbookqa",
            "OpenBookQA main split (dev, test) and its open book of science facts",
            "https://allenai.org/data/open-book-qa",
            "Apache-2.0",
            (
                Download(
                    "openbookqa/OpenBookQA-V1-Sep2018.zip",
                    "https://s3-us-west-2.amazonaws.com/ai2-website/data/OpenBookQA-V1-Sep2018.zip",
                    "82368cf05df2e3b309c17d162e10b888b4d768fad6e171e0a041954c8553be46",
                    "the official archive; SHA-256 as Hugging Face datasets records it "
                    "(openbookqa, dataset_infos.json)",
                    members=tuple(
                        (f"OpenBookQA-V1-Sep2018/Data/Main/{name}", f"openbookqa/{name}")
                        for name in ("dev.jsonl", "test.jsonl", "openbook.txt")
                    ),
                ),
            ),
        ),
    )
}


def dataset_source(name: str) -> DatasetSource:
    found = CATALOGUE.get(name)
    if found is None:
        raise BadRequest(f"unknown dataset {name!r}", hint=f"use one of {', '.join(CATALOGUE)}")
    return found


def used_by(source: DatasetSource) -> list[str]:
    """The ``kgmw eval --dataset`` names and ``kgmw load --recipe`` names whose files
    ``source`` lays out."""
    have = set(source.targets)
    found = [
        f"kgmw eval --dataset {spec.name}"
        for spec in DATASETS.values()
        if set(spec.files.values()) <= have
    ]
    return found + [
        f"kgmw load --recipe {recipe.name}"
        for recipe in RECIPES.values()
        if set(recipe.files) <= have
    ]
