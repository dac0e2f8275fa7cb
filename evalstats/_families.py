"""Which model family a judge's or an agent's model string belongs to."""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["model_family"]


_NAME_FAMILY = {
    r"claude": "anthropic", r"chatgpt|gpt|o[1-9](?:$|[^a-z0-9])|davinci": "openai",
    r"gemini|gemma|palm": "google", r"qwen|qwq": "qwen", r"llama": "meta",
    r"mistral|mixtral|codestral|ministral|magistral|devstral|pixtral": "mistral",
    r"deepseek": "deepseek", r"grok": "xai",
}  # fmt: skip
_NAME_PATTERNS = [(re.compile(r"(?:^|[^a-z0-9])(?:" + p + ")"), f) for p, f in _NAME_FAMILY.items()]

_PROVIDER_FAMILY = {
    "anthropic": "anthropic", "openai": "openai", "google": "google", "gemini": "google",
    "qwen": "qwen", "alibaba": "qwen", "dashscope": "qwen", "meta": "meta", "mistral": "mistral",
    "mistralai": "mistral", "deepseek": "deepseek", "xai": "xai",
}  # fmt: skip


def model_family(model: str, families: Mapping[str, str] | None = None) -> str:
    """Model family of a ``provider:model`` judge or an ``agent_model`` string, or "unknown".

    ``families`` (explicit ``model -> family`` entries) first, then the model name (so a
    hosting provider maps to the family of the model it serves), then the provider prefix.

    >>> from evalstats.methodology import model_family
    >>> model_family("anthropic:claude-sonnet-4-20250514"), model_family("openai:o3-mini")
    ('anthropic', 'openai')
    >>> model_family("together:meta-llama/Llama-3-70b"), model_family("acme:zeta-7b")
    ('meta', 'unknown')
    """
    if families and model in families:
        return str(families[model])
    text = str(model).strip().lower()
    provider, _, name = text.partition(":") if ":" in text else ("", "", text)
    for target in (name, provider):
        for pattern, fam in _NAME_PATTERNS:
            if pattern.search(target):
                return fam
    return _PROVIDER_FAMILY.get(provider, "unknown")
