"""The NetEC switch's control plane: serves the control endpoint of docs/protocol.md.

A reader connects, sends length-prefixed JSON frames (setup, teardown) and gets one answer per
frame, in order: exactly what the Java software switch answers. A setup is checked field by
field as the protocol's table says, then against what the compiled data plane can do (its
payload size, one row, k <= senders), given a task id and a slot array from free lists — or
refused with a reason — and turned into table entries (`task_entries`) that a `Backend` writes:
the P4Runtime backend (BMv2, v1model), the bfrt_python backend (Tofino, TNA) or the
pipeline model (tests). Tasks are removed on teardown, on the reader's FIN (seen as progress
reaching the end) and when their progress register stops moving for their timeout.

Run on the switch's CPU: `python3 -m netec_p4.control.netec_control --backend
bfrt|p4runtime --vip IP ...` (switch-p4/ as the working directory or on PYTHONPATH).
"""

import argparse
import hmac
import ipaddress
import json
import secrets
import socket
import subprocess
import struct
import sys
import threading
import time

from netec_p4.model import gf256
from netec_p4.model import netec_model as nm
from netec_p4.model.netec_model import VERSION, payload_length

MAX_FRAME = 65536


class Refused(Exception):
    """A setup the switch will not run; the message is the answer's reason."""


# Stripes per task at most: below 2^31, so the data plane's comparisons of two sequence numbers
# (a subtraction and its sign bit: Tofino compares a field only with a constant) hold.
MAX_STRIPES = (1 << 31) - 1


class Limits:
    """What the compiled data plane supports (p4src/include/config.p4)."""

    def __init__(self, tasks=32, slots=64, senders=16, payload=64, rows=1, premultiplied=False,
                 transport="tcp"):
        self.tasks, self.slots, self.senders = tasks, slots, senders
        self.payload, self.rows = payload, rows
        # the aggregation the data plane was compiled for: multiply (table lanes) or XOR only
        self.premultiplied = premultiplied
        # how end hosts reach it: the TCP proxy (netec.p4) or datagrams (netec_xor.p4)
        self.transport = transport

    @staticmethod
    def of_program(name, **kw):
        """The limits of compiled program NAME (PROGRAMS); KW overrides."""
        if name not in PROGRAMS:
            raise ValueError("no P4 program %r (%s)" % (name, ", ".join(sorted(PROGRAMS))))
        return Limits(**dict(PROGRAMS[name], **kw))


# The P4 programs, by name, and how their limits differ from Limits' defaults: "netec"
# (p4src/*/netec.p4: multiply, TCP proxy, P = 64), "netec_xor" (p4src/*/netec_xor.p4:
# pre-multiplied survivors, XOR only, datagrams, P = 256).
PROGRAMS = {"netec": {}, "netec_xor": {"payload": 256, "premultiplied": True, "transport": "udp"}}


def _int(req, name, lo, hi, default=None):
    v = req.get(name, default)
    if v is None:
        raise Refused("%s: missing" % name)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise Refused("%s: must be an integer in %d..%d" % (name, lo, hi))
    return v


def _host_port(text, name):
    try:
        host, port = text.rsplit(":", 1)
        ipaddress.IPv4Address(host)  # dotted quad only (inet_aton takes "10.1")
        port = int(port)
        if not 0 < port < 65536:
            raise ValueError
        return host, port
    except (ValueError, OSError, AttributeError):
        raise Refused("%s: must be IPv4:port, got %r" % (name, text))


