"""The Python runtime on this machine: what the python312 image of Serverless 1.11.1 and 1.13.0 runs
(server.py on bottle, cheroot and the cloudevents SDK), with the standard library only.

It imports the module MOD_NAME (handler) from FUNCTION_PATH, finds FUNC_HANDLER (main) in it,
listens on FUNC_PORT, and calls main(event, context) in a thread for every GET, POST, PATCH and
DELETE request but /healthz, /metrics and /favicon.ico, waiting at most FUNC_TIMEOUT seconds.
What main returns becomes the response as bottle would make it (a dict as JSON, text as
text/html, nothing as an empty body; bottle.HTTPResponse objects as they say).

LocalFunction (runtime/local-function.ts) starts it and reads its reports on file descriptor 3.
"""

import base64
import builtins
import datetime
import html
import http.client
import http.server
import importlib
import io
import json
import os
import queue
import sys
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import uuid

CONTROL_FD = 3
MOUNTS_ENV = 'KYMA_SERVERLESS_LOCAL_MOUNTS'
HOST_ENV = 'KYMA_SERVERLESS_LOCAL_HOST'
PORT_ENV = 'KYMA_SERVERLESS_LOCAL_PORT'
RELEASE_ENV = 'KYMA_SERVERLESS_LOCAL_RELEASE'
CLOUDEVENTS_JSON = 'application/cloudevents+json'
METHODS = ('DELETE', 'GET', 'PATCH', 'POST')
DEFAULT_CONTENT_TYPE = 'text/html; charset=UTF-8'


def send_control(message):
    """Tells the parent process; nobody listens when started by hand."""
    try:
        os.write(CONTROL_FD, (json.dumps(message) + '\n').encode('utf-8'))
    except OSError:
        pass


# --- Secret mounts: reads under a mount path come from a local folder -------------------------

def redirect_mounts(mounts):
    """Redirects the file reads of this process under each mount path to its folder."""
    if not mounts:
        return
    normalized = {os.path.normpath(k).rstrip('/'): v for k, v in mounts.items()}

    def mapped(target):
        if isinstance(target, int):
            return target
        try:
            text = os.fsdecode(os.fspath(target))
        except TypeError:
            return target
        if not os.path.isabs(text):
            return target
        text = os.path.normpath(text)
        for mount, folder in normalized.items():
            if text == mount:
                return folder
            if text.startswith(mount + '/'):
                return os.path.join(folder, text[len(mount) + 1:])
        return target

    def wrap(module, name):
        original = getattr(module, name)

        def wrapper(path, *args, **kwargs):
            return original(mapped(path), *args, **kwargs)
        wrapper.__wrapped__ = original
        setattr(module, name, wrapper)

    wrap(builtins, 'open')
    io.open = builtins.open
    for name in ('open', 'stat', 'lstat', 'listdir', 'scandir', 'access', 'readlink'):
        wrap(os, name)


# --- The request a handler sees: the parts of bottle's BaseRequest handlers use ---------------

class FormsDict(dict):
    """bottle.FormsDict: every value of a key is kept; [] and get() give the last, attributes '' when missing."""

    def __init__(self, pairs=()):
        super().__init__()
        self._all = {}
        for key, value in pairs:
            self._all.setdefault(key, []).append(value)
            super().__setitem__(key, value)

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return self.get(name, '')

    def get(self, key, default=None, index=-1, type=None):
        try:
            value = self._all[key][index]
            return type(value) if type else value
        except (KeyError, IndexError, ValueError, TypeError):
            return default

    def getall(self, key):
        return list(self._all.get(key, []))

    getlist = getall

    def getunicode(self, name, default=None, encoding=None):
        return self.get(name, default)

    def allitems(self):
        return [(k, v) for k, values in self._all.items() for v in values]


class HeaderDict(dict):
    """Request headers, found by name in any case."""

    def __init__(self, pairs):
        super().__init__()
        for key, value in pairs:
            key = key.title()
            super().__setitem__(key, value if key not in self else self[key] + ',' + value)

    def __getitem__(self, key):
        return super().__getitem__(key.title())

    def __contains__(self, key):
        return super().__contains__(str(key).title())

    def get(self, key, default=None):
        return super().get(str(key).title(), default)


