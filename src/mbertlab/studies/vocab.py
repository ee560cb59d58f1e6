"""The vocabulary a pretraining will really have, found before it runs (for `study plan`'s parameter counts).

The shards' tokenizer when it is built; else that tokenizer trained here, into a temporary folder, on a
sample of the text it will learn from: the generator run at `SAMPLE_SENTENCES` training sentences per
language (a lab-size closed lexicon is seen whole far sooner; a larger one is not, and then the asked size is
used, unchecked), or the corpus stage on the first sentences of each real source. A released encoder's
vocabulary is its config's.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.layout import text_file
from mbertlab.studies.jobs import Job
from mbertlab.studies.kinds import job_hash

# Training sentences per language of the sample a tokenizer is trained on. On k2020's paper-scale languages
# 1,000 sentences reach within 2% of the vocabulary 5,000 reach (the unigram language within 8%), in 1/5 the time.
SAMPLE_SENTENCES = 1000


class VocabProbe:
    """Vocabulary sizes of shards jobs, each text sample and tokenizer trained once per plan.

    `shortfalls`: (tokenizer label, asked, reached) where a sample that holds the language's whole training
    text (or a generated language's, whose lexicon it covers) reaches fewer pieces than the tokenizer asks for.
    """

    def __init__(self, store: ArtifactStore):
        self.store = store
        self.tmp = Path(tempfile.mkdtemp(prefix="mbertlab-plan-"))
        self.samples: dict[Job, tuple[Path, str, bool] | None] = {}
        self.tokenizers: dict[Job, tuple[int, str]] = {}
        self.learned: dict[Job, tuple[object, Path, str]] = {}  # tokenizer job -> (tokenizer, sample folder, stage)
        self.pieces: dict[Job, dict[str, float] | None] = {}
        self.shortfalls: list[tuple[str, int, int]] = []
        self.memo: dict[Job, str] = {}

    def close(self) -> None:
        import shutil

        shutil.rmtree(self.tmp, ignore_errors=True)

    def vocab(self, shards: Job) -> tuple[int, str]:
        """The model's vocabulary size for a pretraining on `shards`, and where the number comes from."""
        tok = shards.inputs[0]
        if tok.kind == "hf_encoder":
            config = json.loads((Path(tok.config.path) / "config.json").read_text(encoding="utf-8"))
            return int(config["vocab_size"]), "the encoder's config"
        if tok not in self.tokenizers:
            self.tokenizers[tok] = self._tokenizer_vocab(tok)
        size, source = self.tokenizers[tok]
        specials = 5 + (len(tok.config.languages) if tok.config.markers else 0)
        return size + len(shards.config.shift_ids) * (size - specials), source

    def _tokenizer_vocab(self, tok: Job) -> tuple[int, str]:
        built = self.store.find("tokenizer", job_hash(tok, self.store, self.memo))
        if built is not None:
            info = json.loads((built.path / "mbertlab_tokenizer.json").read_text(encoding="utf-8"))
            return int(info["vocab_size"]), "the built tokenizer"
        sample = self._sample(tok.inputs[0])
        asked = tok.config.vocab_size + 5 + (len(tok.config.languages) if tok.config.markers else 0)
        if sample is None:
            return asked, "the tokenizer's vocab_size (text not sampled)"
        folder, stage, whole = sample
        from mbertlab.tokenizers.train import learn_tokenizer

        files = {lang: folder / text_file(stage, lang, "train") for lang in tok.config.languages}
        learned = learn_tokenizer(tok.config, files, self.tmp / f"tok-{len(self.tokenizers)}")
        self.learned[tok] = (learned, folder, stage)
        reached = learned.get_vocab_size()
        if reached >= asked or whole:
            if reached < asked and tok.config.kind != "char":  # a char vocab_size caps the alphabet, never a target
                self.shortfalls.append((tok.label, asked, reached))
            return reached, f"a tokenizer trained on a sample ({SAMPLE_SENTENCES:,} sentences per language)"
        return asked, (f"the tokenizer's vocab_size, not checked (a sample of {SAMPLE_SENTENCES:,} sentences, too "
                       f"few to hold the text's word forms, reached {reached:,})")

    def text_tokens(self, shards: Job) -> dict[str, float] | None:
        """Each language's training text in the shards' tokens: counted in the built shards, else the sample's
        pieces per sentence under the sample's tokenizer times the language's training sentences; None where
        neither is known (real text not built, a released encoder's tokenizer)."""
        if shards not in self.pieces:
            self.pieces[shards] = self._text_tokens(shards)
        return self.pieces[shards]

    def _text_tokens(self, shards: Job) -> dict[str, float] | None:
        built = self.store.find("shards", job_hash(shards, self.store, self.memo))
        if built is not None:
            import numpy as np

            return {lang: float(np.load(built.path / f"{lang}.train.ids.npy", mmap_mode="r").shape[0])
                    for lang in shards.config.languages}
        tok = shards.inputs[0]
        if tok not in self.learned or len(shards.inputs) < 2:
            return None
        learned, folder, stage = self.learned[tok]
        sizes = _train_sentences(shards.inputs[1])
        out = {}
        for lang in shards.config.languages:
            lines = (folder / text_file(stage, lang, "train")).read_text(encoding="utf-8").splitlines()
            if tok.config.lowercase:
                lines = [line.lower() for line in lines]
            if not lines or sizes is None or lang not in sizes:
                return None
            pieces = sum(len(e.ids) for e in learned.encode_batch(lines))
            out[lang] = pieces / len(lines) * sizes[lang]
        return out

    def _sample(self, text: Job) -> tuple[Path, str, bool] | None:
        """(folder, its layout's stage, whether it holds all the vocabulary the text can reach), or None."""
        if text not in self.samples:
            self.samples[text] = self._write_sample(text)
        return self.samples[text]

    def _write_sample(self, text: Job) -> tuple[Path, str, bool] | None:
        out = self.tmp / f"text-{len(self.samples)}"
        if text.kind == "generate":
            return self._generated(text, out)
        if text.kind == "corpus":
            return self._corpus(text, out)
        if text.kind == "budget" and text.inputs:
            base = self._sample(text.inputs[0])
            return None if base is None else _cut(base, text.config, out)
        return None

    def _generated(self, text: Job, out: Path) -> tuple[Path, str, bool]:
        from mbertlab.data.generate import generate_into
        from mbertlab.data.generate.config import SplitSizes, TaskSizes

        config = text.config
        tiny = SplitSizes(train=1, dev=1, test=1)
        sample = config.model_copy(update={
            "sentences": SplitSizes(train=min(config.sentences.train, SAMPLE_SENTENCES), dev=1, test=1),
            "tasks": TaskSizes(nli=tiny, mldoc=tiny)})
        generate_into(sample, out)
        return out, "generate", _sees_the_lexicon(config, out)

    def _corpus(self, text: Job, out: Path) -> tuple[Path, str, bool]:
        from mbertlab.corpus.build import build_corpus_into

        config = text.config
        languages = [lang.model_copy(update={"max_sentences": min(lang.max_sentences or SAMPLE_SENTENCES,
                                                                   SAMPLE_SENTENCES), "max_characters": None})
                     for lang in config.languages]
        build_corpus_into(config.model_copy(update={"languages": languages, "sampling": "none"}), out)
        stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
        whole = all(sum(s.get("sentences", 0) for k, s in stats[lang.name].items() if isinstance(s, dict))
                    < SAMPLE_SENTENCES for lang in languages)
        return out, "corpus", whole


LEXICON_SEEN = 0.9  # a sample with this share of a lexicon's concepts as word types stands for the whole text


def _sees_the_lexicon(config, out: Path) -> bool:
    """Whether the sample holds (nearly) every word form of the generated text: the whole text, or a closed
    lexicon small enough that every language's sample has at least `LEXICON_SEEN` of its concepts as word types.
    k2020's paper-scale lexicon (200,031 concepts) is not: 1,000 sentences see a few thousand of its words."""
    if config.sentences.train <= SAMPLE_SENTENCES:
        return True
    concepts = sum(config.lexicon.model_dump().values())
    for lang in config.languages:
        with (out / text_file("generate", lang.name, "train")).open(encoding="utf-8") as fh:
            if len({word for line in fh for word in line.split()}) < LEXICON_SEEN * concepts:
                return False
    return True


def _cut(base: tuple[Path, str, bool], budget, out: Path) -> tuple[Path, str, bool]:
    """A budget stage on a sample: each language's first n training sentences (n: its budget)."""
    from mbertlab.corpus.sampling import balanced_budget

    folder, stage, whole = base
    budgets = balanced_budget(budget.languages) if budget.balanced else dict(budget.languages)
    for lang, n in budgets.items():
        lines = (folder / text_file(stage, lang, "train")).read_text(encoding="utf-8").splitlines()[:n]
        target = out / text_file("budget", lang, "train")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return out, "budget", whole


def _train_sentences(text: Job) -> dict[str, int] | None:
    """Training sentences per language of a generated text or a budget cut of one (None for real text)."""
    if text.kind == "generate":
        return {lang.name: text.config.sentences.train for lang in text.config.languages}
    if text.kind == "budget" and text.inputs:
        from mbertlab.corpus.sampling import balanced_budget

        base = _train_sentences(text.inputs[0]) or {}
        budgets = balanced_budget(text.config.languages) if text.config.balanced else dict(text.config.languages)
        return {lang: min(n, base.get(lang, n)) for lang, n in budgets.items()}
    return None
