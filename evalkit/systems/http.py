"""``http:NAME``: a live retrieval service as a system (:class:`HttpRetriever`), over httpx.

Where the service is
    The URL comes only from the environment variable ``EVALKIT_HTTP_<NAME>_URL`` (NAME
    upper-cased, ``-`` and ``.`` -> ``_``); it never reaches a report, a log line or an error
    message. An optional YAML config (path in ``EVALKIT_HTTP_<NAME>_CONFIG``, read by the one
    safe YAML reader, fields of :class:`HttpConfig`) sets the request and response shapes with
    JSON pointers (RFC 6901) and the call policy below. Default request: ``POST`` of
    ``{"query": TEXT, "k": K, "language": LANG, "query_id": ID}``; default response
    ``{"hits": [{"chunk_id": ID, "score": NUMBER}, ...]}``.

How a call is bounded
    - One attempt (connect, send, headers, body) ends after ``timeout_s`` seconds, however
      slowly the service trickles bytes (the time evalkit spends decoding and parsing the body
      is not counted); connecting alone after ``connect_timeout_s``. The
      whole call, retries and waits included, ends after ``deadline_s``.
    - A response body larger than ``max_response_bytes`` (default 64 MiB, after decompression)
      is refused while it streams in, never read whole first. At most one content coding
      (``gzip`` or ``deflate``) is accepted and decompressed in 64 KiB pieces, each counted
      before the next is made; two codings or more, or an unknown one, are refused (not
      retried), as curl does.
    - The body is parsed as it streams in (ijson), nested at most ``MAX_DEPTH`` levels: memory
      per call is a few 64 KiB pieces and the ``k`` hits kept, whatever the response's size.
    - Connection errors, timeouts, HTTP 408, 425, 429 and 5xx are retried up to ``retries``
      times. The wait is the service's ``Retry-After`` (seconds or an HTTP date) when it sends
      one, else ``backoff_s * 2**attempt``; a wait that would pass the deadline ends the call
      at once. Other HTTP errors and malformed JSON are not retried.
    - SIGINT and SIGTERM (:mod:`evalkit.safety.interrupts`) stop a call within
      :data:`~evalkit.safety.interrupts.POLL_S` seconds: every socket wait and every backoff is
      cut into slices that check the flag, and the socket is closed.

Where credentials go
    Redirects are not followed (``redirects: refuse``): a 3xx is an error naming its status and,
    for another origin, what differs from the configured origin (its scheme, host or port) and
    the short SHA-256 of the target's origin (``scheme://host[:port]``), never the origin, path
    or query themselves (an endpoint is as private as the configured URL: compare the hash with
    ``evalkit.safety.canonical.text_hash(origin)`` to recognise it). With
    ``redirects: same-origin`` a redirect to the same scheme, host and port is followed with the
    same method and body (at most 5); one to another origin is still an error. So the headers of
    ``headers_from_env`` (a token) only ever go to the configured origin. Proxy and ``.netrc``
    settings of the environment are ignored (``trust_env=False``): nothing but this config
    decides where a request goes and what it carries.

Whom it trusts (https)
    The certificate authorities of ``ca_bundle`` (a PEM file or a folder of them; a relative
    path is read from the config file's folder) when it is set, else those of the environment
    variables ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` (as curl, httpx and Python read them),
    else certifi's. A certificate that does not verify is an error saying "certificate
    verification failed" and why (self-signed, unknown issuer, expired, name mismatch; never
    the host), and it is not retried: set ``ca_bundle`` or ``SSL_CERT_FILE`` to the CA that
    signed the service's certificate. Any other TLS handshake failure is not retried either,
    as curl does. ``ca_bundle`` is about trust, not rankings: it is not part of the system's
    definition (two machines with their CA files in different places share one baseline).

What a response may hold
    The hits list, each hit's chunk ID (string or integer) and score (a finite number; an
    integer outside the 64-bit range is refused, naming the hit). Every hit is checked; the
    first ``k`` distinct ones are kept. A later hit repeating a kept chunk ID is an error naming
    the ID and the query, as ``evalkit trec-eval`` refuses a run with repeated lines;
    ``duplicates: keep-first`` keeps its first (best-ranked) copy instead. Repeats between two
    hits that both come after the first ``k`` distinct ones are not looked for (memory stays
    O(k)). With a ``confidence`` pointer in the config, the number there is the query's
    declared confidence (:meth:`HttpRetriever.confidence`; required in a response with hits).
    Every failure is an :class:`ExternalSystemError` naming the
    system and the query ID (never the URL or the response body). ``concurrent_searches =
    True``: ``evaluate(concurrency=N)`` sends up to N requests at once (at most
    ``max_concurrency``).
"""