class HTTPError(Exception):
    """bottle.HTTPError: answered with the error page (or the app's handler for 500)."""

    def __init__(self, status, body, headers=None):
        super().__init__(body)
        self.status = status
        self.body = body
        self.headers = headers or {}


class Request:
    """A request as bottle's BaseRequest shows it."""

    def __init__(self, environ, body):
        self.environ = environ
        self._body = body
        self.headers = HeaderDict((k[5:].replace('_', '-'), v) for k, v in environ.items() if k.startswith('HTTP_'))
        if environ.get('CONTENT_TYPE'):
            dict.__setitem__(self.headers, 'Content-Type', environ['CONTENT_TYPE'])
        if environ.get('CONTENT_LENGTH'):
            dict.__setitem__(self.headers, 'Content-Length', environ['CONTENT_LENGTH'])

    def __getitem__(self, key):
        return self.environ[key]

    def get(self, key, default=None):
        return self.environ.get(key, default)

    def keys(self):
        return self.environ.keys()

    @property
    def method(self):
        return self.environ['REQUEST_METHOD'].upper()

    @property
    def path(self):
        return '/' + self.environ.get('PATH_INFO', '').lstrip('/')

    @property
    def fullpath(self):
        return self.path

    @property
    def query_string(self):
        return self.environ.get('QUERY_STRING', '')

    @property
    def url(self):
        query = self.query_string
        return 'http://' + self.environ.get('HTTP_HOST', 'localhost') + urllib.parse.quote(self.path) + ('?' + query if query else '')

    @property
    def urlparts(self):
        return urllib.parse.urlsplit(self.url)

    @property
    def query(self):
        return FormsDict(urllib.parse.parse_qsl(self.query_string, keep_blank_values=True))

    GET = query

    @property
    def content_type(self):
        return self.environ.get('CONTENT_TYPE', '').lower()

    @property
    def content_length(self):
        return int(self.environ.get('CONTENT_LENGTH') or -1)

    @property
    def body(self):
        return io.BytesIO(self._body)

    @property
    def json(self):
        content_type = self.content_type.split(';')[0]
        if content_type in ('application/json', 'application/json-rpc'):
            if not self._body:
                return None
            try:
                return json.loads(self._body)
            except (ValueError, TypeError):
                raise HTTPError(400, 'Invalid JSON')
        return None

    @property
    def forms(self):
        if self.content_type.split(';')[0] == 'application/x-www-form-urlencoded':
            return FormsDict(urllib.parse.parse_qsl(self._body.decode('latin1'), keep_blank_values=True))
        return FormsDict()

    POST = forms

    @property
    def params(self):
        return FormsDict(self.query.allitems() + self.forms.allitems())

    @property
    def cookies(self):
        pairs = []
        for part in self.environ.get('HTTP_COOKIE', '').split(';'):
            if '=' in part:
                key, value = part.split('=', 1)
                pairs.append((key.strip(), value.strip()))
        return FormsDict(pairs)

    def get_cookie(self, key, default=None):
        return self.cookies.get(key, default)

    def get_header(self, name, default=None):
        return self.headers.get(name, default)

    @property
    def remote_addr(self):
        return self.environ.get('REMOTE_ADDR')

    @property
    def is_xhr(self):
        return self.environ.get('HTTP_X_REQUESTED_WITH', '').lower() == 'xmlhttprequest'

    is_ajax = is_xhr


# --- CloudEvents, as the cloudevents SDK 1.x reads and writes them in lib/ce.py ----------------

class MissingRequiredFields(Exception):
    """cloudevents.exceptions.MissingRequiredFields."""


def _json_or_string(content):
    if content is None:
        return None
    try:
        return json.loads(content)
    except (ValueError, TypeError, UnicodeDecodeError):
        return content


