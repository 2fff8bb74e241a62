# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""One text embedder per process, the same for queries and entries; mismatches are refused, not searched.

The second embedder is real: all-MiniLM-L6-v2 with CLS pooling instead of its own mean pooling (``embedding.pooling``),
a different vector space of the same dimension, which is exactly the case nothing used to notice.
"""

from __future__ import annotations

import numpy as np
import pytest

from lightomni_ros.core.consolidation.config import ConsolidationConfig
from lightomni_ros.core.consolidation.runtime import ConsolidationConfigs, ConsolidationRuntime, RequestError
from lightomni_ros.core.embedding import EmbedderMismatch, EmbeddingConfig, embedder_id, text_embedder
from lightomni_ros.core.memory.config import MemoryConfig
from lightomni_ros.core.memory.store import KIND_SEMANTIC
from lightomni_ros.core.reflex.config import BackboneConfig, ExportConfig, LatentConfig
from lightomni_ros.core.reflex.runtime import ReflexConfigs, ReflexRuntime

CLS = EmbeddingConfig(pooling='cls')
FACTS = ['The spare key is under the flower pot.', 'Ana drinks green tea every morning.',
         'The team meeting moved to Thursday.', 'The printer on the second floor is broken.']


def _reflex(embedding: EmbeddingConfig, heads_file: str) -> ReflexRuntime:
    return ReflexRuntime(ReflexConfigs(embedding=embedding, latent=LatentConfig(heads_file=heads_file),
                                       export=ExportConfig(backend='torch'),
                                       backbone=BackboneConfig(threads=2, max_new_tokens=4)))


def test_one_embedder_per_setting_and_pooling_is_part_of_its_identity() -> None:
    mean, cls = text_embedder(set_threads=False), text_embedder(CLS, set_threads=False)
    assert text_embedder(EmbeddingConfig(), set_threads=False) is mean      # loaded once per process
    assert embedder_id(mean) == 'all-MiniLM-L6-v2/384' and embedder_id(cls) == 'all-MiniLM-L6-v2+cls/384'
    a, b = mean.embed(FACTS[:1])[0], cls.embed(FACTS[:1])[0]
    assert a.shape == b.shape and float(a @ b) < 0.99, 'another pooling must give another vector'


def test_queries_and_index_agree_with_a_second_embedder(tmp_path) -> None:
    """Both runtimes built from the same embedding section embed alike; memory refuses vectors of another space."""
    reflex = _reflex(CLS, str(tmp_path / 'no-heads.safetensors'))      # no heads file: nothing to check against
    memory = ConsolidationRuntime(ConsolidationConfigs(memory=MemoryConfig(memory_dir=str(tmp_path / 'mem')),
                                                       consolidation=ConsolidationConfig(timezone='UTC'),
                                                       embedding=CLS))
    try:
        assert reflex.embedder_id == memory.embedder_id == 'all-MiniLM-L6-v2+cls/384'
        ids = [memory.remember(f) for f in FACTS]
        assert memory.entries.count(KIND_SEMANTIC) == len(FACTS)
        # what the reflex side makes of a question lives in the index's space: the matching fact comes first
        q = reflex.engine.embedder.embed(['Where is the spare key?'])[0]
        hits = memory.query(list(q), k_semantic=2, embedder=reflex.embedder_id).semantic
        assert hits[0][0].id == ids[0], [(e.content, s) for e, s in hits]
        same = memory.query(list(reflex.engine.embedder.embed([FACTS[2]])[0]), k_semantic=1,
                            embedder=reflex.embedder_id).semantic
        assert same[0][0].id == ids[2] and same[0][1] == pytest.approx(1.0, abs=1e-4)
        # a vector from the mean-pooled model has the right dimension and the wrong space: refused, both named
        other = text_embedder(set_threads=False)
        with pytest.raises(RequestError, match=r'all-MiniLM-L6-v2/384.*all-MiniLM-L6-v2\+cls/384'):
            memory.query(list(other.embed(['Where is the spare key?'])[0]), embedder=embedder_id(other))
        assert memory.query(list(np.asarray(q)), k_semantic=1).semantic      # unlabelled vectors stay accepted
    finally:
        memory.close()


def test_heads_of_another_embedder_are_refused_naming_both() -> None:
    """The shipped heads record the embedder their projection was trained against."""
    with pytest.raises(EmbedderMismatch) as e:
        _reflex(CLS, 'reflex_heads.safetensors')
    assert 'all-MiniLM-L6-v2/384' in str(e.value) and 'all-MiniLM-L6-v2+cls/384' in str(e.value)
    assert _reflex(EmbeddingConfig(), 'reflex_heads.safetensors').engine.heads.trained
