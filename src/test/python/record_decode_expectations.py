"""Records what transformers' decode returns for the tokenizers the Java tests use.

Writes src/test/resources/comlrl/tokenizer/decode/:
  expectations.json        per tokenizer setup: the token ids of some texts, and decode(ids) with
                           skip_special_tokens False and True, as AutoTokenizer.from_pretrained gives them
  wordpiece-tokenizer.json a tiny WordPiece tokenizer (no decoder clean-up of its own), the one
                           non-BPE model among the setups
  class-models.json        the tokenizer model (BPE, WordPiece, Unigram) that each transformers
                           tokenizer class builds its backend with, for the classes that fix one

Run from the repository root after scripts/fetch-fixtures.sh, with the reference Python stack:
  /tmp/pyref/bin/python src/test/python/record_decode_expectations.py
"""
import copy
import json
import os
import shutil
import sys
import tempfile

import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import AutoTokenizer
from transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING_NAMES, tokenizer_class_from_name
from transformers.tokenization_utils_tokenizers import TokenizersBackend

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OUT = os.path.join(ROOT, "src", "test", "resources", "comlrl", "tokenizer", "decode")
FORCE = "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output"

TEXTS = [
    "if x != 0:",
    "Hello , world !",
    "don 't",
    "a . b",
    "I 'm here , aren 't you ?",
    "Yes . I do n't know , ok ?",
    "x = a ? b : c ; y = 're' + 've'",
]


def wordpiece_tokenizer():
    words = ["if", "x", "!", "=", "0", ":", "hello", ",", "world", "don", "'", "t", "a", ".", "b", "i", "m",
             "here", "aren", "you", "?", "yes", "do", "n", "know", "ok", "c", ";", "y", "re", "ve", "+"]
    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}
    for w in words:
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    tok.add_special_tokens(["[UNK]", "[CLS]", "[SEP]"])
    return tok


def setups():
    """(name, tokenizer.json source, base config, edits, removed keys)."""
    fixture = lambda n: json.load(open(os.path.join(ROOT, ".fixtures", n + "-tokenizer", "tokenizer_config.json")))
    wordpiece = {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]",
                 "clean_up_tokenization_spaces": True}
    return [
        ("qwen3", "fixture:qwen3", fixture("qwen3"), {}, []),
        ("llama3", "fixture:llama3", fixture("llama3"), {}, []),
        ("llama3_1", "fixture:llama3_1", fixture("llama3_1"), {}, []),
        ("qwen3 asking for clean-up", "fixture:qwen3", fixture("qwen3"), {"clean_up_tokenization_spaces": True}, []),
        ("llama3 forcing clean-up", "fixture:llama3", fixture("llama3"), {FORCE: True}, []),
        ("wordpiece", "resource:wordpiece-tokenizer.json", wordpiece, {}, []),
        ("wordpiece not asking", "resource:wordpiece-tokenizer.json", wordpiece,
         {"clean_up_tokenization_spaces": False}, []),
        ("wordpiece without the key", "resource:wordpiece-tokenizer.json", wordpiece, {},
         ["clean_up_tokenization_spaces"]),
    ]


def class_models():
    table = {}
    for name in sorted({v for v in TOKENIZER_MAPPING_NAMES.values() if v}):
        try:
            cls = tokenizer_class_from_name(name)
        except Exception:
            continue
        if not isinstance(cls, type) or not issubclass(cls, TokenizersBackend) or cls is TokenizersBackend:
            continue
        model = getattr(cls, "model", None)
        # a class with its own __init__ rebuilds the backend with its model; otherwise tokenizer.json's is kept
        if model is not None and "__init__" in cls.__dict__:
            table[name.removesuffix("Fast")] = model.__name__
    return dict(sorted(table.items()))


def main():
    os.makedirs(OUT, exist_ok=True)
    wordpiece_file = os.path.join(OUT, "wordpiece-tokenizer.json")
    wordpiece_tokenizer().save(wordpiece_file)
    records = []
    for name, source, base, edits, removed in setups():
        config = copy.deepcopy(base)
        config.update(edits)
        for key in removed:
            config.pop(key, None)
        with tempfile.TemporaryDirectory() as tmp:
            kind, ref = source.split(":", 1)
            src = (os.path.join(ROOT, ".fixtures", ref + "-tokenizer", "tokenizer.json") if kind == "fixture"
                   else os.path.join(OUT, ref))
            shutil.copy(src, os.path.join(tmp, "tokenizer.json"))
            with open(os.path.join(tmp, "tokenizer_config.json"), "w") as f:
                json.dump(config, f)
            tok = AutoTokenizer.from_pretrained(tmp)
            cases = []
            for text in TEXTS:
                ids = tok(text).input_ids
                cases.append({"text": text, "ids": ids, "decode": tok.decode(ids, skip_special_tokens=False),
                              "decode_skip_special": tok.decode(ids, skip_special_tokens=True)})
        # a fixture's own tokenizer_config.json is the base of its edits; others record theirs
        base_record = None if source.startswith("fixture:") else base
        records.append({"name": name, "tokenizer_json": source, "config_base": base_record,
                        "config_edits": edits, "config_removed": removed,
                        "transformers_class": type(tok).__name__, "cases": cases})
        print(name, type(tok).__name__, [c["decode_skip_special"] for c in cases[:2]], file=sys.stderr)
    with open(os.path.join(OUT, "expectations.json"), "w") as f:
        json.dump({"transformers": transformers.__version__, "setups": records}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(OUT, "class-models.json"), "w") as f:
        json.dump({"transformers": transformers.__version__, "models": class_models()}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