def from_http(headers, data):
    """cloudevents.http.from_http: the attributes and data of a CloudEvent request."""
    headers = {key.lower(): value for key, value in headers.items()}
    data = data or ''
    binary = all(h in headers for h in ('ce-specversion', 'ce-source', 'ce-type', 'ce-id'))
    if binary:
        attributes = {k[3:]: v for k, v in headers.items() if k.startswith('ce-')}
        if 'content-type' in headers:
            attributes['datacontenttype'] = headers['content-type']
        value = _json_or_string(data)
    else:
        try:
            raw = json.loads(data)
        except ValueError:
            raise MissingRequiredFields('Failed to read specversion from both headers and data. '
                                        'The following can not be parsed as json: {!r}'.format(data))
        if not hasattr(raw, 'get'):
            raise MissingRequiredFields('Failed to read specversion from both headers and data. '
                                        "The following deserialized data has no 'get' method: {}".format(raw))
        missing = {'id', 'source', 'type', 'specversion'} - raw.keys()
        if missing:
            raise MissingRequiredFields('Missing required attributes: {}'.format(missing))
        attributes = {k: v for k, v in raw.items() if k not in ('data', 'data_base64')}
        value = None
        if 'data' in raw:
            value = _json_or_string(json.dumps(raw['data']))
        elif 'data_base64' in raw:
            value = _json_or_string(base64.b64decode(raw['data_base64']))
    if attributes.get('specversion') not in ('1.0', '0.3'):
        raise MissingRequiredFields('Found invalid specversion {}'.format(attributes.get('specversion')))
    if value == '' or value == b'':
        value = None
    attributes.setdefault('time', datetime.datetime.now(datetime.timezone.utc).isoformat())
    return {k: v for k, v in attributes.items() if v is not None}, value


def to_structured(attributes, data):
    """cloudevents.conversion.to_structured: headers and body of a structured CloudEvent."""
    event = {'specversion': '1.0', 'id': str(uuid.uuid4()), 'time': datetime.datetime.now(datetime.timezone.utc).isoformat()}
    event.update({k.lower(): v for k, v in attributes.items()})
    if data is not None:
        if isinstance(data, (bytes, bytearray, memoryview)):
            event['data_base64'] = base64.b64encode(data).decode('ascii')
        else:
            event['data'] = data
    return {'content-type': CLOUDEVENTS_JSON}, json.dumps(event).encode('utf-8')


class PostResponse:
    """What requests.post returns, as far as handlers read it."""

    def __init__(self, status, reason, headers, content):
        self.status_code = status
        self.reason = reason
        self.headers = headers
        self.content = content
        self.text = content.decode('utf-8', 'replace')
        self.ok = status < 400

    def json(self):
        return json.loads(self.content)


def post(url, body, headers):
    """requests.post: an answer of any status is returned, a connection error raised."""
    if not url:
        raise ValueError('PUBLISHER_PROXY_ADDRESS is not set: the Function has nowhere to publish events')
    request = urllib.request.Request(url, data=body, headers=headers, method='POST')
    try:
        with urllib.request.urlopen(request) as response:
            return PostResponse(response.status, response.reason, dict(response.headers), response.read())
    except urllib.error.HTTPError as e:
        return PostResponse(e.code, e.reason, dict(e.headers), e.read())


def is_cloud_event(req):
    return CLOUDEVENTS_JSON in req.content_type.split(';') or ('ce-type' in req.headers and 'ce-source' in req.headers)


class _NoSpan:
    def __enter__(self):
        return self

    def __exit__(self, *args):
        return False

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


class _NoTracer:
    """A tracer that records nothing: locally there is no trace collector."""

    def start_span(self, *args, **kwargs):
        return _NoSpan()

    def start_as_current_span(self, *args, **kwargs):
        return _NoSpan()


