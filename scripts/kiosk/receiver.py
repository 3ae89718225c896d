#!/usr/bin/env python3
"""A webhook receiver for the kiosk delivery tests: an HTTP (or HTTPS) server on 127.0.0.1.

Writes the port it listens on to PORTFILE, then logs every request as one JSON line to LOG:
the time it arrived, its method, path, status answered, headers named in --record, and the
body's "id". Its behaviour is read from CONTROL (a JSON file, re-read at every request, so
a test can change it while it runs): {"status": 503} answers every POST so; {"delay": 1.5}
answers after that many seconds; {"fail_until": T} answers 503 before the Unix time T.
A body that is not JSON, or a POST without Content-Type: application/json, gets 400.
"""
import argparse, json, os, ssl, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

p = argparse.ArgumentParser()
p.add_argument("--portfile", required=True)
p.add_argument("--log", required=True)
p.add_argument("--control", required=True)
p.add_argument("--port", type=int, default=0)
p.add_argument("--record", action="append", default=[])
p.add_argument("--cert")
p.add_argument("--key")
a = p.parse_args()
lock = threading.Lock()


def control():
    try:
        with open(a.control) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        arrived = time.time()
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        c = control()
        status = 200
        rid = None
        try:
            rid = json.loads(body).get("id")
        except ValueError:
            status = 400
        if self.headers.get("Content-Type") != "application/json":
            status = 400
        if c.get("delay"):
            time.sleep(float(c["delay"]))
        if status == 200:
            if "status" in c:
                status = int(c["status"])
            elif time.time() < float(c.get("fail_until", 0)):
                status = 503
        entry = {"t": arrived, "answered": time.time(), "path": self.path, "status": status, "id": rid,
                 "headers": {h: self.headers.get(h) for h in a.record}}
        if status < 300:
            entry["body"] = json.loads(body)
        with lock, open(a.log, "a") as f:
            f.write(json.dumps(entry) + "\n")
        reply = b"{}" if status < 300 else b'{"error":"unavailable"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
if a.cert:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(a.cert, a.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
with open(a.portfile + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(a.portfile + ".tmp", a.portfile)
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
