#!/usr/bin/python3
"""smtpsink.py - a real SMTP server for the tests (aiosmtpd, Debian's
python3-aiosmtpd) that stores every message it accepts as one file in a
Maildir (DIR/new), with the envelope in DIR/envelope/<name> so that tests
can check recipients as well as headers.

usage: smtpsink.py --dir DIR [--port N] [--tls none|starttls|smtps]
                   [--cert FILE --key FILE] [--auth USER:PASS]
                   [--port-file FILE] [--refuse ADDR]...

It prints "port N" on stdout once it accepts connections (and writes N to
--port-file), then runs until SIGTERM.  With --auth, AUTH PLAIN/LOGIN is
offered (after STARTTLS when --tls starttls) and required for MAIL FROM.  Each --refuse ADDR is answered 550 at RCPT TO, as a
relay does for an address it knows to be dead.
"""
import argparse
import os
import signal
import socket
import ssl
import sys
import threading
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class MaildirHandler:
    def __init__(self, root, refuse=()):
        self.root = root
        self.refuse = {a.lower() for a in refuse}
        self.count = 0
        self.lock = threading.Lock()
        for sub in ("tmp", "new", "cur", "envelope"):
            os.makedirs(os.path.join(root, sub), exist_ok=True)

    async def handle_RCPT(self, server, session, envelope, address,
                          rcpt_options):
        if address.lower() in self.refuse:
            return "550 5.1.1 <%s>: mailbox unavailable" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            name = "%d.%06d.%d.smtpsink" % (time.time(), self.count,
                                            os.getpid())
        data = envelope.original_content or envelope.content
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        tmp = os.path.join(self.root, "tmp", name)
        with open(tmp, "wb") as f:
            f.write(data)
        env = os.path.join(self.root, "envelope", name)
        with open(env, "w") as f:
            f.write("from %s\n" % envelope.mail_from)
            for r in envelope.rcpt_tos:
                f.write("to %s\n" % r)
            f.write("auth %s\n" % (session.authenticated or False))
        os.rename(tmp, os.path.join(self.root, "new", name))
        return "250 OK stored as %s" % name


class Authenticator:
    def __init__(self, user, password):
        self.user = user.encode()
        self.password = password.encode()

    def __call__(self, server, session, envelope, mechanism, auth_data):
        ok = (isinstance(auth_data, LoginPassword) and
              auth_data.login == self.user and
              auth_data.password == self.password)
        return AuthResult(success=ok, handled=False)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tls_context(args):
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(args.cert, args.key)
    return ctx


def make_controller(args, handler, port):
    kw = dict(hostname="127.0.0.1", port=port)
    auth = None
    if args.auth:
        user, _, password = args.auth.partition(":")
        auth = Authenticator(user, password)
        kw.update(authenticator=auth, auth_required=True,
                  auth_require_tls=(args.tls != "none"))
    else:
        kw.update(auth_require_tls=False)
    if args.tls == "starttls":
        kw.update(tls_context=tls_context(args), require_starttls=True)
    elif args.tls == "smtps":
        kw.update(ssl_context=tls_context(args))
    return Controller(handler, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--tls", choices=("none", "starttls", "smtps"),
                    default="none")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--auth")
    ap.add_argument("--port-file")
    ap.add_argument("--refuse", action="append", default=[])
    args = ap.parse_args()

    handler = MaildirHandler(args.dir, args.refuse)
    ctl = None
    for _ in range(20):
        port = args.port or free_port()
        ctl = make_controller(args, handler, port)
        try:
            ctl.start()
            break
        except Exception as e:  # port taken by a parallel test: retry
            ctl = None
            if args.port:
                print("smtpsink: %s" % e, file=sys.stderr)
                return 1
    if ctl is None:
        print("smtpsink: no free port", file=sys.stderr)
        return 1
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.rename(args.port_file + ".tmp", args.port_file)
    print("port %d" % port, flush=True)

    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    signal.signal(signal.SIGINT, lambda *a: done.set())
    done.wait()
    ctl.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
