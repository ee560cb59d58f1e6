"""Train tokenizers and save them as Hugging Face tokenizer directories (AutoTokenizer loads them).

Special ids are fixed for every kind: [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4, then the per-language
[SEP-xx] markers when enabled, then the learned vocabulary.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Callable, Iterable, Literal

from pydantic import AfterValidator, Field

from mbertlab.config import Config, LanguageName, Seed, unique
from mbertlab.errors import ConfigError, DataError

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID = range(5)


class TokenizerConfig(Config):
    kind: Literal["word", "wordpiece", "char", "sentencepiece"] = Field(
        "word", description="word: top-K whitespace words; wordpiece: HF WordPiece; char: every character seen; "
        "sentencepiece: Kudo's unigram LM (the sentencepiece library), converted to a HF tokenizer.")
    vocab_size: int = Field(8000, gt=0, description="Learned vocabulary size, excluding special tokens.")
    languages: Annotated[list[LanguageName], AfterValidator(unique)] = Field(
        default_factory=list, description="Languages, in order; markers follow it.")
    markers: bool = Field(False, description="Add one [SEP-xx] token per language (K et al. §3.4.2).")
    lowercase: bool = False
    sentences_per_language: int | None = Field(None, gt=0, description="Learn from the same number of sentences of "
                                               "each language (default: that of the smallest).")
    seed: Seed = 0


def marker_token(lang: str) -> str:
    return f"[SEP-{lang}]"


def special_tokens(config: TokenizerConfig) -> list[str]:
    return SPECIALS + ([marker_token(l) for l in sorted(config.languages)] if config.markers else [])


def balanced_lines(files: dict[str, Path], per_language: int | None) -> Iterable[str]:
    """The first n lines of each language, n = the smallest language's count unless given."""
    counts = {lang: sum(1 for _ in path.open(encoding="utf-8")) for lang, path in files.items()}
    n = per_language or min(counts.values())
    for lang, path in files.items():
        with path.open(encoding="utf-8") as f:
            for i, line in enumerate(f):
                if i >= n:
                    break
                yield line.rstrip("\n")


def check_languages(config: TokenizerConfig, files: dict[str, Path]) -> None:
    """Every listed language has training text; called before the artifact's folder is made."""
    missing = [l for l in config.languages if l not in files or not files[l].is_file()]
    if missing or not files:
        have = ", ".join(sorted(l for l, path in files.items() if path.is_file())) or "none"
        raise ConfigError(f"tokenizer: key 'languages': no training text for {', '.join(missing) or 'any language'} "
                          f"(the corpus has {have})")


def require_text(lang: str, path: Path) -> None:
    """Refuse a language with nothing to learn from before any kind trains: SentencePiece would fail deep inside
    its trainer, WordPiece would learn an empty vocabulary, and an empty language makes every language's
    balanced share empty."""
    with path.open(encoding="utf-8") as f:
        if any(line.strip() for line in f):
            return
    raise DataError(path, None, f"found no text for language {lang!r} (an empty file, or blank lines only); "
                    "expected one sentence per line to learn the vocabulary from")


def train_tokenizer_into(config: TokenizerConfig, files: dict[str, Path], out: Path) -> None:
    """Learn the vocabulary from `files` (language → one-sentence-per-line text) and save to `out`."""
    _save(learn_tokenizer(config, files, out), config, out, len(special_tokens(config)))


def learn_tokenizer(config: TokenizerConfig, files: dict[str, Path], out: Path):
    """The learned `tokenizers.Tokenizer`, not yet saved (sentencepiece writes its reference model to `out`);
    `study plan` reads its vocabulary size without importing transformers."""
    check_languages(config, files)
    chosen = {l: files[l] for l in (config.languages or sorted(files))}
    for lang, path in chosen.items():
        require_text(lang, path)

    def text() -> Iterable[str]:
        lines = balanced_lines(chosen, config.sentences_per_language)
        return (line.lower() for line in lines) if config.lowercase else lines

    specials = special_tokens(config)
    if config.kind == "wordpiece":
        return _wordpiece(config, text, specials)
    if config.kind == "sentencepiece":
        return _sentencepiece(config, text(), specials, out)
    return _counted(config, text(), specials)


def _counted(config: TokenizerConfig, lines: Iterable[str], specials: list[str]):
    """Word or character vocabularies: the most frequent units (ties broken by the unit itself)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    counts: Counter[str] = Counter()
    for line in lines:
        counts.update(line.split() if config.kind == "word" else [c for c in line if not c.isspace()])
    units = sorted(counts, key=lambda u: (-counts[u], u))[: config.vocab_size]
    vocab = {tok: i for i, tok in enumerate(specials + [u for u in units if u not in specials])}
    if config.kind == "word":
        tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
        tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    else:
        tokenizer = Tokenizer(models.WordPiece(_char_vocab(vocab), unk_token="[UNK]", max_input_chars_per_word=10_000))
        tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return tokenizer


def _char_vocab(vocab: dict[str, int]) -> dict[str, int]:
    """Characters as WordPiece units: the first character of a word bare, the others as ##c."""
    out = dict(vocab)
    for unit in list(vocab):
        if unit not in SPECIALS and not unit.startswith("[SEP-"):
            out.setdefault(f"##{unit}", len(out))
    return out