def parse_setup(req):
    """Checks every field as docs/protocol.md's setup table says; returns a normalized dict."""
    if req.get("version") != VERSION:
        raise Refused("version: %r not supported (this switch: %d)" % (req.get("version"),
                                                                         VERSION))
    group = req.get("group")
    if not isinstance(group, str) or len(group) > 256:
        raise Refused("group: must be a string of at most 256 chars")
    k = _int(req, "k", 1, 16)
    rows = _int(req, "rows", 1, 4)
    payload = _int(req, "payload", 64, 65472)  # a multiple of 64 the 16-bit length holds
    if payload % 64:
        raise Refused("payload: must be a multiple of 64")
    offset = _int(req, "offset", 0, 1 << 40, 0)
    length = _int(req, "length", 1, 1 << 40)
    timeout = _int(req, "timeoutMs", 100, 600000)
    survivors = req.get("survivors")
    if not isinstance(survivors, list) or len(survivors) != k:
        raise Refused("survivors: must list exactly k=%d entries" % k)
    seen = set()
    out = []
    for s in survivors:
        if not isinstance(s, dict):
            raise Refused("survivors: entries must be objects")
        sender = _int(s, "sender", 0, k - 1)
        if sender in seen:
            raise Refused("survivors: sender %d twice" % sender)
        seen.add(sender)
        host, port = _host_port(s.get("agent"), "survivors[%d].agent" % sender)
        _int(s, "unitLength", 0, 1 << 40)
        if not isinstance(s.get("block"), str) or not isinstance(s.get("token", ""), str):
            raise Refused("survivors[%d]: block and token must be strings" % sender)
        out.append({"sender": sender, "host": host, "port": port, "block": s["block"],
                    "unitLength": s["unitLength"], "token": s.get("token", "")})
    coeff = req.get("coefficients")
    if (not isinstance(coeff, list) or len(coeff) != rows
            or any(not isinstance(r, list) or len(r) != k for r in coeff)
            or any(isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= 255
                   for r in coeff for c in r)):
        raise Refused("coefficients: must be rows x k integers 0..255")
    transport = req.get("transport", "tcp")
    if transport not in ("tcp", "udp"):
        raise Refused("transport: must be \"tcp\" or \"udp\"")
    premultiplied = req.get("premultiplied", False)
    if not isinstance(premultiplied, bool):
        raise Refused("premultiplied: not true or false")
    if premultiplied and rows != 1:
        raise Refused("premultiplied: needs rows 1, not %d" % rows)
    return {"premultiplied": premultiplied, "transport": transport, "group": group, "k": k,
            "rows": rows, "payload": payload, "offset": offset, "length": length,
            "timeoutMs": timeout, "survivors": sorted(out, key=lambda s: s["sender"]),
            "coefficients": coeff}


def parse_parent(req):
    """An attach's `parent` (docs/protocol.md "Partial sums", datagrams): the parent switch's
    VIP and port, its task, slot array, this child's sender number there and its slot count;
    returns a normalized dict."""
    p = req.get("parent")
    if not isinstance(p, dict):
        raise Refused("parent: must be an object")
    host, port = _host_port(p.get("vip"), "parent.vip")
    out = {"host": host, "port": port, "task": _int(p, "task", 0, 255),
           "slotArray": _int(p, "slotArray", 0, 255), "sender": _int(p, "sender", 0, 15),
           "slots": _int(p, "slots", 2, 32768),
           "window": _int(p, "window", 0, 65535, 0)}  # the survivors' is the reader's HELLO's
    if out["slots"] & (out["slots"] - 1):
        # the data plane takes the parent's slot as seq & (S - 1)
        raise Refused("parent.slots: %d not supported (this switch: a power of two)"
                      % out["slots"])
    return out