class Event:
    """lib/ce.py's Event: event['data'], event['ce-type'], event['extensions']['request'], emitCloudEvent()."""

    def __init__(self, req, tracer=None):
        self.ceHeaders = dict()
        self.tracer = tracer or _NoTracer()
        self.req = req
        data = req.body.read()
        self.ceHeaders.update({'extensions': {'request': req}})
        if is_cloud_event(req):
            attributes, value = from_http(dict(req.headers), data)
            self.ceHeaders.update({
                'data': value,
                'ce-type': attributes['type'],
                'ce-source': attributes['source'],
                'ce-id': attributes['id'],
                'ce-time': attributes['time'],
            })
            if attributes.get('eventtypeversion') is not None:
                self.ceHeaders['ce-eventtypeversion'] = attributes.get('eventtypeversion')
            if attributes.get('specversion') is not None:
                self.ceHeaders['ce-specversion'] = attributes.get('specversion')
        elif req.get_header('content-type') == 'application/json':
            self.ceHeaders.update({'data': req.json})

    def __getitem__(self, item):
        return self.ceHeaders[item]

    def __setitem__(self, name, value):
        self.ceHeaders[name] = value

    def emitCloudEvent(self, type, source, data, optionalCloudEventAttributes=None):
        attributes = {'type': type, 'source': source}
        if optionalCloudEventAttributes is not None:
            attributes.update(optionalCloudEventAttributes)
        headers, body = to_structured(attributes, data)
        post(os.getenv('PUBLISHER_PROXY_ADDRESS'), body, headers)

    def publishCloudEvent(self, data):
        print('WARNING:root:"publishCloudEvent" is deprecated. Use "emitCloudEvent"', file=sys.stderr, flush=True)
        return post(os.getenv('PUBLISHER_PROXY_ADDRESS'), json.dumps(data, default=str).encode('utf-8'), {'Content-Type': CLOUDEVENTS_JSON})

    def buildResponseCloudEvent(self, event_id, event_type, event_data):
        print('WARNING:root:"buildResponseCloudEvent" is deprecated. Use "emitCloudEvent"', file=sys.stderr, flush=True)
        return {
            'type': event_type,
            'source': self.ceHeaders['ce-source'],
            'eventtypeversion': self.ceHeaders['ce-eventtypeversion'],
            'specversion': self.ceHeaders['ce-specversion'],
            'id': event_id,
            'data': event_data,
            'datacontenttype': 'application/json' if type(event_data) is dict else 'text/plain' if type(event_data) is str else None,
        }


# --- Responses, as bottle makes them from what a route returns ---------------------------------

def error_page(status, body, url):
    """bottle's ERROR_PAGE_TEMPLATE."""
    line = '%d %s' % (status, http.client.responses.get(status, 'Unknown'))
    return ('<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html>\n    <head>\n        <title>Error: %s</title>\n'
            '        <style type="text/css">\n          html {background-color: #eee; font-family: sans-serif;}\n'
            '          body {background-color: #fff; border: 1px solid #ddd;\n                padding: 15px; margin: 15px;}\n'
            '          pre {background-color: #eee; border: 1px solid #ddd; padding: 5px;}\n        </style>\n    </head>\n'
            '    <body>\n        <h1>Error: %s</h1>\n        <p>Sorry, the requested URL <tt>%s</tt>\n           caused an error:</p>\n'
            '        <pre>%s</pre>\n    </body>\n</html>\n') % (line, line, html.escape(repr(url)), html.escape(str(body)))


def is_bottle_response(value):
    """A bottle.HTTPResponse (or HTTPError) the handler made: found by shape, bottle is not imported here."""
    return any(c.__name__ == 'HTTPResponse' for c in type(value).__mro__) and hasattr(value, 'status_code') and hasattr(value, 'body')


class Response:
    """The response being made: bottle's defaults."""

    def __init__(self, url):
        self.status = 200
        self.headers = [('Content-Type', DEFAULT_CONTENT_TYPE)]
        self.url = url

    def set_header(self, name, value):
        self.headers = [(k, v) for k, v in self.headers if k.lower() != name.lower()] + [(name, value)]

    def error(self, status, body, extra_headers=()):
        """An HTTPError: the app's handler for 500 says 'Internal server error', bottle's page the rest."""
        self.status = status
        for name, value in extra_headers:
            self.set_header(name, value)
        return b'Internal server error' if status == 500 else error_page(status, body, self.url).encode('utf-8')

    def cast(self, out):
        """bottle's JSONPlugin, then Bottle._cast: what main returned as the body."""
        if isinstance(out, dict):
            self.set_header('Content-Type', 'application/json')
            return json.dumps(out).encode('utf-8')
        if is_bottle_response(out):
            if isinstance(out.body, dict):
                out.body = json.dumps(out.body)
                out.content_type = 'application/json'
            self.status = out.status_code
            self.headers = [(k, v) for k, v in out.headerlist if k.lower() != 'content-length']
            if any(c.__name__ == 'HTTPError' for c in type(out).__mro__):
                return self.error(out.status_code, out.body)
            return self.cast(out.body)
        if not out:
            return b''
        if isinstance(out, (tuple, list)) and isinstance(out[0], (bytes, str)):
            out = out[0][0:0].join(out)
        if isinstance(out, str):
            return out.encode('utf-8')
        if isinstance(out, bytes):
            return out
        if hasattr(out, 'read'):
            return out.read()
        try:
            items = [item for item in iter(out) if item]
        except Exception:
            return self.error(500, 'Unhandled exception')
        if not items:
            return b''
        if isinstance(items[0], bytes):
            return b''.join(items)
        if isinstance(items[0], str):
            return ''.join(items).encode('utf-8')
        return self.error(500, 'Unsupported response type: %s' % type(items[0]))


