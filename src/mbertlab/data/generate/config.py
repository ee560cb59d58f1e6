"""Config of generated languages: one shared grammar, languages that realise it differently."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationInfo, field_validator

from mbertlab.config import Config, LanguageName, Seed
from mbertlab.corpus.manipulations import WORD_MAPS

OWN_VARIANTS = ("fresh", "fake_script", "unigram")


def _known_variant(name: str) -> str:
    """The generator's own variants, or any word-by-word manipulation of the registry (a transliteration)."""
    if name not in OWN_VARIANTS and name not in WORD_MAPS:
        raise ValueError(f"unknown variant {name!r}; expected {', '.join(OWN_VARIANTS)} or a word-by-word "
                         f"manipulation ({', '.join(WORD_MAPS)})")
    return name


Variant = Annotated[str, AfterValidator(_known_variant)]
Count = Annotated[int, Field(ge=1)]  # words of a class, sentences of a split: none would leave nothing to sample


def _syllable_alphabet(alphabet: str) -> str:
    """Consonants, one space, vowels, each side at least one letter: syllables are every consonant + vowel."""
    consonants, space, vowels = alphabet.partition(" ")
    if not space or not consonants or not vowels or any(c.isspace() for c in consonants + vowels):
        raise ValueError(f"alphabet {alphabet!r}: expected consonants, one space, vowels (e.g. 'ptkbdgmnslrfvz "
                         "aeiou'), at least one letter on each side")
    return alphabet


class LexiconSizes(Config):
    """Number of concepts per word class (the lexicon size of every language)."""

    NOUN: Count = 80
    VERB: Count = 40
    ADJ: Count = 30
    ADV: Count = 10
    ADP: Count = 8
    DET: Count = 5
    PRON: Count = 6
    NUM: Count = 10
    CCONJ: Count = 2
    PER: Count = 20
    LOC: Count = 10
    ORG: Count = 10


class LanguageConfig(Config):
    name: LanguageName = Field(description="Language code used in file names and tables.")
    base: LanguageName | None = Field(None, description="Language this one derives from (its lexicon and corpus).")
    variant: Variant = Field("fresh", description="fresh: own word forms; fake_script: the base's forms "
                             "rewritten in a disjoint script (shifted by `script_shift`); unigram: the base's "
                             "sentence lengths with words drawn i.i.d. from its unigram distribution; or the name "
                             "of a word-by-word manipulation (corpus/manipulations.py WORD_MAPS) applied to each "
                             "of the base's word forms and suffixes.")
    word_order: Literal["SVO", "SOV", "VSO"] = "SVO"
    adjective: Literal["before", "after"] = "before"
    adposition: Literal["pre", "post"] = "pre"
    morphology: bool = Field(False, description="Plural suffix on nouns, subject agreement on verbs.")
    alphabet: Annotated[str, AfterValidator(_syllable_alphabet)] = Field(
        "ptkbdgmnslrfvz aeiou", description="Consonants, a space, vowels: syllables are CV.")
    shared_vocabulary: float = Field(0.0, ge=0.0, le=1.0, description="Share of the base's word forms kept "
                                     "identical (fresh languages with a base only).")
    script_shift: int = Field(0xF0000, description="Code-point shift of the fake script (plane 15, private use: "
                              "no real text uses it).")
    sample_seed: Seed = Field(0, description="Seed of this language's own sentence sample (independent texts).")


class SplitSizes(Config):
    train: Count = 20000
    dev: Count = 1000
    test: Count = 1000


class TaskSizes(Config):
    """Sizes of the generated classification tasks (examples per split). Test sets cost nothing to generate, so
    they are large enough that 2 points are outside their noise: 5,000 NLI pairs have a standard error of 0.7
    points (300 had 2.7); a study's `max_eval_sentences` may cap what it scores."""

    nli: SplitSizes = Field(default_factory=lambda: SplitSizes(train=3000, dev=1000, test=5000))
    mldoc: SplitSizes = Field(default_factory=lambda: SplitSizes(train=1000, dev=500, test=2000))
    topic_bias: float = Field(0.8, ge=0.0, le=1.0, description="Share of a document's nouns drawn from its "
                              "topic's domain.")


