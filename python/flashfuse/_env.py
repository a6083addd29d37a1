"""Debug switches read from the environment at every call.

The package's debug switches (FLASHFUSE_POISON_OUTPUTS, FLASHFUSE_CHECK_*)
are read on every launch, since tests turn them on and off within one
process. os.environ.get encodes the name and decodes the value each time,
about 1 us a lookup, which a decoding step of 8 us on the GPU pays twice.
An EnvFlag encodes its name once and reads the mapping os.environ keeps
encoded, which every change made through os.environ updates (also
pytest's monkeypatch.setenv and delenv)."""

import os


class EnvFlag:
    """Whether the environment variable `name` is "1" right now."""

    __slots__ = ("name", "_key", "_one")

    def __init__(self, name):
        self.name = name
        encode_key = getattr(os.environ, "encodekey", None)
        encode_value = getattr(os.environ, "encodevalue", None)
        self._key = encode_key(name) if encode_key else None
        self._one = encode_value("1") if encode_value else None

    def __call__(self):
        environ = os.environ
        encoded = getattr(environ, "_data", None)
        if encoded is not None and self._key is not None:
            return encoded.get(self._key) == self._one
        # Another mapping in place of os.environ: its own lookup.
        return environ.get(self.name) == "1"

    def __repr__(self):
        return f"EnvFlag({self.name!r})"
