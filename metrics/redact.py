"""Secrets never leave: one function, :func:`redact`, takes credentials out of any text meta-eval shows or writes.

What it replaces with ``***``:

- the password of a URL's user information (``http://user:pw@host`` becomes ``http://user:***@host``), or the
  user alone when it has no password (``http://token@host`` becomes ``http://***@host``: it is sent as credentials);
- the credentials of an ``Authorization`` value (``Bearer <token>``, ``Basic <token>``, ``Token <token>``) and of an
  ``Authorization:`` / ``X-Api-Key:`` / ``Api-Key:`` header line;
- the value of ``api_key=``, ``apikey=``, ``key=``, ``access_token=``, ``token=``, ``password=``, ``secret=``, also
  after a prefix (``auth_token=``, ``client_secret=``, ``x-api-key=``), in a query string or a ``-o`` option, and of
  the same names as JSON fields (``"api_key": "..."``);
- every secret registered with :func:`add_secret` wherever it appears (the LLM judge registers the API key it read
  from its environment variable and the password of its ``base_url``), and anything that looks like a hosted API
  key (``sk-...``).

Credentials never cross a network in clear either: the LLM judge and the data downloads send a key or a URL's
password over plain http only to this machine (:func:`loopback`).

It is applied at the source (the LLM judge's messages, server bodies shown only redacted and cut by
:func:`server_text`, the recorded command lines of boards and probes) and again as the last line of defence (the
command line's error lines, a metric's failure in the run's JSON). It imports nothing heavy; it lives under
``meta_eval.metrics`` because a metric module (the LLM judge) imports only that package.
"""
from __future__ import annotations

import re
import threading

__all__ = ["MASK", "add_secret", "command_line", "loopback", "redact", "server_text"]

MASK = "***"
_SECRETS: set[str] = set()
_LOCK = threading.Lock()

#: a URL's user information: ``scheme://user:password@`` (the password masked) or ``scheme://token@`` (a user alone is
#: sent as Basic credentials, :func:`meta_eval.judgments.files._request`: masked whole); ``scheme:/`` too, as
#: :class:`pathlib.Path` writes a URL it was given
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*:/{1,2})([^/\s:@]*)(?::([^/\s@]*))?@")
_AUTH_VALUE = re.compile(r"(?i)\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=:-]+")
_HEADER = re.compile(r"(?i)\b(authorization|x-api-key|api-key|proxy-authorization)(\"?\s*[:=]\s*\"?)"
                     r"(?!(?:Bearer|Basic|Token)\b)([^\s\"',}]+)")
_PARAM = re.compile(r"(?i)(?<![A-Za-z0-9_-])((?:[a-z0-9]+[_-])*(?:api_key|apikey|api-key|key|access_token|token|"
                    r"password|passwd|secret))"
                    r"(=|\"?\s*:\s*\")(?!VALUE(?:[\s&\"',;}]|$))([^\s&\"',;}]+)")  # KEY=VALUE: a placeholder
_KEY_LIKE = re.compile(r"\bsk-[A-Za-z0-9_-]{8,}")


def add_secret(secret: str | None) -> None:
    """Redact ``secret`` wherever it appears from now on, in this process (ignored when shorter than 4
    characters, which would mask ordinary words)."""
    if secret and len(secret) >= 4:
        with _LOCK:
            _SECRETS.add(secret)


def redact(text: object) -> str:
    """``text`` (``str()`` of anything) with every credential replaced by ``***`` (see the module notes)."""
    out = str(text)
    with _LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)
    for secret in secrets:
        out = out.replace(secret, MASK)
    out = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{MASK}@" if m.group(3) is None else
                            f"{m.group(1)}{m.group(2)}:{MASK}@", out)
    out = _AUTH_VALUE.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", out)
    out = _HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", out)
    out = _PARAM.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", out)
    return _KEY_LIKE.sub(MASK, out)


def server_text(text: object, limit: int = 200) -> str:
    """A server's body as a message shows it: redacted first, then cut to ``limit`` characters (``...`` marks a
    cut), quoted with its control characters written as escapes."""
    shown = redact(text)
    return repr(shown[:limit]) + ("..." if len(shown) > limit else "")


def command_line(head: str, args) -> str:
    """``head`` and ``args`` quoted for a shell, redacted: the command a board or a probe records."""
    import shlex

    return redact(" ".join([head, *(shlex.quote(str(a)) for a in args)]))


def loopback(host: str | None) -> bool:
    """``host`` is this machine: ``localhost`` (or a name under it), 127.0.0.0/8 or ::1.

    >>> [loopback(h) for h in ("localhost", "127.0.0.2", "[::1]", "example.org", "10.0.0.1", None)]
    [True, True, True, False, False, False]
    """
    import ipaddress

    host = (host or "").strip("[]").lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