# --- The server -----------------------------------------------------------------------------------

def confine_path():
    """Keeps on sys.path only the standard library and PYTHONPATH (the installed requirements), as in the Pod.

    The machine's site-packages (and the user's, and folders .pth files add) are dropped: a handler
    that imports a package it does not declare fails here as it fails in the Pod.
    """
    import sysconfig
    given = [os.path.realpath(p) for p in os.getenv('PYTHONPATH', '').split(os.pathsep) if p]
    stdlib = [os.path.realpath(sysconfig.get_paths()[k]) for k in ('stdlib', 'platstdlib')]
    own = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))

    def kept(entry):
        real = os.path.realpath(entry or '.')
        if real in given or real == own:
            return True
        if 'site-packages' in real.split(os.sep) or 'dist-packages' in real.split(os.sep):
            return False
        return any(real == s or real.startswith(s + os.sep) for s in stdlib) or real.endswith('.zip')

    sys.path[:] = [p for p in sys.path if kept(p)]


def load_handler():
    """Imports MOD_NAME from FUNCTION_PATH and finds FUNC_HANDLER in it."""
    module_name = os.getenv('MOD_NAME', default='handler')
    confine_path()
    sys.path.append(os.getenv('FUNCTION_PATH', default='/'))
    handler_file = module_name + '.py'
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and e.name.split('.')[0] != module_name:
            raise LoadError("%s imports '%s', which is not installed: add it to requirements.txt (the cluster installs only those)"
                            % (handler_file, e.name))
        raise LoadError('%s failed to load: %s' % (handler_file, ''.join(traceback.format_exception(e)).strip()))
    except BaseException as e:
        raise LoadError('%s failed to load: %s' % (handler_file, ''.join(traceback.format_exception(e)).strip()))
    func_name = os.getenv('FUNC_HANDLER', default='main')
    func = getattr(module, func_name, None)
    if not callable(func):
        names = sorted(n for n in dir(module) if callable(getattr(module, n)) and not n.startswith('_'))
        raise LoadError('%s has no function %s%s: the runtime calls %s(event, context); define it with `def %s(event, context):`'
                        % (handler_file, func_name, ' (it defines %s)' % ', '.join(names) if names else '', func_name, func_name))
    return func


class LoadError(Exception):
    pass


