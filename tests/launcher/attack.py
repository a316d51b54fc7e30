#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A hostile local process against onesided-run's rendezvous (issue 63).

Usage: attack.py ONESIDED_RUN MODES_PROGRAM SCENARIO

Each scenario starts a 2-rank job whose ranks are held before MPI_Init (a shell loop waiting
for a file), finds the launcher's port the way another local user would (the listening socket
on 127.0.0.1 in /proc/net/tcp; here matched to the launcher by its socket inode), attacks it,
then lets the ranks run: the job must complete with the right values (modes.c "gate"), or end
with a clear line where the attack is one only a holder of the secret can make. A second job is
attacked the same way and sent SIGTERM: the launcher must exit 143 promptly and leave nothing.

"fake_launcher" turns it around: a process holding a rank's rendezvous port that is not its
launcher (no secret, or lengths that wrap) must make the rank fail in MPI_Init with a line.

Attacks that need the secret read it from a rank's environment, which the held ranks write to a
private directory: that is what a process of the same user (or a rank's own child) has; another
user has no way to it (/proc/PID/environ is private to the owner).
"""
import hashlib
import hmac
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

RUN, MODES, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3]
SCALE = int(os.environ.get("ONESIDED_TEST_TIME_SCALE", "1"))
HELLO, ALLGATHER, CHALLENGE, REFUSED, WELCOME = 1, 2, 5, 6, 7
failures = 0
JOBS = []


def check(name, ok, detail=""):
    global failures
    print(("ok " if ok else "FAIL ") + name + (f" ({detail})" if detail and not ok else ""),
          flush=True)
    if not ok:
        failures += 1


def header(t, n):
    return struct.pack("<IIQ", t, 0, n)


def recvn(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise ConnectionError("closed")
        b += c
    return b


def challenge(s):
    t, _, n = struct.unpack("<IIQ", recvn(s, 16))
    assert t == CHALLENGE and n == 32, (t, n)
    return recvn(s, 32)


MINE = b"\x01" * 32  # the attacker's nonce in its hellos


def proof(secret, nonce, rank, jobid, label=b"rank", mine=MINE):
    msg = (b"onesided-rendezvous-v1 " + label + nonce + mine + struct.pack("<i", rank)
           + jobid.encode())
    return hmac.new(secret, msg, hashlib.sha256).digest()


def hello(rank, mac, mine=MINE):
    return header(HELLO, 68) + struct.pack("<i", rank) + mine + mac


def claim(job, rank):
    """Claims `rank` with the real secret; returns (socket, the launcher's proof checks out)."""
    secret, jobid = job.env(rank)
    s = job.connect()
    nonce = challenge(s)
    s.sendall(hello(rank, proof(secret, nonce, rank, jobid)))
    t, _, n = struct.unpack("<IIQ", recvn(s, 16))
    ok = t == WELCOME and n == 32 and recvn(s, 32) == proof(secret, nonce, rank, jobid,
                                                            label=b"launcher")
    return s, ok


def closed_by_peer(s, within=2.0):
    """Reads until the launcher closes the connection; returns (closed?, bytes received)."""
    s.settimeout(within)
    got = b""
    try:
        while True:
            c = s.recv(65536)
            if not c:
                return True, got
            got += c
    except socket.timeout:
        return False, got
    except OSError:  # reset
        return True, got


def refusal(data):
    """The text of a kRefused message after the challenge in `data`, or None."""
    data = data[48:] if len(data) >= 48 and struct.unpack("<I", data[:4])[0] == CHALLENGE \
        else data
    if len(data) < 16:
        return None
    t, _, n = struct.unpack("<IIQ", data[:16])
    return data[16:16 + n].decode(errors="replace") if t == REFUSED else None


def proc_stat(pid):
    """(resident KiB, CPU seconds) of a process."""
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return rss, cpu


class Job:
    """onesided-run -n N with ranks held before MPI_Init until start()."""

    def __init__(self, n=2):
        JOBS.append(self)
        self.n = n
        self.dir = tempfile.mkdtemp(prefix="onesided-attack-")
        script = ('env | grep "^ONESIDED_" > "$1/env.tmp.$ONESIDED_RANK" && '
                  'mv "$1/env.tmp.$ONESIDED_RANK" "$1/env.$ONESIDED_RANK"; '
                  'while [ ! -e "$1/start" ]; do sleep 0.02; done; exec "$2" gate "$1"')
        self.p = subprocess.Popen([RUN, "-n", str(n), "sh", "-c", script, "sh", self.dir, MODES],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.port = self._find_port()
        self.out = self.err = ""

    def _find_port(self):
        # What another user sees too: /proc/net/tcp lists every listening socket (state 0A) with
        # its address and owner; the socket inode ties it to this launcher without guessing.
        deadline = time.time() + 10 * SCALE
        while time.time() < deadline:
            inodes = set()
            try:
                for fd in os.listdir(f"/proc/{self.p.pid}/fd"):
                    link = os.readlink(f"/proc/{self.p.pid}/fd/{fd}")
                    if link.startswith("socket:["):
                        inodes.add(link[8:-1])
            except OSError:
                pass
            with open("/proc/net/tcp") as f:
                for line in f.readlines()[1:]:
                    c = line.split()
                    local, state, inode = c[1], c[3], c[9]
                    if state == "0A" and inode in inodes:
                        ip, port = local.split(":")
                        assert ip == "0100007F", "the launcher listens on " + ip + ", not loopback"
                        return int(port, 16)
            time.sleep(0.02)
        raise RuntimeError("no listening socket of the launcher found")

    def env(self, rank=0):
        path = f"{self.dir}/env.{rank}"
        deadline = time.time() + 10 * SCALE
        while not os.path.exists(path):
            if time.time() > deadline:
                raise RuntimeError("rank environment not written")
            time.sleep(0.02)
        e = dict(line.rstrip("\n").split("=", 1) for line in open(path) if "=" in line)
        return bytes.fromhex(e["ONESIDED_SECRET"]), e["ONESIDED_JOBID"]

    def connect(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    def start(self):
        open(f"{self.dir}/start", "w").close()

    def wait_ready(self, limit=20):
        deadline = time.time() + limit * SCALE
        while not os.path.exists(f"{self.dir}/ready"):
            if self.p.poll() is not None or time.time() > deadline:
                return False
            time.sleep(0.02)
        return True

    def go(self):
        open(f"{self.dir}/go", "w").close()

    def finish(self, limit=20):
        try:
            self.out, self.err = self.p.communicate(timeout=limit * SCALE)
        except subprocess.TimeoutExpired:
            self.kill()
            self.out, self.err = self.p.communicate()
            return None
        return self.p.returncode

    def idle_cpu(self):
        """CPU seconds the launcher used over half a second (a spinning launcher uses ~0.5)."""
        _, a = proc_stat(self.p.pid)
        time.sleep(0.5)
        _, b = proc_stat(self.p.pid)
        return b - a

    def kill(self):
        try:
            os.kill(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def leftover(self):
        time.sleep(0.3)
        r = subprocess.run(["pgrep", "-f", "--", self.dir], capture_output=True)
        return r.returncode == 0

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def completes(job, name, after_ready=None):
    """Lets the held ranks run; the job must end 0 with the right values and leave nothing."""
    job.start()
    ready = job.wait_ready()
    check(f"{name}: ranks got past MPI_Init", ready, job.err if not ready else "")
    if ready and after_ready:
        after_ready(job)
    job.go()
    rc = job.finish()
    check(f"{name}: job completes, exit {rc}", rc == 0 and "modes: gate done" in job.out,
          job.err.strip())
    check(f"{name}: no process left", not job.leftover())


def answers_sigterm(job, name):
    t0 = time.time()
    job.p.send_signal(signal.SIGTERM)
    rc = job.finish(limit=10)
    ms = int((time.time() - t0) * 1000)
    check(f"{name}: SIGTERM answered, exit {rc} after {ms} ms",
          rc == 128 + signal.SIGTERM and ms < 5000 * SCALE and "stopping" in job.err, job.err)
    check(f"{name}: no process left after SIGTERM", not job.leftover())


def rss_check(job, name, base_kib, limit_kib=30 * 1024):
    rss, _ = proc_stat(job.p.pid)
    check(f"{name}: launcher resident {rss} KiB (started at {base_kib})", rss < base_kib + limit_kib)


# ---- the attacks ---------------------------------------------------------------------------

def attack_no_secret(job):
    # The old protocol: a hello with a rank and no proof, without waiting for the challenge.
    s = job.connect()
    s.sendall(header(HELLO, 4) + struct.pack("<i", 0))
    closed, _ = closed_by_peer(s)
    check("hello without a proof: connection dropped", closed)
    s.close()
    # Reads the challenge, answers with an empty proof.
    s = job.connect()
    challenge(s)
    s.sendall(hello(1, bytes(32)))
    closed, data = closed_by_peer(s)
    check("hello with a zero proof: refused and dropped",
          closed and refusal(data) == "authentication failed", repr(data))
    s.close()


def attack_wrong_secret(job):
    _, jobid = job.env(0)
    for rank in (0, 1):
        s = job.connect()
        nonce = challenge(s)
        s.sendall(hello(rank, proof(os.urandom(32), nonce, rank, jobid)))
        closed, data = closed_by_peer(s)
        check(f"wrong secret for rank {rank}: refused and dropped",
              closed and refusal(data) == "authentication failed", repr(data))
        s.close()
    # The right secret of another job (a stale ONESIDED_SECRET) is a wrong secret too.
    secret, _ = job.env(0)
    s = job.connect()
    nonce = challenge(s)
    s.sendall(hello(0, proof(secret, nonce, 0, jobid + "0")))
    closed, data = closed_by_peer(s)
    check("right secret, other job id: refused",
          closed and refusal(data) == "authentication failed", repr(data))
    s.close()


def attack_replay(job):
    # An eavesdropper saw one whole handshake (nonce 1, hello 1) and replays the hello on a new
    # connection: the launcher's nonce differs, so the proof does not match.
    secret, jobid = job.env(0)
    s1 = job.connect()
    n1 = challenge(s1)
    seen = hello(0, proof(secret, n1, 0, jobid))
    s2 = job.connect()
    n2 = challenge(s2)
    check("each connection gets a fresh nonce", n1 != n2)
    s2.sendall(seen)
    closed, data = closed_by_peer(s2)
    check("replayed hello: refused and dropped",
          closed and refusal(data) == "authentication failed", repr(data))
    s1.close()
    s2.close()


def attack_lengths(job, base):
    cases = [
        ("hello of 2^40 bytes", header(HELLO, 1 << 40)),
        ("allgather of 1 GiB before any hello", header(ALLGATHER, 1 << 30)),
        ("length 2^64-1", header(HELLO, 2**64 - 1)),
        ("length 2^64-16 (16 + length wraps to 0)", header(HELLO, 2**64 - 16)),
        ("length 2^64-8 (16 + length wraps to 8)", header(ALLGATHER, 2**64 - 8) + b"x" * 8),
        ("unknown type 0x41414141", b"A" * 16),
    ]
    for name, data in cases:
        s = job.connect()
        challenge(s)
        s.sendall(data)
        closed, _ = closed_by_peer(s)
        check(f"{name}: connection dropped", closed)
        s.close()
    # Without reading the challenge first.
    s = job.connect()
    s.sendall(header(HELLO, 2**64 - 16) + b"\0" * 64)
    closed, _ = closed_by_peer(s)
    check("wrapping length without reading the challenge: dropped", closed)
    s.close()
    rss_check(job, "lengths", base)
    cpu = job.idle_cpu()
    check(f"lengths: launcher idle afterwards ({cpu:.2f} s CPU in 0.5 s)", cpu < 0.25)


class Flood:
    """Threads that connect again and again and stream junk without a hello."""

    def __init__(self, job, threads=3):
        self.job, self.stop, self.sent = job, threading.Event(), [0] * threads
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True)
                        for i in range(threads)]
        for t in self.threads:
            t.start()

    def run(self, i):
        junk = b"\x07" * 65536
        while not self.stop.is_set():
            try:
                s = self.job.connect()
                if i % 3 == 1:  # a well-formed hello header, then junk instead of rank and proof
                    challenge(s)
                    s.sendall(header(HELLO, 68))
                while not self.stop.is_set():
                    s.sendall(junk)
                    self.sent[i] += len(junk)
            except OSError:
                pass
            except AssertionError:
                pass
            finally:
                try:
                    s.close()
                except Exception:
                    pass

    def end(self):
        self.stop.set()
        for t in self.threads:
            t.join(5)
        return sum(self.sent)


def attack_flood_phase(job, base, name):
    f = Flood(job)
    time.sleep(1.0)
    rss_check(job, f"{name} (during the flood)", base)
    return f


class HalfOpen:
    """Connections that never say anything (or stop mid-header), plus a steady trickle of new
    ones while the job starts."""

    def __init__(self, job, count=300, trickle=True):
        self.job, self.stop = job, threading.Event()
        self.socks = []
        for i in range(count):
            s = job.connect()
            if i % 10 == 0:
                s.sendall(header(HELLO, 68)[:10])  # stops mid-header
            self.socks.append(s)
        self.t = threading.Thread(target=self.trickle if trickle else self.stop.wait, daemon=True)
        self.t.start()

    def trickle(self):
        extra = []
        while not self.stop.is_set() and len(extra) < 400:
            try:
                extra.append(self.job.connect())
            except OSError:
                pass
            time.sleep(0.01)
        self.stop.wait()
        for s in extra:
            s.close()

    def end(self):
        self.stop.set()
        self.t.join(5)
        for s in self.socks:
            s.close()


def fake_launcher(name, reply):
    """A process holding the rendezvous port that is not this job's launcher: a rank started
    with it in ONESIDED_RENDEZVOUS must fail in MPI_Init with a line, not hang or allocate
    what a length says. `reply(conn, nonce, hello_payload)` plays the launcher's part."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    secret, jobid = os.urandom(32), "fake.1"
    env = dict(os.environ, ONESIDED_RANK="0", ONESIDED_SIZE="1", ONESIDED_LOCAL_RANK="0",
               ONESIDED_LOCAL_SIZE="1", ONESIDED_JOBID=jobid, ONESIDED_SECRET=secret.hex(),
               ONESIDED_RENDEZVOUS=f"127.0.0.1:{srv.getsockname()[1]}")
    p = subprocess.Popen([MODES, "ok"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    srv.settimeout(10 * SCALE)
    conn, _ = srv.accept()
    conn.settimeout(10 * SCALE)
    nonce = os.urandom(32)
    conn.sendall(header(CHALLENGE, 32) + nonce)
    t, _, n = struct.unpack("<IIQ", recvn(conn, 16))
    payload = recvn(conn, n) if t == HELLO and n == 68 else b""
    reply(conn, nonce, payload, secret, jobid)
    try:
        out, err = p.communicate(timeout=10 * SCALE)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    conn.close()
    srv.close()
    return p.returncode, err


def welcome(conn, nonce, payload, secret, jobid):
    rank, mine = struct.unpack("<i", payload[:4])[0], payload[4:36]
    conn.sendall(header(WELCOME, 32) + proof(secret, nonce, rank, jobid, b"launcher", mine))
    t, _, n = struct.unpack("<IIQ", recvn(conn, 16))  # the rank's allgather
    recvn(conn, n)


def run_fake_launcher():
    def no_secret(conn, nonce, payload, secret, jobid):
        conn.sendall(header(WELCOME, 32) + os.urandom(32))
    rc, err = fake_launcher("no secret", no_secret)
    check(f"fake launcher without the secret: rank exits {rc}, naming it",
          rc not in (0, None) and "does not know the job's secret" in err, err)

    def wrapping_reply(conn, nonce, payload, secret, jobid):
        welcome(conn, nonce, payload, secret, jobid)
        conn.sendall(header(ALLGATHER, 2**64 - 8))
    rc, err = fake_launcher("wrapping reply", wrapping_reply)
    check(f"allgather reply of 2^64-8 bytes: rank exits {rc}, naming the length",
          rc not in (0, None) and "allgather reply of 18446744073709551608 bytes" in err, err)

    def wrapping_blob(conn, nonce, payload, secret, jobid):
        welcome(conn, nonce, payload, secret, jobid)
        conn.sendall(header(ALLGATHER, 16) + struct.pack("<Q", 2**64 - 1) + b"x" * 8)
    rc, err = fake_launcher("wrapping blob", wrapping_blob)
    check(f"blob length 2^64-1 in a reply: rank exits {rc}, short reply",
          rc not in (0, None) and "short allgather reply" in err, err)
    return 1 if failures else 0


def run_scenario():
    if SCENARIO == "fake_launcher":
        return run_fake_launcher()
    base_job = Job()
    base_rss, _ = proc_stat(base_job.p.pid)
    job = base_job
    name = SCENARIO

    if SCENARIO == "no_secret":
        attack_no_secret(job)
        completes(job, name)
        check("no_secret: the dropped connections are reported",
              "not a hello" in job.err and "failed to authenticate" in job.err, job.err)
        job2 = Job()
        attack_no_secret(job2)
        answers_sigterm(job2, name)
    elif SCENARIO == "wrong_secret":
        attack_wrong_secret(job)
        completes(job, name)
        check("wrong_secret: reported", "failed to authenticate" in job.err, job.err)
        job2 = Job()
        attack_wrong_secret(job2)
        answers_sigterm(job2, name)
    elif SCENARIO == "replay":
        attack_replay(job)
        completes(job, name)
        job2 = Job()
        attack_replay(job2)
        answers_sigterm(job2, name)
    elif SCENARIO == "lengths":
        attack_lengths(job, base_rss)
        completes(job, name)
        job2 = Job()
        attack_lengths(job2, base_rss)
        answers_sigterm(job2, name)
    elif SCENARIO == "rank_wrap":
        # Only a holder of the secret gets this far: it claims rank 1 before the real rank 1
        # and then sends an allgather whose length wraps. The launcher ends the job at once,
        # naming the rank and the length.
        s, ok = claim(job, 1)
        check("rank_wrap: the launcher proves the secret to the claimant", ok)
        s.sendall(header(ALLGATHER, 2**64 - 8) + b"x" * 64)
        rc = job.finish(limit=10)
        check(f"rank_wrap: job ends, exit {rc}, with a line naming rank 1 and the length",
              rc == 1 and "protocol error from rank 1: message type 2 of 18446744073709551608"
              in job.err, job.err)
        check("rank_wrap: no process left", not job.leftover())
        s.close()
        job2 = Job()
        s, _ = claim(job2, 1)
        s.sendall(header(ALLGATHER, 1 << 20) + b"x" * 1000)  # a message that never completes
        time.sleep(0.3)
        answers_sigterm(job2, name)
        s.close()
    elif SCENARIO == "flood":
        f = attack_flood_phase(job, base_rss, name)
        completes(job, name + " (while flooded)")
        sent = f.end()
        check(f"flood: {sent >> 20} MiB sent without a hello", sent > 0)
        job2 = Job()
        f = attack_flood_phase(job2, base_rss, name + " 2")
        answers_sigterm(job2, name + " (while flooded)")
        f.end()
    elif SCENARIO == "half_open":
        h = HalfOpen(job)
        completes(job, name + " (300 silent connections and more coming)")
        h.end()
        check("half_open: oldest dropped beyond the limit, reported",
              "unauthenticated connections: dropping the oldest" in job.err, job.err)
        job2 = Job()
        h = HalfOpen(job2, count=50, trickle=False)
        t0 = time.time()
        dropped = 0
        for s in h.socks:
            closed, _ = closed_by_peer(s, within=max(0.1, t0 + 7 * SCALE - time.time()))
            dropped += closed
        check(f"half_open: {dropped} of 50 silent connections dropped after the deadline "
              f"({time.time() - t0:.1f} s)", dropped == 50)
        answers_sigterm(job2, name)
        check("half_open: deadline drops reported",
              "did not authenticate within 5 s" in job2.err, job2.err)
        h.end()
    elif SCENARIO == "second_claim":
        def claim_again(j):
            secret, jobid = j.env(0)
            for rank in (0, 1):
                s = j.connect()
                s.sendall(hello(rank, proof(secret, challenge(s), rank, jobid)))
                closed, data = closed_by_peer(s)
                check(f"second claim of rank {rank}: refused and dropped",
                      closed and refusal(data) == f"rank {rank} is already claimed by another "
                      "connection", repr(data))
                s.close()
        completes(job, name, after_ready=claim_again)
        check("second_claim: reported", "dropped a second claim of rank 0" in job.err, job.err)
        # The other order: the claim made first stands, the real rank is refused and the job
        # ends with lines that say so.
        job2 = Job()
        s, _ = claim(job2, 1)
        job2.start()
        rc = job2.finish()
        check(f"claimed first: job ends, exit {rc}, naming rank 1 and the refusal",
              rc not in (0, None) and "dropped a second claim of rank 1" in job2.err
              and "onesided-run refused rank 1: rank 1 is already claimed" in job2.err
              and "rank 1 (pid" in job2.err, job2.err)
        check("claimed first: no process left", not job2.leftover())
        s.close()
        job3 = Job()
        job3.start()
        if job3.wait_ready():
            claim_again(job3)
        answers_sigterm(job3, name)
    else:
        print("unknown scenario " + SCENARIO)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        status = run_scenario()
    except Exception as e:  # a broken test must fail, not hang
        print(f"FAIL {SCENARIO}: {type(e).__name__}: {e}", flush=True)
        status = 1
    for j in JOBS:  # a job a failed check left running
        if j.p.poll() is None:
            j.kill()
            j.p.wait()
        j.cleanup()
    sys.exit(status)