def host_networks():
    """The networks of this host's IPv4 addresses, link-local excepted (`ip -o addr`)."""
    try:
        out = subprocess.run(["ip", "-o", "-4", "addr", "show"], stdout=subprocess.PIPE,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    nets = []
    for line in out.splitlines():
        f = line.split()
        if "inet" in f:
            n = ipaddress.ip_network(f[f.index("inet") + 1], strict=False)
            if not n.is_link_local:
                nets.append(n)
    return nets


def parse_networks(text):
    """'198.18.0.0/15,...' -> networks; ValueError naming a bad one."""
    nets = []
    for c in filter(None, (t.strip() for t in text.split(","))):
        try:
            nets.append(ipaddress.ip_network(c, strict=False))
        except ValueError:
            raise ValueError("agent network %r is not ADDRESS/PREFIX" % c)
    return nets


class Entry:
    """One table entry, backend-neutral: key and params by the P4 program's names."""

    __slots__ = ("table", "key", "action", "params")

    def __init__(self, table, key, action, params):
        self.table, self.key, self.action, self.params = table, key, action, params

    def __repr__(self):
        return "Entry(%s %s -> %s %s)" % (self.table, self.key, self.action, self.params)


def ip_int(host):
    return struct.unpack("!I", socket.inet_aton(host))[0]


def secret_entry(task, secret, limits, vip):
    """reader_secret's entry of a task: a reader's HELLO carrying SECRET (at the fixed offset
    of netec_model.reader_hello) binds the VIP and reaches the survivors; none other does. The
    TCP program keys it on the VIP (its vip_in does not hold the header's task to the VIP),
    the datagram program on the task (its vip_in does)."""
    if limits.transport == "udp":
        key = {"hdr.netec.task": task}
    else:
        key = {"hdr.ipv4.dst_addr": ip_int(vip[0]), "hdr.tcp.dst_port": vip[1]}
    for i, w in enumerate(nm.secret_words(secret)):
        key["hdr.hello.s%d" % i] = w
    return Entry("reader_secret", key, "secret_ok", {})


def task_entries(task, array, setup, limits, vip, vip_isn=0, macs=None, secret=None):
    """The table entries of one task (p4src/*/netec.p4), and its multicast group's members.

    vip: (host, port) of the task; vip_isn: the VIP side's initial sequence number;
    macs: agent host -> MAC (the replica's destination MAC), default 0; secret: the task's
    secret (its reader_secret entry; without one no reader's HELLO is let through).
    """
    if limits.transport == "udp":
        entries, group = xor_task_entries(task, array, setup, limits, vip, macs)
    else:
        entries, group = tcp_task_entries(task, array, setup, limits, vip, vip_isn, macs)
    if secret is not None:
        entries.append(secret_entry(task, secret, limits, vip))
    return entries, group


def tcp_task_entries(task, array, setup, limits, vip, vip_isn=0, macs=None):
    """The table entries of one task on the TCP program (p4src/*/netec.p4), and its
    multicast group."""
    p = setup["payload"]
    stripes = (setup["length"] + p - 1) // p
    vip_host, vip_port = vip
    k = setup["k"]
    entries = [
        Entry("task_cfg", {"meta.task": task, "meta.slot_array": array}, "set_task",
              {"k_mask": (1 << k) - 1, "k_minus1": k - 1, "slot_mask": limits.slots - 1,
               "far_mask": ~(limits.slots - 1) & 0xFFFFFFFF, "stripes": stripes,
               "last_seq": stripes - 1,
               "last_len": payload_length(setup["length"], p, stripes - 1),
               "exposed": limits.slots // 2}),
        Entry("vip_in", {"hdr.ipv4.dst_addr": ip_int(vip_host), "hdr.tcp.dst_port": vip_port},
              "from_reader", {"task": task, "slot_array": array, "vip_isn": vip_isn}),
    ]
    members = []
    for s in setup["survivors"]:
        sender = s["sender"]
        a = setup["coefficients"][0][sender]
        entries.append(Entry("sender_coeff",
                             {"hdr.netec.task": task, "hdr.netec.sender": sender},
                             "set_coeff",
                             {"log_a": gf256.LOG[a] if a else 511, "bit_s": 1 << sender}))
        entries.append(Entry("survivor_in",
                             {"hdr.ipv4.src_addr": ip_int(s["host"]), "hdr.tcp.src_port": s["port"],
                              "hdr.ipv4.dst_addr": ip_int(vip_host), "hdr.tcp.dst_port": vip_port},
                             "from_survivor",
                             {"task": task, "slot_array": array, "sender": sender,
                              "vip_isn": vip_isn, "sender_bit": 1 << sender}))
        rid = task * limits.senders + sender + 1
        entries.append(Entry("replica", {"egress_rid": rid}, "to_survivor",
                             {"agent_addr": ip_int(s["host"]), "agent_port": s["port"],
                              "agent_mac": (macs or {}).get(s["host"], 0), "sender": sender,
                              "vip_addr": ip_int(vip_host), "vip_port": vip_port}))
        members.append((s["host"], rid))
    return entries, ("mcast", task + 1, members)


def xor_task_entries(task, array, setup, limits, vip, macs=None):
    """The table entries of one task on the datagram XOR program (p4src/*/netec_xor.p4), and
    its multicast group: per survivor a survivor_in entry that carries the whole task config
    (one table, one stage) and an egress replica; the VIP's vip_in entry for the reader."""
    p = setup["payload"]
    stripes = (setup["length"] + p - 1) // p
    vip_host, vip_port = vip
    k = setup["k"]
    # keyed on the task the reader's packets name, too: every task packet's header then names
    # its own task, which egress indexes EBSN's counters with
    entries = [Entry("vip_in", {"hdr.ipv4.dst_addr": ip_int(vip_host),
                                "hdr.udp.dst_port": vip_port, "hdr.netec.task": task},
                     "from_reader", {"task": task, "stripes": stripes,
                                     "exposed": limits.slots // 2, "acks": 1})]
    members = []
    for s in setup["survivors"]:
        sender = s["sender"]
        entries.append(Entry(
            "survivor_in",
            {"hdr.ipv4.src_addr": ip_int(s["host"]), "hdr.udp.src_port": s["port"],
             "hdr.ipv4.dst_addr": ip_int(vip_host), "hdr.udp.dst_port": vip_port,
             "hdr.netec.task": task, "hdr.netec.slot_array": array, "hdr.netec.sender": sender},
            "from_survivor",
            {"task": task, "slot_array": array, "sender_bit": 1 << sender,
             "k_minus1": k - 1, "slot_mask": limits.slots - 1,
             "far_mask": ~(limits.slots - 1) & 0xFFFFFFFF, "last_seq": stripes - 1,
             "last_len": payload_length(setup["length"], p, stripes - 1)}))
        rid = task * limits.senders + sender + 1
        entries.append(Entry("replica", {"egress_rid": rid}, "to_survivor",
                             {"agent_addr": ip_int(s["host"]), "agent_port": s["port"],
                              "agent_mac": (macs or {}).get(s["host"], 0), "sender": sender}))
        members.append((s["host"], rid))
    return entries, ("mcast", task + 1, members)


def xor_parent_entries(task, array, stripes, limits, vip, parent):
    """What attaching a child task to its parent adds on the datagram XOR program: parent_of
    (what the child sends its reader leaves as the parent's packet of its sender) and
    parent_in (the parent's ACK copies, from its VIP to this child's, are the child's reader
    ACKs). PARENT: parse_parent's."""
    vip_host, vip_port = vip
    return [Entry("parent_of", {"task": task}, "as_parent",
                  {"p_task": parent["task"], "p_array": parent["slotArray"],
                   "p_sender": parent["sender"], "p_slot_mask": parent["slots"] - 1}),
            Entry("parent_in",
                  {"hdr.ipv4.src_addr": ip_int(parent["host"]), "hdr.udp.src_port": parent["port"],
                   "hdr.ipv4.dst_addr": ip_int(vip_host), "hdr.udp.dst_port": vip_port,
                   "hdr.netec.task": parent["task"], "hdr.netec.slot_array": parent["slotArray"],
                   "hdr.netec.sender": parent["sender"]},
                  "from_parent", {"task": task, "slot_array": array, "stripes": stripes,
                                  "exposed": limits.slots // 2})]


class Backend:
    """Where entries go. add_task installs the entries and clears the task's registers."""

    def add_task(self, task, array, entries):
        raise NotImplementedError

    def remove_task(self, task, array, entries):
        raise NotImplementedError

    def attach(self, task, entries, reader, vip_entry):
        """Installs ENTRIES (xor_parent_entries), replaces the task's vip_in entry by
        VIP_ENTRY (the same key, its reader's ACKs refused) and binds the task's reader
        address to READER, (address as an int, port): its parent switch's VIP. Refuses (and
        changes nothing) when a reader's HELLO bound the task first."""
        raise Refused("attach: not supported by this backend (%s)" % type(self).__name__)

    def progress(self, task):
        """The task's ack_seq register (the reader's first missing stripe)."""
        raise NotImplementedError

    def add_routes(self, hosts):
        """l3_forward: HOSTS maps an IPv4 address to (switch port, MAC as an int)."""
        raise NotImplementedError


class ModelBackend(Backend):
    """Writes into the pipeline model (netec_p4/model/pipeline.py), as a switch's would."""

    def __init__(self, pipeline):
        self.p = pipeline

    def add_task(self, task, array, entries):
        self.p.register_reset(task, array)
        entries, group = entries
        for e in entries:
            self.p.table_add(e.table, tuple(e.key.values()), e.action, e.params)
        self.p.mcast_set(group[1], [rid for _host, rid in group[2]])

    def remove_task(self, task, array, entries):
        entries, group = entries
        for e in entries:
            self.p.table_delete(e.table, tuple(e.key.values()))
        self.p.mcast_set(group[1], [])

    def progress(self, task):
        return self.p.register_read("ack_seq", task)

    def add_routes(self, hosts):
        pass  # the model does not forward plain IPv4 (ProxyPipeline returns such packets)


class ControlPlane:
    """Allocates tasks and slot arrays, answers requests, expires idle tasks."""

    def __init__(self, backend, limits, vip_host, vip_port_base=40000, macs=None,
                 agent_networks=None):
        """AGENT_NETWORKS: where survivors' agents may be (the data plane dials them);
        None: this host's networks."""
        self.backend, self.limits = backend, limits
        self.agent_networks = host_networks() if agent_networks is None else agent_networks
        self.macs = macs or {}
        self.vip_host, self.vip_port_base = vip_host, vip_port_base
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.expiry = None
        self.free_tasks = list(range(limits.tasks))
        self.tasks = {}  # task -> dict(array, entries, timeout, last progress, when)

    def handle(self, req):
        """One request object -> one answer object."""
        if not isinstance(req, dict):
            return {"ok": False, "reason": "request: must be a JSON object"}
        op = req.get("op")
        try:
            if op == "setup":
                return self.setup(parse_setup(req))
            if op == "attach":
                return self.attach(req)
            if op == "teardown":
                task = req.get("task")
                secret = req.get("secret")
                self._own(task, secret)
                self.release(task)
                return {"ok": True}
            return {"ok": False, "reason": "op: unknown operation %r" % op}
        except Refused as e:
            return {"ok": False, "reason": str(e)}

    def _inside_agent_networks(self, host, field):
        """Refuses HOST (FIELD's) outside the networks the data plane may send to."""
        a = ipaddress.ip_address(host)
        if not any(a in n for n in self.agent_networks):
            raise Refused("%s: %s is outside the agent networks [%s] (--agent-networks)"
                          % (field, host, ", ".join(str(n) for n in self.agent_networks)))

    def _own(self, task, secret):
        """The task TASK if SECRET is its: only the reader that set a task up knows it; anyone
        else is answered as for a task that does not exist."""
        with self.lock:
            t = self.tasks.get(task) if isinstance(task, int) else None
            if t is None or not isinstance(secret, str) or not hmac.compare_digest(
                    secret.encode(), t["secret"].encode()):
                raise Refused("no task %s" % json.dumps(task)[:32])
            return t

    def attach(self, req):
        """A child task's reader is a parent switch (docs/protocol.md "Partial sums",
        datagrams): binds the task's reader address to the parent's VIP and port, and has what
        it sends there leave as the parent's packets of its sender. Once a task; its
        survivors start on the reader's own HELLO, after this answer."""
        if self.limits.transport != "udp":
            raise Refused("attach: not supported (this switch: \"tcp\"; over TCP a parent "
                          "claims its child with its HELLO)")
        task = req.get("task")
        t = self._own(task, req.get("secret"))
        parent = parse_parent(req)
        # the child streams there: no farther than its survivors may be
        self._inside_agent_networks(parent["host"], "parent.vip")
        entries = xor_parent_entries(task, t["array"], t["stripes"], self.limits, t["vip"],
                                     parent)
        old_vip = t["entries"][0][0]
        vip_entry = Entry(old_vip.table, old_vip.key, old_vip.action,
                          dict(old_vip.params, acks=0))
        # the whole attach under the lock: the expiry thread's release cannot come between
        # the check that the task is still this one and the entries written for it
        with self.lock:
            if self.tasks.get(task) is not t:
                raise Refused("no task %d" % task)
            if t.get("parent") is not None:
                raise Refused("attach: task %d is attached already" % task)
            self.backend.attach(task, entries, (ip_int(parent["host"]), parent["port"]),
                                vip_entry)
            t["parent"] = parent
            t["entries"][0][0] = vip_entry
            t["entries"][0].extend(entries)  # released with the task
        return {"ok": True}

    def setup(self, s):
        lim = self.limits
        if s["transport"] != lim.transport:
            raise Refused("transport: %r not supported (this switch: \"%s\")"
                          % (s["transport"], lim.transport))
        if s["premultiplied"] != lim.premultiplied:
            raise Refused("premultiplied: %s not supported (this switch %s)" % (
                "true" if s["premultiplied"] else "false",
                "only XORs" if lim.premultiplied else "multiplies"))
        if s["payload"] != lim.payload:
            raise Refused("payload size %d not supported (this switch: %d)"
                          % (s["payload"], lim.payload))
        if s["rows"] > lim.rows:
            raise Refused("rows %d not supported (this switch: %d)" % (s["rows"], lim.rows))
        if s["k"] > lim.senders:
            raise Refused("k %d not supported (this switch: %d)" % (s["k"], lim.senders))
        if -(-s["length"] // s["payload"]) > MAX_STRIPES:
            # the data plane compares sequence numbers by the sign of their difference
            raise Refused("length %d not supported: more than %d stripes of %d bytes"
                          % (s["length"], MAX_STRIPES, s["payload"]))
        for sv in s["survivors"]:
            self._inside_agent_networks(sv["host"], "survivors[%d].agent" % sv["sender"])
        with self.lock:
            if not self.free_tasks:
                raise Refused("no free slot array")
            task = self.free_tasks.pop(0)
        array = task  # one slot array per task id on this data plane
        vip = (self.vip_host, self.vip_port_base + task)
        secret = secrets.token_hex(16)  # 128 bits: the proof that a request is the reader's
        entries = task_entries(task, array, s, lim, vip, self.vip_isn(task), self.macs, secret)
        self.backend.add_task(task, array, entries)
        with self.lock:
            self.tasks[task] = {"array": array, "entries": entries, "timeout": s["timeoutMs"],
                                "progress": 0, "since": time.monotonic(),
                                "stripes": entries[0][0].params["stripes"], "secret": secret,
                                "vip": vip, "parent": None}
        return {"ok": True, "task": task, "slotArray": array, "slots": lim.slots,
                "vip": "%s:%d" % vip, "secret": secret}

    @staticmethod
    def vip_isn(task):
        """The VIP side's initial sequence number of a task (any value works; a fresh one per
        setup would also do: the data plane only subtracts it)."""
        return (0x4E45 << 16 | task << 8) & 0xFFFFFFFF

    def release(self, task):
        with self.lock:
            t = self.tasks.pop(task, None)
            if t is None:
                return
            try:
                self.backend.remove_task(task, t["array"], t["entries"])
            finally:
                self.free_tasks.append(task)  # free once its entries are gone (or failed to)

    def expire(self, now=None):
        """Releases tasks that finished (progress at the end) or made none for their timeout."""
        now = time.monotonic() if now is None else now
        for task in list(self.tasks):
            t = self.tasks.get(task)
            if t is None:
                continue
            p = self.backend.progress(task)
            if p != t["progress"]:
                t["progress"], t["since"] = p, now
            if p >= t["stripes"] or now - t["since"] > t["timeout"] / 1000.0:
                self.release(task)

    # ---- the endpoint ---------------------------------------------------------------------

    def serve(self, host, port):
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((host, port))
        srv.listen(64)
        self.expiry = threading.Thread(target=self._expiry_loop, daemon=True)
        self.expiry.start()
        return srv

    def stop(self):
        """Ends the expiry loop and waits for it (the endpoint's socket is the caller's)."""
        self.stopping.set()
        if self.expiry is not None:
            self.expiry.join(5)

    def accept_loop(self, srv):
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _expiry_loop(self):
        while not self.stopping.wait(0.2):
            try:
                self.expire()
            except Exception as e:  # a backend call that failed: the loop goes on
                print("expiry: %s" % e, file=sys.stderr, flush=True)

    def _connection(self, conn):
        with conn:
            while True:
                head = _read(conn, 4)
                if head is None:
                    return
                n = struct.unpack("!I", head)[0]
                if not 1 <= n <= MAX_FRAME:
                    return  # a frame we cannot delimit: close, as the Java switch does
                body = _read(conn, n)
                if body is None:
                    return
                try:
                    req = json.loads(body.decode("utf-8"))
                except (UnicodeDecodeError, ValueError):
                    answer = {"ok": False, "reason": "request: not a JSON object"}
                else:
                    answer = self.handle(req)
                out = json.dumps(answer).encode("utf-8")
                conn.sendall(struct.pack("!I", len(out)) + out)


def _read(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def main(argv):
    ap = argparse.ArgumentParser(description="NetEC switch control plane")
    ap.add_argument("--backend", choices=["thrift", "p4runtime", "bfrt"], required=True)
    ap.add_argument("--bind", default="0.0.0.0")
    ap.add_argument("--port", type=int, default=50310)
    ap.add_argument("--vip", required=True, help="the switch's VIP address")
    ap.add_argument("--thrift", default="127.0.0.1:9090",
                    help="BMv2 simple_switch's thrift server (thrift)")
    ap.add_argument("--grpc", default="127.0.0.1:9559", help="P4Runtime server (p4runtime)")
    ap.add_argument("--p4info", help="p4info (text) of the v1model build (p4runtime)")
    ap.add_argument("--config", help="BMv2 JSON of the v1model build (thrift, p4runtime)")
    ap.add_argument("--program", choices=sorted(PROGRAMS), default="netec",
                    help="the P4 program the switch runs: netec (multiply, TCP proxy, P 64) or "
                         "netec_xor (pre-multiplied survivors, datagrams, P 256)")
    ap.add_argument("--agent-networks", default="",
                    help="networks survivors' agents may be in, ADDRESS/PREFIX,... "
                         "(default: this host's networks, link-local excepted)")
    ap.add_argument("--hosts", default="",
                    help="hosts: IP=port/MAC,... (their switch port and MAC): routes, "
                         "and the survivors' multicast ports")
    a = ap.parse_args(argv)
    ports, macs = {}, {}
    for item in filter(None, a.hosts.split(",")):
        ip, rest = item.split("=")
        port, mac = rest.split("/")
        ports[ip] = int(port)
        macs[ip] = int(mac.replace(":", ""), 16)
    from netec_p4.control import backends
    if a.backend == "thrift":
        host, port = a.thrift.rsplit(":", 1)
        clients, _ = backends.ThriftBackend.connect(host, int(port))
        backend = backends.ThriftBackend(clients, a.config, ports, a.program)
    elif a.backend == "p4runtime":
        backend = backends.P4RuntimeBackend(a.grpc, a.p4info, a.config, ports)
    else:
        backend = backends.BfrtBackend(program=a.program, ports=ports)
    backend.add_routes({ip: (ports[ip], macs[ip]) for ip in ports})
    try:
        nets = parse_networks(a.agent_networks) if a.agent_networks else None
    except ValueError as e:
        ap.error("--agent-networks: %s" % e)
    cp = ControlPlane(backend, Limits.of_program(a.program), a.vip, macs=macs, agent_networks=nets)
    srv = cp.serve(a.bind, a.port)
    print("NetEC control plane on %s:%d, VIP %s" % (a.bind, srv.getsockname()[1], a.vip))
    cp.accept_loop(srv)


if __name__ == "__main__":
    main(sys.argv[1:])