from __future__ import annotations

import email.utils
import errno
import json
import math
import os
import re
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Final, Literal, NamedTuple

import httpcore
import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit.errors import ExternalSystemError, HttpResponseError, InputError, YamlFileError
from evalkit.safety.canonical import canonical_hash, text_hash
from evalkit.safety.interrupts import POLL_S, cancelled
from evalkit.safety.names import check_name
from evalkit.systems._http_body import Decoder, HitStream, coding_of, pointer_tokens
from evalkit.systems.protocol import BaseRetriever, ChunkLike, Hit, QueryLike

__all__ = [
    "HTTP_PREFIX",
    "HttpConfig",
    "HttpRetriever",
    "http_env_name",
    "load_http_config",
    "resolve_pointer",
    "set_pointer",
]

HTTP_PREFIX: Final = "http:"
_NAME_RE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_RETRY_STATUS: Final = frozenset({408, 425, 429, 500, 502, 503, 504})
_MAX_REDIRECTS: Final = 5
#: Largest HTTP config file read, in bytes (a config is a few hundred bytes).
MAX_CONFIG_BYTES: Final = 1_000_000


def http_env_name(name: str, what: str = "URL") -> str:
    """``EVALKIT_HTTP_<NAME>_<what>``: NAME upper-cased, ``-`` (and ``.``) -> ``_``."""
    return f"EVALKIT_HTTP_{name.upper().replace('-', '_').replace('.', '_')}_{what}"


Pointer = Annotated[str, Field(pattern=r"^(/([^~/]|~[01])*)*$")]
Seconds = Annotated[float, Field(gt=0, le=3600, allow_inf_nan=False)]