class WorldConfig(Config):
    """The meaning shared by every language of a config (data/generate/world.py; docs/generated-languages.md).

    Each concept of an open class is a point in a small latent space; a dependent is drawn with probability
    proportional to its Zipf prior times exp(similarity to its head / `selection` + similarity to the document's
    topic / `topic`). Every source of meaning has a setting that turns it off; `meaning: false` is the
    context-free generator of before 2026-11-27, byte for byte.
    """

    meaning: bool = Field(True, description="false: every word drawn by its Zipf rank inside its class, "
                          "independent of its context (the generator before 2026-11-27, kept for controls).")
    dimensions: int = Field(8, ge=2, le=256, description="Dimensions of the latent space of concepts.")
    selection: float | None = Field(0.2, gt=0.0, description="Temperature of selectional preference (a verb's "
                                    "subjects, objects, obliques and adverbs; a noun's adjectives and nominal "
                                    "modifiers); lower is sharper; null: dependents ignore their heads.")
    topics: int = Field(4, ge=4, le=64, description="Document topics; MLDoc's four labels are the first four.")
    topic: float | None = Field(0.5, gt=0.0, description="Temperature of a document's topic on its verbs, nouns "
                                "and names; null: no topics (MLDoc then falls back to noun domains).")
    document_sentences: int = Field(8, ge=1, le=1000, description="Consecutive sentences of the text that share "
                                    "one topic (a document).")
    frequency_noise: float = Field(0.5, ge=0.0, le=5.0, description="Standard deviation of each language's own "
                                   "log-frequency offset per concept, so translations' frequencies correlate "
                                   "but differ; 0: every language has the same word frequencies.")
    verb_groups: int | None = Field(None, ge=2, description="Groups of 4 verbs with sense relations that NLI "
                                    "edits (synonyms and antonyms inside a group); null: every verb.")


class GenerateConfig(Config):
    seed: Seed = 0
    lexicon: LexiconSizes = Field(default_factory=LexiconSizes)
    zipf: float = Field(1.0, description="Zipf exponent of word choice within a class.")
    sentences: SplitSizes = Field(default_factory=SplitSizes)
    languages: list[LanguageConfig] = Field(min_length=1)
    p_adjective: float = 0.4
    p_pp: float = 0.35
    p_adverb: float = 0.3
    p_coordination: float = 0.15
    p_pronoun: float = 0.15
    p_name: float = 0.2
    entities: Literal["lexical", "by_role"] = Field(
        "lexical", description="A name's NER type. lexical: its word class (PER/LOC/ORG), so every name word has "
        "one type, and a probe on any features that tell words apart (random ones too) finds it; by_role: its "
        "place in the clause (subject PER, object ORG, after an adposition LOC), so only the context tells it. "
        "The text is the same either way; only the NER labels differ.")
    tasks: TaskSizes = Field(default_factory=TaskSizes, description="Generated XNLI- and MLDoc-style sets.")
    world: WorldConfig = Field(default_factory=WorldConfig, description="The meaning every language realises: "
                               "selectional preferences, document topics, per-language frequencies.")
    nli: Literal["verb-relations"] = Field("verb-relations", description="How the XNLI pairs are made (in the "
                                           "hash: the files changed under the same settings). 'verb-relations': "
                                           "one verb swapped for a synonym, antonym or unrelated verb, so lengths "
                                           "and word overlap are alike in the three classes (data/generate/nli.py).")


    @field_validator("languages")
    @classmethod
    def _alphabets_spell_the_lexicon(cls, languages: list[LanguageConfig], info: ValidationInfo
                                     ) -> list[LanguageConfig]:
        """A fresh language spells each closed-class concept with one CV syllable, all distinct: an alphabet with
        too few syllables would draw new forms forever."""
        lexicon = info.data.get("lexicon")
        if lexicon is None:
            return languages
        closed = sum(getattr(lexicon, c) for c in ("DET", "ADP", "PRON", "CCONJ"))
        for lang in languages:
            consonants, vowels = lang.alphabet.split(" ")
            syllables = len(set(consonants)) * len(set(vowels))
            if lang.variant == "fresh" and closed > syllables:
                raise ValueError(f"language {lang.name!r}: alphabet {lang.alphabet!r} spells {syllables} "
                                 f"one-syllable words, fewer than the lexicon's {closed} closed-class concepts; "
                                 "expected more consonants or vowels")
        return languages

def quick_preset() -> dict:
    """The quick study's languages: a source and four targets that each differ in one controlled way."""
    return {
        "languages": [
            {"name": "src", "sample_seed": 1},
            {"name": "same", "base": "src", "shared_vocabulary": 0.5, "sample_seed": 2},
            {"name": "fake", "base": "src", "variant": "fake_script", "sample_seed": 3},
            {"name": "fake_sov", "base": "src", "variant": "fake_script", "word_order": "SOV",
             "adjective": "after", "adposition": "post", "sample_seed": 4},
            {"name": "unigram", "base": "fake", "variant": "unigram", "sample_seed": 5},
        ]
    }


PRESETS = {"quick": quick_preset}
