"""Generate every language of a config into an artifact directory, in the formats of real data."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Callable

import numpy as np

from mbertlab.config import deep_merge, parse_config
from mbertlab.data.generate.config import PRESETS, GenerateConfig, LanguageConfig
from mbertlab.data.generate.grammar import Grammar
from mbertlab.corpus.manipulations import WORD_MAPS, fake_script
from mbertlab.data.generate.realise import Spelling, Token, derived_spelling, fresh_spelling, realise
from mbertlab.data.generate.tasks import write_tasks
from mbertlab.data.generate.write import write_conllu_tokens, write_lexicon, write_ner_tokens, write_text_tokens
from mbertlab.errors import ConfigError

SPLITS = ("train", "dev", "test")


def preset_config(name: str, seed: int = 0, overrides: dict | None = None) -> GenerateConfig:
    if name not in PRESETS:
        raise ConfigError(f"unknown generator preset {name!r} (known: {', '.join(sorted(PRESETS))})")
    data = deep_merge({**PRESETS[name](), "seed": seed}, overrides or {})
    return parse_config(GenerateConfig, data, f"preset {name}")


def ordered_languages(config: GenerateConfig) -> list[LanguageConfig]:
    """Languages with every base before the languages derived from it."""
    by_name = {lang.name: lang for lang in config.languages}
    out: list[LanguageConfig] = []
    for lang in config.languages:
        chain = []
        while lang is not None and lang not in out and lang not in chain:
            chain.append(lang)
            if lang.base is not None and lang.base not in by_name:
                raise ConfigError(f"generated language {lang.name!r}: unknown base {lang.base!r}")
            lang = by_name.get(lang.base) if lang.base else None
        out += reversed([l for l in chain if l not in out])
    return out


def _respelling(lang) -> Callable[[str], str]:
    """A derived language's word map: the registry's entry (corpus/manipulations.py), fake_script with the
    language's own shift."""
    if lang.variant == "fake_script":
        return lambda text: fake_script(text, lang.script_shift)
    return WORD_MAPS.get(lang.variant)


def language_spellings(config: GenerateConfig, grammar: Grammar) -> dict[str, Spelling]:
    """Every language's word forms (concept -> form), each from its own seeded stream: what `generate` wrote,
    recomputed from its config alone (analysis/verb_geometry.py reads a language's verbs this way)."""
    spellings: dict[str, Spelling] = {}
    for lang in ordered_languages(config):
        base = spellings.get(lang.base) if lang.base else None
        rng = np.random.default_rng([config.seed, lang.sample_seed, 7])
        if lang.variant == "unigram":
            spellings[lang.name] = base
        elif lang.variant == "fresh":
            spellings[lang.name] = fresh_spelling(grammar, lang, rng, base)
        else:
            spellings[lang.name] = derived_spelling(base, _respelling(lang))
    return spellings


def generate_into(config: GenerateConfig, out: Path) -> dict:
    grammar = Grammar(config)
    spellings = language_spellings(config, grammar)
    corpora: dict[str, dict[str, list[list[Token]]]] = {}
    summary = {}
    for lang in ordered_languages(config):
        corpora[lang.name] = _sample_corpus(grammar, config, lang, spellings, corpora)
        summary[lang.name] = _write_language(out / lang.name, corpora[lang.name])
        summary[lang.name]["config"] = lang.model_dump(mode="json")
    source = config.languages[0].name
    for lang in config.languages[1:]:
        write_lexicon(out / "lexicon" / f"{source}-{lang.name}.txt", spellings[source], spellings[lang.name])
    write_tasks(out, config, grammar, spellings)
    (out / "languages.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return summary


def _sample_corpus(grammar, config, lang, spellings, corpora) -> dict[str, list[list[Token]]]:
    split_sizes = config.sentences.model_dump()
    out = {}
    for i, split in enumerate(SPLITS):
        draws = grammar.draws([config.seed, lang.sample_seed, i], language=lang.sample_seed)
        sentences = [realise(tree, lang, spellings[lang.name]) for tree in grammar.text(draws, split_sizes[split])]
        out[split] = sentences
    if lang.variant == "unigram":
        out = _unigram(out, corpora[lang.base]["train"], np.random.default_rng([config.seed, lang.sample_seed, 9]))
    return out


def _unigram(sampled, base_train: list[list[Token]], rng) -> dict[str, list[list[Token]]]:
    """Same sentence lengths, words drawn i.i.d. from the base's training unigram distribution.

    Gold tags stay those of the drawn word (each form belongs to one class); the tree is flat (every
    word attaches to the first, which is the root) since the text has no structure.
    """
    counts = Counter(t.form for s in base_train for t in s)
    info = {t.form: t for s in base_train for t in s}
    forms = sorted(counts)
    probs = np.array([counts[f] for f in forms], dtype=np.float64)
    probs /= probs.sum()
    out = {}
    for split, sentences in sampled.items():
        draws = rng.choice(len(forms), size=sum(len(s) for s in sentences), p=probs).tolist()
        new, k = [], 0
        for sentence in sentences:
            words = [info[forms[j]] for j in draws[k:k + len(sentence)]]
            k += len(sentence)
            new.append([Token(w.form, w.upos, 0 if i == 0 else 1, "root" if i == 0 else "dep",
                              "B-" + w.ner[2:] if w.ner != "O" else "O", w.concept) for i, w in enumerate(words)])
        out[split] = new
    return out


def _write_language(folder: Path, corpus: dict[str, list[list[Token]]]) -> dict:
    counts = {}
    for split, sentences in corpus.items():
        write_text_tokens(folder / "text" / f"{split}.txt", sentences)
        write_conllu_tokens(folder / "ud" / f"{split}.conllu", sentences, prefix=f"{folder.name}-{split}")
        write_ner_tokens(folder / "ner" / f"{split}.txt", sentences)
        counts[split] = {"sentences": len(sentences), "tokens": sum(len(s) for s in sentences),
                         "types": len({t.form for s in sentences for t in s})}
    return counts