class HttpConfig(BaseModel):
    """Request/response shapes and call policy of an ``http:`` system (YAML keys alike).

    - ``request``: JSON pointer -> field, where field is one of ``query``, ``k``,
      ``language``, ``query_id``; the body is built by setting each pointer.
    - ``hits``: pointer to the list of hits in the response; ``chunk_id`` and ``score``:
      pointers inside one hit.
    - ``confidence``: pointer (from the top of the response, outside the hits list) to the
      query's declared confidence, a finite number that abstention thresholds compare
      instead of the top score (:mod:`evalkit.systems.protocol`); required in every response
      with hits when set. Default: none (the top score is the confidence).
    - ``headers_from_env``: header name -> environment variable holding its value (for a
      token; the value is never written anywhere, nor sent to another origin).
    - ``timeout_s`` (one attempt, whole), ``connect_timeout_s``, ``deadline_s`` (the call,
      retries included), ``retries``, ``backoff_s``, ``max_response_bytes``, ``redirects``
      (``refuse`` or ``same-origin``), ``duplicates`` (``refuse`` or ``keep-first``),
      ``max_concurrency``, ``ca_bundle``: the module docstring.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, hide_input_in_errors=True)

    method: Annotated[str, Field(pattern=r"^(POST|PUT)$")] = "POST"
    request: dict[Pointer, Annotated[str, Field(pattern=r"^(query|k|language|query_id)$")]] = Field(
        default_factory=lambda: {
            "/query": "query",
            "/k": "k",
            "/language": "language",
            "/query_id": "query_id",
        }
    )
    hits: Pointer = "/hits"
    chunk_id: Pointer = "/chunk_id"
    score: Pointer = "/score"
    confidence: Annotated[str, Field(pattern=r"^(/([^~/]|~[01])*)+$")] | None = None
    timeout_s: Annotated[float, Field(gt=0, le=600, allow_inf_nan=False)] = 30.0
    connect_timeout_s: Seconds = 10.0
    deadline_s: Seconds = 300.0
    retries: Annotated[int, Field(ge=0, le=10)] = 2
    backoff_s: Annotated[float, Field(ge=0, le=60, allow_inf_nan=False)] = 0.5
    max_response_bytes: Annotated[int, Field(ge=1, le=2**31)] = 64 * 2**20
    redirects: Literal["refuse", "same-origin"] = "refuse"
    duplicates: Literal["refuse", "keep-first"] = "refuse"
    max_concurrency: Annotated[int, Field(ge=1, le=256)] = 8
    headers_from_env: dict[
        Annotated[str, Field(pattern=r"^[A-Za-z0-9-]{1,64}$")],
        Annotated[str, Field(pattern=r"^[A-Z_][A-Z0-9_]{0,127}$")],
    ] = Field(default_factory=dict)
    ca_bundle: Annotated[str, Field(min_length=1, max_length=4096)] | None = None


def load_http_config(path: str | os.PathLike[str], system: str) -> HttpConfig:
    """Read and validate an :class:`HttpConfig` YAML file through the one safe YAML reader
    (regular file, at most :data:`MAX_CONFIG_BYTES`, no anchors or aliases, bounded depth);
    an :class:`InputError` names the line and column, or the fields."""
    from evalkit.safety.yamlio import read_yaml_file

    where = f"http system {system!r}: its config ({http_env_name(system, 'CONFIG')})"
    try:
        data = read_yaml_file(path, max_bytes=MAX_CONFIG_BYTES)
    except YamlFileError as error:
        raise InputError(f"{where} {error.reason}") from None
    try:
        config = HttpConfig.model_validate(data or {})
    except ValidationError as error:
        fields = ", ".join(
            ".".join(str(p) for p in detail["loc"]) or "(top level)" for detail in error.errors()
        )
        raise InputError(
            f"http system {system!r}: config fields are invalid or unknown: {fields}; see "
            "evalkit.systems.http.HttpConfig for the fields and their types"
        ) from None
    if config.ca_bundle is None:
        return config
    bundle = Path(path).parent / Path(config.ca_bundle).expanduser()
    _ssl_context(str(bundle), f"http system {system!r}: its config's ca_bundle")
    return config.model_copy(update={"ca_bundle": str(bundle)})


def _ssl_context(ca_bundle: str | None, where: str) -> ssl.SSLContext:
    """The TLS context trusting ``ca_bundle`` (a PEM file or a folder), else the CAs of
    ``SSL_CERT_FILE``/``SSL_CERT_DIR``, else certifi's; :class:`InputError` (no path) when
    the file or folder holds no usable certificate."""
    try:
        if ca_bundle is None:
            return httpx.create_ssl_context(trust_env=True)
        if os.path.isdir(ca_bundle):
            context = ssl.create_default_context(capath=ca_bundle)
            if not os.listdir(ca_bundle):
                raise ssl.SSLError("an empty folder")
            return context
        return ssl.create_default_context(cafile=ca_bundle)
    except (OSError, ssl.SSLError, ValueError):
        raise InputError(
            f"{where} holds no usable PEM certificate (path not shown); give a PEM file of the "
            "CA that signed the service's certificate, or a folder of them"
        ) from None


#: OpenSSL's verify codes (X509_V_ERR_*) -> why a certificate did not verify.
_VERIFY_REASONS: Final = {
    9: "not yet valid",
    10: "expired",
    18: "self-signed",
    19: "self-signed CA in the chain",
    20: "unknown issuer",
    21: "unknown issuer",
    62: "name mismatch",
    64: "name mismatch",
}


def _tls_problem(error: BaseException) -> str | None:
    """What a TLS failure in ``error``'s cause/context chain means (never the host, which
    OpenSSL's ``verify_message`` can hold), or None when the chain holds none."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            code = current.verify_code
            reason = _VERIFY_REASONS.get(code, f"OpenSSL verify code {code}")
            return (
                f"certificate verification failed ({reason}); set ca_bundle in the system's "
                "config, or SSL_CERT_FILE, to the CA that signed the service's certificate"
            )
        if isinstance(current, ssl.SSLError):
            return f"TLS handshake failed ({current.reason or type(current).__name__})"
        current = current.__cause__ or current.__context__
    return None


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value at JSON pointer ``pointer`` (RFC 6901) in ``document``; KeyError if absent."""
    value = document
    for part in pointer_tokens(pointer):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise KeyError(pointer)
    return value


def set_pointer(document: dict[str, Any], pointer: str, value: Any) -> None:
    """Set ``value`` at ``pointer`` in ``document``, creating objects on the way."""
    parts = pointer_tokens(pointer)
    if not parts:
        raise InputError("a request pointer cannot be the whole body ('')")
    target = document
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = value


# --- sockets that keep time -------------------------------------------------------------------


class _Stop(Exception):
    """A call's socket wait ended early: ``why`` is ``"deadline"`` or ``"cancelled"``."""

    def __init__(self, why: str) -> None:
        self.why = why
        super().__init__(why)