def _wordpiece(config: TokenizerConfig, text: Callable[[], Iterable[str]], specials: list[str]):
    """Hugging Face's WordPiece trainer (BPE merges), made deterministic. It numbers each continuation unit
    (`##c`) as it meets it in a hash map's order and breaks ties between equally frequent pairs by those numbers,
    so one corpus gave vocabularies a few units apart from run to run (huggingface/tokenizers#1794, open; measured
    on k2020's lab corpus: 3 vocabularies in 10 runs, and a pretrained encoder's NER 0.4 points apart). Handing
    it its alphabet (sorted, as it numbers it) and then every continuation unit (sorted), the units it would add
    itself in that place, fixes the numbers: one vocabulary in 12 runs over 4 processes. Ids: specials first,
    then by the unit (WordPiece segments by the longest unit, whatever its id)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    split = pre_tokenizers.BertPreTokenizer()  # whitespace, then punctuation: each distinct token split once
    tokens = {token for line in text() for token in line.split()}
    words = {word for token in tokens for word, _ in split.pre_tokenize_str(token)}
    alphabet = sorted({c for word in words for c in word})
    continuing = sorted({f"##{c}" for word in words for c in word[1:]})
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = split
    first = specials + [u for u in alphabet + continuing if u not in specials]
    trainer = trainers.WordPieceTrainer(vocab_size=config.vocab_size + len(specials), special_tokens=first,
                                        show_progress=False)
    tokenizer.train_from_iterator(text(), trainer)
    learned = tokenizer.get_vocab()
    ordered = [*specials, *sorted(u for u in learned if u not in specials)]
    # a new tokenizer: the trainer registered the alphabet and continuation units as special tokens of its own
    trained = Tokenizer(models.WordPiece({u: i for i, u in enumerate(ordered)}, unk_token="[UNK]"))
    trained.pre_tokenizer = split
    trained.add_special_tokens(specials)
    return trained


def _sentencepiece(config: TokenizerConfig, lines: Iterable[str], specials: list[str], out: Path):
    """Train a unigram LM with sentencepiece, then carry its pieces and scores into a HF Unigram model
    (same Viterbi segmentation), with our special tokens in front."""
    import tempfile

    import sentencepiece as spm
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "train.txt"
        text.write_text("\n".join(lines) + "\n", encoding="utf-8")
        prefix = str(Path(tmp) / "spm")
        spm.SentencePieceTrainer.train(input=str(text), model_prefix=prefix, model_type="unigram",
                                       vocab_size=config.vocab_size + 1, unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1,
                                       character_coverage=1.0, seed_sentencepiece_size=100_000, num_threads=2,
                                       minloglevel=2, hard_vocab_limit=False, shuffle_input_sentence=False)
        model = spm.SentencePieceProcessor(model_file=prefix + ".model")
        out.mkdir(parents=True, exist_ok=True)
        (out / "sentencepiece.model").write_bytes(Path(prefix + ".model").read_bytes())  # the reference model
        pieces = [(model.id_to_piece(i), model.get_score(i)) for i in range(1, model.get_piece_size())]
    vocab = [(tok, 0.0) for tok in specials] + pieces
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=specials.index("[UNK]"), byte_fallback=False))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    return tokenizer


def _save(tokenizer, config: TokenizerConfig, out: Path, n_specials: int) -> None:
    from tokenizers import decoders, processors
    from transformers import PreTrainedTokenizerFast

    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", CLS_ID), ("[SEP]", SEP_ID)])
    if config.kind != "sentencepiece":
        tokenizer.decoder = decoders.WordPiece() if config.kind != "word" else decoders.WordPiece(prefix="\0")
    for i, tok in enumerate(SPECIALS):
        if tokenizer.token_to_id(tok) != i:
            raise RuntimeError(f"special token {tok} got id {tokenizer.token_to_id(tok)}, expected {i}")
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
                                   do_lower_case=config.lowercase,
                                   model_input_names=["input_ids", "token_type_ids", "attention_mask"])
    fast.save_pretrained(str(out))
    info = {"kind": config.kind, "vocab_size": tokenizer.get_vocab_size(), "languages": config.languages,
            "markers": config.markers, "specials": n_specials}
    (out / "mbertlab_tokenizer.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")


def load_tokenizer(path: str | Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path))
