"""record() against torch's own hooks on real architectures, built at tiny sizes from configs.

transformers' GPT-2, BERT, T5 and Llama and two vision models (ViT and ResNet), random
weights, no download: configs only. Their modules take keyword arguments, return tuples
partly used and ``ModelOutput`` dicts, share tensors between q, k and v, add residuals, and tie
the embedding to the head. Every event record() gives must be torch's, in torch's order.
"""

from __future__ import annotations

import pytest
import torch

from tests.oracle.torch_oracle import check_against_torch

tf = pytest.importorskip("transformers")  # a test dependency (the dev extra); CI forbids skips

TOKENS = dict(vocab_size=100, bos_token_id=1, eos_token_id=2, pad_token_id=0)


def ids(seed=3):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(3, 100, (2, 8), generator=generator)


def gpt2():
    config = tf.GPT2Config(
        n_layer=2, n_embd=32, n_head=2, n_positions=16, use_cache=False, **TOKENS
    )
    return tf.GPT2LMHeadModel(config)


def bert():
    config = tf.BertConfig(
        num_hidden_layers=2,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=16,
        **TOKENS,
    )
    return tf.BertForMaskedLM(config)


def t5():
    config = tf.T5Config(
        num_layers=2,
        num_decoder_layers=2,
        d_model=32,
        d_kv=8,
        num_heads=2,
        d_ff=37,
        use_cache=False,
        decoder_start_token_id=0,
        **TOKENS,
    )
    return tf.T5ForConditionalGeneration(config)


def llama():
    config = tf.LlamaConfig(
        num_hidden_layers=2,
        hidden_size=32,
        num_attention_heads=2,
        num_key_value_heads=1,
        intermediate_size=37,
        max_position_embeddings=16,
        use_cache=False,
        tie_word_embeddings=True,
        **TOKENS,
    )
    return tf.LlamaForCausalLM(config)


def vit():
    config = tf.ViTConfig(
        image_size=16,
        patch_size=4,
        num_hidden_layers=2,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=37,
        num_labels=3,
    )
    return tf.ViTForImageClassification(config)


def resnet():
    config = tf.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], num_labels=3)
    return tf.ResNetForImageClassification(config)


def language_model(model):
    model(input_ids=ids(), labels=ids(4)).loss.backward()


def seq2seq(model):
    target = ids(5)[:, :5].contiguous()
    model(input_ids=ids(), decoder_input_ids=target, labels=target).loss.backward()


def image(size):
    def run(model):
        pixels = torch.randn(2, 3, size, size, generator=torch.Generator().manual_seed(6))
        model(pixel_values=pixels, labels=torch.tensor([0, 2])).loss.backward()

    return run


def without_in_place(model):
    """The same model with its in-place ops out of place: where torch's own full hooks can run
    (an in-place op on a module's output makes them raise). transformers' ResNet adds its
    residual in place (``hidden_state += residual``); the reference adds it out of place."""
    for module in model.modules():
        if getattr(module, "inplace", False):
            module.inplace = False
        if type(module).__name__ in ("ResNetBasicLayer", "ResNetBottleNeckLayer"):

            def forward(hidden_state, layer=module):
                return layer.activation(layer.layer(hidden_state) + layer.shortcut(hidden_state))

            module.forward = forward
    return model


def changes_in_place(model) -> bool:
    return any(
        getattr(m, "inplace", False) or type(m).__name__.startswith("ResNet")
        for m in model.modules()
    )


ZOO = {
    "GPT-2": (gpt2, language_model),
    "BERT": (bert, language_model),
    "T5": (t5, seq2seq),
    "Llama (tied embeddings, grouped-query attention)": (llama, language_model),
    "ViT": (vit, image(16)),
    "ResNet": (resnet, image(32)),
}


@pytest.mark.parametrize("name", list(ZOO))
def test_record_sees_what_torchs_hooks_see(name):
    build, run = ZOO[name]

    def make():
        return build().eval(), run  # eval: no dropout, so the three runs compute alike

    in_place = changes_in_place(build())
    reference = (lambda: (without_in_place(build().eval()), run)) if in_place else None
    events = check_against_torch(make, what=name, rtol=2e-4, reference=reference)
    assert sum(e.phase == "backward" for e in events) > 20


def test_in_train_mode_with_dropout_too():
    """Dropout draws from the generator: seeded alike, the three runs stay comparable."""

    def make():
        return gpt2().train(), language_model

    check_against_torch(make, what="GPT-2 in train mode", rtol=2e-4)
