"""The keymap file: a `[keys]` table from binding id to key (`"review.label_1" = "x"`), read and
checked before the app starts, with one line per problem: a file named that is not there, an id
no binding has, a key Textual does not know, and a key that would take another binding's place
where both act (the app's keys everywhere, a pane's keys while it has the focus)."""

from __future__ import annotations

import difflib
import tomllib
from collections import defaultdict
from pathlib import Path

from textual.binding import Binding
from textual.keys import Keys, _normalize_key_list, key_to_character

from rubric_audit.core.errors import InputError, InputProblems, read_own_text

MODIFIERS = {"ctrl", "shift", "alt", "meta", "super", "hyper"}
KEY_NAMES = {k.value for k in Keys}


def default_keymap() -> Path:
    """keymap.toml in the platform's user config folder (platformdirs: ~/.config/rubric-audit
    on Linux, ~/Library/Application Support/rubric-audit on macOS, ...)."""
    import platformdirs

    return platformdirs.user_config_path("rubric-audit", appauthor=False) / "keymap.toml"


def read_keymap(path: Path | None) -> tuple[Path, dict[str, object]]:
    """The file and its `[keys]` table as written. The default file may be missing (no
    changes); a file named on the command line must be there."""
    if path is not None and not path.is_file():
        raise InputError(path, None, "no such keymap file (--keymap names a TOML file with a "
                                     "[keys] table)")
    path = path or default_keymap()
    if not path.is_file():
        return path, {}
    try:
        keys = tomllib.loads(read_own_text(path)).get("keys", {})
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, None, f"malformed TOML: {exc}") from None
    if not isinstance(keys, dict):
        raise InputError(path, "keys", f"expected a table of binding id = key, found {keys!r}")
    return path, keys


def is_key(key: str) -> bool:
    """A key Textual can bind: a printable character or a key's name ("f5", "pagedown",
    "question_mark"), after any modifiers ("ctrl+k")."""
    *modifiers, base = key.split("+")
    if not base or any(m not in MODIFIERS for m in modifiers):
        return False
    return (len(base) == 1 and base.isprintable()) or base in KEY_NAMES \
        or key_to_character(base) is not None


def keys_of(binding: Binding, keymap: dict[str, str]) -> list[str]:
    """The keys a binding answers to once `keymap` (normalised) is applied."""
    chosen = keymap.get(binding.id or "") or binding.key
    return _normalize_key_list(chosen).split(",")


def check_keymap(path: Path, keys: dict[str, object], scopes: dict[str, list[Binding]]
                 ) -> dict[str, str]:
    """The keymap (binding id -> keys, normalised), or InputProblems with a line per problem.

    `scopes` are the sets of bindings that act together (the app's with the queue's, with a
    text pane's, ...): two ids on one key in a scope clash where the keymap put one of them
    there."""
    ids = {b.id for scope in scopes.values() for b in scope if b.id}
    problems, keymap = [], {}
    for binding_id, value in keys.items():
        field = f"keys.{binding_id}"
        if binding_id not in ids:
            close = difflib.get_close_matches(binding_id, sorted(ids), n=1)
            problems.append(InputError(path, field, "no binding has this id"
                                       + (f" (did you mean {close[0]}?)" if close else
                                          "; ? in the app lists every id")))
        elif not isinstance(value, str) or not value.strip():
            problems.append(InputError(path, field, f"expected a key such as \"x\", \"f5\" or "
                                                    f"\"ctrl+k\", found {value!r}"))
        elif unknown := [k for k in value.split(",") if not is_key(k.strip())]:
            problems.append(InputError(path, field, f"not a key: {', '.join(map(repr, unknown))}"
                                                    " (a character, or a name such as f5, "
                                                    "pagedown or ctrl+k)"))
        else:
            keymap[binding_id] = _normalize_key_list(value)
    clashes: set[tuple[str, str, str]] = set()
    for scope in scopes.values():
        owners: dict[str, set[str]] = defaultdict(set)
        for binding in scope:
            for key in keys_of(binding, keymap):
                owners[key].add(binding.id or binding.action)
        for key, named in owners.items():
            for moved in sorted(named & set(keymap)):
                for other in sorted(named - {moved}):
                    clashes.add((moved, key, other))
    problems += [InputError(path, f"keys.{moved}", f"{key} is already {other}'s key")
                 for moved, key, other in sorted(clashes)]
    if problems:
        raise InputProblems(problems)
    return keymap