_CALL = threading.local()  # .ends: monotonic time at which the current attempt must end


def _remaining(timeout: float | None) -> tuple[float, bool]:
    """(seconds this socket wait may take, whether the attempt's end is what bounds it)."""
    ends: float = getattr(_CALL, "ends", math.inf)
    left = ends - time.monotonic()
    if timeout is None or left <= timeout:
        return left, True
    return timeout, False


class _Stream(httpcore.NetworkStream):
    """A socket stream whose waits are cut into :data:`POLL_S` slices: between slices it
    checks SIGINT/SIGTERM and the attempt's end, so neither a silent nor a trickling service
    holds a call past ``timeout_s`` or a signal."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def _wait(self, timeout: float | None, timed_out: type[Exception], step: Any) -> Any:
        """``step(slice_seconds)`` in :func:`_until`'s slices, a slice's ``timed_out`` resumed
        in the next one."""
        budget, bounded_by_call = _remaining(timeout)

        def sliced(slice_: float) -> Any:
            try:
                return step(slice_)
            except timed_out:
                return None

        return _until(time.monotonic() + budget, bounded_by_call, sliced, timed_out)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self._wait(
            timeout, httpcore.ReadTimeout, lambda slice_: self._inner.read(max_bytes, slice_)
        )
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        sock = self._inner.get_extra_info("socket")
        view = memoryview(buffer)

        def send(slice_: float) -> int:
            sock.settimeout(slice_)
            try:
                return int(sock.send(view))
            except TimeoutError:
                raise httpcore.WriteTimeout("timed out") from None
            except OSError as error:
                raise httpcore.WriteError(str(error)) from None

        while view:
            view = view[self._wait(timeout, httpcore.WriteTimeout, send) :]

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def _until(
    ends: float,
    bounded_by_call: bool,
    step: Any,
    timed_out: type[Exception] = httpcore.ConnectTimeout,
) -> Any:
    """Call ``step(slice_seconds)`` until it returns non-None, in :data:`POLL_S` slices that
    check SIGINT/SIGTERM: :class:`_Stop` (cancelled, or the attempt's end), or ``timed_out``
    at ``ends``."""
    while True:
        if cancelled():
            raise _Stop("cancelled")
        left = ends - time.monotonic()
        if left <= 0:
            raise _Stop("deadline") if bounded_by_call else timed_out("timed out")
        result = step(min(POLL_S, left))
        if result is not None:
            return result


def _resolve(host: str, port: int, ends: float, bounded_by_call: bool) -> list[Any]:
    """``socket.getaddrinfo`` for a TCP connection, in a daemon thread waited for in slices
    (as curl's threaded resolver): a stuck resolver is left behind, never waited for."""
    done = threading.Event()
    outcome: list[Any] = []

    def lookup() -> None:
        try:
            outcome.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as error:
            outcome.append(error)
        finally:
            done.set()

    threading.Thread(target=lookup, name="evalkit-resolve", daemon=True).start()
    _until(ends, bounded_by_call, lambda slice_: True if done.wait(slice_) else None)
    if isinstance(outcome[0], OSError):
        raise httpcore.ConnectError(f"name resolution failed ({type(outcome[0]).__name__})")
    found: list[Any] = outcome[0]
    return found


_IN_PROGRESS: Final = frozenset({errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN, 10035})


def _connect(address: Any, family: int, ends: float, bounded_by_call: bool) -> socket.socket:
    """A connected TCP socket to ``address``: a non-blocking connect waited for in slices."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        code = sock.connect_ex(address)
        if code not in _IN_PROGRESS and code != 0:
            raise OSError(code, os.strerror(code))
        if code != 0:
            with selectors.DefaultSelector() as selector:
                selector.register(sock, selectors.EVENT_WRITE)
                _until(ends, bounded_by_call, lambda slice_: selector.select(slice_) or None)
            code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                raise OSError(code, os.strerror(code))
        sock.setblocking(True)
        return sock
    except BaseException:
        sock.close()
        raise


class _SocketStream(httpcore.NetworkStream):
    """httpcore's network stream over a plain (or TLS) socket, its TLS handshake cut into
    :data:`POLL_S` slices (a stalled handshake stops within a slice of SIGINT/SIGTERM)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._sock.settimeout(timeout)
        try:
            return self._sock.recv(max_bytes)
        except TimeoutError:
            raise httpcore.ReadTimeout("timed out") from None
        except OSError as error:
            raise httpcore.ReadError(str(error)) from error

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        view = memoryview(buffer)
        while view:
            self._sock.settimeout(timeout)
            try:
                view = view[self._sock.send(view) :]
            except TimeoutError:
                raise httpcore.WriteTimeout("timed out") from None
            except OSError as error:
                raise httpcore.WriteError(str(error)) from error

    def close(self) -> None:
        self._sock.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        budget, bounded_by_call = _remaining(timeout)
        ends = time.monotonic() + budget
        try:
            tls = ssl_context.wrap_socket(
                self._sock, server_hostname=server_hostname, do_handshake_on_connect=False
            )
        except OSError as error:
            self.close()
            raise httpcore.ConnectError(str(error)) from error

        def handshake(slice_: float) -> bool | None:
            tls.settimeout(slice_)
            try:
                tls.do_handshake()
            except TimeoutError:
                return None  # resumed in the next slice
            return True

        try:
            _until(ends, bounded_by_call, handshake)
        except (_Stop, httpcore.ConnectTimeout):
            tls.close()
            raise
        except OSError as error:  # ssl.SSLError included: its chain is kept for the message
            tls.close()
            raise httpcore.ConnectError(str(error)) from error
        return _SocketStream(tls)

    def get_extra_info(self, info: str) -> Any:
        sock = self._sock
        if info == "ssl_object":
            return sock if isinstance(sock, ssl.SSLSocket) else None
        if info == "client_addr":
            return sock.getsockname()
        if info == "server_addr":
            return sock.getpeername()
        if info == "socket":
            return sock
        if info == "is_readable":  # the connection was closed, or data came unasked
            if sock.fileno() < 0:
                return True
            with selectors.DefaultSelector() as selector:
                selector.register(sock, selectors.EVENT_READ)
                return bool(selector.select(0))
        return None


class _Backend(httpcore.SyncBackend):
    """httpcore's socket backend, with name resolution, connect and the TLS handshake cut
    into :data:`POLL_S` slices; its streams are wrapped in :class:`_Stream`."""

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        if cancelled():
            raise _Stop("cancelled")
        budget, bounded_by_call = _remaining(timeout)
        if budget <= 0:
            raise _Stop("deadline") if bounded_by_call else httpcore.ConnectTimeout("timed out")
        if local_address is not None:  # pragma: no cover - evalkit never sets one
            raise httpcore.ConnectError("a local address is not supported")
        ends = time.monotonic() + budget
        last: OSError | None = None
        for family, _, _, _, address in _resolve(host, port, ends, bounded_by_call):
            try:
                sock = _connect(address, family, ends, bounded_by_call)
            except OSError as error:
                last = error
                continue
            for option in socket_options or ():
                sock.setsockopt(*option)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return _Stream(_SocketStream(sock))
        raise httpcore.ConnectError(str(last or "no address")) from last


class _Transport(httpx.HTTPTransport):
    """httpx's transport on :class:`_Backend` (the connection pool is rebuilt with it)."""

    def __init__(self, connections: int, ssl_context: ssl.SSLContext) -> None:
        super().__init__(trust_env=False, limits=httpx.Limits(max_connections=connections))
        pool = getattr(self, "_pool", None)
        if not isinstance(pool, httpcore.ConnectionPool):  # pragma: no cover - httpx changed
            raise RuntimeError("evalkit.systems.http: httpx's transport has no connection pool")
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=connections,
            network_backend=_Backend(),
        )


# --- the system -------------------------------------------------------------------------------


def _origin(url: httpx.URL) -> str:
    return f"{url.scheme}://{url.host}" + (f":{url.port}" if url.port else "")


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds the service asked to wait (``Retry-After``: seconds or an HTTP date), or None."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


class _Answer(NamedTuple):
    """One response: its first ``k`` distinct hits and its declared confidence (or None)."""

    hits: list[Hit]
    confidence: float | None


class _Failure(Exception):
    """One attempt failed: ``problem`` (no URL, no body) and whether to retry."""

    def __init__(self, problem: str, *, retry: bool, wait_s: float | None = None) -> None:
        self.problem, self.retry, self.wait_s = problem, retry, wait_s
        super().__init__(problem)


class HttpRetriever(BaseRetriever):
    """A live retrieval service as a system (rules in the module docstring)."""

    concurrent_searches = True

    def __init__(self, name: str, *, config: HttpConfig | None = None) -> None:
        check_name(name, kind="system", where="http: system")
        if not _NAME_RE.fullmatch(name):
            raise InputError(
                "the http system name should be 1-64 letters, digits, '.', '_' or '-', "
                "starting with a letter or digit, e.g. http:my-search (name not shown)"
            )
        self.name = name
        url_var = http_env_name(name)
        url = os.environ.get(url_var, "").strip()
        if not url:
            raise InputError(
                f"http system {name!r}: set the environment variable {url_var} to the service's "
                "URL (it is read only from there and never written anywhere)"
            )
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError):
            parsed = None
        if parsed is None or parsed.scheme not in {"http", "https"} or not parsed.host:
            raise InputError(
                f"http system {name!r}: {url_var} should be an http:// or https:// URL"
            )
        self._url = url
        self._origin = _origin(parsed)
        if config is None:
            config_path = os.environ.get(http_env_name(name, "CONFIG"), "").strip()
            config = load_http_config(config_path, name) if config_path else HttpConfig()
        self.config = config
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Accept-Encoding": "gzip, deflate",  # what the body reader decodes
        }
        for header, variable in config.headers_from_env.items():
            value = os.environ.get(variable)
            if value is None:
                raise InputError(
                    f"http system {name!r}: header {header!r} takes its value from the "
                    f"environment variable {variable}, which is not set"
                )
            self._headers[header] = value
        self._slots = threading.BoundedSemaphore(config.max_concurrency)
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()
        self._declared: dict[str, float] = {}  # query ID -> its response's confidence

    def definition(self) -> dict[str, Any]:
        """URL and config: hashed into reports, never published (the URL is private). The
        config enters as its hash: its generic strings ("language", "/hits") are no secret,
        and the leak scan treats every definition string as private."""
        # an unset confidence pointer is left out, so the definitions (and baselines) of
        # systems written before it existed keep their hash
        unset = {"confidence"} if self.config.confidence is None else set()
        config = canonical_hash(self.config.model_dump(mode="json", exclude={"ca_bundle", *unset}))
        return {"class": "HttpRetriever", "url": self._url, "config": config}

    def index(self, chunks: Sequence[ChunkLike]) -> None:
        """A service has its own index; nothing to do."""

    def close(self) -> None:
        """Close the connections; safe to call twice (the next search opens new ones)."""
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _http(self) -> httpx.Client:
        with self._client_lock:
            if self._client is None:
                config = self.config
                context = _ssl_context(
                    config.ca_bundle,
                    f"http system {self.name!r}: "
                    + ("its ca_bundle" if config.ca_bundle else "SSL_CERT_FILE or SSL_CERT_DIR"),
                )
                self._client = httpx.Client(
                    transport=_Transport(config.max_concurrency, context),
                    timeout=httpx.Timeout(
                        config.timeout_s, connect=min(config.connect_timeout_s, config.timeout_s)
                    ),
                    follow_redirects=False,
                    trust_env=False,
                )
            return self._client

    def _body(self, query: QueryLike, k: int) -> bytes:
        fields: Mapping[str, Any] = {
            "query": query.text,
            "k": k,
            "language": query.language,
            "query_id": query.id,
        }
        body: dict[str, Any] = {}
        for pointer, field in self.config.request.items():
            set_pointer(body, pointer, fields[field])
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def _fail(self, query: QueryLike, what: str) -> ExternalSystemError:
        return ExternalSystemError(f"http system {self.name!r}, query {query.id!r}: {what}")

    def _attempt(self, body: bytes, k: int) -> _Answer:
        """One attempt: the first ``k`` distinct hits, or :class:`_Failure` (or
        :class:`HttpResponseError` for a response that is refused, not retried)."""
        config = self.config
        client = self._http()
        url = httpx.URL(self._url)
        for _ in range(_MAX_REDIRECTS + 1):
            request = client.build_request(config.method, url, content=body, headers=self._headers)
            response = client.send(request, stream=True)
            try:
                status = response.status_code
                if 300 <= status < 400 and status != 304:
                    url = self._redirect_target(response)
                    continue
                if status >= 400:
                    wait = _retry_after(response) if status in {429, 503} else None
                    raise _Failure(
                        f"HTTP status {status}", retry=status in _RETRY_STATUS, wait_s=wait
                    )
                if status != 200:
                    raise _Failure(f"HTTP status {status}; expected 200", retry=False)
                return self._read_hits(response, k)
            finally:
                response.close()
        raise _Failure(f"more than {_MAX_REDIRECTS} redirects", retry=False)

    def _redirect_target(self, response: httpx.Response) -> httpx.URL:
        """Where a same-origin redirect goes; :class:`_Failure` for any other redirect."""
        status = response.status_code
        location = response.headers.get("Location")
        if not location:
            raise _Failure(f"HTTP status {status} (a redirect without a target)", retry=False)
        try:
            target = response.url.join(location)
        except (httpx.InvalidURL, ValueError):
            raise _Failure(
                f"HTTP status {status} (a redirect to an invalid URL)", retry=False
            ) from None
        origin = _origin(target)
        if origin != self._origin:
            home = httpx.URL(self._origin)
            differs = [
                part
                for part, mine, theirs in (
                    ("scheme", home.scheme, target.scheme),
                    ("host", home.host, target.host),
                    ("port", home.port, target.port),
                )
                if mine != theirs
            ]
            raise _Failure(
                f"HTTP status {status} redirects to another origin (another "
                f"{' and '.join(differs) or 'origin'}; origin sha256:{text_hash(origin)}); "
                "refused: the request and its headers go only to the configured URL",
                retry=False,
            )
        if self.config.redirects != "same-origin":
            raise _Failure(
                f"HTTP status {status} redirects within the same origin; not followed (set "
                "'redirects: same-origin' in the system's config to follow it, or give the "
                "final URL)",
                retry=False,
            )
        return target

    def _read_hits(self, response: httpx.Response, k: int) -> _Answer:
        """The body's first ``k`` distinct hits, decoded and parsed as it streams in: memory is
        a few decoded pieces and ``k`` hits, whatever the body's size or compression ratio."""
        limit = self.config.max_response_bytes
        too_large = _Failure(
            f"the response is larger than {limit} bytes (max_response_bytes)", retry=False
        )
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            raise too_large
        try:
            decoder = Decoder(coding_of(response.headers.get_list("Content-Encoding", True)))
        except HttpResponseError as error:
            raise _Failure(error.problem, retry=False) from None
        config = self.config
        stream = HitStream(
            hits=config.hits,
            chunk_id=config.chunk_id,
            score=config.score,
            k=k,
            keep_first=config.duplicates == "keep-first",
            confidence=config.confidence,
        )
        raw = size = 0
        for data in response.iter_raw():
            raw += len(data)
            if raw > limit:
                raise too_large
            parsing = time.monotonic()
            for piece in decoder.feed(data):
                size += len(piece)
                if size > limit:
                    raise too_large
                stream.feed(piece)
            _CALL.ends += time.monotonic() - parsing  # timeout_s bounds the service, not us
        last = decoder.finish()
        if size + len(last) > limit:
            raise too_large
        stream.feed(last)
        hits = [Hit(chunk, score) for chunk, score in stream.close()]
        return _Answer(hits, stream.confidence())

    def _call(self, query: QueryLike, body: bytes, k: int) -> _Answer:
        config = self.config
        attempts = config.retries + 1
        call_ends = time.monotonic() + config.deadline_s
        problem = ""
        for attempt in range(attempts):
            _CALL.ends = min(call_ends, time.monotonic() + config.timeout_s)
            try:
                return self._attempt(body, k)
            except HttpResponseError as error:
                raise self._fail(query, error.problem) from None
            except _Failure as failure:
                problem = failure.problem
                if not failure.retry:
                    raise self._fail(query, f"{problem} (not retried)") from None
                wait = failure.wait_s
            except _Stop as stop:
                if stop.why == "cancelled":
                    raise self._fail(query, "stopped by a signal") from None
                problem = f"no response within {config.timeout_s:g} s (timeout)"
                if time.monotonic() >= call_ends:
                    break
                wait = None
            except httpx.TimeoutException:
                problem = f"no response within {config.timeout_s:g} s (timeout)"
                wait = None
            except (httpx.HTTPError, httpcore.NetworkError, OSError) as error:
                tls = _tls_problem(error)
                if tls is not None:
                    raise self._fail(query, f"{tls} (not retried)") from None
                problem = f"network error ({type(error).__name__})"
                wait = None
            finally:
                _CALL.ends = math.inf
            if attempt + 1 == attempts:
                break
            wait = config.backoff_s * 2**attempt if wait is None else wait
            if time.monotonic() + wait >= call_ends:
                problem += f"; a next attempt would pass the {config.deadline_s:g} s deadline"
                break
            _sleep(wait)
            if cancelled():
                raise self._fail(query, "stopped by a signal")
        raise self._fail(
            query,
            f"{problem} after {attempt + 1} attempt(s); check that the service is up, or raise "
            "timeout_s/retries in its config",
        )

    def search(self, query: QueryLike, k: int) -> list[Hit]:
        """The service's first ``k`` distinct hits for ``query`` (rules: the module docstring);
        the response's confidence (the ``confidence`` pointer) is kept for :meth:`confidence`."""
        body = self._body(query, k)
        with self._slots:
            answer = self._call(query, body, k)
        if answer.confidence is not None:
            self._declared[query.id] = answer.confidence
        return answer.hits

    def confidence(self, query: QueryLike, hits: Sequence[Hit]) -> float | None:
        """The confidence the service's last response for ``query`` declared (the config's
        ``confidence`` pointer), or None without one (then the top score is the confidence)."""
        return self._declared.pop(query.id, None)


def _sleep(seconds: float) -> None:
    """Sleep ``seconds`` in :data:`POLL_S` slices, ending early after SIGINT or SIGTERM."""
    ends = time.monotonic() + seconds
    while not cancelled():
        left = ends - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(POLL_S, left))
