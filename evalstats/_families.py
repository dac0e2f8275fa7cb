"""Which model family a judge's or an agent's model string belongs to."""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["model_family"]


# Model-name patterns first: hosting providers (bedrock, vertex, openrouter, together...) serve
# several families, so the name of the model says more than the provider prefix.
_NAME_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(r"(?:^|[^a-z0-9])(?:" + pat + r")"), fam)
    for pat, fam in (
        (r"claude", "anthropic"),
        (r"chatgpt|gpt|o[1-9](?:$|[^a-z0-9])|davinci", "openai"),
        (r"gemini|gemma|palm", "google"),
        (r"qwen|qwq", "qwen"),
        (r"llama", "meta"),
        (r"mistral|mixtral|codestral|ministral|magistral|devstral|pixtral", "mistral"),
        (r"deepseek", "deepseek"),
        (r"grok", "xai"),
    )
)


_PROVIDER_FAMILY = {
    "anthropic": "anthropic",
    "openai": "openai",
    "google": "google",
    "gemini": "google",
    "qwen": "qwen",
    "alibaba": "qwen",
    "dashscope": "qwen",
    "meta": "meta",
    "mistral": "mistral",
    "mistralai": "mistral",
    "deepseek": "deepseek",
    "xai": "xai",
}


def model_family(model: str, families: Mapping[str, str] | None = None) -> str:
    """Model family of a ``provider:model`` judge string or an ``agent_model`` string.

    The model name is matched first (``claude`` -> anthropic; ``gpt``, ``o1``, ``o3``,
    ``o4`` -> openai; ``gemini`` -> google; ``qwen`` -> qwen; ``llama`` -> meta;
    ``mistral``/``codestral`` -> mistral; ``deepseek`` -> deepseek; ``grok`` -> xai), then the
    provider prefix (``anthropic:``, ``openai:``, ...), so that a hosting provider such as
    ``bedrock:anthropic.claude-3`` or ``together:meta-llama/Llama-3`` maps to the family of
    the model it serves.

    Parameters
    ----------
    model : str
        ``provider:model`` or a bare model name.
    families : mapping of str to str, optional
        Explicit ``model string -> family`` entries, consulted first.

    Returns
    -------
    str
        The family, or ``"unknown"``.

    Examples
    --------
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