def make_handler(func, context, timeout):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'
        # Headers and body go out in two writes: without this, a kept-alive connection waits 40 ms for each answer.
        disable_nagle_algorithm = True

        def log_message(self, format, *args):
            pass

        def read_body(self):
            if self.headers.get('Transfer-Encoding', '').lower() == 'chunked':
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b';')[0].strip() or b'0', 16)
                    if size == 0:
                        while self.rfile.readline() not in (b'\r\n', b'\n', b''):
                            pass
                        return b''.join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get('Content-Length') or 0))

        def environ(self):
            url = urllib.parse.urlsplit(self.path)
            environ = {
                'REQUEST_METHOD': self.command, 'PATH_INFO': urllib.parse.unquote(url.path, 'latin1'), 'QUERY_STRING': url.query,
                'SERVER_PROTOCOL': self.request_version, 'REMOTE_ADDR': self.client_address[0], 'wsgi.url_scheme': 'http',
                'SERVER_NAME': self.server.server_address[0], 'SERVER_PORT': str(self.server.server_address[1]),
                'CONTENT_TYPE': self.headers.get('Content-Type', ''), 'CONTENT_LENGTH': self.headers.get('Content-Length', ''),
            }
            for name, value in self.headers.items():
                key = 'HTTP_' + name.upper().replace('-', '_')
                if key not in ('HTTP_CONTENT_TYPE', 'HTTP_CONTENT_LENGTH'):
                    environ[key] = value if key not in environ else environ[key] + ',' + value
            return environ

        def answer(self, response, body, started):
            head = self.command == 'HEAD' or response.status in (100, 101, 204, 304)
            self.send_response_only(response.status, http.client.responses.get(response.status, 'Unknown'))
            self.send_header('Date', self.date_time_string())
            for name, value in response.headers:
                self.send_header(name, str(value))
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)
            send_control({'type': 'request', 'method': self.command, 'path': self.path, 'status': response.status,
                          'ms': int((time.monotonic() - started) * 1000)})

        def handle_any(self):
            started = time.monotonic()
            request = Request(self.environ(), self.read_body())
            response = Response(request.url)
            method, path = self.command, request.path
            if method in ('GET', 'HEAD') and path == '/healthz':
                return self.answer(response, b'OK', started)
            if method in ('GET', 'HEAD') and path == '/favicon.ico':
                response.status = 204
                return self.answer(response, b'', started)
            if method in ('GET', 'HEAD') and path == '/metrics':
                response.status = 404
                response.set_header('Content-Type', 'text/plain')
                return self.answer(response, b'The runtime image serves its Prometheus metrics here; kyma-serverless run does not.\n', started)
            if method not in METHODS and method != 'HEAD':
                body = response.error(405, 'Method not allowed.', [('Allow', ','.join(METHODS))])
                return self.answer(response, body, started)
            try:
                event = Event(request)
            except HTTPError as e:
                return self.answer(response, response.error(e.status, e.body), started)
            except Exception:
                traceback.print_exc()
                return self.answer(response, response.error(500, 'Internal Server Error'), started)
            results = queue.Queue()

            def run():
                try:
                    results.put(func(event, context))
                except Exception as e:
                    results.put(e)
            threading.Thread(target=run, daemon=True).start()
            try:
                result = results.get(block=True, timeout=timeout)
            except queue.Empty:
                return self.answer(response, response.error(408, 'Timeout while processing the function'), started)
            if isinstance(result, Exception):
                traceback.print_exception(result)
                return self.answer(response, response.error(500, 'Internal Server Error'), started)
            try:
                if hasattr(result, 'headers') and 'content-type' in result.headers:
                    response.set_header('Content-Type', result.headers['content-type'])
                body = response.cast(result)
            except Exception:
                traceback.print_exc()
                body = response.error(500, 'Internal Server Error')
            return self.answer(response, body, started)

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = handle_any

    return Handler


def main():
    mounts = json.loads(os.environ.pop(MOUNTS_ENV, '{}'))
    host = os.environ.pop(HOST_ENV, '127.0.0.1')
    port = int(os.environ.pop(PORT_ENV, os.getenv('FUNC_PORT', '8080')))
    os.environ.pop(RELEASE_ENV, None)
    redirect_mounts(mounts)
    try:
        func = load_handler()
    except LoadError as e:
        print(str(e), file=sys.stderr, flush=True)
        send_control({'type': 'load-failed', 'message': str(e)})
        sys.exit(2)
    timeout = float(os.getenv('FUNC_TIMEOUT', 180))
    memfile_max = int(os.getenv('FUNC_MEMFILE_MAX', 100 * 1024 * 1024))
    context = {
        'function-name': os.getenv('FUNC_NAME'),
        'namespace': os.getenv('SERVICE_NAMESPACE'),
        'timeout': timeout,
        'runtime': os.getenv('FUNC_RUNTIME'),
        'memory-limit': os.getenv('FUNC_MEMORY_LIMIT'),
        'body-size-limit': memfile_max,
    }
    try:
        server = http.server.ThreadingHTTPServer((host, port), make_handler(func, context, timeout))
    except OSError as e:
        send_control({'type': 'listen-failed', 'code': 'EADDRINUSE' if e.errno == 98 else str(e.errno), 'message': str(e)})
        sys.exit(1)
    server.daemon_threads = True
    send_control({'type': 'listening', 'port': server.server_address[1]})
    send_control({'type': 'loaded'})

    # The parent holds standard input open while it runs: when it ends, the parent is gone, and so is the Function.
    def watch_parent():
        sys.stdin.buffer.read()
        os._exit(0)
    threading.Thread(target=watch_parent, daemon=True).start()
    server.serve_forever()


if __name__ == '__main__':
    main()
