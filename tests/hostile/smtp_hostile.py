#!/usr/bin/python3
"""smtp_hostile.py - a loopback SMTP server (plain text, standard library
only) that misbehaves on command, for tests/hostile/test_smtp_hostile.sh.

usage: smtp_hostile.py --dir DIR [--port-file FILE]

The fault is read from DIR/fault at each new connection (a missing or
empty file means "none"), so one server serves every case of a test:

  none        behave: accept every message
  silent      accept the connection and never say a word
  greet421    greet with 421 and close
  ehlo4 ehlo5 answer EHLO (and HELO) with 421 / 550
  mail4 mail5 answer MAIL FROM with 451 / 550
  rcpt4-one rcpt5-one   refuse the first RCPT TO of a message (450/550)
  rcpt4-all rcpt5-all   refuse every RCPT TO (450 / 550)
  data4 data5 answer DATA with 451 / 554
  dot4 dot5   take the whole message, answer the final dot 451 / 554
  dotdrop     take the whole message and close without an answer
  drip        behave, but send each answer a few bytes at a time, slowly
  maildrop    take one message a connection; close the connection
              without a word at the next MAIL FROM (a client that keeps
              its connection finds it gone mid-pass)

Messages accepted (250 to the dot) are stored one a file in DIR/new
(Maildir-like); the envelope goes to DIR/envelope/<name>.  Every command
received is appended to DIR/log as "<fault> <command>" so a test can see
how far a client went.  It prints "port N" once it listens, and writes N
to --port-file; it runs until SIGTERM.
"""
import argparse
import os
import signal
import socket
import socketserver
import sys
import threading
import time

MAX_LINE = 4096        # a longer command line is an error (RFC 5321 4.5.3)
MAX_MESSAGE = 8 << 20  # and a longer message is refused
IDLE = 30              # seconds a client may stay silent


class State:
    def __init__(self, root):
        self.root = root
        self.lock = threading.Lock()
        self.count = 0
        for sub in ("tmp", "new", "envelope"):
            os.makedirs(os.path.join(root, sub), exist_ok=True)

    def fault(self):
        try:
            with open(os.path.join(self.root, "fault")) as f:
                return f.read().strip() or "none"
        except FileNotFoundError:
            return "none"

    def log(self, fault, line):
        with self.lock, open(os.path.join(self.root, "log"), "a") as f:
            f.write("%s %s\n" % (fault, line))

    def store(self, mail_from, rcpts, data):
        with self.lock:
            self.count += 1
            name = "%d.%06d.%d.hostile" % (time.time(), self.count,
                                           os.getpid())
        tmp = os.path.join(self.root, "tmp", name)
        with open(tmp, "wb") as f:
            f.write(data)
        with open(os.path.join(self.root, "envelope", name), "w") as f:
            f.write("from %s\n" % mail_from)
            for r in rcpts:
                f.write("to %s\n" % r)
        os.rename(tmp, os.path.join(self.root, "new", name))
        return name


class Handler(socketserver.StreamRequestHandler):
    timeout = IDLE

    def say(self, text):
        data = (text + "\r\n").encode()
        if self.fault == "drip":
            for i in range(0, len(data), 3):
                self.wfile.write(data[i:i + 3])
                self.wfile.flush()
                time.sleep(0.005)
        else:
            self.wfile.write(data)
            self.wfile.flush()

    def readline(self):
        line = self.rfile.readline(MAX_LINE + 2)
        if not line:
            raise EOFError
        return line.rstrip(b"\r\n").decode("utf-8", "replace")

    def handle(self):
        st = self.server.st
        self.fault = f = st.fault()
        st.log(f, "CONNECT")
        try:
            if f == "silent":
                # say nothing; wait for the client to give up
                while self.rfile.readline(MAX_LINE):
                    pass
                return
            if f == "greet421":
                self.say("421 4.3.2 hostile: service not available")
                return
            self.say("220 hostile ESMTP")
            self.session(st, f)
        except (EOFError, OSError, socket.timeout):
            pass

    def session(self, st, f):
        mail_from, rcpts, nrcpt, taken = None, [], 0, 0
        while True:
            line = self.readline()
            st.log(f, line[:80])
            verb = line[:4].upper()
            if verb in ("EHLO", "HELO"):
                if f in ("ehlo4", "ehlo5"):
                    self.say("421 4.7.0 hostile: go away" if f == "ehlo4"
                             else "550 5.7.1 hostile: not welcome")
                    if f == "ehlo4":
                        return
                elif verb == "EHLO":
                    self.say("250-hostile\r\n250-8BITMIME\r\n"
                             "250 SIZE %d" % MAX_MESSAGE)
                else:
                    self.say("250 hostile")
            elif verb == "MAIL":
                if f == "maildrop" and taken:
                    return
                if f in ("mail4", "mail5"):
                    self.say("451 4.3.0 hostile: try later" if f == "mail4"
                             else "550 5.7.1 hostile: sender refused")
                else:
                    mail_from, rcpts, nrcpt = line[10:].strip(), [], 0
                    self.say("250 2.1.0 ok")
            elif verb == "RCPT":
                addr = line[8:].strip()
                nrcpt += 1
                if f.endswith("-all") or (f.endswith("-one") and nrcpt == 1):
                    self.say("450 4.2.1 hostile: mailbox busy"
                             if f.startswith("rcpt4")
                             else "550 5.1.1 hostile: no such user")
                else:
                    rcpts.append(addr)
                    self.say("250 2.1.5 ok")
            elif verb == "DATA":
                if f in ("data4", "data5"):
                    self.say("451 4.3.0 hostile: no data now" if f == "data4"
                             else "554 5.3.4 hostile: no data ever")
                    continue
                self.say("354 go ahead")
                data = self.read_data()
                st.log(f, "DOT %d bytes" % len(data))
                if f == "dotdrop":
                    return
                if f == "dot4":
                    self.say("451 4.3.0 hostile: not queued, try again")
                elif f == "dot5":
                    self.say("554 5.6.0 hostile: message refused")
                elif len(data) > MAX_MESSAGE:
                    self.say("552 5.3.4 hostile: too big")
                else:
                    name = st.store(mail_from, rcpts, data)
                    self.say("250 2.0.0 stored as %s" % name)
                    taken += 1
                mail_from, rcpts, nrcpt = None, [], 0
            elif verb == "RSET":
                mail_from, rcpts, nrcpt = None, [], 0
                self.say("250 ok")
            elif verb == "NOOP":
                self.say("250 ok")
            elif verb == "QUIT":
                self.say("221 bye")
                return
            else:
                self.say("502 5.5.2 hostile: not implemented")

    def read_data(self):
        out = bytearray()
        while True:
            line = self.rfile.readline(MAX_LINE * 4)
            if not line:
                raise EOFError
            if line in (b".\r\n", b".\n"):
                return bytes(out)
            if line.startswith(b"."):
                line = line[1:]
            if len(out) <= MAX_MESSAGE:
                out += line


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port-file")
    args = ap.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    srv.st = State(args.dir)
    port = srv.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.rename(args.port_file + ".tmp", args.port_file)
    print("port %d" % port, flush=True)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    try:
        srv.serve_forever()
    finally:
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
