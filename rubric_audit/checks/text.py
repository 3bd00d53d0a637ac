"""Word-level helpers for the static checks: content tokens with a crude stem, and world text."""

from __future__ import annotations

import re
from functools import lru_cache

from rubric_audit.core.model import Task, WorldContents

STOPWORDS = frozenset("""
a an the and or of to in on at by for with from as is are was were be been being that this these
those it its their there which who whom whose what when where how than then into onto over under
per via not no does do did doesn't don't has have had can could should would will shall may might
must also only any all each both either neither such so very more most less least up down out
states state stated names name identifies identify mentions mention explains explain describes
describe lists list notes note includes include provides provide gives give says say recommends
recommend calculates calculate reports report answer answers response criterion task agent
accept accepts within usd eur gbp nok sek dkk chf jpy cad aud million billion thousand bn mm
""".split())
NEGATIVE_START = re.compile(r"^\s*(?:does\s+not|do\s+not|doesn't|don't|avoids?|never|refrains?|"
                            r"makes?\s+no|no\s)\b", re.I)


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A deliberately crude stem: enough that 'caps', 'capped' and 'cap' meet."""
    for suffix in ("ations", "ation", "ingly", "ings", "ing", "edly", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2]:
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", text.lower())


@lru_cache(maxsize=1024)
def content_tokens(text: str) -> frozenset[str]:
    """Stemmed words that carry meaning (stopwords and rubric verbs removed).

    Kept per text: the tasks of one world ask for the tokens of the same mail and files.
    """
    return frozenset(stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1)


@lru_cache(maxsize=256)
def _vocabulary(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words(text))


def world_vocabulary(task: Task, world: WorldContents) -> frozenset[str]:
    """Every stemmed word the agent could read: prompt, files, mail, calendar and chat."""
    parts = [task.prompt]
    parts += [f.path.replace("_", " ").replace("/", " ") for f in world.files]
    parts += [f.text or "" for f in world.files]
    parts += [f"{m.sender} {' '.join(m.to)} {m.subject} {m.body}" for m in world.mail]
    parts += [f"{e.summary} {e.description} {e.location} {' '.join(e.attendees)}"
              for e in world.events]
    parts += [f"{s.name} " + " ".join(f"{m.author} {m.text}" for m in s.messages)
              for s in world.chat]
    return _vocabulary(" ".join(parts[1:])) | _vocabulary(task.prompt)


def task_texts(task: Task) -> dict[str, str | None]:
    """The task's own texts a check reads, by the name a message gives each."""
    texts: dict[str, str | None] = {"prompt": task.prompt,
                                    "gold": task.gold.text if task.gold else None}
    for c in task.criteria:
        texts[f"criterion {c.id}"] = c.text
        texts[f"explanation of criterion {c.id}"] = c.explanation
    return texts


def is_negative(criterion: str) -> bool:
    """A criterion phrased as something the answer must not do."""
    return bool(NEGATIVE_START.match(criterion))
